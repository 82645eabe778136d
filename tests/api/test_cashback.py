"""Cashback through the API: a purchase is held, confirmed after its return window, paid; a
refund voids it before confirmation and claws it back after."""

from datetime import timedelta

import pytest
from django.utils import timezone

from campaigns.models import Trigger
from campaigns.services.rules import rule_save
from joyback.ledger.models import Account, AccountKind, Hold
from tests.api.conftest import purchase, reported
from verification.cashback import purchase_confirm, purchases_due
from verification.models import ActionClaim, Identity, Purchase

pytestmark = pytest.mark.django_db


def budget(campaign) -> Account:
    return Account.objects.get(kind=AccountKind.CAMPAIGN_BUDGET, subject=campaign.budget_subject)


def payable(claim) -> int:
    account = Account.objects.filter(
        kind=AccountKind.PARTICIPANT_PAYABLE, subject=f"participant:{claim.participant_id}"
    ).first()
    return account.balance if account else 0


def after_window(days=14):
    return timezone.now() + timedelta(days=days, minutes=1)


def test_a_purchase_holds_its_cashback_until_the_return_window_closes(alpaca_api, shop):
    response = alpaca_api.report(purchase(amount=40_00))
    assert response.json()["new_claim"] is True
    claim = reported(response)
    assert (claim["status"], claim["amount"], claim["order_id"]) == ("pending", 2_00, "A-1001")  # 5 %
    assert budget(shop).held == 2_00
    stored = ActionClaim.objects.get(pk=claim["id"])
    assert payable(stored) == 0
    identity = Identity.objects.get()
    assert (identity.provider, identity.subject) == ("brand", "email:kim@example.com")


def test_the_cashback_is_capped_per_purchase(alpaca_api, shop):
    claim = alpaca_api.report(purchase(amount=1_000_00)).json()["claim"]
    assert claim["amount"] == 5_00


def test_a_fixed_cashback(alpaca_api, shop):
    shop.rules.filter(trigger="purchase").update(cashback_basis_points=None, reward_amount=3_00)
    assert alpaca_api.report(purchase(amount=10_00)).json()["claim"]["amount"] == 3_00


def test_the_same_order_reported_again_is_the_same_claim(alpaca_api, shop):
    first = alpaca_api.report(purchase())
    again = alpaca_api.report(purchase())
    assert (first.json()["new_claim"], again.json()["new_claim"]) == (True, False)
    assert reported(first)["id"] == reported(again)["id"]
    assert budget(shop).held == 2_00


def test_the_same_order_with_another_amount_is_a_conflict(alpaca_api, shop):
    alpaca_api.report(purchase())
    response = alpaca_api.report(purchase(amount=50_00))
    assert response.json()["status"] == "refused"
    assert response.json()["error"]["code"] == "order_conflict"


def test_a_customer_earns_on_each_purchase(alpaca_api, shop):
    alpaca_api.report(purchase(order_id="A-1"))
    alpaca_api.report(purchase(order_id="A-2"))
    assert ActionClaim.objects.filter(participant__identities__subject="email:kim@example.com").count() == 2


def test_the_customer_by_phone_is_one_person_however_the_number_is_written(alpaca_api, shop):
    alpaca_api.report(purchase(order_id="A-1", customer={"phone": "+49 151 12345678"}))
    alpaca_api.report(purchase(order_id="A-2", customer={"phone": "+4915112345678"}))
    assert Identity.objects.get().subject == "phone:+4915112345678"


def test_confirmation_when_the_window_closes_pays_the_reward(alpaca_api, shop):
    claim_id = alpaca_api.report(purchase()).json()["claim"]["id"]
    purchase_id = Purchase.objects.get().pk
    assert purchases_due() == []
    assert purchase_confirm(purchase_id=purchase_id).status == "pending"  # too early: nothing happens
    assert purchases_due(now=after_window()) == [purchase_id]
    claim = purchase_confirm(purchase_id=purchase_id, now=after_window())
    assert claim.status == "approved"
    assert payable(claim) == 2_00
    assert budget(shop).held == 0 and budget(shop).balance == 98_00
    assert alpaca_api.get(f"claims/{claim_id}").json()["status"] == "approved"
    assert purchase_confirm(purchase_id=purchase_id, now=after_window()).status == "approved"  # once
    assert payable(claim) == 2_00


