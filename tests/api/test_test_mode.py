"""Test mode and live mode, as a brand's developer meets them: a jb_test_ key works on the brand's
test data (the sandbox bank's play money), every answer and webhook says `livemode`, and nothing a
test key does changes a live row, a live balance or what the live bank channel sees."""

import re

import pytest
from django.db import IntegrityError, connection, transaction
from django.test import TestCase
from django.urls import get_resolver

from campaigns.models import Brand
from campaigns.modes import brand_test_twin
from campaigns.services.brands import brand_create
from campaigns.services.campaigns import campaign_create, campaign_transition
from campaigns.services.funding import campaign_fund
from joyback.api.keys import _hash, api_key_authenticate, api_key_create
from joyback.api.models import ApiKey, IdempotencyKey, InboundEvent, WebhookEvent
from joyback.api.webhooks.endpoints import webhook_endpoint_create
from joyback.ledger.models import Account, AccountKind, Entry, Transaction
from joyback.ledger.services import InvalidPosting, platform_bank, transfer_post
from payouts.models import Payout, ReconciliationException, SandboxBankMessage, StatementLine
from payouts.reconciliation.bank_health import bank_drift_now, ledger_bank_balance
from payouts.sandbox.funding import (
    PlayMoneyRefused,
    play_money_add,
    play_money_notification_book,
    play_money_transfer_notify,
)
from tests.api.conftest import Api, purchase
from tests.campaigns.test_cross_brand import walk
from verification.models import ActionClaim, Participant, Purchase

pytestmark = pytest.mark.django_db


def cashback(brand, slug):
    campaign = campaign_create(
        brand=brand, name=slug, slug=slug, package="cashback", currency="EUR", countries=["DE"], languages=[]
    )
    campaign.rules.filter(trigger="purchase").update(cashback_basis_points=500, return_window_days=14)
    campaign_fund(campaign=campaign, amount=50_00)
    return campaign_transition(campaign=campaign, to="live")


@pytest.fixture
def twin(alpaca):
    twin = brand_test_twin(brand=alpaca)
    play_money_add(brand=twin, amount=200_00)
    return twin


@pytest.fixture
def test_api(client, twin):
    return Api(
        client, api_key_create(brand_id=twin.pk, name="dev", scopes=["read", "events", "payouts"]).secret
    )


@pytest.fixture
def live_api(client, alpaca, shop):
    return Api(
        client, api_key_create(brand_id=alpaca.pk, name="shop", scopes=["read", "events", "payouts"]).secret
    )


def live_state() -> dict:
    """Every live row a test key could touch, and the live money: equal before and after means
    nothing live changed."""
    live = list(Brand.objects.filter(livemode=True).values_list("pk", flat=True))
    accounts = Account.objects.filter(livemode=True).order_by("pk")
    return {
        "brands": list(Brand.objects.filter(livemode=True).order_by("pk").values()),
        "accounts": list(accounts.values("pk", "kind", "balance", "held")),
        "entries": Entry.objects.filter(account__livemode=True).count(),
        "transactions": Transaction.objects.filter(entries__account__livemode=True).distinct().count(),
        "bank": ledger_bank_balance(currency="EUR"),
        "drift": bank_drift_now(),
        "payouts": list(Payout.objects.filter(brand_id__in=live).order_by("pk").values()),
        "claims": list(ActionClaim.objects.filter(campaign__brand_id__in=live).order_by("pk").values()),
        "purchases": list(Purchase.objects.filter(brand_id__in=live).order_by("pk").values()),
        "participants": list(Participant.objects.filter(brand_id__in=live).order_by("pk").values()),
        "events": list(InboundEvent.objects.filter(brand_id__in=live).order_by("pk").values()),
        "webhooks": list(WebhookEvent.objects.filter(brand_id__in=live).order_by("pk").values()),
        "idempotency": IdempotencyKey.objects.filter(brand_id__in=live).count(),
        "keys": list(ApiKey.objects.filter(brand_id__in=live).order_by("pk").values("pk", "revoked_at")),
        "bank_channel": (
            SandboxBankMessage.objects.count(),
            StatementLine.objects.count(),
            ReconciliationException.objects.count(),
        ),
    }


def api_patterns():
    return [
        str(pattern.pattern).removeprefix("api/v1/")
        for route, pattern, _namespace, _converters in walk(get_resolver().url_patterns)
        if route.startswith("api/v1/") and "schema" not in route and "docs" not in route
    ]


