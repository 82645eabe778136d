"""Shared fixtures and the personas every test file speaks of.

Alice owns Alpaca Coffee, Bob owns Bison Bikes; Fiona is finance and Vic a viewer at Alpaca.
Every test runs on PostgreSQL: the one of DATABASE_URL, or the project's own server that `make test`
starts (joyback/embedded_db.py). The `postgres` marker names the tests that rely on its row locks
and triggers.
"""

import os

os.environ.setdefault("JOYBACK_ENV", "test")

import time

import pytest
from allauth.mfa.totp.internal.auth import TOTP, format_hotp_value, hotp_value
from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.test import Client, TestCase
from django.test.client import ClientHandler
from django.utils import timezone, translation
from psycopg.pq import TransactionStatus

from campaigns.models import Brand, Role
from campaigns.services.brands import brand_create, member_add
from campaigns.services.campaigns import campaign_create, campaign_transition
from campaigns.services.funding import brand_deposit_record, campaign_fund
from joyback.ledger.services import _shared_accounts
from joyback.machine import MachineChain, machine_environ
from joyback.modes import brand_livemode_forget
from payouts.funding.services import virtual_account_request, virtual_accounts_open
from payouts.models import ProviderDeposit, ProviderOnboarding, TransferEvent, VirtualAccount
from payouts.models.funding import VirtualAccountStatus
from payouts.providers.test_mode_bank import deposit_simulate, funding_webhooks_deliver
from payouts.submission.webhooks import transfer_events_process
from tests.brand_columns import brand_columns_wrong
from verification.services.participants import identity_attach, participant_create
from verification.services.rewards import action_reward
from verification.sessions import COOKIE, participant_cookie_value, participants_from_cookie

PASSWORD = "correct horse battery staple"


def rewarded_in_browser(client, campaign, subject="open-id-pat"):
    """The browser of `client` belongs to a participant whose TikTok login was rewarded."""
    person = participant_create(brand=campaign.brand)
    identity = identity_attach(participant=person, provider="tiktok", subject=subject, display_name="Pat")
    action_reward(rule=campaign.rules.get(trigger="tiktok_login"), identity=identity)
    browser_is(client, person)
    return person


def browser_is(client, person):
    """The browser of `client` is `person` for their brand, as after their sign-in (the cookie)."""
    held = client.cookies.get(COOKIE)
    participants = participants_from_cookie(held.value if held else "")
    client.cookies[COOKIE] = participant_cookie_value({**participants, person.brand_id: person.pk})


TOTP_SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"


def totp_enable(user, secret=TOTP_SECRET):
    """user set up an authenticator app (the second factor money needs)."""
    TOTP.activate(user, secret)
    return user


