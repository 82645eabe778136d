"""From an approved reward to the bank with as few trips through the task queue as the guarantees allow."""

from functools import partial

import pytest

from payouts import tasks
from payouts.models import Payout, SandboxBankPayment
from payouts.pipeline import payouts_due_process
from payouts.submission.create import payout_for_participant
from payouts.submission.submit import payout_status_check
from tests.conftest import rewarded_in_browser
from tests.payouts.conftest import IBANS, enqueue_replace, payee_details

pytestmark = pytest.mark.django_db


def queued_tasks(callbacks) -> list[str]:
    return [
        callback.args[0]
        for callback in callbacks
        if isinstance(callback, partial)
        and isinstance(callback.args[0], str)
        and ".tasks." in callback.args[0]
    ]


def test_the_payout_task_sends_the_payout_it_makes_without_queueing_another(client, summer, monkeypatch):
    person = rewarded_in_browser(client, summer)
    payee_details(client, summer)  # nothing it sets off runs here: no payout yet
    queued = []
    enqueue_replace(monkeypatch, lambda func, *args: queued.append(func))

    tasks.payout_for_participant_task(person.pk, "EUR")

    payout = Payout.objects.get()
    assert payout.status == "settled"
    assert SandboxBankPayment.objects.filter(end_to_end_id=payout.end_to_end_id).count() == 1
    assert "payouts.tasks.payout_submit_task" not in queued


def test_a_payout_made_elsewhere_is_still_sent_by_a_queued_task(
    client, summer, django_capture_on_commit_callbacks
):
    person = rewarded_in_browser(client, summer)
    payee_details(client, summer)

    with django_capture_on_commit_callbacks() as callbacks:
        payout = payout_for_participant(participant_id=person.pk, currency="EUR")

    assert payout.status == "created"
    assert queued_tasks(callbacks) == ["payouts.tasks.payout_submit_task"]


def test_a_settled_payout_queues_no_further_payout_when_nothing_more_is_owed(
    owed, django_capture_on_commit_callbacks
):
    owed(iban=IBANS["pending"])
    first = Payout.objects.get()

    with django_capture_on_commit_callbacks() as callbacks:
        payout_status_check(payout_id=first.pk)

    first.refresh_from_db()
    assert first.status == "settled"
    assert "payouts.tasks.payout_for_participant_task" not in queued_tasks(callbacks)
    payouts_due_process()  # the reward's own mark, still there in a test's transaction
    assert Payout.objects.count() == 1


def test_money_that_arrived_while_a_payout_was_open_goes_out_when_it_settles(
    owed, summer, django_capture_on_commit_callbacks
):
    from verification.services.participants import identity_attach
    from verification.services.rewards import action_reward

    person = owed(iban=IBANS["pending"])
    first = Payout.objects.get()
    optin = summer.rules.get(trigger="whatsapp_optin")
    whatsapp = identity_attach(
        participant=person, provider="whatsapp", subject="4915123456789", display_name="Pat"
    )
    with django_capture_on_commit_callbacks(execute=True):
        action_reward(rule=optin, identity=whatsapp)
    assert Payout.objects.count() == 1  # one payout at a time: the new reward waits

    with django_capture_on_commit_callbacks(execute=True):
        payout_status_check(payout_id=first.pk)

    second = Payout.objects.exclude(pk=first.pk).get()
    assert second.amount == optin.reward_amount
    assert SandboxBankPayment.objects.filter(end_to_end_id=second.end_to_end_id).count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_reward_racing_the_settlement_of_the_open_payout_is_still_paid(client, summer, monkeypatch):
    import threading

    from django.db import connection

    from verification.services.participants import identity_attach
    from verification.services.rewards import action_reward

    person = rewarded_in_browser(client, summer)
    payee_details(client, summer, iban=IBANS["pending"])  # paid, accepted, not settled yet
    first = Payout.objects.get()
    optin = summer.rules.get(trigger="whatsapp_optin")
    whatsapp = identity_attach(
        participant=person, provider="whatsapp", subject="4915123456789", display_name="Pat"
    )
    enqueue_replace(monkeypatch, lambda *args: None)
    barrier = threading.Barrier(2)

    def settle():
        try:
            barrier.wait()
            payout_status_check(payout_id=first.pk)
        finally:
            connection.close()

    def reward():
        try:
            barrier.wait()
            action_reward(rule=optin, identity=whatsapp)
            payouts_due_process()  # the standing worker's next pass
        finally:
            connection.close()

    threads = [threading.Thread(target=settle), threading.Thread(target=reward)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    payouts_due_process()  # what the standing worker finds due next

    assert Payout.objects.count() == 2
    assert Payout.objects.exclude(pk=first.pk).get().amount == optin.reward_amount
