"""Self-referral by a contact the poster is known by in another form: a poster who opted in by
WhatsApp (the identity's subject is the bare number) and orders with that phone is sent to review,
by a direct order and by the shop's signed webhook."""

import pytest

from tests.verification.shop_payloads import shopify_order
from tests.verification.test_referrals import (  # noqa: F401 - fixtures
    cashback,
    code,
    connect,
    creators,
    deliver,
    poster,
    referral_claim,
)
from verification.cashback import Customer, purchase_record
from verification.models import FraudSignal
from verification.referrals import Referral
from verification.services.participants import identity_attach

pytestmark = pytest.mark.django_db

WHATSAPP_NUMBER = "4915123456789"  # as the WhatsApp opt-in stores it


def _known_by_whatsapp(code):  # noqa: F811 - the fixture's value
    identity_attach(
        participant=code.participant, provider="whatsapp", subject=WHATSAPP_NUMBER, display_name=""
    )


def _reasons() -> set[str]:
    return set(FraudSignal.objects.values_list("code", flat=True))


def test_a_poster_known_by_whatsapp_ordering_with_that_phone_goes_to_review(alpaca, cashback, creators, code):  # noqa: F811
    _known_by_whatsapp(code)
    purchase_record(
        brand=alpaca,
        order_id="own-1",
        amount=40_00,
        currency="EUR",
        customer=Customer(phone=f"+{WHATSAPP_NUMBER}"),
        campaign_id=cashback.pk,
        referral=Referral(codes=(code.code,)),
    )

    assert referral_claim().status == "needs_review"
    assert "self_referral_phone" in _reasons()


def test_the_same_through_the_shops_signed_webhook(client, alpaca, cashback, creators, code):  # noqa: F811
    _known_by_whatsapp(code)
    shop = connect(alpaca, cashback)
    discount = [{"code": code.code, "amount": "4.00", "type": "fixed_amount"}]

    deliver(client, shop, "orders/paid", shopify_order(discount_codes=discount, phone=f"+{WHATSAPP_NUMBER}"))

    assert referral_claim().status == "needs_review"
    assert "self_referral_phone" in _reasons()


def test_guessing_codes_on_the_link_is_stopped_and_then_finds_none(client, creators, code):  # noqa: F811
    """A script walking the codes is answered 429 after REFERRAL_MISSES_PER_HOUR wrong ones, and
    from then on a right code records no click either; a person mistyping once is redirected."""
    from verification.referrals import REFERRAL_MISSES_PER_HOUR, ReferralClick

    for guess in range(REFERRAL_MISSES_PER_HOUR + 1):
        assert client.get(f"/v/c/creators/r/NOPE{guess:02d}/").status_code in (302, 429)

    response = client.get(f"/v/c/creators/r/{code.code}/")
    assert response.status_code == 429 and response["Retry-After"]
    assert "Too many wrong codes" in response.content.decode()
    assert not ReferralClick.objects.exists()

    other = client.get(f"/v/c/creators/r/{code.code}/", REMOTE_ADDR="198.51.100.7")
    assert other.status_code == 302 and ReferralClick.objects.count() == 1
