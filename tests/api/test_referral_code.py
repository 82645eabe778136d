"""The Cashback API's purchase event takes the poster's referral_code: the poster's reward is made
with the purchase and follows it; bad input is refused with its field, and nothing is made."""

import pytest

from campaigns.services.rules import rule_save
from tests.api.conftest import purchase, reported
from verification.models import ActionClaim, Purchase
from verification.referrals import referral_code_for
from verification.services.participants import identity_attach, participant_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def code(alpaca, shop):
    """Poe's code on the shop's own campaign, which pays 1 EUR a referred order."""
    rule_save(campaign=shop, trigger="referral", reward_amount=1_00)
    person = participant_create(brand=alpaca)
    identity_attach(participant=person, provider="brand", subject="id:poe", display_name="Poe")
    # Poe bought once: a person who acted in the campaign has a code there.
    alpaca_purchase = purchase(order_id="POE-1", customer={"id": "poe"})
    return person, alpaca_purchase


def test_a_purchase_with_a_referral_code_pays_the_poster(alpaca_api, alpaca, shop, code):
    person, own = code
    reported(alpaca_api.report(own))
    poe = referral_code_for(participant=person, campaign=shop)

    claim = reported(alpaca_api.report(purchase(order_id="A-2001", referral_code=poe.code.lower())))

    assert claim["referral"] == "referred"
    referral = ActionClaim.objects.get(referred_purchase__order_id="A-2001")
    assert (referral.participant_id, referral.amount, referral.status) == (person.pk, 1_00, "pending")


def test_an_unknown_code_records_the_purchase_and_says_why(alpaca_api, shop, code):
    claim = reported(alpaca_api.report(purchase(order_id="A-2002", referral_code="NOPE22")))
    assert claim["referral"] == "code_unknown" and Purchase.objects.filter(order_id="A-2002").exists()


def test_a_code_too_long_is_refused_naming_the_field(alpaca_api, shop):
    answer = alpaca_api.report(purchase(order_id="A-2003", referral_code="X" * 41))
    assert answer.status_code == 400
    assert answer.json()["error"]["field"] == "referral_code"
    assert not Purchase.objects.filter(order_id="A-2003").exists()
