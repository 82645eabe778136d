"""Referral cashback: a poster's personal code pays them for each sale it brings, through the
purchase's own lifecycle (held, confirmed when the return window closes, paid, clawed back in
proportion). Orders arrive as the shops publish them (tests/verification/shop_payloads.py)."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db.models import Sum
from django.test import override_settings
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from campaigns.selectors import campaign_budget
from campaigns.services.funding import campaign_budget_account
from campaigns.services.rules import rule_save
from joyback.ledger.models import Entry
from tests.verification.shop_payloads import post, shopify_order, shopify_refund, woo_order
from verification.cashback import Customer, purchase_confirm, purchase_record, purchase_refund
from verification.connectors import shop_connect
from verification.models import ActionClaim, FraudSignal, ProviderEvent, Purchase, ReferralCode
from verification.posting import caption_compose
from verification.providers.shops import shopify_order as read_shopify
from verification.providers.shops import woocommerce_order as read_woo
from verification.referrals import (
    ALPHABET,
    REFERRAL_MISSES_PER_HOUR,
    Referral,
    ReferralClick,
    referral_click_record,
    referral_code_for,
    referral_code_normal,
    referral_reward_for_kept,
)
from verification.services.participants import (
    identity_attach,
    participant_create,
    participant_payable_account,
)
from verification.services.provider_events import provider_events_process
from verification.services.review import claim_review
from verification.services.rewards import action_reward

pytestmark = pytest.mark.django_db

SECRET = "shop_webhook_secret_1"
ids = iter(f"7d1f0a3c-5b2e-4c3a-9e1f-{n:012d}" for n in range(10_000))


@pytest.fixture
def cashback(make_live_campaign):
    """The shop's campaign: 5 % back to the buyer, 14 days to return."""
    campaign = make_live_campaign(slug="cashback-week", package="cashback", budget=100_00)
    campaign.rules.filter(trigger="purchase").update(cashback_basis_points=500, return_window_days=14)
    return campaign


@pytest.fixture
def creators(make_live_campaign):
    """The posters' campaign: 10 % of each referred order, at most 8 EUR an order."""
    campaign = make_live_campaign(slug="creators", package="tiktok_only", budget=100_00)
    rule_save(campaign=campaign, trigger="referral", reward_amount=8_00, cashback_basis_points=1000)
    return campaign


def poster_in(campaign, subject="open-id-poster", name="Poe"):
    person = participant_create(brand=campaign.brand)
    identity = identity_attach(participant=person, provider="tiktok", subject=subject, display_name=name)
    action_reward(rule=campaign.rules.get(trigger="tiktok_login"), identity=identity)
    return identity


@pytest.fixture
def poster(creators):
    return poster_in(creators)


@pytest.fixture
def code(poster, creators):
    return referral_code_for(participant=poster.participant, campaign=creators)


def connect(brand, campaign, kind="shopify"):
    domain = "alpaca.myshopify.com" if kind == "shopify" else "shop.alpaca.example"
    return shop_connect(brand=brand, kind=kind, domain=domain, webhook_secret=SECRET, campaign=campaign)


def deliver(client, shop, topic, payload):
    response = post(client, shop, topic=topic, payload=payload, secret=SECRET, delivery_id=next(ids))
    assert response.status_code == 200
    provider_events_process()
    return ProviderEvent.objects.order_by("pk").last().outcome


def referral_claim():
    return ActionClaim.objects.select_related("referred_purchase").get(referred_purchase__isnull=False)


# The code


def test_a_code_is_short_readable_and_has_no_lookalike_characters(code):
    assert len(code.code) == 6 and set(code.code) <= set(ALPHABET)
    assert not set("0O1IL") & set(ALPHABET)


def test_a_code_is_read_in_any_case_and_with_spaces_or_dashes():
    assert referral_code_normal("ab c-d2e") == "ABCD2E"
    assert referral_code_normal("abcd0e") == ""  # a zero is never in a code
    assert referral_code_normal("ABCDEFG") == ""


def test_one_code_per_person_and_campaign_made_once(code, poster, creators):
    again = referral_code_for(participant=poster.participant, campaign=creators)
    assert again.pk == code.pk and ReferralCode.objects.count() == 1


