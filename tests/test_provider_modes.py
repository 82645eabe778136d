"""Mode is a property of every outbound call: a brand's test data never reaches a live provider.

The attack: sign up, make a brand, switch to test data and open its funding page; the live
provider's configuration API opened an account for the test twin, a transfer to it could never be
booked and failed the load balancer's probe, its sweep booked a drift that anyone could read on
/healthz/. Here each step is refused on production settings (SANDBOX off, every live provider
address pointed at a stub that records what reaches it), and every provider call site found in the
code is run for a test brand against that stub.
"""

import ast
import contextlib
import io
import threading
from pathlib import Path

import httpx
import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.urls import reverse

from campaigns.models import Brand
from campaigns.modes import brand_test_twin
from joyback.ledger.models import Transaction
from joyback.modes import provider_routed_for
from joyback.queue import standing_work_health
from payouts import psp
from payouts.bank_accounts import BankAccount, Rail
from payouts.funding import services as funding
from payouts.models import ProviderBalanceCheck, ReconciliationException, TransferEvent, VirtualAccount
from payouts.providers import adyen, adyen_funding, adyen_onboarding, hubspot, klaviyo, mailchimp, vies
from payouts.sandbox.funding import TEST_ACCOUNT_IBAN
from payouts.submission.webhooks import transfer_events_process
from tests.conftest import PASSWORD, totp_enable
from verification.providers import loopback, shop_auth, tiktok, whatsapp

pytestmark = pytest.mark.django_db

ROOT = Path(django_settings.BASE_DIR)
LIVE = "https://live-provider.invalid"
# What an adapter reaches the outside through: the call sites are the functions that call these.
EXITS = {"http_request", "http_client", "psp_client"}
# Outbound calls that are made for no brand and to no provider, and why.
NOT_PROVIDER_CALLS = {
    "joyback.api.webhooks.delivery.webhook_deliver": "a brand's own endpoint, pinned to public addresses",
}


@pytest.fixture
def production(settings, monkeypatch):
    """Production's settings: no sandbox, the live providers' addresses; the network is a stub that
    records every request reaching it and answers with an error."""
    settings.SANDBOX = False
    settings.ADYEN_API_BASE = f"{LIVE}/btl/v4"
    settings.ADYEN_BALANCE_PLATFORM_API_BASE = f"{LIVE}/bcl/v2"
    settings.ADYEN_LEGAL_ENTITY_API_BASE = f"{LIVE}/lem/v4"
    settings.PSP_API_BASE = f"{LIVE}/bank"
    settings.TIKTOK_AUTHORIZE_URL = f"{LIVE}/tiktok/v2/auth/authorize/"
    settings.TIKTOK_API_BASE = f"{LIVE}/tiktok"
    settings.TIKTOK_OEMBED_URL = f"{LIVE}/tiktok/oembed"
    settings.TIKTOK_BUSINESS_API_BASE = f"{LIVE}/tiktok-business"
    settings.WHATSAPP_API_BASE = f"{LIVE}/graph"
    settings.KLAVIYO_API_BASE = f"{LIVE}/klaviyo"
    settings.HUBSPOT_API_BASE = f"{LIVE}/hubspot"
    settings.VIES_API_BASE = f"{LIVE}/vies/rest-api"
    settings.MAILCHIMP_API_BASE = f"{LIVE}/mailchimp/{{dc}}"
    reached, sandboxed = [], []

    def live_network(transport, request):
        reached.append(f"{request.method} {request.url}")
        return httpx.Response(599, request=request, text="the live provider was reached")

    monkeypatch.setattr(httpx.HTTPTransport, "handle_request", live_network)
    in_process = loopback.LoopbackTransport.handle_request

    def sandbox(transport, request):
        sandboxed.append(request.url.path)
        return in_process(transport, request)

    monkeypatch.setattr(loopback.LoopbackTransport, "handle_request", sandbox)
    return reached, sandboxed


