"""For any people, rewards, classes and bank outcomes (settled, or settled and sent back), the
year's report adds up to the ledger's postings for the rewards it counts, to the cent, and to
exactly what the bank kept paid for reportable rewards: through the real ledger, payouts and
sandbox bank. Whoever is paid through two brands with the same TIN is one seller in the file with
the sum; people with different TINs never merge."""

import time
from collections import defaultdict

import pytest
from django.conf import settings as django_settings
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from campaigns.models import Campaign
from payouts.models import Payout, TaxProfile
from payouts.payees.services import payee_account_save, payee_onboard
from payouts.pipeline import payouts_due_process
from payouts.rails import iban_check
from payouts.sandbox.bank import MAGIC_ERROR_AMOUNTS
from payouts.submission.submit import payout_status_check
from payouts.submission.sweeps import payouts_sweep
from payouts.taxreports.services import tax_report_generate, tax_report_message
from tests.payouts.taxreports.conftest import tax_profile_give
from verification.models import ActionClaim
from verification.services.participants import identity_attach, participant_create
from verification.services.rewards import action_reward

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("operator")]


def sandbox_iban(number: int, outcome: str) -> str:
    """A valid German IBAN of the sandbox bank, its own account, ending in the outcome's digits."""
    bban = f"37040044{number:06d}{outcome}"
    digits = "".join(str(int(char, 36)) for char in bban + "DE00")
    return f"DE{98 - int(digits) % 97:02d}{bban}"


person = st.tuples(
    # The reward, in cents; not one of the sandbox bank's amounts that answer with an HTTP error.
    st.integers(min_value=1, max_value=9_999).filter(lambda cents: cents not in MAGIC_ERROR_AMOUNTS),
    st.sampled_from(["3000", "9104"]),  # the bank settles it, or settles and sends it back
    st.booleans(),  # a personal service (reported) or a promotional gift
    st.sampled_from([0, 1]),  # which of two people (two TINs) this participant is
    st.booleans(),  # paid through the second brand
)
# Two valid German tax numbers: two people.
TINS = ["86095742719", "65929970489"]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(people=st.lists(person, min_size=1, max_size=3))
def test_the_report_equals_the_ledger_for_any_rewards_and_returns(make_live_campaign, bison, people):
    # Examples run in one test's transaction: the campaigns and what was paid carry over, and the
    # report, made again each time, must still add up.
    campaigns = [
        Campaign.objects.filter(slug="club").first()
        or make_live_campaign(slug="club", package="whatsapp_reward", budget=100_000_00),
        Campaign.objects.filter(slug="club-bison").first()
        or make_live_campaign(slug="club-bison", package="whatsapp_reward", budget=100_000_00, brand=bison),
    ]
    expected = [
        sum(
            claim.amount
            for claim in ActionClaim.objects.filter(
                tax_class="service", participant__payouts__status="settled"
            )
        )
    ]
    for amount, outcome, service, who, second_brand in people:
        number = ActionClaim.objects.count() + 1
        campaign = campaigns[second_brand]
        rule = campaign.rules.get()
        rule.__class__.objects.filter(pk=rule.pk).update(reward_amount=amount)
        rule.refresh_from_db()
        participant = participant_create(brand=campaign.brand)
        identity = identity_attach(
            participant=participant, provider="whatsapp", subject=f"+4915100{number:04d}"
        )
        claim = action_reward(rule=rule, identity=identity)
        ActionClaim.objects.filter(pk=claim.pk).update(
            tax_class="service" if service else "promotional", tax_country="DE"
        )
        if service:
            tax_profile_give(participant, "DE")
            TaxProfile.objects.filter(participant=participant).update(tin=TINS[who])
        payee = payee_account_save(
            participant=participant,
            name="Jürgen Groß",
            email=f"p{number}@example.com",
            phone="",
            bank_account=iban_check(sandbox_iban(number, outcome)),
            currency="EUR",
            consent_version="test",
            onboard=False,
        )
        payee_onboard(payee_id=payee.pk)
        if service and outcome == "3000":
            expected[0] += amount
    time.sleep(django_settings.PAYOUT_GATHER_MS / 1000)
    while payouts_due_process():
        pass
    payouts_sweep()
    # On a busy machine the sandbox bank's answer can time out: the payout is unknown until
    # asked, as with the real bank.
    for _ in range(5):
        for payout_id in Payout.objects.exclude(status__in=["settled", "returned"]).values_list(
            "pk", flat=True
        ):
            payout_status_check(payout_id=payout_id)
    assert not Payout.objects.exclude(status__in=["settled", "returned"]).exists()

    report = tax_report_generate(jurisdiction="dac7", year=timezone.now().year, actor=None)

    assert report.totals.get("EUR", 0) == report.ledger_totals.get("EUR", 0) == expected[0]
    # One seller per TIN, whatever brands paid them, with what the bank kept paid to that person.
    by_tin: dict[str, int] = defaultdict(int)
    for row in report.rows.all():
        by_tin[TaxProfile.objects.get(participant_id=row.participant_id).tin] += row.total
    sellers = tax_report_message(report).rows
    assert sorted(row.seller.tin for row in sellers) == sorted(tin for tin, total in by_tin.items())
    assert {row.seller.tin: row.total for row in sellers} == dict(by_tin)
    assert sum(row.total for row in sellers) == expected[0]
