"""One mailbox written several ways is one person: a +tag, Gmail's dots, googlemail.com, upper case,
a trailing dot or a Unicode domain do not make a second person in duplicate detection."""

import pytest
from django.db import connection
from django.test import Client

from joyback.crypto import fingerprint
from joyback.emails import email_canonical
from payouts.fingerprints import payee_fingerprints_recompute
from payouts.models import PayeeAccount
from tests.conftest import rewarded_in_browser
from tests.payouts.conftest import submissions_process
from verification.models import ActionClaim

DETAILS = {"name": "Pat Example", "phone": "", "consent": "on"}


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("pat@gmail.com", "pat@gmail.com"),
        ("P.A.T+summer@GMail.com", "pat@gmail.com"),
        ("p.at@googlemail.com", "pat@gmail.com"),
        ("pat@gmail.com.", "pat@gmail.com"),
        ("  Pat+win+more@Outlook.com ", "pat@outlook.com"),
        ("pat.doe+x@icloud.com", "pat.doe@icloud.com"),  # dots matter outside Gmail
        ("pat@bücher.example", "pat@xn--bcher-kva.example"),
        ("pat@xn--bcher-kva.example.", "pat@xn--bcher-kva.example"),
        ("+only@example.com", "+only@example.com"),  # nothing before the tag: kept as written
        ("not-an-address", "not-an-address"),
    ],
)
def test_the_canonical_form_of_an_address(written, canonical):
    assert email_canonical(written) == canonical


def give_details(client, campaign, *, email, iban):
    client.post(f"/p/c/{campaign.slug}/payee/", DETAILS | {"email": email, "iban": iban})
    submissions_process()


@pytest.mark.django_db
@pytest.mark.parametrize("second", ["p.a.t+summer@googlemail.com", "PAT@gmail.com", "pat+2@gmail.com"])
def test_a_second_person_with_the_same_mailbox_written_otherwise_is_flagged(summer, second):
    pat, sam = Client(), Client()
    rewarded_in_browser(pat, summer, subject="oid-pat")
    give_details(pat, summer, email="pat@gmail.com", iban="DE89370400440532013000")
    rewarded_in_browser(sam, summer, subject="oid-sam")

    give_details(sam, summer, email=second, iban="DE75512108001245126199")

    flagged = ActionClaim.objects.filter(signals__code="payee_email_shared")
    assert flagged.values("participant").distinct().count() == 2


@pytest.mark.django_db
def test_fingerprints_stored_before_are_moved_to_the_canonical_form(summer):
    pat, sam = Client(), Client()
    rewarded_in_browser(pat, summer, subject="oid-pat")
    give_details(pat, summer, email="P.A.T+old@gmail.com", iban="DE89370400440532013000")
    payee = PayeeAccount.objects.get()
    with connection.cursor() as cursor:  # as the code before stored it: lower-cased only
        cursor.execute(
            f"UPDATE {PayeeAccount._meta.db_table} SET email_fingerprint = %s WHERE id = %s",
            [fingerprint("p.a.t+old@gmail.com"), payee.pk],
        )

    assert payee_fingerprints_recompute(model=PayeeAccount) == 1  # what the migration runs
    rewarded_in_browser(sam, summer, subject="oid-sam")
    give_details(sam, summer, email="pat@gmail.com", iban="DE75512108001245126199")

    assert ActionClaim.objects.filter(signals__code="payee_email_shared").count() == 2
