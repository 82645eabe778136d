"""Every brand-scoped URL refuses other brands' members with a 404.

The URLs are discovered from the URLconf, so a page added later is covered without touching this
file; a new kind of URL argument fails loudly until SAMPLES learns to make one for a brand.
"""

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from campaigns.models import Campaign
from campaigns.services.campaigns import campaign_create, campaign_transition
from campaigns.services.funding import brand_funding_account, campaign_fund
from tests.conftest import fund

pytestmark = pytest.mark.django_db


def sample_campaign(brand) -> Campaign:
    return Campaign.objects.filter(brand=brand).first() or campaign_create(
        brand=brand,
        name=f"{brand.name} launch",
        package="all_in_one",
        currency="EUR",
        countries=["DE"],
        languages=["en"],
    )


def sample_claim(brand):
    from verification.models import ActionClaim
    from verification.services.participants import identity_attach, participant_create
    from verification.services.rewards import action_reward

    campaign = sample_campaign(brand)
    existing = ActionClaim.objects.filter(campaign=campaign).first()
    if existing:
        return existing
    fund(brand, 100_00, "EUR", reference=f"SAMPLE-{brand.slug}")
    campaign_fund(campaign=campaign, amount=100_00)
    campaign_transition(campaign=campaign, to="live")
    person = participant_create(brand=brand)
    identity = identity_attach(participant=person, provider="tiktok", subject=f"sample-{brand.slug}")
    return action_reward(rule=campaign.rules.get(trigger="tiktok_login"), identity=identity)


def sample_share(brand):
    """A shared video of the brand's sample campaign, as the content library lists it."""
    from verification.models import ActionClaim

    login = sample_claim(brand)
    rule = login.campaign.rules.get(trigger="ugc_share")
    return ActionClaim.objects.filter(rule=rule).first() or ActionClaim.objects.create(
        campaign=login.campaign,
        brand_id=login.brand_id,
        rule=rule,
        participant=login.participant,
        identity=login.identity,
        amount=rule.reward_amount,
        currency="EUR",
        evidence={"video": {"video_id": "7300000000000000042", "share_url": ""}},
    )


def sample_case(brand):
    from compliance.models import RemediationCase

    claim = sample_claim(brand)
    case = RemediationCase.objects.filter(claim_id=claim.pk).first()
    return case or RemediationCase.objects.create(
        brand=brand,
        campaign=claim.campaign,
        claim_id=claim.pk,
        participant_id=claim.participant_id,
        status="review",
        wording="Ad",
        opened_at=claim.created_at,
    )


def sample_payout(brand):
    from payouts.manual.services import payout_manual_enter
    from payouts.models import Payout
    from payouts.rails import iban_check

    existing = Payout.objects.filter(brand=brand).first()
    if existing:
        return existing
    fund(brand, 10_00, "EUR", reference=f"PAYOUT-{brand.slug}")
    return payout_manual_enter(
        brand=brand,
        name="Sam Sample",
        email="sam@example.com",
        phone="",
        bank_account=iban_check("DE89370400440532013000"),
        currency="EUR",
        amount=1_00,
        created_by=None,
    )


def sample_api_key(brand):
    from joyback.api.keys import api_key_create
    from joyback.api.models import ApiKey

    existing = ApiKey.objects.filter(brand_id=brand.pk).first()
    return existing or api_key_create(brand_id=brand.pk, name="sample", scopes=["read"]).api_key


def sample_webhook_delivery(brand):
    from joyback.api.models import WebhookDelivery
    from joyback.api.webhooks.delivery import webhook_event_emit
    from joyback.api.webhooks.endpoints import webhook_endpoint_create

    existing = WebhookDelivery.objects.filter(endpoint__brand_id=brand.pk).first()
    if existing:
        return existing
    webhook_endpoint_create(brand_id=brand.pk, url="https://example.com/h", event_types=["reward.approved"])
    webhook_event_emit(brand_id=brand.pk, type="reward.approved", data={})
    return WebhookDelivery.objects.get(endpoint__brand_id=brand.pk)


# How to make each URL argument point at an object of a given brand.
SAMPLES = {
    "brand_slug": lambda brand: brand.slug,
    "account_id": lambda brand: brand_funding_account(brand=brand, currency="EUR").pk,
    "campaign_id": lambda brand: sample_campaign(brand).pk,
    "rule_id": lambda brand: sample_campaign(brand).rules.first().pk,
    "claim_id": lambda brand: sample_claim(brand).pk,
    "share_id": lambda brand: sample_share(brand).pk,
    "key_id": lambda brand: sample_api_key(brand).pk,
    "endpoint_id": lambda brand: sample_webhook_delivery(brand).endpoint_id,
    "delivery_id": lambda brand: sample_webhook_delivery(brand).pk,
    "case_id": lambda brand: sample_case(brand).pk,
    "payout_id": lambda brand: sample_payout(brand).pk,
    "shop_id": lambda brand: sample_shop(brand).pk,
    "broadcast_id": lambda brand: sample_broadcast(brand).pk,
    "invitation_id": lambda brand: sample_invitation(brand).pk if brand.livemode else 0,
    # A test twin has no members or invitations of its own (the live brand's are its team): none to find.
    "membership_id": lambda brand: brand.memberships.first().pk if brand.livemode else 0,
    # A test twin is the free trial: no invoices of its own.
    "invoice_id": lambda brand: sample_invoice(brand).pk if brand.livemode else 0,
}


