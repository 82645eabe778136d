"""A second factor where money is. Otto owns Otter Outfitters and has not set one up yet; Alice (owner)
and Fiona (finance) have; Rita is staff. The admin is signed in to through allauth."""

import os
import subprocess
import sys
import time

import pytest
from django.contrib.sessions.models import Session
from django.core.cache import caches
from django.db import connection
from django.urls import reverse

from campaigns.models import Role
from campaigns.services.brands import brand_create, member_add
from joyback.api.models import ApiKey
from joyback.ledger.models import Account, AccountKind
from tests.conftest import PASSWORD, SignedInClient, fund, totp_code, totp_enable, verified

pytestmark = pytest.mark.django_db

SETUP_PAGE = "Set up two-factor authentication"


@pytest.fixture
def otto(make_user):
    return make_user("otto@otter.example", first_name="Otto")


@pytest.fixture
def otter(otto):
    brand = verified(brand_create(name="Otter Outfitters", slug="otter", owner=otto, currency="EUR"))
    fund(brand, 500_00, "EUR", reference="OTTER-1")
    return brand


@pytest.fixture
def rita(django_user_model):
    return django_user_model.objects.create_superuser(email="rita@joyback.example", password=PASSWORD)


def funding(brand):
    return Account.objects.get(kind=AccountKind.BRAND_FUNDING, brand_id=brand.pk, currency="EUR").balance


# Until a second factor is set up: sign in and look, but move no money and change no API settings.


def test_an_owner_without_a_second_factor_cannot_create_an_api_key(client, otto, otter):
    client.force_login(otto)

    assert client.get(reverse("developers", args=["otter"])).status_code == 200
    response = client.post(reverse("api_key_new", args=["otter"]), {"name": "shop", "scopes": ["events"]})

    assert response.status_code == 403
    assert SETUP_PAGE in response.content.decode()
    assert reverse("mfa_index") in response.content.decode()
    assert not ApiKey.objects.exists()


def test_an_owner_without_a_second_factor_cannot_fund_a_campaign(client, otto, otter, make_live_campaign):
    campaign = make_live_campaign(brand=otter, slug="otter-run", budget=100_00)
    client.force_login(otto)
    before = funding(otter)

    response = client.post(reverse("campaign_fund", args=["otter", campaign.pk]), {"amount": "10.00"})

    assert response.status_code == 403 and SETUP_PAGE in response.content.decode()
    assert funding(otter) == before


def test_a_finance_member_without_a_second_factor_is_shown_the_setup_page(client, make_user, otter):
    fred = make_user("fred@otter.example")
    member_add(brand=otter, user=fred, role=Role.FINANCE)
    client.force_login(fred)

    response = client.post(reverse("brand_topup", args=["otter"]), {"amount": "10.00"})

    assert response.status_code == 403 and SETUP_PAGE in response.content.decode()


def test_once_the_second_factor_is_set_up_the_owner_can(client, otto, otter):
    totp_enable(otto)
    client.force_login(otto)

    response = client.post(reverse("api_key_new", args=["otter"]), {"name": "shop", "scopes": ["events"]})

    assert response.status_code == 200 and ApiKey.objects.filter(brand_id=otter.pk).count() == 1


def test_a_marketer_needs_no_second_factor_for_their_own_work(client, make_user, otter):
    mia = make_user("mia@otter.example")
    member_add(brand=otter, user=mia, role=Role.MARKETER)
    client.force_login(mia)

    # Not theirs to do at all: the role refuses it (403), not the missing second factor.
    response = client.post(reverse("api_key_new", args=["otter"]), {"name": "x", "scopes": ["events"]})

    assert response.status_code == 403 and SETUP_PAGE not in response.content.decode()


# Re-authentication before sensitive actions.


def test_an_api_key_asks_for_the_password_again_after_a_while(client, alice, alpaca):
    client.force_login(alice)
    session = client.session
    session["account_authentication_methods"] = [{"method": "password", "at": time.time() - 3600}]
    session.save()

    response = client.post(reverse("api_key_new", args=["alpaca"]), {"name": "shop", "scopes": ["events"]})

    assert response.status_code == 302 and "reauthenticate" in response["Location"]
    assert not ApiKey.objects.exists()