def test_a_claim_rejected_in_the_window_is_not_announced_as_approved_when_it_closes(alpaca_api, shop):
    from joyback.api.models import EventType, WebhookEvent
    from joyback.api.webhooks.endpoints import webhook_endpoint_create
    from verification.services.rewards import claim_clawback

    hooks = "https://shop.example/hooks"
    webhook_endpoint_create(brand_id=shop.brand_id, url=hooks, event_types=list(EventType))
    alpaca_api.report(purchase())
    purchase_id = Purchase.objects.get().pk
    claim_clawback(claim=ActionClaim.objects.get(), reason="fraud")
    assert purchase_confirm(purchase_id=purchase_id, now=after_window()).status == "rejected"
    types = set(WebhookEvent.objects.values_list("type", flat=True))
    assert "purchase.confirmed" in types and "reward.approved" not in types


def test_the_standing_sweep_confirms_due_purchases(alpaca_api, shop, monkeypatch):
    from verification import tasks

    alpaca_api.report(purchase())
    later = after_window()
    monkeypatch.setattr(timezone, "now", lambda: later)
    assert tasks.recheck_due() == 1
    assert ActionClaim.objects.get().status == "approved"


def test_the_confirmation_is_scheduled_for_the_end_of_the_window(
    alpaca_api, shop, django_capture_on_commit_callbacks
):
    from django_q.models import Schedule

    alpaca_api.report(purchase())
    schedule = Schedule.objects.get(name=f"purchase-confirm-{Purchase.objects.get().pk}")
    assert schedule.func == "verification.tasks.purchase_confirm_task"
    assert abs(schedule.next_run - Purchase.objects.get().confirm_at) < timedelta(seconds=1)


def test_without_a_return_window_the_cashback_is_paid_at_once(alpaca_api, shop):
    shop.rules.filter(trigger="purchase").update(return_window_days=0)
    claim = alpaca_api.report(purchase()).json()["claim"]
    assert claim["status"] == "approved"
    assert payable(ActionClaim.objects.get()) == 2_00


def test_a_refund_in_the_return_window_voids_the_hold(alpaca_api, shop):
    alpaca_api.report(purchase())
    response = alpaca_api.report({"type": "refund", "order_id": "A-1001", "reason": "returned"})
    assert response.json()["status"] == "processed"
    assert (response.json()["claim"]["status"], response.json()["claim"]["reason"]) == (
        "rejected",
        "refunded",
    )
    assert budget(shop).held == 0 and budget(shop).balance == 100_00
    assert Hold.objects.get().status == "voided"
    assert Purchase.objects.get().status == "refunded"
    assert purchase_confirm(purchase_id=Purchase.objects.get().pk, now=after_window()).status == "rejected"
    again = alpaca_api.report({"type": "refund", "order_id": "A-1001"})
    assert again.json()["status"] == "processed" and budget(shop).balance == 100_00


def test_a_refund_after_confirmation_claws_the_reward_back(alpaca_api, shop):
    alpaca_api.report(purchase())
    claim = purchase_confirm(purchase_id=Purchase.objects.get().pk, now=after_window())
    assert payable(claim) == 2_00
    response = alpaca_api.report({"type": "refund", "order_id": "A-1001"})
    assert reported(response)["status"] == "clawed_back"
    assert payable(claim) == 0
    assert budget(shop).balance == 100_00
    assert Purchase.objects.get().status == "refunded"


def test_a_refund_of_an_unknown_order_is_404(alpaca_api, shop):
    response = alpaca_api.report({"type": "refund", "order_id": "nope"})
    assert response.json()["status"] == "refused" and response.json()["claim"] is None
    assert response.json()["error"] == {
        "code": "order_unknown",
        "message": "No purchase with this order id.",
        "field": "order_id",
    }


def test_a_paused_campaign_refuses_purchases_and_stores_nothing(alpaca_api, shop):
    from campaigns.services.campaigns import campaign_transition

    campaign_transition(campaign=shop, to="paused")
    response = alpaca_api.report(purchase(campaign_id=shop.pk))
    assert response.json()["status"] == "refused"
    assert response.json()["error"]["code"] == "paused"
    assert not Purchase.objects.exists() and not ActionClaim.objects.exists()


def test_without_a_live_cashback_campaign_a_purchase_is_refused(alpaca_api, alpaca):
    response = alpaca_api.report(purchase())
    assert response.json()["status"] == "refused"
    assert response.json()["error"]["code"] == "no_campaign"


