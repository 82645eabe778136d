"""The worker dies at a step chosen by a seed, restarts, and the bank still gets exactly one
transfer per EndToEndId while the ledger stays whole."""

import random
import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from joyback.ledger.models import Account, AccountKind
from joyback.ledger.selectors import ledger_drift
from payouts.models import Payout, SandboxBankPayment
from payouts.pipeline import payouts_due_process
from payouts.submission.crash import SimulatedCrash, _crash_at
from payouts.submission.create import payout_for_participant
from payouts.submission.submit import payout_submit
from payouts.submission.sweeps import payouts_sweep
from payouts.vop import payee_vop_check
from tests.payouts.conftest import IBANS, enqueue_replace

pytestmark = pytest.mark.django_db

CRASH_POINTS = ["payout_locked", "payout_posted", "before_claim", "after_claim", "after_send"]
OUTCOMES = ["settle", "pending", "timeout", "AC04", "return_MD07"]
FINAL = {
    "settle": "settled",
    "pending": "settled",
    "timeout": "settled",
    "AC04": "rejected",
    "return_MD07": "returned",
}


def restart():
    """A new worker comes up later and runs its standing work until nothing is left to do: the
    batches take the people still marked due (a crash rolled their payout back), the sweep the
    rest."""
    later = timezone.now() + timedelta(minutes=10)
    for _ in range(4):
        payouts_due_process()
        payouts_sweep(now=later)
        later += timedelta(minutes=10)


@pytest.mark.parametrize("seed", range(20))
def test_a_crash_at_any_step_sends_once_and_loses_nothing(seed, owed):
    chance = random.Random(seed)
    crash_at, outcome = chance.choice(CRASH_POINTS), chance.choice(OUTCOMES)
    _crash_at.add(crash_at)

    try:
        person = owed(iban=IBANS[outcome])
    except SimulatedCrash:
        from verification.models import Participant

        person = Participant.objects.get()
    restart()

    payout = Payout.objects.get()
    assert payout.status == FINAL[outcome], (crash_at, outcome, list(payout.events.values_list("to_status")))
    assert SandboxBankPayment.objects.filter(end_to_end_id=payout.end_to_end_id).count() == 1
    payable = Account.objects.get(kind=AccountKind.PARTICIPANT_PAYABLE, subject=person.ledger_subject)
    in_transit = sum(
        Account.objects.filter(kind=AccountKind.PAYOUT_IN_TRANSIT).values_list("balance", flat=True)
    )
    paid = payout.status == "settled"
    assert (payable.balance, in_transit) == (0 if paid else 1_00, 0)
    assert ledger_drift() == []


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_workers_never_submit_the_same_payout(client, summer, monkeypatch):
    from tests.conftest import rewarded_in_browser
    from tests.payouts.conftest import payee_details

    enqueue_replace(monkeypatch, lambda *args: None)
    rewarded_in_browser(client, summer)
    payee_details(client, summer)
    payout = payout_for_participant(
        participant_id=Payout.participant.field.related_model.objects.get().pk, currency="EUR"
    )
    barrier = threading.Barrier(4)

    def worker():
        try:
            barrier.wait()
            payout_submit(payout_id=payout.pk)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    payout.refresh_from_db()
    assert payout.status == "settled" and payout.submissions == 1
    assert SandboxBankPayment.objects.filter(end_to_end_id=payout.end_to_end_id).count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_racing_payout_tasks_for_one_person_make_one_payout(client, summer, monkeypatch):
    from tests.conftest import rewarded_in_browser
    from tests.payouts.conftest import payee_details

    enqueue_replace(monkeypatch, lambda *args: None)
    person = rewarded_in_browser(client, summer)
    payee_details(client, summer)
    barrier = threading.Barrier(6)
    made = []

    def worker():
        try:
            barrier.wait()
            made.append(payout_for_participant(participant_id=person.pk, currency="EUR"))
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len([p for p in made if p is not None]) == 1
    assert Payout.objects.count() == 1 and Payout.objects.get().amount == 1_00


@pytest.mark.parametrize("crash_at", ["payout_posted", "after_claim", "after_send"])
def test_the_worker_fast_path_survives_a_crash_too(crash_at, client, summer, monkeypatch):
    """A worker with the name check already settled makes, claims and sends the payout in one go."""
    from tests.conftest import rewarded_in_browser
    from tests.payouts.conftest import payee_details

    enqueue_replace(monkeypatch, lambda *args: None)
    person = rewarded_in_browser(client, summer)
    payee_details(client, summer)
    payee_vop_check(payee=person.payee_accounts.get())
    _crash_at.add(crash_at)

    with pytest.raises(SimulatedCrash):
        payout_for_participant(participant_id=person.pk, currency="EUR", send_now=True)
    restart()

    payout = Payout.objects.get()
    assert payout.status == "settled"
    assert SandboxBankPayment.objects.filter(end_to_end_id=payout.end_to_end_id).count() == 1
    assert ledger_drift() == []


def test_the_worker_fast_path_records_every_step(client, summer, monkeypatch):
    from tests.conftest import rewarded_in_browser
    from tests.payouts.conftest import payee_details

    enqueue_replace(monkeypatch, lambda *args: None)
    person = rewarded_in_browser(client, summer)
    payee_details(client, summer)
    payee_vop_check(payee=person.payee_accounts.get())

    payout = payout_for_participant(participant_id=person.pk, currency="EUR", send_now=True)

    payout.refresh_from_db()
    steps = list(payout.events.values_list("from_status", "to_status"))
    assert steps == [
        ("", "created"),
        ("created", "payee_verified"),
        ("payee_verified", "submitted"),
        ("submitted", "settled"),
    ]
    assert payout.submissions == 1 and payout.ledger_transaction_id