def test_a_test_key_walks_every_endpoint_and_nothing_live_changes(
    live_api, test_api, twin, receiver, django_capture_on_commit_callbacks
):
    # Live data first: a purchase, a payout and a webhook endpoint of the live brand.
    webhook_endpoint_create(
        brand_id=live_api_brand(live_api), url="https://alpaca.example/hook", event_types=["purchase.created"]
    )
    with django_capture_on_commit_callbacks(execute=True):
        live_event = live_api.report(purchase(order_id="LIVE-1")).json()
    assert live_event["livemode"] is True and live_event["status"] == "processed"
    webhook_endpoint_create(
        brand_id=twin.pk, url="https://alpaca.example/test-hook", event_types=["purchase.created"]
    )
    test_campaign = cashback(twin, "cashback-week-test")
    before = live_state()
    receiver.requests.clear()

    walked = set()

    def seen(path, response, status=200):
        assert response.status_code == status, (path, response.content)
        body = response.json()
        assert body["livemode"] is False, path
        for item in body.get("data", []):
            assert item["livemode"] is False, path
        return body

    with django_capture_on_commit_callbacks(execute=True):
        accepted = seen(
            "events", test_api.post("events", purchase(order_id="TEST-1"), idempotency_key="t-1"), 202
        )
        replay = test_api.post("events", purchase(order_id="TEST-1"), idempotency_key="t-1")
    assert replay.json() == accepted and replay["Idempotent-Replayed"] == "true"
    walked.add("events")
    event = seen("events/<uuid:event_id>", test_api.get(f"events/{accepted['id']}"))
    walked.add("events/<uuid:event_id>")
    assert event["status"] == "processed", event
    claim = event["claim"]
    for path, url in [
        ("campaigns", "campaigns"),
        ("campaigns/<int:campaign_id>", f"campaigns/{test_campaign.pk}"),
        ("balances", "balances"),
        ("participants", "participants"),
        ("participants/<int:participant_id>", f"participants/{claim['participant_id']}"),
        ("claims", "claims"),
        ("claims/<int:claim_id>", f"claims/{claim['id']}"),
        ("reconciliation/report", "reconciliation/report"),
    ]:
        seen(path, test_api.get(url))
        walked.add(path)
    payee = {"name": "Mo Manual", "email": "mo@example.com", "iban": "DE89370400440532013000"}
    with django_capture_on_commit_callbacks(execute=True):
        made = seen(
            "payouts", test_api.post("payouts", {"amount": 10_00, "currency": "EUR", "payee": payee}), 201
        )
    seen("payouts", test_api.get("payouts"))
    walked.add("payouts")
    seen("payouts/<int:payout_id>", test_api.get(f"payouts/{made['id']}"))
    walked.add("payouts/<int:payout_id>")
    with django_capture_on_commit_callbacks(execute=True):
        second = seen(
            "payouts", test_api.post("payouts", {"amount": 5_00, "currency": "EUR", "payee": payee}), 201
        )
    cancel = test_api.post(f"payouts/{second['id']}/cancel", None)
    # A payout already on its way may not be cancelled; either way the answer is test data.
    assert cancel.status_code in (200, 409) and (
        cancel.status_code == 409 or cancel.json()["livemode"] is False
    )
    walked.add("payouts/<int:payout_id>/cancel")
    with django_capture_on_commit_callbacks(execute=True):
        seen("events", test_api.report({"type": "refund", "order_id": "TEST-1"}))

    assert walked >= set(api_patterns()), f"walk the new endpoints too: {set(api_patterns()) - walked}"
    # The test payout left the sandbox bank's test account, in the test ledger only.
    assert Payout.objects.get(pk=made["id"]).brand_id == twin.pk
    # A new payee waits for a second person, as in live data; its money is held in test accounts.
    assert Payout.objects.get(pk=made["id"]).status == "awaiting_approval"
    assert Account.objects.filter(brand_id=twin.pk, livemode=False).exclude(balance=0).count() >= 2
    # The test-mode webhooks went to the test endpoint only, marked as test data.
    assert receiver.requests and {str(r.url) for r in receiver.requests} == {
        "https://alpaca.example/test-hook"
    }
    assert {body["livemode"] for body in receiver.bodies()} == {False}
    assert live_state() == before


def live_api_brand(api) -> int:
    return ApiKey.objects.get(prefix="_".join(api.secret.split("_")[:3])).brand_id