def test_a_code_drawn_twice_in_a_campaign_is_drawn_again(creators, code, monkeypatch):
    other = poster_in(creators, subject="open-id-other", name="Other")
    draws = iter([code.code, code.code, "XYZ234"])
    monkeypatch.setattr("verification.referrals.referral_code_new", lambda: next(draws))

    made = referral_code_for(participant=other.participant, campaign=creators)

    assert made.code == "XYZ234"


def test_no_code_where_the_campaign_pays_no_referrals(cashback, make_live_campaign):
    campaign = make_live_campaign(slug="plain", package="tiktok_only", budget=10_00)
    identity = poster_in(campaign)
    assert referral_code_for(participant=identity.participant, campaign=campaign) is None


def test_the_caption_posted_through_joyback_carries_the_code(creators, code):
    caption = caption_compose(campaign=creators, text="Love it", language="en", referral_code=code.code)
    assert caption.endswith(f"Code: {code.code}")
    german = caption_compose(campaign=creators, text="Toll", language="de", referral_code=code.code)
    assert code.code in german


# Attribution, as the shops send it


def test_shopifys_discount_code_and_landing_parameters_are_read_from_its_order():
    order = read_shopify(
        topic="orders/paid",
        payload=shopify_order(
            discount_codes=[{"code": "abcd23", "amount": "4.00", "type": "percentage"}],
            note_attributes=[{"name": "jb_ref", "value": "XYZ234"}, {"name": "jb_click", "value": "c1"}],
            landing_site="/products/house-blend?jb_ref=XYZ234&jb_click=c1",
            referring_site="https://www.tiktok.com/@poe/video/1",
        ),
    )
    assert order.referral_codes == ("abcd23", "XYZ234")
    assert (order.referral_click, order.source) == ("c1", "tiktok.com")
    assert order.address_hash  # the billing address, hashed: never the address


def test_woocommerces_coupon_lines_and_meta_data_are_read_from_its_order():
    order = read_woo(
        topic="order.updated",
        payload=woo_order(
            coupon_lines=[{"id": 318, "code": "abcd23", "discount": "4.66", "discount_tax": "0.88"}],
            meta_data=[
                {"id": 901, "key": "jb_ref", "value": "ABCD23"},
                {"id": 902, "key": "_wc_order_attribution_referrer", "value": "https://coupons.example/x"},
            ],
        ),
    )
    assert order.referral_codes == ("abcd23", "ABCD23")
    assert order.source == "coupons.example"


def test_a_shopify_order_with_the_code_pays_the_poster_pending_and_held(
    client, alpaca, cashback, creators, code
):
    shop = connect(alpaca, cashback)
    discount = [{"code": code.code.lower(), "amount": "4.00", "type": "fixed_amount"}]

    assert deliver(client, shop, "orders/paid", shopify_order(discount_codes=discount)) == "purchase_recorded"

    claim = referral_claim()
    assert (claim.status, claim.amount, claim.participant_id) == ("pending", 4_00, code.participant_id)
    assert claim.rule.trigger == "referral" and claim.campaign == creators
    assert claim.check_at == claim.referred_purchase.confirm_at
    assert campaign_budget(campaign=creators).held == 4_00
    buyer = ActionClaim.objects.get(purchase__isnull=False)
    assert buyer.evidence["referral"] == "referred" and buyer.participant_id != code.participant_id


def test_a_woocommerce_coupon_in_lower_case_pays_the_poster(client, alpaca, cashback, creators, code):
    shop = connect(alpaca, cashback, kind="woocommerce")
    coupons = [{"id": 318, "code": code.code.lower(), "discount": "4.00", "discount_tax": "0.00"}]

    deliver(client, shop, "order.updated", woo_order(coupon_lines=coupons))

    assert referral_claim().amount == 6_00  # 10 % of 60.00 EUR


def test_an_order_without_our_code_pays_nobody_and_says_why(client, alpaca, cashback, creators, code):
    shop = connect(alpaca, cashback)
    discount = [{"code": "SUMMER10", "amount": "4.00", "type": "percentage"}]
    deliver(client, shop, "orders/paid", shopify_order(discount_codes=discount))
    assert not ActionClaim.objects.filter(referred_purchase__isnull=False).exists()
    assert ActionClaim.objects.get(purchase__isnull=False).evidence["referral"] == "code_unknown"


