"""SEPA batch mode: verified payouts leave in pain.001 files the bank validates and answers."""

from datetime import timedelta

import pytest
from django.test import Client
from lxml import etree

from payouts.batches import payment_batch_build, payment_batch_transmit
from payouts.iso20022.validate import xsd_validate
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


def test_verified_payouts_leave_in_one_schema_valid_file(summer, django_capture_on_commit_callbacks):
    owed_people(
        summer,
        django_capture_on_commit_callbacks,
        [
            ("Zoë Łukasiewicz", IBANS["settle"]),
            ("Jürgen Groß", IBANS["not_possible"]),
            ("Ana Núñez", IBANS["AC04"]),
        ],
    )
    assert set(Payout.objects.values_list("status", flat=True)) == {"payee_verified"}

    with django_capture_on_commit_callbacks(execute=True):
        (batch,) = payment_batch_build()

    batch.refresh_from_db()
    xml = bytes(batch.xml)
    xsd_validate(xml, "pain.001.001.09")
    assert b"Zoe Lukasiewicz" in xml and b"Jurgen Gross" in xml and batch.number_of_transactions == 3
    assert len(batch.msg_id) <= 35 and batch.sent_at is not None
    # The bank accepts the good ones for settlement and rejects the closed account at once.
    assert sorted(Payout.objects.values_list("status", flat=True)) == ["accepted", "accepted", "rejected"]
    assert SandboxBankMessage.objects.filter(kind="pain.002.001.10").count() == 1

    payouts_sweep(now=batch.created_at + timedelta(minutes=5))

    assert sorted(Payout.objects.values_list("status", flat=True)) == ["rejected", "settled", "settled"]
    assert SandboxBankMessage.objects.filter(kind="camt.054.001.08").count() == 2


def test_a_file_is_never_sent_twice(summer, django_capture_on_commit_callbacks):
    owed_people(summer, django_capture_on_commit_callbacks, [("Pat Example", IBANS["settle"])])
    with django_capture_on_commit_callbacks(execute=True):
        (batch,) = payment_batch_build()

    with pytest.raises(PayoutRefused, match="already been sent"):
        payment_batch_transmit(batch_id=batch.pk)

    assert SandboxBankPayment.objects.count() == 1


def test_the_same_payouts_make_the_same_file(summer, django_capture_on_commit_callbacks):
    owed_people(summer, django_capture_on_commit_callbacks, [("Pat Example", IBANS["settle"])])
    (first,) = payment_batch_build()
    # The bank never got it: the payout is reopened and goes into a file again.
    Payout.objects.update(status="payee_verified")

    (second,) = payment_batch_build()

    assert second.pk == first.pk and PaymentBatch.objects.count() == 1
    assert etree.fromstring(bytes(second.xml)) is not None


def test_the_bank_refuses_a_file_it_already_has(summer, django_capture_on_commit_callbacks):
    from payouts import psp

    owed_people(summer, django_capture_on_commit_callbacks, [("Pat Example", IBANS["settle"])])
    with django_capture_on_commit_callbacks(execute=True):
        (batch,) = payment_batch_build()

    with pytest.raises(psp.PspError, match="409"):
        psp.payment_file_send(xml=bytes(batch.xml))