def test_keys_say_which_they_are_and_see_their_own_data(live_api, test_api, twin, alpaca):
    assert live_api.secret.startswith("jb_live_") and test_api.secret.startswith("jb_test_")
    cashback(twin, "cashback-week-test")
    live_ids = {c["id"] for c in live_api.get("campaigns").json()["data"]}
    test_ids = {c["id"] for c in test_api.get("campaigns").json()["data"]}
    assert live_ids and test_ids and not live_ids & test_ids
    live_event = live_api.report(purchase(order_id="SEEN-1")).json()
    assert test_api.get(f"events/{live_event['id']}").status_code == 404
    assert test_api.get(f"claims/{live_event['claim']['id']}").status_code == 404
    test_event = test_api.report(purchase(order_id="SEEN-1")).json()
    assert live_api.get(f"events/{test_event['id']}").status_code == 404
    # The same order id in test and live data is two purchases.
    assert test_event["claim"]["id"] != live_event["claim"]["id"]


def test_a_key_made_before_the_modes_keeps_working_as_a_live_key(client, alpaca, shop):
    secret = "jb_0123456789ab_" + "s3cret_with_underscores"
    ApiKey.objects.create(
        brand_id=alpaca.pk, name="old", prefix="jb_0123456789ab", secret_hash=_hash(secret), scopes=["read"]
    )
    assert api_key_authenticate(secret=secret).livemode is True
    answer = Api(client, secret).get("campaigns")
    assert answer.status_code == 200 and answer.json()["livemode"] is True


def test_a_test_key_of_another_brand_finds_nothing(client, twin, bison):
    bison_test = brand_test_twin(brand=bison)
    other = Api(client, api_key_create(brand_id=bison_test.pk, name="x", scopes=["read"]).secret)
    cashback(twin, "cashback-week-test")
    answer = other.get("campaigns")
    assert answer.json()["data"] == [] and answer.json()["livemode"] is False


def test_the_webhook_of_each_mode_says_which_it_is(live_api, test_api, twin, alpaca, receiver):
    webhook_endpoint_create(
        brand_id=alpaca.pk, url="https://alpaca.example/live", event_types=["purchase.created"]
    )
    webhook_endpoint_create(
        brand_id=twin.pk, url="https://alpaca.example/test", event_types=["purchase.created"]
    )
    cashback(twin, "cashback-week-test")
    with TestCase.captureOnCommitCallbacks(execute=True):
        live_api.report(purchase(order_id="W-1"))
        test_api.report(purchase(order_id="W-2"))
    by_url = {str(r.url): body for r, body in zip(receiver.requests, receiver.bodies(), strict=True)}
    assert by_url["https://alpaca.example/live"]["livemode"] is True
    assert by_url["https://alpaca.example/test"]["livemode"] is False
    assert by_url["https://alpaca.example/test"]["data"]["order_id"] == "W-2"


def test_the_database_refuses_a_transaction_mixing_test_and_live_accounts(alpaca, twin):
    live_bank = platform_bank(currency="EUR", livemode=True)
    test_bank = platform_bank(currency="EUR", livemode=False)
    test_funding = Account.objects.get(brand_id=twin.pk, kind=AccountKind.BRAND_FUNDING)
    assert (live_bank.livemode, test_bank.livemode, test_funding.livemode) == (True, False, False)
    assert live_bank.pk != test_bank.pk
    entries = Entry.objects.count()
    with pytest.raises(InvalidPosting, match="may not mix test and live"):
        transfer_post(source=live_bank, destination=test_funding, amount=1_00, reason="mixed")
    assert Entry.objects.count() == entries
    # Written past the ledger's write path, all legs at once or one by one, the database refuses it.
    with pytest.raises(IntegrityError, match="mixes test and live"), transaction.atomic():
        both = Transaction.objects.create(reason="by hand", fingerprint="y")
        Entry.objects.bulk_create(
            [
                Entry(transaction=both, account=live_bank, amount=1, currency="EUR"),
                Entry(transaction=both, account=test_bank, amount=-1, currency="EUR"),
            ]
        )
    with pytest.raises(IntegrityError, match="mixes test and live"), transaction.atomic():
        tx = Transaction.objects.create(reason="by hand", fingerprint="x")
        Entry.objects.create(transaction=tx, account=test_bank, amount=1, currency="EUR")
        Entry.objects.create(transaction=tx, account=live_bank, amount=-1, currency="EUR")
    assert Entry.objects.count() == entries