def test_a_payout_approval_asks_for_the_second_factor_again_after_a_while(client, fiona, alpaca):
    client.force_login(fiona)
    session = client.session
    session["account_authentication_methods"] = [{"method": "mfa", "at": time.time() - 3600}]
    session.save()

    response = client.post(reverse("payouts:payout_action", args=["alpaca", 1]), {"action": "approve"})

    assert response.status_code == 302 and "reauthenticate" in response["Location"]


# The Django admin: through allauth, with its second factor and throttle.


def test_djangos_own_admin_login_is_not_reachable(client, rita):
    page = client.get("/admin/login/?next=/admin/payouts/payout/")
    posted = client.post(
        "/admin/login/?next=/admin/payouts/payout/", {"username": rita.email, "password": PASSWORD}
    )

    assert page.status_code == 302 and page["Location"].startswith(reverse("account_login"))
    assert posted.status_code == 302 and posted["Location"].startswith(reverse("account_login"))
    assert "_auth_user_id" not in client.session
    assert client.get("/admin/payouts/payout/").status_code == 302


def test_staff_with_totp_reach_the_admin_only_with_the_code(rita):
    totp_enable(rita)
    client = SignedInClient()

    response = client.post(
        reverse("account_login") + "?next=/admin/payouts/payout/", {"login": rita.email, "password": PASSWORD}
    )
    assert response["Location"] == reverse("mfa_authenticate")
    assert client.get("/admin/payouts/payout/").status_code == 302  # the password alone is not enough

    response = client.post(reverse("mfa_authenticate"), {"code": totp_code()})
    assert response.status_code == 302 and response["Location"] == "/admin/payouts/payout/"
    assert client.get("/admin/payouts/payout/").status_code == 200


def second_factor_answer(user, code):
    client = SignedInClient()
    client.post(reverse("account_login"), {"login": user.email, "password": PASSWORD})
    response = client.post(reverse("mfa_authenticate"), {"code": code})
    return response.status_code, "_auth_user_id" in client.session


def test_a_code_typed_at_the_end_of_its_window_is_taken_once_but_an_older_one_is_not(rita):
    totp_enable(rita)
    if time.time() % 30 > 27:  # the three answers below come within one window
        time.sleep(30 - time.time() % 30)
    now = time.time()

    # Read off the app at the end of its 30 seconds, sent in the next ones: taken.
    assert second_factor_answer(rita, totp_code(at=now - 30)) == (302, True)
    # The same code again, from a second browser within its window: refused.
    assert second_factor_answer(rita, totp_code(at=now - 30)) == (200, False)
    # A code a minute old is refused.
    assert second_factor_answer(rita, totp_code(at=now - 60)) == (200, False)


@pytest.mark.parametrize(
    "page", ["/admin/", "/admin/payouts/payout/", "/admin/verification/providerevent/", "/admin/auth/group/"]
)
def test_staff_without_a_second_factor_read_nothing_in_the_admin(client, rita, page):
    client.force_login(rita)

    response = client.get(page)

    assert response.status_code == 302 and response["Location"] == reverse("mfa_index")
    setup = client.get(response["Location"])
    assert setup.status_code == 200
    assert "Set up two-factor authentication before you open the admin" in setup.content.decode()


def test_staff_without_a_second_factor_change_nothing_in_the_admin(client, rita):
    client.force_login(rita)

    response = client.post("/admin/payouts/payout/", {"action": "approve", "_selected_action": ["1"]})

    assert response.status_code == 302 and response["Location"] == reverse("mfa_index")


def test_the_admin_opens_once_the_second_factor_is_set_up(client, rita):
    client.force_login(rita)
    assert client.get(reverse("mfa_activate_totp")).status_code == 200  # the setup page itself opens
    totp_enable(rita)

    assert client.get("/admin/").status_code == 200


def test_the_admin_sign_in_stays_reachable(client, rita):
    assert client.get("/admin/login/").status_code == 302  # to allauth's sign-in, as before
    client.force_login(rita)
    assert client.post("/admin/logout/").status_code == 200  # signing out needs no second factor


