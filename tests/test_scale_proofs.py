"""The proofs the scale run's chaos ends with (tests/bench/scale.py), on a small run: after a clean
run they find nothing wrong, and each kind of loss or double they look for is found.

The chaos itself (a web node and the task cluster killed with SIGKILL, the replica restarted,
under load, then a drain of up to two and a half minutes while the sweeps finish what the killed
workers held) runs in `make bench BENCH_ARGS="--only scale"`: longer than a test may take."""

import time

import pytest
from django.db import connection

from tests.bench import payout, scale

# The setup VACUUMs, as the bench does: outside a transaction.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres, pytest.mark.slow]


@pytest.fixture
def paid_people():
    """Three people approved through the product's path, their payouts sent and settled."""
    from joyback.queue import standing_work_pass
    from verification.models import ActionRule, Identity
    from verification.services.rewards import ClaimContext, action_reward

    plan = payout.setup(runs={"small": (0, 3)})
    rule = ActionRule.objects.select_related("campaign").get(pk=plan.rule_id)
    people = []
    for identity in Identity.objects.select_related("participant").filter(pk__in=plan.people["small"][1]):
        action_reward(rule=rule, identity=identity, context=ClaimContext())
        people.append(identity.participant_id)
    for _ in range(5):  # the provider's signed answers, applied by the standing worker
        if not any(standing_work_pass().values()):
            break
    return people


def found_wrong(people, **extra) -> list[str]:
    found = scale.proofs(
        people=people,
        accepted_deliveries=extra.get("accepted", 0),
        stored_deliveries=extra.get("stored", 0),
        drain_until=time.time(),
    )
    return scale.proof_failures(found)


def test_after_a_clean_run_nothing_is_lost_or_doubled(paid_people):
    assert found_wrong(paid_people) == []


def test_an_approved_claim_that_is_missing_is_found(paid_people, make_user):
    from verification.models import ActionRule
    from verification.services.participants import participant_create

    brand = ActionRule.objects.get(trigger="whatsapp_optin").campaign.brand
    nobody = participant_create(brand=brand)  # accepted, says the approver; not in the database

    wrong = found_wrong([*paid_people, nobody.pk])

    assert "1 approved claims missing" in wrong
    assert any("payouts not settled" in text for text in wrong)


def test_an_end_to_end_id_sent_twice_is_found(paid_people):
    with connection.cursor() as cursor:  # the bank received one payout's order a second time
        cursor.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name = 'payouts_sandboxbankpayment' "
            "ORDER BY ordinal_position"
        )
        columns = [name for (name,) in cursor.fetchall()]
        copied = ", ".join(
            {
                "id": "nextval(pg_get_serial_sequence('payouts_sandboxbankpayment', 'id'))",
                "bank_reference": "'AGAIN-' || id",
                "idempotency_key": "NULL",
            }.get(name, name)
            for name in columns
        )
        cursor.execute(
            f"INSERT INTO payouts_sandboxbankpayment ({', '.join(columns)}) "
            f"SELECT {copied} FROM payouts_sandboxbankpayment ORDER BY id LIMIT 1"
        )

    assert "1 EndToEndIds reached the bank twice" in found_wrong(paid_people)


def test_an_accepted_webhook_that_was_not_stored_is_found(paid_people):
    assert "2 accepted webhooks not stored" in found_wrong(paid_people, accepted=5, stored=3)
