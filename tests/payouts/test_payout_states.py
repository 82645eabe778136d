"""Pat's reward travels payable -> in transit -> bank, and every way the bank can answer is handled."""

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from joyback.ledger.models import Account, AccountKind
from joyback.ledger.selectors import ledger_drift
from payouts.models import PayeeAccount, Payout, PspFeedCursor, SandboxBankPayment, TransferEvent
from payouts.sandbox.bank import webhooks_deliver
from payouts.submission.create import payout_for_participant
from payouts.submission.submit import payout_status_check
from payouts.submission.sweeps import payouts_sweep
from payouts.submission.webhooks import transfer_events_process
from tests.payouts.conftest import IBANS

pytestmark = pytest.mark.django_db


def balance(kind, person=None):
    accounts = Account.objects.filter(kind=kind)
    if person is not None:
        accounts = accounts.filter(subject=person.ledger_subject)
    return sum(a.balance for a in accounts)


def history(payout):
    return [(e.from_status, e.to_status, e.reason_code) for e in payout.events.all()]


def test_an_instant_payout_settles_and_pat_is_told(owed):
    person = owed()

    payout = Payout.objects.get()
    assert payout.status == "settled" and payout.amount == 1_00 and payout.scheme == "sepa_instant"
    assert [step[1] for step in history(payout)] == ["created", "payee_verified", "submitted", "settled"]
    assert balance(AccountKind.PARTICIPANT_PAYABLE, person) == 0
    assert balance(AccountKind.PAYOUT_IN_TRANSIT) == 0
    assert SandboxBankPayment.objects.filter(end_to_end_id=payout.end_to_end_id).count() == 1
    assert any("is paid" in m.subject and "pat@example.com" in m.to for m in mail.outbox)
    assert ledger_drift() == []


def test_a_rejection_gives_the_money_back_and_asks_for_new_details(owed):
    person = owed(iban=IBANS["AC01"])

    payout = Payout.objects.get()
    assert (payout.status, payout.reason_code) == ("rejected", "AC01")
    assert balance(AccountKind.PARTICIPANT_PAYABLE, person) == 1_00
    assert balance(AccountKind.PAYOUT_IN_TRANSIT) == 0
    assert PayeeAccount.objects.get().unusable_code == "AC01"
    (ask,) = [m for m in mail.outbox if "check your bank details" in m.subject]
    assert "the account number is not valid" in ask.body and "/status/" in ask.body


def test_details_fixed_after_a_rejection_are_paid_at_once(owed):
    owed(iban=IBANS["AC01"])

    owed(iban=IBANS["settle"])

    first, second = Payout.objects.order_by("pk")
    assert (first.status, second.status) == ("rejected", "settled")
    assert second.repays == first


def test_a_return_after_settlement_reverses_and_repays_once_fixed(owed, django_capture_on_commit_callbacks):
    person = owed(iban=IBANS["return_AC04"])
    payout = Payout.objects.get()
    assert payout.status == "settled"
    bank_after_settlement = balance(AccountKind.BRAND_BALANCE)  # the brand's own, at the provider

    # Days later the payee's bank sends it back; the PSP's feed says so.
    with django_capture_on_commit_callbacks(execute=True):
        payouts_sweep()

    payout.refresh_from_db()
    assert (payout.status, payout.reason_code) == ("returned", "AC04")
    assert [step[1] for step in history(payout)][-2:] == ["settled", "returned"]
    assert balance(AccountKind.PARTICIPANT_PAYABLE, person) == 1_00
    assert balance(AccountKind.BRAND_BALANCE) == bank_after_settlement + 1_00
    assert any("check your bank details" in m.subject for m in mail.outbox)

    owed(iban=IBANS["settle"])

    again = Payout.objects.exclude(pk=payout.pk).get()
    assert (again.status, again.repays_id) == ("settled", payout.pk)
    assert balance(AccountKind.PARTICIPANT_PAYABLE, person) == 0
    assert ledger_drift() == []