def test_an_accounts_mode_and_a_brands_mode_are_fixed(alpaca, twin):
    with pytest.raises(Exception, match="fixed when the account is made"), transaction.atomic():
        Account.objects.filter(brand_id=twin.pk).update(livemode=True)
    with (
        pytest.raises(Exception, match="fixed when the brand is made"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(
            "UPDATE campaigns_brand SET livemode = true, live_brand_id = NULL WHERE id = %s", [twin.pk]
        )
    assert Brand.objects.get(pk=twin.pk).livemode is False


def test_test_funds_come_from_the_sandbox_banks_signed_message_only(twin, alpaca):
    xml, signature = play_money_transfer_notify(brand=twin, amount=50_00)
    before = Account.objects.get(brand_id=twin.pk, kind=AccountKind.BRAND_FUNDING).balance
    tampered = xml.replace(b"50.00", b"5000.00")
    with pytest.raises(PlayMoneyRefused, match="not signed by the test-mode bank"):
        play_money_notification_book(xml=tampered, signature=signature)
    assert Account.objects.get(brand_id=twin.pk, kind=AccountKind.BRAND_FUNDING).balance == before
    play_money_notification_book(xml=xml, signature=signature)
    play_money_notification_book(xml=xml, signature=signature)  # the same message twice books once
    assert Account.objects.get(brand_id=twin.pk, kind=AccountKind.BRAND_FUNDING).balance == before + 50_00
    with pytest.raises(PlayMoneyRefused, match="test data only"):
        play_money_add(brand=alpaca, amount=1_00)


def test_test_funds_never_reach_the_live_bank_or_its_drift(twin, alpaca):
    bank, drift, lines = ledger_bank_balance(currency="EUR"), bank_drift_now(), StatementLine.objects.count()
    play_money_add(brand=twin, amount=300_00)
    assert (ledger_bank_balance(currency="EUR"), bank_drift_now()) == (bank, drift)
    assert StatementLine.objects.count() == lines and not SandboxBankMessage.objects.exists()


def test_a_live_statement_naming_a_twins_reference_books_nothing_to_test_data(twin):
    from payouts.reconciliation.references import brand_deposit_reference, brand_for_reference

    reference = brand_deposit_reference(twin)
    assert brand_for_reference(f"Alpaca {reference}") is None
    assert brand_for_reference(f"Alpaca {reference}", livemode=False) == twin


def test_a_test_payout_goes_through_the_sandbox_bank_whatever_the_live_provider_is(
    twin, alice, fiona, settings, monkeypatch
):
    """A deployment whose payouts are live (no SANDBOX, Adyen's live API, a real bank channel):
    a test payout is still sent to, answered and settled by the sandbox bank inside the app, and
    no request leaves for the network."""
    import httpx

    from payouts.manual.services import payout_approve, payout_manual_enter
    from payouts.models.payouts import PayoutStatus
    from payouts.rails import iban_check
    from payouts.submission.submit import payout_submit
    from payouts.submission.sweeps import payouts_sweep

    settings.SANDBOX = False
    settings.ADYEN_API_BASE = "https://balanceplatform-api-live.adyen.com/btl/v4"
    settings.PSP_API_BASE = "https://bank.example/api"

    def no_network(self, request):
        raise AssertionError(f"a test payout reached the network: {request.url}")

    monkeypatch.setattr(httpx.HTTPTransport, "handle_request", no_network)
    live_bank = platform_bank(currency="EUR", livemode=True).balance
    test_bank = platform_bank(currency="EUR", livemode=False).balance
    payout = payout_manual_enter(
        brand=twin,
        name="Mo Manual",
        email="mo@example.com",
        phone="",
        bank_account=iban_check("DE89370400440532013000"),
        currency="EUR",
        amount=12_00,
        created_by=alice,
    )
    assert payout.scheme == "sepa_instant"  # one by one to the provider, never in the bank's files
    if payout.status == PayoutStatus.AWAITING_APPROVAL:
        payout = payout_approve(payout=payout, actor=fiona)
    payout_submit(payout_id=payout.pk)
    payouts_sweep()
    payout.refresh_from_db()
    assert payout.status == PayoutStatus.SETTLED, payout.status
    assert platform_bank(currency="EUR", livemode=False).balance == test_bank - 12_00
    assert platform_bank(currency="EUR", livemode=True).balance == live_bank


def test_the_sandbox_bank_is_closed_to_the_network_outside_the_sandbox(client, settings):
    settings.SANDBOX = False
    answer = client.post("/sandbox/bank/btl/v4/transfers", "{}", content_type="application/json")
    assert answer.status_code == 404


def test_a_brand_address_may_not_look_like_a_test_twins(alice):
    from campaigns.services.refusals import CampaignError

    with pytest.raises(CampaignError, match="two hyphens"):
        brand_create(name="Sneaky", slug="alpaca--test", owner=alice)


def test_the_twin_is_made_once(alpaca):
    first = brand_test_twin(brand=alpaca)
    assert brand_test_twin(brand=alpaca) == first == brand_test_twin(brand=first)
    assert (first.livemode, first.live_brand, first.slug) == (False, alpaca, "alpaca--test")
    # An address the brand pages' URL pattern takes (a slug), which slugify never gives a brand.
    assert re.fullmatch(r"[-\w]+", first.slug)
