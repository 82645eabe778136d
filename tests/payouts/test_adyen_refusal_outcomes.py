"""A transfer Adyen refuses for what it says ends rejected, once, whatever path sent it: its reason in
words, the money owed to the person again, the person told, and the same request never sent again.

Pat's TikTok login was rewarded; Pat's bank details name Pat "Sandbox error 422", which the sandbox
bank answers, as Adyen documents, with 422 and an invalid accountHolder.fullName (30_112).
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from payouts import psp
from payouts.models import Notification, Payout, SandboxBankPayment
from payouts.notifications import reason_text
from payouts.submission.sweeps import payouts_sweep
from tests.payouts.test_adyen_transfers import order
from verification.services.participants import participant_payable_account

pytestmark = pytest.mark.django_db


def payable(person) -> int:
    return participant_payable_account(participant=person, currency="EUR").balance


def test_a_refused_transfer_is_rejected_with_its_reason_and_never_sent_again(owed):
    person = owed(name="Sandbox error 422")

    payout = Payout.objects.get()
    assert (payout.status, payout.reason_code, payout.submissions) == ("rejected", "NAME", 1)
    assert "30_112" in payout.events.get(to_status="rejected").detail
    assert payable(person) == payout.amount  # owed to Pat again
    assert Notification.objects.filter(payout=payout, kind="fix_details").exists()
    assert "Latin letters" in reason_text(payout.reason_code)

    payouts_sweep(now=timezone.now() + timedelta(hours=1))

    payout.refresh_from_db()
    assert (payout.status, payout.submissions) == ("rejected", 1)
    assert Payout.objects.count() == 1  # the details are marked: nothing is paid to them again
    assert not SandboxBankPayment.objects.exists()


def test_a_rate_limit_made_nothing_and_is_asked_about_again_not_rejected():
    with pytest.raises(psp.PspUnknown, match="send again later"):
        psp.payment_submit(order("sepa_instant", amount=4_29))


def test_a_refusal_of_our_own_key_stays_an_error_for_the_operators():
    with pytest.raises(psp.PspError):
        psp.payment_submit(order("sepa_instant", amount=4_01))


@pytest.mark.parametrize("scheme", ["sepa_instant", "fps", "ach", "swift"])
def test_an_invalid_field_is_the_payments_answer_on_every_rail(scheme):
    answer = psp.payment_submit(order(scheme, amount=4_22))

    assert answer.rejected and answer.reason_code == "NAME"
    assert "30_112" in answer.provider_status