# Every provider call site, found in the code.


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def provider_call_sites() -> set[str]:
    """module.function of every function outside the sandboxes and the exits themselves that calls
    an exit: each is a request to some provider."""
    found = set()
    for app in ("joyback", "campaigns", "compliance", "verification", "payouts"):
        for path in (ROOT / app).rglob("*.py"):
            if "sandbox" in path.parts or "migrations" in path.parts:
                continue
            tree = ast.parse(path.read_text())
            for function in ast.walk(tree):
                if not isinstance(function, ast.FunctionDef) or function.name in EXITS:
                    continue
                for node in ast.walk(function):
                    if isinstance(node, ast.Call):
                        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                        if name in EXITS:
                            found.add(f"{_module_name(path)}.{function.name}")
    return found


# Where an HTTP client is made or a request sent without one of the exits, and why that is safe.
HTTPX_HOMES = {
    "payouts.psp.psp_client": "an exit: the mode's routing picks its transport",
    "verification.providers.loopback.http_client": "an exit: the mode's routing picks its transport",
    "joyback.api.webhooks.transport.http_client": "a brand's own endpoint, pinned to public addresses",
    "joyback.health._payment_provider": "the uptime monitor's reachability probe, for no brand",
}


SENDS = {"get", "post", "put", "patch", "delete", "request", "stream", "Client", "AsyncClient"}


def test_no_request_leaves_but_through_the_routed_exits():
    made = set()
    for module, tree in _sources():
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef):
                continue
            for node in ast.walk(function):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and getattr(node.func.value, "id", None) == "httpx"
                    and node.func.attr in SENDS
                ):
                    made.add(f"{module}.{function.name}")
    assert made == set(HTTPX_HOMES)


# The adapters: their functions that reach a provider may be called only inside the mode's routing.
ADAPTERS = {
    "payouts.providers.adyen",
    "payouts.providers.adyen_funding",
    "verification.providers.tiktok",
    "verification.providers.whatsapp",
    "verification.providers.shop_auth",
    "payouts.providers.klaviyo",
    "payouts.providers.hubspot",
    "payouts.providers.mailchimp",
}
ROUTING = {"routed_for", "provider_routed_for"}
# payouts.psp is the routing point for the payouts: it routes each call by its payout's mode itself.
ROUTES_ITSELF = {"payouts.psp"}


def _sources():
    for app in ("joyback", "campaigns", "compliance", "verification", "payouts"):
        for path in (ROOT / app).rglob("*.py"):
            if "sandbox" not in path.parts and "migrations" not in path.parts:
                yield _module_name(path), ast.parse(path.read_text())


def adapter_functions() -> dict[str, set[str]]:
    """Per adapter, its functions that reach a provider, directly or through another of its own."""
    sites = provider_call_sites()
    found = {}
    for module, tree in _sources():
        if module not in ADAPTERS:
            continue
        functions = {f.name: f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)}
        reaching = {name for name in functions if f"{module}.{name}" in sites}
        grown = True
        while grown:
            grown = False
            for name, function in functions.items():
                called = {getattr(n.func, "id", None) for n in ast.walk(function) if isinstance(n, ast.Call)}
                if name not in reaching and called & reaching:
                    reaching.add(name)
                    grown = True
        found[module] = reaching
    return found


def _routed(node, parents) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.With):
            for item in node.items:
                call = item.context_expr
                if isinstance(call, ast.Call) and getattr(call.func, "id", None) in ROUTING:
                    return True
    return False


def _enclosing_function(node, parents) -> str:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.FunctionDef):
            return node.name
    return ""


def unrouted_provider_calls() -> list[str]:
    """Calls of an adapter's provider-reaching function from the app that no routing encloses,
    lexically or through every caller of the helper they are in."""
    adapters = adapter_functions()
    unrouted = []
    for module, tree in _sources():
        if module in ADAPTERS or module in ROUTES_ITSELF:
            continue
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    if f"{node.module}.{alias.name}" in adapters:
                        aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        calls = []  # (the enclosing function, whether routed there, what it calls)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            target = aliases.get(getattr(node.func.value, "id", None))
            if target and node.func.attr in adapters[target]:
                calls.append((node, f"{target}.{node.func.attr}"))
        helpers = {_enclosing_function(node, parents) for node, _name in calls if not _routed(node, parents)}
        # A helper is routed when each of its callers in the module is, lexically or as a helper.
        routed_helpers, grown = set(), True
        while grown:
            grown = False
            for helper in helpers - routed_helpers:
                uses = [
                    n
                    for n in ast.walk(tree)
                    if isinstance(n, ast.Call) and getattr(n.func, "id", None) == helper
                ]
                if uses and all(
                    _routed(n, parents) or _enclosing_function(n, parents) in routed_helpers for n in uses
                ):
                    routed_helpers.add(helper)
                    grown = True
        for node, name in calls:
            if not _routed(node, parents) and _enclosing_function(node, parents) not in routed_helpers:
                unrouted.append(f"{module}:{node.lineno} {name}")
    return unrouted


