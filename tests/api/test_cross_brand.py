"""Every API endpoint refuses another brand's objects with a 404 and lists only the key's brand.

The endpoints are found in the URLconf, so a new one is covered at once; a new kind of URL
argument fails until OBJECTS learns to make one for a brand.
"""

import re

import pytest
from django.urls import URLPattern, get_resolver

from campaigns.services.campaigns import campaign_create, campaign_transition
from campaigns.services.funding import campaign_fund
from tests.api.conftest import purchase
from tests.campaigns.test_cross_brand import walk
from tests.conftest import fund

pytestmark = pytest.mark.django_db


def cashback_campaign(brand):
    campaign = campaign_create(
        brand=brand,
        name=f"{brand.name} cashback",
        package="cashback",
        currency="EUR",
        countries=["DE"],
        languages=[],
    )
    fund(brand, 50_00, "EUR", reference=f"API-{brand.slug}")
    campaign_fund(campaign=campaign, amount=50_00)
    return campaign_transition(campaign=campaign, to="live")


# How to make each URL argument point at an object of a brand (base: what the world fixture made).
MAKERS = {
    "campaign_id": lambda brand, api, base: base["campaign_id"],
    "claim_id": lambda brand, api, base: base["claim"]["id"],
    "participant_id": lambda brand, api, base: base["claim"]["participant_id"],
    "payout_id": lambda brand, api, base: standalone_payout(brand, api),
    "event_id": lambda brand, api, base: base["event_id"],
}


def standalone_payout(brand, api) -> int:
    fund(brand, 20_00, "EUR", reference=f"PAY-{brand.slug}")
    payee = {"name": "Mo Manual", "email": "mo@example.com", "iban": "DE89370400440532013000"}
    return api.post("payouts", {"amount": 10_00, "currency": "EUR", "payee": payee}).json()["id"]


@pytest.fixture
def world(alpaca, bison, make_api):
    """Each brand with a campaign, a purchase, a claim and a participant, and its own key."""
    apis, objects = {}, {}
    for brand in (alpaca, bison):
        campaign = cashback_campaign(brand)
        api = apis[brand.slug] = make_api(brand, scopes=("read", "events", "payouts"))
        event = api.report(purchase(order_id=f"{brand.slug}-1")).json()
        objects[brand.slug] = {
            "brand": brand,
            "campaign_id": campaign.pk,
            "claim": event["claim"],
            "event_id": event["id"],
        }
    return apis, objects


def api_patterns() -> list[URLPattern]:
    return [
        pattern
        for route, pattern, _namespace, _converters in walk(get_resolver().url_patterns)
        if route.startswith("api/v1/") and pattern.pattern.converters
    ]


def test_discovery_finds_the_object_endpoints():
    assert len(api_patterns()) >= 3


def test_another_brands_objects_are_404(world):
    apis, objects = world
    checked = 0
    for pattern in api_patterns():
        kwargs = {}
        for name in pattern.pattern.converters:
            assert name in MAKERS, f"teach MAKERS in {__file__} how to make a {name!r} of a brand"
            base = objects["bison"]
            kwargs[name] = MAKERS[name](base["brand"], apis["bison"], base)
        route = str(pattern.pattern)
        for name, value in kwargs.items():
            route = re.sub(rf"<\w+:{name}>", str(value), route)
        path = route.removeprefix("api/v1/")
        # An action (POST only, like a cancel) is tried by the other brand first, then by the owner.
        act = "post" if not hasattr(getattr(pattern.callback, "cls", None), "get") else "get"
        if act == "get":
            assert apis["bison"].get(path).status_code == 200, path
        response = apis["alpaca"].post(path, None) if act == "post" else apis["alpaca"].get(path)
        assert response.status_code == 404, f"{path} answered {response.status_code} to another brand's key"
        assert response.json()["error"]["code"] == "not_found"
        if act == "post":
            assert apis["bison"].post(path, None).status_code == 200, path
        checked += 1
    assert checked >= 3


@pytest.mark.parametrize("path", ["campaigns", "claims", "participants", "balances"])
def test_lists_hold_only_the_keys_brand(world, path):
    apis, objects = world
    rows = apis["alpaca"].get(path).json()["data"]
    assert rows
    ids = {row["id"] for row in rows}
    bison = {
        "campaigns": objects["bison"]["campaign_id"],
        "claims": objects["bison"]["claim"]["id"],
        "participants": objects["bison"]["claim"]["participant_id"],
    }.get(path)
    assert bison not in ids


def test_the_payout_list_and_report_hold_only_the_keys_brand(world):
    apis, objects = world
    mine, theirs = (standalone_payout(objects[slug]["brand"], apis[slug]) for slug in ("alpaca", "bison"))
    assert [row["id"] for row in apis["alpaca"].get("payouts").json()["data"]] == [mine]
    report = apis["alpaca"].get("reconciliation/report").json()["data"]
    assert [row["funded"] for row in report] == [50_00 + 20_00]
    assert theirs != mine


def test_a_refund_of_another_brands_order_is_404(world):
    apis, _objects = world
    event = apis["alpaca"].report({"type": "refund", "order_id": "bison-1"}).json()
    assert (event["status"], event["error"]["code"]) == ("refused", "order_unknown")


def test_a_purchase_for_another_brands_campaign_is_refused(world):
    apis, objects = world
    event = apis["alpaca"].report(purchase(order_id="x", campaign_id=objects["bison"]["campaign_id"])).json()
    assert (event["status"], event["error"]["code"]) == ("refused", "campaign_unknown")


def test_the_same_order_id_at_two_brands_is_two_purchases(world):
    apis, _objects = world
    first = apis["alpaca"].report(purchase(order_id="shared-1")).json()["claim"]
    second = apis["bison"].report(purchase(order_id="shared-1")).json()["claim"]
    assert first["id"] != second["id"]