def totp_code(secret=TOTP_SECRET, *, at=None):
    """The code the authenticator app shows now (or at `at`, a Unix time)."""
    return format_hotp_value(hotp_value(secret, int((at or time.time()) // 30)))


class MachineClientHandler(MachineChain, ClientHandler):
    pass


class RoutedClientHandler:
    """The test client's handler, routing as config.wsgi's application does: a machine endpoint's
    request through settings.MACHINE_MIDDLEWARE, every other through settings.MIDDLEWARE."""

    def __init__(self, enforce_csrf_checks):
        self.browser = ClientHandler(enforce_csrf_checks)
        self.machine = MachineClientHandler(enforce_csrf_checks)

    def __call__(self, environ):
        return (self.machine if machine_environ(environ) else self.browser)(environ)


class SignedInClient(Client):
    """Routed as the WSGI application routes requests (RoutedClientHandler). force_login leaves the
    session as a sign-in through allauth followed by a fresh password confirmation would: sensitive
    actions (API keys, approvals) go through without asking again. Tests of re-authentication age
    or remove that record."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.handler = RoutedClientHandler(self.handler.enforce_csrf_checks)

    def force_login(self, user, backend=None):
        super().force_login(user, backend)
        session = self.session
        session["account_authentication_methods"] = [
            {"method": "password", "at": time.time(), "reauthenticated": True}
        ]
        session["account_authentication_methods_user"] = str(user.pk)
        session.save()


@pytest.fixture
def client():
    return SignedInClient()


@pytest.fixture
def make_user(django_user_model):
    def make(email, **extra):
        return django_user_model.objects.create_user(email=email, password=PASSWORD, **extra)

    return make


# Owners and finance members use a second factor: the personas have set theirs up.


@pytest.fixture
def alice(make_user):
    return totp_enable(make_user("alice@alpaca.example", first_name="Alice"))


@pytest.fixture
def bob(make_user):
    return totp_enable(make_user("bob@bison.example", first_name="Bob"))


def verified(brand, *, provider_allowed: bool = True, own_account: bool = True):
    """The brand as platform staff left it after checking who it is (campaigns.services.brands.
    brand_verify, tested in tests/campaigns/test_brand_verification.py) and, unless
    `provider_allowed` is false, as the payment provider left it after allowing its account
    holder's capabilities (payouts.funding.onboarding, tested in
    tests/payouts/test_provider_onboarding.py), with its own balance account and virtual IBAN open
    at the sandbox provider (own_account_open) unless `own_account` is false (the tests of opening
    it): funding and payouts are open."""
    Brand.objects.filter(pk=brand.pk).update(
        legal_name=f"{brand.name} GmbH",
        registration_number="HRB 12345",
        country="DE",
        verified_at=timezone.now(),
    )
    brand.refresh_from_db()
    if provider_allowed and brand.livemode:
        ProviderOnboarding.objects.update_or_create(
            brand=brand, defaults={"provider": "adyen", "status": "verified", "allowed": True}
        )
        if own_account:
            own_account_open(brand)
    return brand


def own_account_open(brand, currency: str | None = None) -> VirtualAccount:
    """The live brand's own account holder, balance account and virtual IBAN at the sandbox
    provider, opened as staff verifying it opens them (payouts.funding.services.
    virtual_account_request, run by the standing worker after commit: here at once)."""
    currency = currency or brand.default_currency
    found = VirtualAccount.objects.filter(
        brand=brand, currency=currency, status=VirtualAccountStatus.OPEN
    ).exclude(account_holder_id="")
    if not found.exists():
        with TestCase.captureOnCommitCallbacks(execute=True):
            requested = virtual_account_request(brand=brand, currency=currency)
        requested.refresh_from_db(fields=["status"])
        if requested.status == VirtualAccountStatus.REQUESTED:
            virtual_accounts_open(ids=[requested.pk])  # with task workers on: as the standing worker does
        _setup_webhooks_apply()  # the provider's word on the new account holder
    account = VirtualAccount.objects.get(brand=brand, currency=currency)
    assert account.status == VirtualAccountStatus.OPEN and account.account_holder_id, account.error
    return account


def fund(brand, amount: int, currency: str | None = None, *, reference: str = ""):
    """Money the brand's bank sent to the brand's own virtual IBAN at the sandbox provider, booked
    from the provider's signed webhooks onto the brand's own balance account, as production books
    it (payouts.funding.services.provider_transfer_apply). A test twin's play money comes from the
    test-mode bank instead (its reference keys it)."""
    currency = currency or brand.default_currency
    if not brand.livemode:
        return brand_deposit_record(
            brand=brand, amount=amount, currency=currency, bank_reference=reference or f"PLAY-{amount}"
        )
    account = own_account_open(brand, currency)
    sent = deposit_simulate(iban=account.iban, amount=amount, payer_name=brand.legal_name or brand.name)
    booked = ProviderDeposit.objects.filter(transfer_id=sent.transfer_id, status="booked")
    deadline = time.monotonic() + 30
    _setup_webhooks_apply()
    # Where a standing worker runs beside (the bench), it may have taken the webhooks: wait for it.
    while not booked.exists():
        assert time.monotonic() < deadline, f"deposit {sent.transfer_id} was never booked"
        time.sleep(0.05)
        _setup_webhooks_apply()
    return account


# The provider's webhooks that opening and funding the brands' own accounts brought (own_account_open,
# fund): a test counting the webhooks of its own steps leaves them out (provider_events).
_setup_events: set[int] = set()


def _setup_webhooks_apply() -> None:
    before = set(TransferEvent.objects.values_list("pk", flat=True))
    funding_webhooks_deliver()
    transfer_events_process()
    _setup_events.update(set(TransferEvent.objects.values_list("pk", flat=True)) - before)


def provider_events():
    """The provider's stored webhooks the test's own steps brought, not those of setting up the
    brands' own accounts and their funding."""
    return TransferEvent.objects.exclude(pk__in=_setup_events)


@pytest.fixture
def alpaca(alice):
    return verified(brand_create(name="Alpaca Coffee", slug="alpaca", owner=alice, currency="EUR"))


@pytest.fixture
def bison(bob):
    return verified(brand_create(name="Bison Bikes", slug="bison", owner=bob, currency="EUR"))


@pytest.fixture
def fiona(make_user, alpaca):
    user = totp_enable(make_user("fiona@alpaca.example", first_name="Fiona"))
    member_add(brand=alpaca, user=user, role=Role.FINANCE)
    return user


@pytest.fixture
def vic(make_user, alpaca):
    user = make_user("vic@alpaca.example", first_name="Vic")
    member_add(brand=alpaca, user=user, role=Role.VIEWER)
    return user


@pytest.fixture
def make_live_campaign(alpaca):
    """A live campaign of Alpaca's (or the brand given), funded by a deposit on the brand's own
    virtual IBAN at the sandbox provider (fund)."""

    def make(*, slug="summer-glow", package="all_in_one", currency="EUR", budget=100_00, brand=None, **extra):
        brand = brand or alpaca
        fund(brand, budget, currency, reference=f"FUND-{slug}")
        campaign = campaign_create(
            brand=brand,
            name=slug.replace("-", " ").title(),
            slug=slug,
            package=package,
            currency=currency,
            countries=["DE"],
            languages=["en"],
            **extra,
        )
        campaign_fund(campaign=campaign, amount=budget)
        return campaign_transition(campaign=campaign, to="live")

    return make


@pytest.fixture
def summer(make_live_campaign):
    return make_live_campaign()


def _transaction_failed(connection) -> bool:
    raw = connection.connection
    return raw is not None and raw.info.transaction_status == TransactionStatus.INERROR


@pytest.fixture(autouse=True)
def _brand_columns_named(request, django_db_blocker):
    """After any test that used the database: every row of a table scoped through a parent names
    its parent's brand (tests/brand_columns.py), so the services that wrote them set it. (A test
    that asks for `db` as an argument has its transaction rolled back before this runs: the check
    then reads what is left, unblocked.)"""
    yield
    if not request.node.get_closest_marker("django_db") and not {"db", "transactional_db"} & set(
        request.fixturenames
    ):
        return

    if connection.needs_rollback or _transaction_failed(connection):
        return  # the test ended on a refused statement: its transaction reads nothing more

    with django_db_blocker.unblock():
        wrong = brand_columns_wrong()
    assert wrong == [], "rows without their parent's brand_id (tests/brand_columns.py)"


@pytest.fixture(autouse=True)
def _default_language():
    """A request's language stays active in its thread after the response (LocaleMiddleware sets it
    and nothing resets it): each test starts in the default language, whatever the last one asked."""
    translation.activate(settings.LANGUAGE_CODE)
    yield
    translation.activate(settings.LANGUAGE_CODE)


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Rate limits and one-time codes live in the cache; each test starts without them."""
    cache.clear()
    _shared_accounts.clear()  # account ids of a rolled-back test would be remembered otherwise
    brand_livemode_forget()  # and so would the modes of its brands
    _setup_events.clear()
    yield
    cache.clear()
    _shared_accounts.clear()
    brand_livemode_forget()


# The monitoring system's bearer token: with it, the health endpoints name what is wrong.
MONITORING_TOKEN = "monitoring-token-for-tests"
MONITORING = {"HTTP_AUTHORIZATION": f"Bearer {MONITORING_TOKEN}"}


@pytest.fixture
def monitoring(settings):
    """Requests sent with `**MONITORING` read the health endpoints' details, as a monitor would."""
    settings.METRICS_TOKEN = MONITORING_TOKEN
    return MONITORING