def test_every_call_to_a_provider_is_made_inside_the_modes_routing():
    """Whoever calls an adapter says for which mode: a new call that does not cannot land."""
    assert adapter_functions()["verification.providers.tiktok"] >= {"login_complete", "oembed"}
    assert unrouted_provider_calls() == []


ORDER = psp.PaymentOrder(
    end_to_end_id="JBTESTTWIN0001",
    scheme="sepa_instant",
    amount=1_00,
    currency="EUR",
    creditor_name="Pat Example",
    account=BankAccount(rail=Rail.SEPA, iban="DE89370400440532013000"),
    livemode=False,  # a test brand's: the sandbox's play money
)
# Each call site, run as a test brand's call would run it (its provider's errors are answers too).
CALLS = {
    "payouts.psp._payee_verify": lambda: psp.payee_verify(
        iban=ORDER.account.iban, name="Pat", livemode=False
    ),
    "payouts.psp.payment_file_send": lambda: psp.payment_file_send(xml=b"<Document/>"),
    "payouts.providers.adyen.transfer_submit": lambda: adyen.transfer_submit(ORDER),
    "payouts.providers.adyen.transfer_find": lambda: adyen.transfer_find(ORDER.end_to_end_id),
    "payouts.providers.adyen.transfer_get": lambda: adyen.transfer_get(transfer_id="1W1UG35U8A9J5ZLG"),
    "payouts.providers.vies.vat_number_check": lambda: vies.vat_number_check(vat_id="FR12345678901"),
    "payouts.providers.adyen.internal_transfer_submit": lambda: adyen.internal_transfer_submit(
        request=adyen.internal_transfer_request(
            source="BA1", destination="BA2", amount=1, currency="EUR", reference="r", description="d"
        ),
        key="k",
    ),
    "payouts.providers.adyen_funding._post": lambda: adyen_funding.account_open(
        key="k",
        account_holder_id="AH1",
        currency="EUR",
        reference="r",
        description="d",
        opened=adyen_funding.OpenedAccount(),
    ),
    # One side is always the platform's own balance account: no other transfer is asked for.
    "payouts.providers.adyen_funding.internal_transfer": lambda: adyen_funding.internal_transfer(
        key="k",
        source=django_settings.ADYEN_BALANCE_ACCOUNT_ID,
        destination="BA1",
        amount=1,
        currency="EUR",
        reference="r",
        description="d",
    ),
    "payouts.providers.adyen_onboarding._post": lambda: adyen_onboarding.legal_entity_create(
        key="k", legal_name="Twin GmbH", registration_number="HRB 1", country="DE", reference="r"
    ),
    "payouts.providers.adyen_onboarding.onboarding_link_create": lambda: (
        adyen_onboarding.onboarding_link_create(
            legal_entity_id="LE1", redirect_url="https://joyback.example/", language="en"
        )
    ),
    "payouts.providers.adyen_funding.balance_get": lambda: adyen_funding.balance_get(
        balance_account_id="BA1", currency="EUR"
    ),
    "payouts.providers.adyen_funding.transactions_list": lambda: adyen_funding.transactions_list(
        balance_account_id="BA1", since=_now(), until=_now()
    ),
    "verification.providers.tiktok._token_request": lambda: tiktok.code_exchange(code="c", redirect_uri="/"),
    "verification.providers.tiktok.user_info": lambda: tiktok.user_info(access_token="t", fields="open_id"),
    "verification.providers.tiktok.videos_query": lambda: tiktok.videos_query(
        access_token="t", video_ids=["1"]
    ),
    "verification.providers.tiktok.short_link_resolve": lambda: tiktok.short_link_resolve(
        url="https://vm.tiktok.com/ZMabc123/"
    ),
    "verification.providers.tiktok.videos_list": lambda: tiktok.videos_list(access_token="t"),
    "verification.providers.tiktok.creator_info_query": lambda: tiktok.creator_info_query(access_token="t"),
    "verification.providers.tiktok.video_init": lambda: tiktok.video_init(access_token="t", body={}),
    "verification.providers.tiktok.video_upload": lambda: tiktok.video_upload(
        # The upload address is the one the sandbox's video/init answered with.
        upload_url=f"http://sandbox.localhost{reverse('verification:sandbox_tiktok_upload')}",
        file=io.BytesIO(b"x"),
        video_size=1,
        content_type="video/mp4",
        source_info={"chunk_size": 1, "total_chunk_count": 1},
    ),
    "verification.providers.tiktok.publish_status_fetch": lambda: tiktok.publish_status_fetch(
        access_token="t", publish_id="p"
    ),
    "verification.providers.tiktok.oembed": lambda: tiktok.oembed(url="https://www.tiktok.com/@a/video/1"),
    "verification.providers.tiktok.ad_code_info": lambda: tiktok.ad_code_info(auth_code="#abc"),
    "verification.providers.tiktok.commercial_content_query": lambda: tiktok.commercial_content_query(
        username="creator", date_min="20261201", date_max="20261203"
    ),
    "verification.providers.whatsapp.template_send": lambda: whatsapp.template_send(
        to="+491512345678", template="payout_sent", language="en", parameters=["1"]
    ),
    "verification.providers.whatsapp.templates_list": lambda: whatsapp.templates_list(),
    "verification.providers.whatsapp.messaging_limit": lambda: whatsapp.messaging_limit(),
    "verification.providers.whatsapp.signup_code_exchange": lambda: whatsapp.signup_code_exchange(code="c"),
    "verification.providers.whatsapp.token_wabas": lambda: whatsapp.token_wabas(token="EAAx"),
    "verification.providers.whatsapp.waba_phone_numbers": lambda: whatsapp.waba_phone_numbers(
        waba_id="1", token="EAAx"
    ),
    "verification.providers.whatsapp.waba_subscribe": lambda: whatsapp.waba_subscribe(
        waba_id="1", token="EAAx"
    ),
    "payouts.providers.klaviyo.subscribers_push": lambda: klaviyo.subscribers_push(
        api_key="pk_x", subscribers=[klaviyo.Subscriber("whatsapp", "+4915100000001", _now(), "JoyBack")]
    ),
    "payouts.providers.klaviyo.unsubscribed_since": lambda: klaviyo.unsubscribed_since(
        api_key="pk_x", since=None
    ),
    "payouts.providers.klaviyo.key_check": lambda: klaviyo.key_check(api_key="pk_x"),
    "payouts.providers.hubspot.subscribers_push": lambda: hubspot.subscribers_push(
        api_key="pat-x", subscribers=[klaviyo.Subscriber("whatsapp", "+4915100000001", _now(), "JoyBack")]
    ),
    "payouts.providers.hubspot.unsubscribed_of": lambda: hubspot.unsubscribed_of(
        api_key="pat-x", contacts=[("whatsapp", "+4915100000001")]
    ),
    "payouts.providers.hubspot.key_check": lambda: hubspot.key_check(api_key="pat-x"),
    "payouts.providers.mailchimp.email_permission_ids": lambda: mailchimp.email_permission_ids(
        api_key=MAILCHIMP_KEY, list_id="a1"
    ),
    "payouts.providers.mailchimp.subscribers_push": lambda: mailchimp.subscribers_push(
        api_key=MAILCHIMP_KEY,
        subscribers=[klaviyo.Subscriber("email", "p@example.com", _now(), "JoyBack")],
        list_id="a1",
    ),
    "payouts.providers.mailchimp.unsubscribed_since": lambda: mailchimp.unsubscribed_since(
        api_key=MAILCHIMP_KEY, list_id="a1", since=None
    ),
    "payouts.providers.mailchimp.member_status": lambda: mailchimp.member_status(
        api_key=MAILCHIMP_KEY, list_id="a1", email="p@example.com"
    ),
    "payouts.providers.mailchimp.webhook_create": lambda: mailchimp.webhook_create(
        api_key=MAILCHIMP_KEY, list_id="a1", url="https://joyback.example/webhooks/mailchimp/1/s/"
    ),
    "payouts.providers.mailchimp.key_check": lambda: mailchimp.key_check(api_key=MAILCHIMP_KEY, list_id="a1"),
    "verification.providers.shop_auth.shopify_access_token": lambda: shop_auth.shopify_access_token(
        domain="victim-store.myshopify.com", code="c"
    ),
    "verification.providers.shop_auth.woocommerce_key_verify": lambda: shop_auth.woocommerce_key_verify(
        domain="shop.example", consumer_key="ck_x", consumer_secret="cs_x"
    ),
}