def sample_invoice(brand):
    from django.utils import timezone

    from campaigns.models import Invoice

    existing = Invoice.objects.filter(brand=brand).first()
    number = Invoice.objects.count() + 1
    return existing or Invoice.objects.create(
        brand=brand,
        issuer="JB",
        sequence_number=number,
        number=f"JB-{number:06d}",
        period_start=timezone.localdate().replace(day=1),
        period_end=timezone.localdate(),
        currency="EUR",
        net=10,
        vat=2,
        total=12,
        vat_treatment="domestic",
        customer_name=brand.name,
        issuer_name="JoyBack",
        issued_at=timezone.now(),
    )


def sample_broadcast(brand):
    from django.utils import timezone

    from payouts.models import Broadcast

    owner = brand.memberships.first() or brand.live_brand.memberships.first()
    existing = Broadcast.objects.filter(brand=brand).first()
    return existing or Broadcast.objects.create(
        brand=brand, template_name="joyback_news", send_at=timezone.now(), created_by=owner.user
    )


def sample_invitation(brand):
    from campaigns.models import Invitation
    from campaigns.services.team import invitation_create

    existing = Invitation.objects.filter(brand=brand).first()
    owner = brand.memberships.get(role="owner").user
    return existing or invitation_create(
        brand=brand, email=f"new@{brand.slug}.example", role="viewer", invited_by=owner
    )


def sample_shop(brand):
    from verification.connectors import shop_connect
    from verification.models import ShopConnection

    existing = ShopConnection.objects.filter(brand=brand).first()
    return existing or shop_connect(
        brand=brand,
        kind="woocommerce",
        domain=f"shop.{brand.slug}.example",
        webhook_secret="sample-secret",
        campaign=sample_campaign(brand),
    )


def walk(patterns, prefix="", namespace="", converters=()):
    """(route, pattern, namespace, converters) of every URL, with what its includes' prefixes add."""
    for entry in patterns:
        if isinstance(entry, URLResolver):
            inner = ":".join(filter(None, [namespace, entry.namespace]))
            named = (*converters, *getattr(entry.pattern, "converters", {}))
            yield from walk(entry.url_patterns, prefix + str(entry.pattern), inner, named)
        elif isinstance(entry, URLPattern):
            named = (*converters, *getattr(entry.pattern, "converters", {}))
            yield prefix + str(entry.pattern), entry, namespace, named


def brand_scoped_patterns():
    """(pattern, namespace, converters) of every URL that names a brand."""
    return [
        (pattern, namespace, converters)
        for _route, pattern, namespace, converters in walk(get_resolver().url_patterns)
        if "brand_slug" in converters
    ]


def url_for(pattern: URLPattern, namespace: str, converters, *, slug_brand, object_brand) -> str:
    assert pattern.name, f"{pattern.pattern} needs a name"
    kwargs = {}
    for name in converters:
        assert name in SAMPLES, f"teach SAMPLES in {__file__} how to make a {name!r} of a brand"
        kwargs[name] = SAMPLES[name](slug_brand if name == "brand_slug" else object_brand)
    return reverse(f"{namespace}:{pattern.name}" if namespace else pattern.name, kwargs=kwargs)


def test_discovery_finds_the_brand_pages():
    routes = [route for route, *_ in walk(get_resolver().url_patterns)]
    assert "brands/<slug:brand_slug>/" in routes
    assert "brands/<slug:brand_slug>/accounts/<int:account_id>/" in routes
    assert "brands/<slug:brand_slug>/payouts/<int:payout_id>/" in routes
    assert len(brand_scoped_patterns()) >= 38  # every app's brand pages, whatever their includes


def test_every_brand_page_goes_through_the_access_helper():
    for pattern, _namespace, _converters in brand_scoped_patterns():
        assert getattr(pattern.callback, "brand_scoped", False), (
            f"{pattern.pattern} is not wrapped by brand_member_required"
        )


@pytest.mark.parametrize("method", ["get", "post"])
def test_a_member_of_another_brand_gets_404_everywhere(client, alice, alpaca, bison, method):
    client.force_login(alice)
    for pattern, namespace, converters in brand_scoped_patterns():
        url = url_for(pattern, namespace, converters, slug_brand=bison, object_brand=bison)
        response = getattr(client, method)(url)
        assert response.status_code == 404, (
            f"{method.upper()} {url} gave {response.status_code} to another brand"
        )


def test_another_brands_objects_are_404_under_your_own_brand(client, alice, alpaca, bison):
    client.force_login(alice)
    checked = 0
    for pattern, namespace, converters in brand_scoped_patterns():
        if set(converters) == {"brand_slug"}:
            continue
        url = url_for(pattern, namespace, converters, slug_brand=alpaca, object_brand=bison)
        codes = {client.get(url).status_code, client.post(url).status_code}
        # 405 is a method the view does not take; the one it takes must say 404.
        assert 404 in codes and codes <= {404, 405}, (
            f"{url} answered {codes} for Bison's object inside Alpaca"
        )
        checked += 1
    assert checked >= 1


def test_your_own_brand_pages_answer(client, alice, alpaca, bison):
    client.force_login(alice)
    for pattern, namespace, converters in brand_scoped_patterns():
        url = url_for(pattern, namespace, converters, slug_brand=alpaca, object_brand=alpaca)
        assert client.get(url).status_code in (200, 405), url  # 405: a form's POST-only target


def test_signed_out_visitors_are_sent_to_sign_in(client, alpaca):
    for pattern, namespace, converters in brand_scoped_patterns():
        url = url_for(pattern, namespace, converters, slug_brand=alpaca, object_brand=alpaca)
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"], url
