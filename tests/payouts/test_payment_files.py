"""SEPA batch mode: verified payouts leave the brand's own balance account at the provider as
regular SEPA credit transfers (Adyen's priority "regular"), never in a pain.001 file of the
platform's bank account; a file stored before brands held their own money is still sent at most
once."""

import hashlib
from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.test import Client
from django.utils import timezone

from payouts.batches import payment_batch_transmit
from payouts.iso20022.pain001 import pain001_files
from payouts.iso20022.types import CreditTransfer, Debtor
from payouts.models import PaymentBatch, Payout, SandboxBankMessage, SandboxBankPayment
from payouts.submission.states import PayoutRefused
from payouts.submission.sweeps import payouts_sweep
from tests.conftest import rewarded_in_browser
from tests.payouts.conftest import IBANS, payee_details

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def batch_mode(settings):
    settings.PAYOUT_SEPA_MODE = "batch"


def owed_people(summer, capture, names_and_ibans):
    for index, (name, iban) in enumerate(names_and_ibans):
        browser = Client()
        rewarded_in_browser(browser, summer, subject=f"oid-{index}")
        with capture(execute=True):
            payee_details(browser, summer, iban=iban, name=name, email=f"p{index}@example.com")


def test_batch_payouts_leave_the_brands_own_account_and_no_file(summer, django_capture_on_commit_callbacks):
    owed_people(
        summer,
        django_capture_on_commit_callbacks,
        [("Zoë Łukasiewicz", IBANS["settle"]), ("Ana Núñez", IBANS["AC04"])],
    )
    payouts_sweep(now=timezone.now() + timedelta(minutes=5))

    assert set(Payout.objects.values_list("scheme", flat=True)) == {"sepa"}
    assert sorted(Payout.objects.values_list("status", flat=True)) == ["rejected", "settled"]
    own = {p.balance_account_id for p in SandboxBankPayment.objects.all()}
    assert own == {summer.brand.virtual_accounts.get().balance_account_id}
    assert not PaymentBatch.objects.exists()
    assert not SandboxBankMessage.objects.filter(kind="pain.002.001.10").exists()


def stored_file() -> PaymentBatch:
    """A file the platform's bank got before brands held their own money."""
    (file,) = pain001_files(
        debtor=Debtor(
            name=django_settings.PAYOUT_DEBTOR_NAME,
            iban=django_settings.PAYOUT_DEBTOR_IBAN,
            bic=django_settings.PAYOUT_DEBTOR_BIC,
        ),
        transfers=[
            CreditTransfer(
                end_to_end_id="JBOLDFILE1",
                amount_minor=2_00,
                currency="EUR",
                creditor_name="Pat Example",
                creditor_iban=IBANS["settle"],
                creditor_bic="",
                remittance="JoyBack reward JBOLDFILE1",
            )
        ],
        msg_id_prefix="JBP",
        created_at=timezone.now(),
        execution_date=timezone.now().date(),
        max_per_file=100,
    )
    return PaymentBatch.objects.create(
        msg_id=file.msg_id,
        currency="EUR",
        number_of_transactions=1,
        control_sum=2_00,
        xml=file.xml,
        sha256=hashlib.sha256(file.xml).hexdigest(),
        sent_at=timezone.now(),
    )


def test_a_stored_file_is_never_sent_twice():
    batch = stored_file()
    with pytest.raises(PayoutRefused, match="already been sent"):
        payment_batch_transmit(batch_id=batch.pk)
    assert not SandboxBankPayment.objects.exists()