MAILCHIMP_KEY = "0123456789abcdef0123456789abcdef-us21"


def _now():
    from django.utils import timezone

    return timezone.now()


def test_the_list_of_provider_call_sites_is_complete():
    """A new call to a provider is run below for a test brand before it can land."""
    assert provider_call_sites() == set(CALLS) | set(NOT_PROVIDER_CALLS)


@pytest.mark.parametrize("site", sorted(CALLS))
def test_every_provider_call_site_for_a_test_brand_stays_in_the_sandbox(production, site):
    reached, sandboxed = production

    # The sandbox's refusal is an answer too: only where the request went matters here.
    with provider_routed_for(livemode=False), contextlib.suppress(Exception):
        CALLS[site]()

    assert reached == []
    assert sandboxed and all(path.startswith("/sandbox/") for path in sandboxed), sandboxed


def test_a_live_brands_call_inside_a_test_brands_stays_in_the_sandbox(production):
    reached, sandboxed = production

    live_inside_test = provider_routed_for(livemode=False), provider_routed_for(livemode=True)
    with live_inside_test[0], live_inside_test[1], contextlib.suppress(tiktok.TikTokError):
        tiktok.oembed(url="https://www.tiktok.com/@a/video/1")

    assert reached == [] and sandboxed


def test_a_live_brands_call_goes_to_the_live_provider(production):
    """The stub is reached when it should be: the tests above would see a live call."""
    reached, _sandboxed = production

    with provider_routed_for(livemode=True), pytest.raises(psp.PspUnknown):
        adyen.transfer_find(ORDER.end_to_end_id)

    assert reached and reached[0].startswith(f"GET {LIVE}/btl/v4/transfers")