def test_a_custom_action_is_rewarded_once_per_customer(alpaca_api, shop):
    rule_save(campaign=shop, trigger=Trigger.CUSTOM, reward_amount=1_50)
    body = {"type": "action", "customer": {"id": "cust-42"}, "reference": "newsletter"}
    first = alpaca_api.report(body)
    again = alpaca_api.report(body)
    assert (first.json()["new_claim"], again.json()["new_claim"]) == (True, False)
    assert reported(first)["status"] == "approved" and reported(first)["amount"] == 1_50
    assert reported(first)["id"] == reported(again)["id"]


def test_lists_and_details(alpaca_api, shop):
    for n in range(3):
        alpaca_api.report(purchase(order_id=f"A-{n}", customer={"id": f"c{n}"}))
    page = alpaca_api.get("claims", limit=2).json()
    assert len(page["data"]) == 2 and page["has_more"] is True
    rest = alpaca_api.get("claims", limit=2, starting_after=page["data"][-1]["id"]).json()
    assert len(rest["data"]) == 1 and rest["has_more"] is False
    people = alpaca_api.get("participants").json()["data"]
    assert len(people) == 3
    person = alpaca_api.get(f"participants/{people[0]['id']}").json()
    assert person["identities"][0]["provider"] == "brand"
    stats = alpaca_api.get(f"campaigns/{shop.pk}").json()["budget"]
    assert stats == {"funded": 100_00, "available": 94_00, "held": 6_00, "spent": 0}
    balances = alpaca_api.get("balances").json()["data"]
    assert {row["kind"] for row in balances} == {"brand_funding", "campaign_budget"}


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_purchases_racing_on_one_budget_never_oversell_it(alpaca, make_live_campaign):
    """Twelve purchases at once on a budget for ten: ten are held, two refused, none twice."""
    import threading

    from django.db import connection
    from django.test import Client

    from joyback.api.keys import api_key_create
    from tests.api.conftest import Api

    campaign = make_live_campaign(slug="tight", package="cashback", budget=20_00)
    campaign.rules.filter(trigger="purchase").update(cashback_basis_points=None, reward_amount=2_00)
    secret = api_key_create(brand_id=alpaca.pk, name="shop", scopes=["events"]).secret
    barrier, codes = threading.Barrier(12), []

    def buy(n):
        try:
            barrier.wait(10)
            body = purchase(order_id=f"R-{n}", customer={"id": f"c-{n}"})
            codes.append(Api(Client(), secret).report(body).json()["status"])
        finally:
            connection.close()

    threads = [threading.Thread(target=buy, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(codes) == ["processed"] * 10 + ["refused"] * 2
    account = budget(campaign)
    assert account.held == 20_00 and account.available == 0
    assert ActionClaim.objects.count() == Purchase.objects.count() == 10


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_same_order_reported_at_once_is_one_claim(alpaca, shop):
    import threading

    from django.db import connection
    from django.test import Client

    from joyback.api.keys import api_key_create
    from tests.api.conftest import Api

    secret = api_key_create(brand_id=alpaca.pk, name="shop", scopes=["events"]).secret
    barrier, answers = threading.Barrier(6), []

    def report():
        try:
            barrier.wait(10)
            answers.append(Api(Client(), secret).report(purchase()).json())
        finally:
            connection.close()

    threads = [threading.Thread(target=report) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(a["new_claim"] for a in answers) == [False] * 5 + [True]
    assert len({a["claim"]["id"] for a in answers}) == 1
    assert Purchase.objects.count() == 1 and budget(shop).held == 2_00


def test_the_brand_sets_the_cashback_on_the_rule_form(client, alice, shop):
    client.force_login(alice)
    response = client.post(
        f"/brands/alpaca/campaigns/{shop.pk}/rules/",
        {
            "trigger": "purchase",
            "reward": "4.00",
            "verification_mode": "instant",
            "window_hours": "0",
            "min_views": "0",
            "min_likes": "0",
            "cashback_percent": "2.5",
            "return_window_days": "30",
        },
    )
    assert response.status_code in (200, 302), response.content[:500]
    rule = shop.rules.get(trigger="purchase")
    assert (rule.reward_amount, rule.cashback_basis_points, rule.return_window_days) == (4_00, 250, 30)
