"""What an instant reward costs: its statements, counted, so that a check or a lookup added later
does not quietly make a viral hour twice as dear (docs/design.md, how a request travels); and the
checks read in one statement still refuse what they refused."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from campaigns.services.brands import brand_allowance_set
from joyback.api.webhooks.endpoints import webhook_endpoint_create
from joyback.ledger.selectors import ledger_drift
from verification.models import ActionClaim, ClaimStatus
from verification.services.participants import identity_attach, participant_create
from verification.services.refusals import ClaimRefused
from verification.services.rewards import ClaimContext, action_reward

pytestmark = pytest.mark.postgres

# Round trips, statements sent together (joyback.postgresql.prepared.prepared_pipeline) counted
# once: BEGIN, the person's payable (made in the reward's transaction: one commit for both), the
# rule's lock, the person's lock with the checks, the claim with the mark that the person is due
# and the accounts' lock, the posting (its transaction, entries and balances) with the claim's
# posting noted, COMMIT. The rule's lock is held over the last four: every other claim of the rule
# waits for them.
ROUND_TRIPS = 7
# The statements among them, each counted.
STATEMENTS = 11


def person(campaign, number):
    return identity_attach(
        participant=participant_create(brand=campaign.brand), provider="whatsapp", subject=f"4917{number}"
    )


@pytest.mark.django_db(transaction=True)
def test_an_instant_reward_is_seven_round_trips(make_live_campaign, monkeypatch):
    # Only the approval's own statements: the payout the tests' inline workers would make after its
    # commit is counted elsewhere (tests/payouts/test_payout_batches.py).
    monkeypatch.setattr("verification.services.rewards.standing_work_soon", lambda name: None)
    campaign = make_live_campaign(package="whatsapp_reward")
    rule = campaign.rules.get()
    action_reward(rule=rule, identity=person(campaign, 1))  # the campaign's budget is looked up once
    identity = person(campaign, 2)

    with CaptureQueriesContext(connection) as statements:
        claim = action_reward(rule=rule, identity=identity, context=ClaimContext(client_ip="198.51.100.7"))

    assert claim.status == ClaimStatus.APPROVED and claim.ledger_transaction_id
    sent = [statement["sql"] for statement in statements]
    assert len(sent) <= ROUND_TRIPS, "\n".join(sent)
    executed = [one for together in sent for one in together.split(";\n")]
    assert len(executed) <= STATEMENTS, "\n".join(executed)
    assert ledger_drift() == []


@pytest.mark.django_db(transaction=True)
def test_a_brand_with_webhook_endpoints_still_hears_of_each_reward(make_live_campaign):
    from joyback.api.models import WebhookEvent

    campaign = make_live_campaign(package="whatsapp_reward")
    webhook_endpoint_create(
        brand_id=campaign.brand_id, url="https://club.example/hooks", event_types=["reward.approved"]
    )
    rule = campaign.rules.get()

    claim = action_reward(rule=rule, identity=person(campaign, 1))

    told = WebhookEvent.objects.get(brand_id=campaign.brand_id, type="reward.approved")
    assert told.data["claim_id"] == claim.pk


@pytest.mark.django_db
def test_the_checks_read_in_one_statement_refuse_in_their_order(make_live_campaign):
    campaign = make_live_campaign(package="whatsapp_reward")
    rule = campaign.rules.get()
    pat = person(campaign, 1)
    action_reward(rule=rule, identity=pat)

    with pytest.raises(ClaimRefused) as again:
        action_reward(rule=rule, identity=pat)
    assert again.value.code == "already_claimed"

    second = identity_attach(participant=pat.participant, provider="whatsapp", subject="4917999")
    with pytest.raises(ClaimRefused) as twice:
        action_reward(rule=rule, identity=second)
    assert twice.value.code == "one_per_person"

    brand_allowance_set(brand=campaign.brand, person_allowance=1_00)
    with pytest.raises(ClaimRefused) as over:
        action_reward(rule=rule, identity=person(campaign, 2))
    assert over.value.code == "allowance"
    assert ActionClaim.objects.filter(campaign=campaign).count() == 1


@pytest.mark.django_db
def test_the_address_count_stops_at_the_threshold_and_still_sends_the_claim_to_review(
    make_live_campaign, settings
):
    settings.FRAUD_CLAIMS_PER_ADDRESS_PER_HOUR = 2
    campaign = make_live_campaign(package="whatsapp_reward")
    rule = campaign.rules.get()
    address = ClaimContext(client_ip="203.0.113.9")
    first, second = (action_reward(rule=rule, identity=person(campaign, n), context=address) for n in (1, 2))
    assert first.status == second.status == ClaimStatus.APPROVED

    third = action_reward(rule=rule, identity=person(campaign, 3), context=address)

    assert third.status == ClaimStatus.NEEDS_REVIEW and third.reason == "ip_velocity"
    assert third.hold_id and not third.ledger_transaction_id