# The test twin's flow, as the attacker walked it.


@pytest.fixture
def mallory(client):
    """Signed up a minute ago through the form: no confirmed email, no second factor."""
    signed_up = client.post(
        reverse("account_signup"),
        {"email": "mallory@example.com", "password1": PASSWORD, "password2": PASSWORD},
    )
    assert signed_up.status_code == 302, signed_up.content[:500]
    return signed_up


def test_a_test_twins_funding_page_opens_nothing_at_the_live_provider(
    client, mallory, production, django_capture_on_commit_callbacks
):
    reached, _sandboxed = production
    client.post(reverse("brand_new"), {"name": "Mallory Mugs", "currency": "EUR"})
    brand = Brand.objects.get(name="Mallory Mugs")
    switched = client.post(f"/brands/{brand.slug}/mode/", {"mode": "test"})
    assert switched.status_code == 302

    with django_capture_on_commit_callbacks(execute=True):
        page = client.get(f"/brands/{brand.slug}--test/funding/")

    assert page.status_code == 200
    assert reached == []
    assert not VirtualAccount.objects.exists()
    text = page.content.decode()
    assert TEST_ACCOUNT_IBAN in text and 'data-testid="virtual-iban"' not in text


def test_a_twin_is_never_verified_for_a_live_account(alpaca, production, django_capture_on_commit_callbacks):
    """An account asked for a twin before this was refused is never opened at the provider."""
    reached, _sandboxed = production
    twin = brand_test_twin(brand=alpaca)
    account = VirtualAccount.objects.create(brand=twin, currency="EUR", provider="adyen")

    with pytest.raises(funding.FundingRefused, match="Test data has no account"):
        funding.virtual_account_request(brand=twin, currency="EUR")
    funding.virtual_accounts_open(ids=[account.pk])

    account.refresh_from_db()
    assert account.status == "failed" and account.iban == ""
    assert reached == []