# The campaign's rules


def record(
    brand, campaign, code, *, order_id="A-1", amount=40_00, email="kim@example.com", customer_id="", **extra
):
    return purchase_record(
        brand=brand,
        order_id=order_id,
        amount=amount,
        currency="EUR",
        customer=Customer(id=customer_id, email=email),
        campaign_id=campaign.pk,
        referral=Referral(codes=(code,), **extra),
    )


def test_the_per_order_cap_the_minimum_and_the_first_order_rule(alpaca, cashback, creators, code):
    creators.rules.filter(trigger="referral").update(referral_min_order=20_00, referral_first_order_only=True)
    record(alpaca, cashback, code.code, order_id="big", amount=200_00)
    assert referral_claim().amount == 8_00  # 10 % would be 20 EUR: at most 8 an order
    small, _ = record(alpaca, cashback, code.code, order_id="small", amount=10_00, email="lee@example.com")
    assert small.evidence["referral"] == "below_minimum"
    again, _ = record(alpaca, cashback, code.code, order_id="again", amount=50_00)
    assert again.evidence["referral"] == "not_first_order"


def test_the_per_person_and_per_campaign_caps(alpaca, cashback, creators, code):
    creators.rules.filter(trigger="referral").update(referral_person_cap=10_00, referral_campaign_cap=15_00)
    other = referral_code_for(
        participant=poster_in(creators, "open-id-2", "Two").participant, campaign=creators
    )
    amounts = []
    for n, each in enumerate([code, code, code, other, other]):
        claim, _ = record(
            alpaca, cashback, each.code, order_id=f"o{n}", amount=80_00, email=f"b{n}@example.com"
        )
        amounts.append(claim.evidence["referral"])
    paid = list(
        ActionClaim.objects.filter(referred_purchase__isnull=False)
        .order_by("pk")
        .values_list("amount", flat=True)
    )
    assert paid == [8_00, 2_00, 5_00]  # the poster's 10 EUR, then what is left of the campaign's 15
    assert amounts == ["referred", "referred", "referral_cap", "referred", "referral_cap"]


# Paid like cashback


def test_confirmed_when_the_window_closes_owed_and_marked_for_the_payout(alpaca, cashback, creators, code):
    claim, _ = record(alpaca, cashback, code.code)
    purchase_confirm(purchase_id=claim.purchase_id, now=timezone.now() + timedelta(days=15))

    referral = referral_claim()
    assert referral.status == "approved" and referral.ledger_transaction_id
    payable = participant_payable_account(participant=referral.participant, currency="EUR")
    assert payable.balance == 1_00 + 4_00  # the poster's login reward, and the referral
    assert campaign_budget(campaign=creators).held == 0


def test_a_refund_in_the_window_releases_the_poster_s_hold(alpaca, cashback, creators, code):
    record(alpaca, cashback, code.code)
    purchase_refund(brand=alpaca, order_id="A-1", reason="returned")
    referral = referral_claim()
    assert (referral.status, referral.reason) == ("rejected", "refunded")
    assert campaign_budget(campaign=creators).held == 0


def test_a_partial_refund_after_the_window_claws_back_in_proportion(client, alpaca, cashback, creators, code):
    shop = connect(alpaca, cashback)
    discount = [{"code": code.code, "amount": "0.00", "type": "percentage"}]
    deliver(client, shop, "orders/paid", shopify_order(discount_codes=discount))
    purchase_confirm(purchase_id=Purchase.objects.get().pk, now=timezone.now() + timedelta(days=15))

    deliver(client, shop, "refunds/create", shopify_refund(line_amount="20.00"))  # half of 40 EUR back

    referral = referral_claim()
    payable = participant_payable_account(participant=referral.participant, currency="EUR")
    login = 1_00  # the poster's own reward for connecting TikTok, owed too
    assert (referral.status, referral.amount, payable.balance) == ("approved", 2_00, login + 2_00)
    deliver(client, shop, "refunds/create", shopify_refund(refund_id=509562970, line_amount="20.00"))
    referral.refresh_from_db()
    payable.refresh_from_db()
    assert (referral.status, payable.balance) == ("clawed_back", login)