def test_webhooks_sent_and_applied_twice_change_nothing(owed):
    owed(iban=IBANS["return_AC04"])
    payouts_sweep()
    bank = balance(AccountKind.PLATFORM_BANK)

    # The bank sends every webhook again (stored once), and the stored ones are applied again.
    PspFeedCursor.objects.filter(name="sandbox_webhooks").update(position=0)
    assert webhooks_deliver() >= 2
    TransferEvent.objects.update(processed_at=None)
    assert transfer_events_process() >= 2

    assert Payout.objects.get().status == "returned"
    assert balance(AccountKind.PLATFORM_BANK) == bank


def test_a_timeout_is_unknown_then_asked_about_never_resent(owed):
    owed(iban=IBANS["timeout"])
    payout = Payout.objects.get()
    assert payout.status == "unknown"

    payout_status_check(payout_id=payout.pk)

    payout.refresh_from_db()
    assert payout.status == "settled"
    assert SandboxBankPayment.objects.filter(end_to_end_id=payout.end_to_end_id).count() == 1
    assert [step[1] for step in history(payout)] == [
        "created",
        "payee_verified",
        "submitted",
        "unknown",
        "settled",
    ]


def test_an_accepted_payment_settles_when_the_bank_reports_it(owed):
    owed(iban=IBANS["pending"])
    payout = Payout.objects.get()
    assert payout.status == "accepted"

    payout_status_check(payout_id=payout.pk)

    payout.refresh_from_db()
    assert payout.status == "settled"


def test_an_unreachable_payee_bank_delays_without_blaming_pat(owed):
    owed(iban=IBANS["AB05"])

    payout = Payout.objects.get()
    assert (payout.status, payout.reason_code) == ("rejected", "AB05")
    assert PayeeAccount.objects.get().unusable_code == ""
    assert any("delayed" in m.subject for m in mail.outbox)


def test_rewards_that_arrive_while_a_payout_is_open_go_in_the_next_one(owed, summer, client):
    from verification.services.participants import identity_attach
    from verification.services.rewards import action_reward

    person = owed(iban=IBANS["pending"])
    first = Payout.objects.get()
    whatsapp = identity_attach(
        participant=person, provider="whatsapp", subject="4915123456789", display_name="Pat"
    )
    action_reward(rule=summer.rules.get(trigger="whatsapp_optin"), identity=whatsapp)

    assert payout_for_participant(participant_id=person.pk, currency="EUR") is None
    payout_status_check(payout_id=first.pk)
    second = payout_for_participant(participant_id=person.pk, currency="EUR")

    assert second.amount == 1_00 and Payout.objects.count() == 2


def test_the_payout_history_cannot_be_edited(owed):
    owed()
    event = Payout.objects.get().events.first()
    event.detail = "rewritten"

    with pytest.raises(Exception, match="append-only"):
        event.save()


def test_after_an_unreachable_payee_bank_the_money_goes_as_a_regular_sepa_transfer(
    owed, django_capture_on_commit_callbacks
):
    owed(iban=IBANS["AB05"])  # SEPA Instant: the payee's bank did not answer in time
    failed = Payout.objects.get()

    with django_capture_on_commit_callbacks(execute=True):
        payouts_sweep()  # the money is owed again: a new payout, this time regular SEPA
    later = timezone.now() + timedelta(minutes=5)
    for now in (None, later):  # it goes at once; the provider is asked about it once it is due
        with django_capture_on_commit_callbacks(execute=True):
            payouts_sweep(now=now)

    again = Payout.objects.exclude(pk=failed.pk).get()
    assert (failed.scheme, again.scheme) == ("sepa_instant", "sepa")
    # From the brand's own balance account at the provider, never a file of the platform's bank.
    assert again.batch is None and again.status == "settled"
    assert ledger_drift() == []
