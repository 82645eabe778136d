"""The proofs the scale run's chaos ends with (tests/bench/scale.py), on a small run: after a clean
run they find nothing wrong, and each kind of loss or double they look for is found.

The chaos itself (a web node, the task cluster and the standing worker holding a payout batch
killed with SIGKILL, the replica restarted, under load, then a drain of up to two and a half minutes
while the sweeps finish what the killed workers held) runs in `make bench BENCH_ARGS="--only
scale"`: longer than a test may take. The batch's case is played here with the pipeline's crash
point between its claim and its answers."""

import time

import pytest
from django.db import connection

from tests.bench import payout, scale
from tests.payouts.conftest import status_force

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
    return scale.proof_failures(found(people, **extra))


def found(people, **extra) -> dict:
    return scale.proofs(
        people=people,
        accepted_deliveries=extra.get("accepted", 0),
        stored_deliveries=extra.get("stored", 0),
        drain_until=time.time(),
        held=extra.get("held"),
    )


def test_a_batch_whose_worker_died_before_the_answers_is_asked_about_not_sent_again(monkeypatch):
    """The chaos run's SIGKILL of the standing worker between "claimed as submitted" and the
    answers: the bank has the orders, the payouts do not know. The sweep asks, and settles them."""
    from datetime import timedelta

    from django.utils import timezone
    from django_q.conf import Conf

    from payouts import pipeline
    from payouts.submission.crash import SimulatedCrash, _crash_at
    from payouts.submission.sweeps import payouts_sweep
    from verification.models import ActionRule, Identity
    from verification.services.rewards import ClaimContext, action_reward

    plan = payout.setup(runs={"small": (0, 3)})
    rule = ActionRule.objects.select_related("campaign").get(pk=plan.rule_id)
    people = []
    monkeypatch.setattr(Conf, "SYNC", False)  # workers running: the approvals only mark people due
    for identity in Identity.objects.select_related("participant").filter(pk__in=plan.people["small"][1]):
        action_reward(rule=rule, identity=identity, context=ClaimContext())
        people.append(identity.participant_id)
    monkeypatch.setattr(Conf, "SYNC", True)
    _crash_at.add("batch_sent")
    with pytest.raises(SimulatedCrash):
        pipeline.payouts_due_process()
    with connection.cursor() as cursor:  # what the bench reads the moment the worker is dead
        cursor.execute(scale.HELD_QUERY)
        held = dict(cursor.fetchall())
    assert len(held) == 3 and all(held.values())  # all at the bank, none answered

    payouts_sweep(now=timezone.now() + timedelta(minutes=2))  # the task cluster's sweep, later

    proofs = found(people, held=held)
    assert scale.proof_failures(proofs) == []
    assert proofs["of them settled, not sent again"] == 3


def test_a_payout_sent_again_after_the_bank_had_it_is_found(paid_people):
    from payouts.models import Payout, PayoutEvent

    resent = Payout.objects.filter(participant_id=paid_people[0]).get()
    # The sweep found nothing at the bank and reopened it, though the bank had booked it before.
    PayoutEvent.objects.create(
        payout=resent, brand_id=resent.brand_id, from_status="submitted", to_status="payee_verified"
    )

    assert "1 payouts sent again after the bank had them (queried was owed)" in found_wrong(paid_people)


def test_a_payout_a_killed_worker_held_that_was_sent_again_or_never_settled_is_found(paid_people):
    from payouts.models import Payout

    first, second, _third = (Payout.objects.get(participant_id=person) for person in paid_people)
    Payout.objects.filter(pk=first.pk).update(submissions=2)  # the bank had it: sent again all the same
    status_force(Payout.objects.filter(pk=second.pk), "accepted")  # still not settled

    wrong = found_wrong(paid_people, held={first.pk: True, second.pk: False})

    assert "1 payouts a killed worker held not settled" in wrong
    assert "1 payouts already at the bank when their worker died not settled, or sent again" in wrong


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
