"""Brand verification before money: anyone may sign up and try everything in the sandbox, but
funding and payouts stay off until platform staff verify who the brand is (legal name,
registration number, country, the owner's confirmed email), recorded with who and when.

Dora signs up Dodo Drinks herself; Sam is platform staff; Fiona is finance at Alpaca (verified).
"""

import io

import pytest
from allauth.account.models import EmailAddress
from django.core.management import call_command
from django.urls import reverse

from campaigns.models import Brand, BrandVerification, Role
from campaigns.services.brands import (
    brand_legal_details_save,
    brand_verification_revoke,
    brand_verify,
    member_add,
)
from campaigns.services.campaigns import campaign_create
from campaigns.services.funding import brand_topup_sandbox, campaign_fund
from campaigns.services.refusals import CampaignError
from joyback.ledger.models import Account, AccountKind, Transaction
from payouts.manual.services import payout_manual_enter
from payouts.models import PayeeAccount, Payout, ProviderOnboarding, SandboxBankPayment, VirtualAccount
from payouts.rails import iban_check
from payouts.submission.states import PayoutRefused
from tests.conftest import totp_enable
from tests.payouts.conftest import IBANS

pytestmark = pytest.mark.django_db

NOT_VERIFIED = "Funding and payouts open once JoyBack"


@pytest.fixture
def dora(make_user):
    return totp_enable(make_user("dora@dodo.example", first_name="Dora"))


@pytest.fixture
def dodo(client, dora):
    """Dodo Drinks as Dora made it through the signup: unverified."""
    client.force_login(dora)
    client.post(reverse("brand_new"), {"name": "Dodo Drinks", "currency": "EUR"})
    return Brand.objects.get(name="Dodo Drinks")


@pytest.fixture
def sam(make_user):
    return totp_enable(make_user("sam@joyback.example", first_name="Sam", is_staff=True, is_superuser=True))


def confirmed_email(user):
    EmailAddress.objects.create(user=user, email=user.email, verified=True, primary=True)


def ready(brand, owner):
    """Everything staff need to verify the brand."""
    confirmed_email(owner)
    return brand_legal_details_save(
        brand=brand, legal_name="Dodo Drinks GmbH", registration_number="HRB 4711", country="DE"
    )


def funding(brand) -> int:
    return Account.objects.get(kind=AccountKind.BRAND_FUNDING, brand_id=brand.pk, currency="EUR").balance


def test_a_new_brand_tries_everything_but_no_money_moves(client, dodo, dora):
    assert not dodo.verified
    campaign = campaign_create(
        brand=dodo, name="Fizz", package="all_in_one", currency="EUR", countries=["DE"], languages=["en"]
    )
    assert client.get(reverse("campaign_detail", args=[dodo.slug, campaign.pk])).status_code == 200
    transactions_before = Transaction.objects.count()

    response = client.post(reverse("brand_topup", args=[dodo.slug]), {"amount": "500.00"}, follow=True)
    assert NOT_VERIFIED in response.content.decode()
    assert funding(dodo) == 0 and Transaction.objects.count() == transactions_before

    # No account of its own at the payment provider before staff verify it: nothing arrives.
    assert not VirtualAccount.objects.filter(brand=dodo).exists()
    with pytest.raises(CampaignError, match=NOT_VERIFIED):
        campaign_fund(campaign=campaign, amount=100_00)
    with pytest.raises(PayoutRefused, match=NOT_VERIFIED):
        payout_manual_enter(
            brand=dodo,
            name="Dora Herself",
            email="dora@dodo.example",
            phone="",
            bank_account=iban_check(IBANS["settle"]),
            currency="EUR",
            amount=500_00,
            created_by=dora,
        )
    assert funding(dodo) == 0
    assert not Payout.objects.exists() and not PayeeAccount.objects.exists()
    assert not SandboxBankPayment.objects.exists()


def test_the_dashboard_tells_the_owner_what_is_missing_and_that_staff_verify_it(client, dodo, dora):
    page = client.get(reverse("brand_dashboard", args=[dodo.slug])).content.decode()
    assert "Funding and payouts are off until JoyBack verifies your brand" in page
    for missing in ("legal name", "registration number", "country", "confirmed email address of the owner"):
        assert missing in page

    response = client.post(
        reverse("brand_legal_details", args=[dodo.slug]),
        {"legal_name": "Dodo Drinks GmbH", "registration_number": "HRB 4711", "country": "DE"},
        follow=True,
    )
    page = response.content.decode()
    assert "staff verify the brand" in page
    assert "legal name</li>" not in page and "confirmed email address of the owner" in page

    confirmed_email(dora)
    page = client.get(reverse("brand_dashboard", args=[dodo.slug])).content.decode()
    assert "Everything is there" in page and "Still missing" not in page


def test_bad_legal_details_are_refused_and_nothing_changes(client, dodo):
    response = client.post(
        reverse("brand_legal_details", args=[dodo.slug]),
        {"legal_name": "", "registration_number": "HRB 4711", "country": "XX"},
    )
    assert response.status_code == 400
    assert "This field is required." in response.content.decode()
    dodo.refresh_from_db()
    assert (dodo.legal_name, dodo.registration_number, dodo.country) == ("", "", "")


def test_only_the_owner_gives_the_legal_details(client, alpaca, fiona, bob):
    details = {"legal_name": "Other GmbH", "registration_number": "HRB 1", "country": "DE"}
    client.force_login(fiona)
    assert client.post(reverse("brand_legal_details", args=[alpaca.slug]), details).status_code == 403
    client.force_login(bob)
    assert client.post(reverse("brand_legal_details", args=[alpaca.slug]), details).status_code == 404
    alpaca.refresh_from_db()
    assert alpaca.legal_name == "Alpaca Coffee GmbH"