def test_a_live_brand_staff_have_not_verified_opens_no_account(client, mallory, production):
    reached, _sandboxed = production
    client.post(reverse("brand_new"), {"name": "Mallory Mugs", "currency": "EUR"})
    brand = Brand.objects.get(name="Mallory Mugs")
    brand_test_twin(brand=brand)  # its twin's play-money verification stands for nothing live

    with pytest.raises(funding.FundingRefused):
        funding.virtual_account_request(brand=brand, currency="EUR")
    assert client.get(f"/brands/{brand.slug}/funding/").status_code == 200

    assert reached == [] and not VirtualAccount.objects.exists()


def test_a_test_campaigns_tiktok_sign_in_never_sends_the_person_to_tiktok(
    client, alpaca, make_live_campaign, production
):
    make_live_campaign(brand=brand_test_twin(brand=alpaca), slug="twin-glow")

    started = client.post(reverse("verification:tiktok_start", args=["twin-glow"]))

    assert started.status_code == 302
    assert started["Location"].startswith("/sandbox/tiktok/v2/auth/authorize/"), started["Location"]
    assert client.get(started["Location"]).status_code == 404  # closed to the network here
    make_live_campaign(slug="live-glow")  # a live campaign's person goes to TikTok itself
    live = client.post(reverse("verification:tiktok_start", args=["live-glow"]))
    assert live["Location"].startswith(f"{LIVE}/tiktok/v2/auth/authorize/")


# What arrives on an account the ledger cannot book into.


def _transfer_event(account, transfer_id, *, category="bank", direction="incoming", amount=50_000_00):
    # As Adyen sends them: the transfer's type, and the balances it moved on the account.
    moved = amount if direction == "incoming" else -amount
    data = {
        "id": transfer_id,
        "category": category,
        "direction": direction,
        "type": "bankTransfer" if category == "bank" else "internalTransfer",
        "status": "booked",
        "amount": {"currency": "EUR", "value": amount},
        "balanceAccount": {"id": account.balance_account_id},
        "balances": [{"currency": "EUR", "balance": moved, "received": 0, "reserved": 0}],
        "sequenceNumber": 2,
    }
    if category == "internal":
        data["counterparty"] = {"balanceAccountId": django_settings.ADYEN_BALANCE_ACCOUNT_ID}
    return TransferEvent.objects.create(
        provider="adyen",
        event_id=f"{transfer_id}:2",
        payload={"type": "balancePlatform.transfer.updated", "data": data},
    )


@pytest.fixture
def twin_account(alpaca):
    """A twin's account at the live provider, as the attack left it."""
    return VirtualAccount.objects.create(
        brand=brand_test_twin(brand=alpaca),
        currency="EUR",
        provider="adyen",
        status="open",
        balance_account_id="BALIVETWIN0000000000000001",
        iban="DE02100100100006820101",
    )


def test_a_deposit_that_cannot_be_booked_is_parked_for_staff_and_never_retried(client, twin_account):
    booked_before = Transaction.objects.count()
    event = _transfer_event(twin_account, "TRLIVE0001")
    again = TransferEvent.objects.create(provider="adyen", event_id="TRLIVE0001:2b", payload=event.payload)

    transfer_events_process(ids=[event.pk, again.pk])

    event.refresh_from_db()
    assert event.processed_at is not None and event.outcome == "deposit_parked"
    parked = ReconciliationException.objects.get()
    assert parked.brand_id == twin_account.brand_id and parked.amount == 50_000_00
    assert "TRLIVE0001" in parked.detail
    assert Transaction.objects.count() == booked_before
    assert not any(kind.failing for kind in standing_work_health())
    assert client.get("/healthz/ready").status_code == 200


def test_a_sweep_from_an_account_the_ledger_cannot_book_is_parked_and_books_no_drift(client, twin_account):
    booked_before = Transaction.objects.count()
    event = _transfer_event(twin_account, "SWLIVE0001", category="internal", direction="outgoing")

    transfer_events_process(ids=[event.pk])

    event.refresh_from_db()
    assert event.outcome == "sweep_parked"
    assert Transaction.objects.count() == booked_before
    assert ReconciliationException.objects.get().amount == -50_000_00