@given(
    at_order=st.integers(min_value=1, max_value=10**7),
    order=st.integers(min_value=1, max_value=10**9),
    refunds=st.lists(st.integers(min_value=0, max_value=10**9), max_size=8),
)
def test_what_is_clawed_back_never_exceeds_what_was_paid(at_order, order, refunds):
    """Whatever refunds come, in whatever sizes: each step takes back what the amount kept no
    longer earns, and all of them together never more than the reward was."""
    worth, refunded, taken = at_order, 0, 0
    for refund in refunds:
        refunded += refund
        now = referral_reward_for_kept(
            at_order=at_order, order_amount=order, kept=order - refunded, now=worth
        )
        assert 0 <= now <= worth
        taken += worth - now
        worth = now
    assert taken <= at_order and worth + taken == at_order


# Fraud signals, each into the review queue with its reason


def test_a_buyer_with_the_poster_s_email_goes_to_review(alpaca, cashback, creators, code):
    identity_attach(participant=code.participant, provider="brand", subject="email:poe@example.com")
    record(alpaca, cashback, code.code, email="Poe@example.com", customer_id="shopper-1")

    referral = referral_claim()
    assert (referral.status, referral.reason) == ("needs_review", "self_referral_email")
    assert campaign_budget(campaign=creators).held == 4_00  # held while a person decides


def test_the_poster_buying_with_their_own_code_goes_to_review(alpaca, cashback, creators, code):
    identity_attach(participant=code.participant, provider="brand", subject="id:cust-7")
    purchase_record(
        brand=alpaca,
        order_id="own",
        amount=40_00,
        currency="EUR",
        customer=Customer(id="cust-7"),
        campaign_id=cashback.pk,
        referral=Referral(codes=(code.code,)),
    )
    codes = set(FraudSignal.objects.values_list("code", flat=True))
    assert "self_referral" in codes and referral_claim().status == "needs_review"


def test_the_link_opened_in_the_poster_s_own_browser_goes_to_review(alpaca, cashback, creators, code):
    ActionClaim.objects.filter(participant=code.participant).update(device="dev-hash-poe")
    click = referral_click_record(code=code, device="dev-hash-poe", client_ip="203.0.113.9")
    record(alpaca, cashback, code.code, click=click.public_id)
    assert referral_claim().reason == "self_referral_device"


def test_the_poster_s_own_billing_address_goes_to_review(client, alpaca, cashback, creators, code):
    shop = connect(alpaca, cashback)
    own = shopify_order(
        id=1, email="poe-shopper@example.com", customer={"id": 1, "email": "poe-shopper@example.com"}
    )
    deliver(client, shop, "orders/paid", own)
    Purchase.objects.filter(order_id__endswith=":1").update(
        identity=ActionClaim.objects.get(rule__trigger="tiktok_login", participant=code.participant).identity
    )
    discount = [{"code": code.code, "amount": "0.00", "type": "percentage"}]
    deliver(client, shop, "orders/paid", shopify_order(id=2, discount_codes=discount))  # same billing address
    assert referral_claim().reason == "self_referral_address"


@override_settings(FRAUD_REFERRAL_ORDERS_PER_SOURCE_PER_HOUR=3)
def test_a_spike_of_orders_from_one_coupon_site_goes_to_review(alpaca, cashback, creators, code):
    for n in range(4):
        record(
            alpaca, cashback, code.code, order_id=f"c{n}", email=f"b{n}@example.com", source="coupons.example"
        )
    statuses = list(
        ActionClaim.objects.filter(referred_purchase__isnull=False)
        .order_by("pk")
        .values_list("status", "reason")
    )
    assert statuses[:2] == [("pending", "return_window")] * 2
    assert statuses[2:] == [("needs_review", "code_leaked")] * 2


@override_settings(FRAUD_REFERRAL_REFUND_MIN_ORDERS=3, FRAUD_REFERRAL_REFUND_PERCENT=50)
def test_a_poster_whose_referred_buyers_return_most_goes_to_review(alpaca, cashback, creators, code):
    for n in range(3):
        record(alpaca, cashback, code.code, order_id=f"r{n}", email=f"b{n}@example.com")
        if n < 2:
            purchase_refund(brand=alpaca, order_id=f"r{n}")
    record(alpaca, cashback, code.code, order_id="r3", email="b3@example.com")
    latest = ActionClaim.objects.filter(referred_purchase__isnull=False).order_by("pk").last()
    assert (latest.status, latest.reason) == ("needs_review", "refund_ring")