def test_staff_verify_the_brand_in_the_admin_and_money_may_move(
    client, dodo, dora, sam, django_capture_on_commit_callbacks
):
    ready(dodo, dora)
    client.force_login(sam)
    with pytest.raises(CampaignError):
        brand_topup_sandbox(brand=dodo, amount=100_00, currency="EUR")
    # Staff's verification sets the brand's onboarding at the payment provider going (after the
    # commit); the provider verifies it too (the sandbox's, at once for these details).
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("admin:campaigns_brand_changelist"),
            {"action": "verify", "_selected_action": [dodo.pk]},
            follow=True,
        )
    assert "1 brand(s) verified." in response.content.decode()

    dodo.refresh_from_db()
    assert dodo.verified and dodo.verified_by == sam
    record = BrandVerification.objects.get()
    assert (record.brand, record.action, record.actor) == (dodo, "verified", sam)
    assert (record.legal_name, record.registration_number, record.country) == (
        "Dodo Drinks GmbH",
        "HRB 4711",
        "DE",
    )
    assert record.owner_email == "dora@dodo.example"
    change_page = client.get(reverse("admin:campaigns_brand_change", args=[dodo.pk])).content.decode()
    assert "HRB 4711" in change_page

    assert ProviderOnboarding.objects.get(brand=dodo).allowed  # both words: money may move
    brand_topup_sandbox(brand=dodo, amount=100_00, currency="EUR")
    assert funding(dodo) == 100_00


def test_staff_cannot_verify_a_brand_with_details_missing(client, dodo, dora, sam):
    confirmed_email(dora)
    client.force_login(sam)
    response = client.post(
        reverse("admin:campaigns_brand_changelist"),
        {"action": "verify", "_selected_action": [dodo.pk]},
        follow=True,
    )
    assert "cannot be verified yet; missing: the company&#x27;s legal name" in response.content.decode()
    dodo.refresh_from_db()
    assert not dodo.verified and not BrandVerification.objects.exists()


def test_an_unconfirmed_owner_email_is_missing(dodo, sam):
    brand_legal_details_save(
        brand=dodo, legal_name="Dodo Drinks GmbH", registration_number="HRB 4711", country="DE"
    )
    with pytest.raises(CampaignError, match="confirmed email address of the owner"):
        brand_verify(brand=dodo, actor=sam)


def test_only_staff_verify_and_never_their_own_brand(dodo, dora, sam):
    ready(dodo, dora)
    with pytest.raises(CampaignError, match="Only platform staff"):
        brand_verify(brand=dodo, actor=dora)
    member_add(brand=dodo, user=sam, role=Role.FINANCE)
    with pytest.raises(CampaignError, match="member of"):
        brand_verify(brand=dodo, actor=sam)
    dodo.refresh_from_db()
    assert not dodo.verified and not BrandVerification.objects.exists()


def test_changed_legal_details_need_verifying_again(dodo, dora, sam):
    ready(dodo, dora)
    brand_verify(brand=dodo, actor=sam)
    brand_legal_details_save(
        brand=dodo, legal_name="Somebody Else Ltd", registration_number="HRB 4711", country="DE"
    )
    dodo.refresh_from_db()
    assert not dodo.verified
    with pytest.raises(CampaignError, match=NOT_VERIFIED):
        brand_topup_sandbox(brand=dodo, amount=100_00, currency="EUR")


def test_staff_withdraw_a_verification_with_a_reason(dodo, dora, sam):
    ready(dodo, dora)
    brand_verify(brand=dodo, actor=sam)
    with pytest.raises(CampaignError, match="Say why"):
        brand_verification_revoke(brand=dodo, actor=sam, note="")
    brand_verification_revoke(brand=dodo, actor=sam, note="Register entry deleted")
    dodo.refresh_from_db()
    assert not dodo.verified
    assert list(BrandVerification.objects.values_list("action", "note")) == [
        ("revoked", "Register entry deleted"),
        ("verified", ""),
    ]


def test_the_demo_brand_is_seeded_verified():
    call_command("demo_seed", stdout=io.StringIO())
    call_command("demo_funding", stdout=io.StringIO())  # its money arrives through the sandbox bank
    demo = Brand.objects.get(slug="demo")
    assert demo.verified and demo.verified_by.email == "admin@joyback.localhost"
    assert BrandVerification.objects.filter(brand=demo, action="verified").count() == 1
    assert (
        Account.objects.get(
            kind=AccountKind.CAMPAIGN_BUDGET,
            subject__startswith="campaign:",
            brand_id=demo.pk,
            name__startswith="Summer",
        ).balance
        > 0
    )


def test_a_withdrawn_verification_stops_reward_payouts_until_verified_again(
    client, summer, sam, alice, django_capture_on_commit_callbacks
):
    """Pat was rewarded at Alpaca; staff withdraw Alpaca's verification before Pat gives bank
    details: nothing leaves, Pat stays owed, and the sweep pays once Alpaca is verified again."""
    from payouts.submission.sweeps import payouts_sweep
    from tests.conftest import rewarded_in_browser
    from tests.payouts.conftest import payee_details

    rewarded_in_browser(client, summer)
    confirmed_email(alice)
    brand_verification_revoke(brand=summer.brand, actor=sam, note="Register entry in doubt")
    with django_capture_on_commit_callbacks(execute=True):
        payee_details(client, summer)
        payouts_sweep()
    assert not Payout.objects.exists() and not SandboxBankPayment.objects.exists()

    brand_verify(brand=summer.brand, actor=sam)
    with django_capture_on_commit_callbacks(execute=True):
        payouts_sweep()
    assert Payout.objects.get().status in ("created", "submitted", "settled")