@pytest.mark.django_db(transaction=True)
def test_deliveries_of_one_unbookable_transfer_racing_raise_one_exception(twin_account):
    payload = _transfer_event(twin_account, "TRLIVE0003").payload
    barrier = threading.Barrier(4)
    outcomes, errors = [], []

    def worker():
        try:
            barrier.wait()
            outcomes.append(funding.provider_transfer_apply(payload))
        except Exception as error:  # a race's failure is the test's finding
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == [] and outcomes == ["deposit_parked"] * 4
    assert ReconciliationException.objects.count() == 1


def test_a_deposit_the_ledger_refuses_is_parked(alpaca, monkeypatch):
    """Whatever else makes the ledger refuse a booked deposit, it is parked, not retried."""
    from joyback.ledger.services import InvalidPosting

    account = VirtualAccount.objects.get(brand=alpaca, currency="EUR")  # its own, at the provider

    def refuse(**_kwargs):
        raise InvalidPosting("mixed modes")

    monkeypatch.setattr(funding, "transfer_post", refuse)
    event = _transfer_event(account, "TRLIVE0002", amount=10_00)

    transfer_events_process(ids=[event.pk])

    event.refresh_from_db()
    assert event.outcome == "deposit_parked" and ReconciliationException.objects.count() == 1


# The health pages.


def test_work_given_up_does_not_take_nodes_out_of_rotation(client):
    TransferEvent.objects.create(
        provider="adyen", event_id="X:1", payload={"type": "balancePlatform.transfer.updated"}, attempts=99
    )

    assert client.get(reverse("healthz_work")).status_code == 503  # a person is told
    ready = client.get("/healthz/ready")
    assert ready.status_code == 200 and set(ready.json()["checks"]) == {"database", "redis"}


@pytest.fixture
def drifts():
    ProviderBalanceCheck.objects.create(
        provider="adyen",
        currency="EUR",
        provider_balance=0,
        ledger_balance=-5_000_012,
        checked_at=_now(),
    )
    ReconciliationException.objects.create(
        reason="bank_drift", detail="Ledger 7,777.77 EUR, bank 1,234.56 EUR", amount=654_321, currency="EUR"
    )


def test_anonymous_healthz_says_the_words_without_any_amount(client, drifts, make_user):
    response = client.get("/healthz/")

    assert response.status_code == 503
    text = response.content.decode()
    assert response.json() == {"status": "failing"}
    for amount in ("5000012", "5,000,012", "7,777.77", "1,234.56", "654321", "DRIFT"):
        assert amount not in text

    client.force_login(make_user("vic@alpaca.example"))  # signed in, not staff: the same words
    assert "5000012" not in client.get("/healthz/").content.decode()


def test_staff_see_the_drift_amounts_on_healthz(client, drifts, make_user):
    # Staff with their second factor, as for every admin page and /metrics; without it, the words.
    sam = make_user("sam@joyback.example", is_staff=True)
    client.force_login(sam)
    assert "5000012" not in client.get("/healthz/").content.decode()
    totp_enable(sam)

    body = client.get("/healthz/").json()

    assert any("PROVIDER DRIFT" in line and "-5000012" in line for line in body["bank"])
    assert any("7,777.77" in line for line in body["bank"])


# What held before stays: the sandboxes are closed to the network in production, test payouts stay.


@pytest.mark.parametrize(
    "path",
    [
        "/sandbox/tiktok/v2/oauth/token/",
        "/sandbox/tiktok/v2/video/query/",
        "/sandbox/tiktok/oembed",
        "/sandbox/whatsapp/graph/v21.0/106540352242922/messages",
        "/sandbox/bank/bcl/v2/balanceAccounts",
        "/sandbox/bank/btl/v4/transfers",
    ],
)
def test_the_sandboxes_are_404_from_the_network_in_production(client, production, path):
    assert client.post(path, {}).status_code == 404
    assert client.get(path).status_code in (404, 405)


def test_a_test_payout_in_production_goes_to_the_sandbox_bank(production):
    reached, sandboxed = production

    status = psp.payment_submit(
        psp.PaymentOrder(**{**ORDER.__dict__, "end_to_end_id": "JBTESTTWIN0002", "livemode": False})
    )

    assert reached == [] and sandboxed[0].startswith("/sandbox/bank/btl/v4/transfers")
    assert status.status