def test_a_reviewed_referral_still_waits_for_the_return_window(alpaca, alice, cashback, creators, code):
    identity_attach(participant=code.participant, provider="brand", subject="email:poe@example.com")
    record(alpaca, cashback, code.code, email="poe@example.com", customer_id="shopper-1")
    claim_review(claim=referral_claim(), decided_by=alice, decision="approve", reason="their sister")
    referral = referral_claim()
    assert (referral.status, referral.ledger_transaction_id) == ("pending", None)
    purchase_confirm(purchase_id=referral.referred_purchase_id, now=timezone.now() + timedelta(days=15))
    assert referral_claim().status == "approved"


def test_the_review_queue_shows_a_self_referral_with_its_reason(
    client, alice, alpaca, cashback, creators, code
):
    identity_attach(participant=code.participant, provider="brand", subject="email:poe@example.com")
    record(alpaca, cashback, code.code, email="poe@example.com", customer_id="shopper-1")
    client.force_login(alice)
    page = client.get("/brands/alpaca/review/").content.decode()
    assert "A referred order with the poster&#x27;s own email address" in page
    assert "the buyer&#x27;s email is one the poster is known by" in page


# What the poster sees, and the brand


def test_the_status_page_shows_the_code_link_and_each_order_without_the_buyer(
    client, alpaca, cashback, creators, code
):
    record(alpaca, cashback, code.code, email="kim.buyer@example.com")
    token = code.participant.token

    page = client.get(f"/v/status/{token}/actions/").content.decode()

    assert code.code in page and f"/v/c/creators/r/{code.code}/" in page
    assert "Confirmed once the shop&#x27;s return window closes" in page and "4.00" in page
    assert "kim.buyer" not in page and "A-1" not in page
    german = client.get(f"/v/status/{token}/actions/", HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert "Dein Empfehlungscode" in german


def test_the_link_remembers_the_visit_and_goes_on_to_the_shop_with_the_code(
    client, alpaca, cashback, creators, code
):
    shop = connect(alpaca, cashback)
    response = client.get(f"/v/c/creators/r/{code.code.lower()}/")
    assert response.status_code == 302
    click = code.clicks.get()
    assert (
        f"jb_ref={code.code}" in response["Location"]
        and f"jb_click={click.public_id}" in response["Location"]
    )
    assert shop.public_id in response["Location"] or shop.domain in response["Location"]
    assert client.get("/v/c/creators/r/NOPE22/").status_code == 302  # to the campaign's page
    assert code.clicks.count() == 1


def test_the_overview_shows_sales_by_poster_and_refuses_another_brand(
    client, alice, bob, bison, alpaca, cashback, creators, code
):
    record(alpaca, cashback, code.code)
    client.force_login(alice)
    page = client.get("/brands/alpaca/overview/referrals/").content.decode()
    assert "Poe" in page and code.code in page
    client.force_login(bob)
    assert client.get("/brands/alpaca/overview/referrals/").status_code == 404
    assert code.code not in client.get("/brands/bison/overview/referrals/").content.decode()


def test_the_demo_shows_a_referral():
    for step in ("demo_seed", "demo_funding", "demo_payouts", "demo_shops"):
        call_command(step)

    referral = referral_claim()
    assert referral.rule.trigger == "referral" and referral.status == "pending"
    assert referral.identity.subject == "demo-payee-0" and referral.amount == 6_40  # 10 % of 64 EUR


orders = iter(range(10**6))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(refunds=st.lists(st.integers(min_value=1, max_value=45_00), min_size=1, max_size=4))
def test_the_ledger_never_takes_back_more_than_a_referral_paid(alpaca, cashback, creators, code, refunds):
    """Any partial refunds of a confirmed referred order, in any sizes (together up to more than the
    order): what the clawbacks take back from the poster never exceeds what the referral paid, and
    what stays paid is what the claim is worth."""
    order_id = f"prop-{next(orders)}"
    with override_settings(FRAUD_REFERRAL_REFUND_MIN_ORDERS=10**6):  # every example refunds: no ring here
        record(alpaca, cashback, code.code, order_id=order_id, email=f"{order_id}@example.com")
    purchase = Purchase.objects.get(order_id=order_id)
    purchase_confirm(purchase_id=purchase.pk, now=timezone.now() + timedelta(days=15))
    for n, refund in enumerate(refunds):
        purchase_refund(brand=alpaca, order_id=order_id, refunds={f"{order_id}-{n}": refund})

    referral = ActionClaim.objects.get(referred_purchase=purchase)
    budget = campaign_budget_account(campaign=creators)

    def moved(reason):
        entries = Entry.objects.filter(
            account=budget, transaction__reason=reason, transaction__reference=f"claim:{referral.pk}"
        )
        return abs(entries.aggregate(total=Sum("amount"))["total"] or 0)

    paid, taken = moved("reward"), moved("clawback")
    assert paid == 4_00 and taken <= paid
    assert paid - taken == (referral.amount if referral.status == "approved" else 0)


def test_a_brands_own_leak_threshold_set_by_two_staff_applies_to_its_referrals(
    alpaca, cashback, creators, code, make_user
):
    from django.contrib.auth.models import Permission

    from campaigns.models import LimitKind
    from tests.payouts.conftest import staff_user
    from tests.payouts.test_limits_per_brand import limit_set

    asked_by = staff_user(make_user, "sam@joyback.example")
    confirmed_by = staff_user(make_user, "tara@joyback.example")
    confirmed_by.user_permissions.add(Permission.objects.get(codename="change_staffgrant"))
    confirmed_by = type(confirmed_by).objects.get(pk=confirmed_by.pk)
    limit_set(
        asked_by=asked_by,
        confirmed_by=confirmed_by,
        kind=LimitKind.FRAUD_REFERRAL_ORDERS_PER_SOURCE_PER_HOUR,
        currency="",
        brand=alpaca,
        value=2,
    )
    for n in range(2):
        record(
            alpaca, cashback, code.code, order_id=f"l{n}", email=f"l{n}@example.com", source="coupons.example"
        )

    latest = ActionClaim.objects.filter(referred_purchase__isnull=False).order_by("pk").last()
    assert (latest.status, latest.reason) == ("needs_review", "code_leaked")


# --- As an attacker -------------------------------------------------------------------------------
# Guessing referral codes on `/v/c/<slug>/r/<code>/` as a stranger: a forged X-Forwarded-For, the
# same code in other cases and with dashes, another campaign's slug all count against the one limit
# (held); addresses of one IPv6 /64, each counted apart, share one limit too.


def test_guesses_from_one_ipv6_prefix_share_one_limit(client, creators, code):
    """An IPv6 host holds a /64 (2^64 addresses): one guess from each walks the 887 million codes
    with no 429 ever. The limit should count the /64 (and a /48 more loosely), not each address."""
    answers = {
        client.get(f"/v/c/creators/r/NOPE{n:02d}/", REMOTE_ADDR=f"2001:db8:0:1::{n + 1:x}").status_code
        for n in range(REFERRAL_MISSES_PER_HOUR + 5)
    }
    right = client.get(f"/v/c/creators/r/{code.code}/", REMOTE_ADDR="2001:db8:0:1::ffff")

    assert 429 in answers or right.status_code == 429, "no guess from one /64 was ever refused"


# --- What held ------------------------------------------------------------------------------------


def test_forwarded_for_variants_and_other_slugs_count_against_the_same_limit(
    client,
    creators,
    code,
    make_live_campaign,
):
    make_live_campaign(slug="other", package="tiktok_only")
    for n in range(REFERRAL_MISSES_PER_HOUR + 1):
        slug = "creators" if n % 2 else "other"
        guess = f"no-p{n:02d}" if n % 3 else f"NOPE{n:02d}"  # lower case and dashes are normalised
        client.get(f"/v/c/{slug}/r/{guess}/", HTTP_X_FORWARDED_FOR=f"10.0.{n}.1")

    right = client.get(f"/v/c/creators/r/{code.code.lower()}/", HTTP_X_FORWARDED_FOR="192.0.2.200")
    assert right.status_code == 429
    assert not ReferralClick.objects.exists()