@pytest.mark.postgres
def test_failed_logins_are_counted_in_the_shared_cache_and_throttled(client, rita, settings):
    # As in production without Redis: the cache every web process shares is the database table.
    settings.CACHES = {**settings.CACHES, "default": settings.CACHES["database"]}
    pages = [
        client.post(
            reverse("account_login"), {"login": rita.email, "password": f"wrong {n}"}
        ).content.decode()
        for n in range(12)
    ]
    right = client.post(reverse("account_login"), {"login": rita.email, "password": PASSWORD})

    assert not any("Too many failed login attempts" in page for page in pages[:5])
    assert all("Too many failed login attempts" in page for page in pages[5:])
    assert "Too many failed login attempts" in right.content.decode()  # even the right password, for now
    assert "_auth_user_id" not in client.session
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {settings.CACHE_TABLE}")
        assert cursor.fetchone()[0] > 0  # every worker reads these counters, not one process's memory
    assert caches["default"].__class__.__name__ == "DatabaseCache"


@pytest.mark.parametrize(
    ("redis_url", "backend"),
    [("", "db.DatabaseCache"), ("redis://127.0.0.1:6379/0", "joyback.cache.FallbackRedisCache")],
)
def test_the_production_cache_is_never_per_process(redis_url, backend):
    environment = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
    environment.update(
        JOYBACK_ENV="production",
        REDIS_URL=redis_url,
        SECRET_KEY="k" * 60,
        PAYEE_ENCRYPTION_KEYS="x" * 44,
        PAYEE_FINGERPRINT_KEY="f" * 44,
        # The rest production refuses to start without (config.variables).
        ALLOWED_HOSTS="joyback.example",
        SITE_URL="https://joyback.example",
        ADYEN_API_KEY="own-adyen-key",
        ADYEN_BALANCE_ACCOUNT_ID="BA1",
        ADYEN_HMAC_KEYS="a1b2c3d4" * 8,
        PAYOUT_DEBTOR_IBAN="DE89370400440532013000",
        INVOICE_ISSUER_ADDRESS="Example Street 1, 10115 Berlin",
        INVOICE_ISSUER_VAT_ID="DE811907980",
    )
    result = subprocess.run(
        [sys.executable, "-c", "import config.settings as s; print(s.CACHES['default']['BACKEND'])"],
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip().endswith(backend)


# Sessions.


def test_a_password_change_ends_the_users_other_sessions(alice, alpaca):
    laptop, phone = SignedInClient(), SignedInClient()
    laptop.force_login(alice)
    phone.force_login(alice)

    response = laptop.post(
        reverse("account_change_password"),
        {"oldpassword": PASSWORD, "password1": "a new horse battery", "password2": "a new horse battery"},
    )

    assert response.status_code == 302
    assert laptop.get(reverse("brand_dashboard", args=["alpaca"])).status_code == 200
    assert phone.get(reverse("brand_dashboard", args=["alpaca"])).status_code == 302  # signed out


def test_staff_sessions_are_shorter(rita, make_user, settings):
    staff, member = SignedInClient(), SignedInClient()
    make_user("pat@example.com")
    for browser, email in [(staff, rita.email), (member, "pat@example.com")]:
        browser.post(reverse("account_login"), {"login": email, "password": PASSWORD})

    def lifetime(browser):
        session = Session.objects.get(session_key=browser.cookies[settings.SESSION_COOKIE_NAME].value)
        return (session.expire_date - session.expire_date.now(tz=session.expire_date.tzinfo)).total_seconds()

    assert lifetime(staff) <= settings.STAFF_SESSION_SECONDS
    assert lifetime(member) > 24 * 3600


def test_a_passkey_counts_as_the_second_factor(client, otto, otter):
    from allauth.mfa.models import Authenticator

    Authenticator.objects.create(user=otto, type=Authenticator.Type.WEBAUTHN, data={"name": "laptop"})
    client.force_login(otto)

    response = client.post(reverse("api_key_new", args=["otter"]), {"name": "shop", "scopes": ["events"]})

    assert response.status_code == 200 and ApiKey.objects.filter(brand_id=otter.pk).exists()


def test_recovery_codes_alone_are_not_a_second_factor(client, otto, otter):
    from allauth.mfa.models import Authenticator

    Authenticator.objects.create(user=otto, type=Authenticator.Type.RECOVERY_CODES, data={"seed": "x"})
    client.force_login(otto)

    response = client.post(reverse("api_key_new", args=["otter"]), {"name": "shop", "scopes": ["events"]})

    assert response.status_code == 403 and not ApiKey.objects.exists()


def test_passkeys_can_be_added_from_the_security_page(client, otto):
    client.force_login(otto)

    assert client.get(reverse("mfa_add_webauthn")).status_code == 200
    assert reverse("mfa_add_webauthn") in client.get(reverse("mfa_index")).content.decode()
