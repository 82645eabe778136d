"""Bank details on file change only on proof of the person: a code sent to the contact on file.

The attack: whoever holds Pat's status link (a forwarded mail, a shared screen) or the shop's claim
link from Pat's order mail opens it in their own browser and puts their name, email and IBAN where
Pat's money goes. A link shows the status; it changes nothing.
"""

import re
from datetime import timedelta

import pytest
from django.core import mail
from django.db import DatabaseError, transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from payouts import notifications
from payouts.models import PayeeAccount, PayeeChange, PayeeChangeCode, PayeeSubmission, Payout
from payouts.payees.changes import CODES_PER_HOUR
from tests.conftest import SignedInClient, browser_is, rewarded_in_browser, totp_enable
from tests.payouts.conftest import IBANS, submissions_process
from verification.sessions import COOKIE

pytestmark = pytest.mark.django_db

MALLORY = {
    "name": "Mallory Thief",
    "email": "mallory@example.net",
    "phone": "",
    "iban": "GB29NWBK60161331926819",
    "consent": "on",
}
MALLORY_SEPA = MALLORY | {"iban": "DE75512108001245126199"}
PAT = MALLORY | {"name": "Pat Example", "email": "pat@example.com", "iban": "DE89370400440532013000"}


def change_url(person):
    return reverse("payouts:payee_change", args=[person.token])


def status_url(campaign, person):
    return reverse("payouts:status_page", args=[campaign.slug, person.token])


def code_from_mail(to="pat@example.com"):
    (message,) = [m for m in mail.outbox if to in m.to and "code" in m.subject.lower()][-1:]
    return re.search(r"\b(\d{6})\b", message.body).group(1)


def code_ask(client, person, capture):
    mail.outbox.clear()
    with capture(execute=True):
        response = client.post(change_url(person), {"action": "send"})
    assert response.status_code == 200, response.content.decode()[:2000]
    return code_from_mail()


def change(client, person, capture, details=MALLORY_SEPA, **extra):
    with capture(execute=True):
        response = client.post(change_url(person), details | {"action": "change"} | extra)
        submissions_process()
    return response


def test_a_status_link_opened_in_another_browser_cannot_redirect_the_money(client, summer, owed):
    pat = owed()
    stranger = Client()

    page = stranger.get(status_url(summer, pat))
    response = stranger.post(reverse("payouts:payee", args=[summer.slug]), MALLORY_SEPA)
    submissions_process()

    payee = PayeeAccount.objects.get(replaced_at__isnull=True)
    assert payee.holder_name == "Pat Example" and payee.email == "pat@example.com"
    assert response.status_code == 400
    assert page.status_code == 200 and "•••" in page.content.decode()  # the status, masked
    assert COOKIE not in page.cookies  # the link does not make the browser Pat


def test_a_shop_claim_link_cannot_change_details_on_file(client, summer, owed):
    """The claim link's cookie (as the status link's was) is for a first entry, not a change."""
    pat = owed()
    stranger = Client()
    browser_is(stranger, pat)  # what the shop's claim link does in the stranger's browser

    page = stranger.get(reverse("payouts:payee", args=[summer.slug]))
    response = stranger.post(reverse("payouts:payee", args=[summer.slug]), MALLORY_SEPA)
    submissions_process()

    assert PayeeAccount.objects.get(replaced_at__isnull=True).holder_name == "Pat Example"
    assert response.status_code == 409
    assert "we first send a code" in response.content.decode()
    assert change_url(pat) in page.content.decode() and 'name="iban"' not in page.content.decode()


def test_details_still_waiting_to_be_stored_are_on_file_too(client, summer):
    """A second submit before the worker stored the first (a second tab, a reload): also a change."""
    rewarded_in_browser(client, summer)
    first = client.post(reverse("payouts:payee", args=[summer.slug]), PAT)

    again = client.post(reverse("payouts:payee", args=[summer.slug]), MALLORY_SEPA)
    submissions_process()

    assert (first.status_code, again.status_code) == (302, 409)
    assert "we first send a code" in again.content.decode()
    assert PayeeSubmission.objects.count() == 1
    assert PayeeAccount.objects.get().holder_name == "Pat Example"


def test_details_on_file_are_told_before_what_is_wrong_with_the_new_ones(client, summer, owed):
    owed()

    response = client.post(reverse("payouts:payee", args=[summer.slug]), MALLORY_SEPA | {"iban": "DE00"})

    # 409, not the 400 of a wrong IBAN: with details on file, new ones are not what to fix.
    assert response.status_code == 409 and "we first send a code" in response.content.decode()
    assert PayeeAccount.objects.get().holder_name == "Pat Example"


def test_the_first_details_in_the_claiming_browser_need_no_code(client, summer, owed):
    owed()

    assert PayeeAccount.objects.get().holder_name == "Pat Example"
    assert not PayeeChangeCode.objects.exists() and not PayeeChange.objects.exists()


def test_with_the_code_from_pats_mailbox_the_details_change_and_the_old_contact_is_told(
    client, summer, owed, django_capture_on_commit_callbacks
):
    pat = owed()
    old = PayeeAccount.objects.get()
    code = code_ask(client, pat, django_capture_on_commit_callbacks)
    new = MALLORY_SEPA | {"name": "Pat Example", "email": "pat@new.example"}
    mail.outbox.clear()

    response = change(client, pat, django_capture_on_commit_callbacks, details=new, code=code)

    assert response.status_code == 302 and response["Location"] == status_url(summer, pat)
    payee = PayeeAccount.objects.get(replaced_at__isnull=True)
    assert payee.email == "pat@new.example" and payee.account_masked.endswith("6199")
    trail = PayeeChange.objects.get()
    assert (trail.previous, trail.payee, trail.proof) == (old, payee, "email code")
    assert trail.changed == "email,account"
    assert trail.contact_before == "p•••@example.com" and trail.contact_after == "p•••@new.example"
    assert "pat@" not in trail.contact_before + trail.contact_after  # masked
    (told,) = [m for m in mail.outbox if m.to == ["pat@example.com"]]
    assert "changed" in told.subject and old.account_masked in told.body and "6199" in told.body


def test_the_code_is_stored_hashed(client, summer, owed, django_capture_on_commit_callbacks):
    pat = owed()
    code = code_ask(client, pat, django_capture_on_commit_callbacks)

    row = PayeeChangeCode.objects.get()
    assert code not in row.code_hash and len(row.code_hash) == 64
    assert row.sent_to == "p•••@example.com" and row.expires_at - row.created_at == timedelta(minutes=10)


def _unchanged():
    payee = PayeeAccount.objects.get()
    assert payee.holder_name == "Pat Example" and payee.email == "pat@example.com"
    assert not PayeeChange.objects.exists()


def test_a_wrong_code_is_refused_and_a_new_one_sent(client, summer, owed, django_capture_on_commit_callbacks):
    pat = owed()
    code = code_ask(client, pat, django_capture_on_commit_callbacks)
    wrong = f"{(int(code) + 1) % 10**6:06d}"
    mail.outbox.clear()

    response = change(client, pat, django_capture_on_commit_callbacks, code=wrong)

    assert response.status_code == 400
    page = response.content.decode()
    assert "That code is wrong or expired; we sent a new one to p•••@example.com." in page
    assert 'id="id_code"' in page and "autofocus" in page  # the person is taken to the error
    _unchanged()
    assert code_from_mail() != ""  # the new one
    # The right old code is spent by the wrong answer: a code is tried once.
    assert change(client, pat, django_capture_on_commit_callbacks, code=code).status_code == 400
    _unchanged()


def test_an_expired_code_is_refused(client, summer, owed, django_capture_on_commit_callbacks):
    pat = owed()
    code = code_ask(client, pat, django_capture_on_commit_callbacks)
    PayeeChangeCode.objects.update(expires_at=timezone.now() - timedelta(seconds=1))

    response = change(client, pat, django_capture_on_commit_callbacks, code=code)

    assert response.status_code == 400 and "wrong or expired" in response.content.decode()
    _unchanged()


def test_a_code_is_used_once(client, summer, owed, django_capture_on_commit_callbacks):
    pat = owed()
    code = code_ask(client, pat, django_capture_on_commit_callbacks)
    assert change(client, pat, django_capture_on_commit_callbacks, code=code).status_code == 302

    again = change(client, pat, django_capture_on_commit_callbacks, details=MALLORY_SEPA, code=code)

    assert again.status_code == 400 and "wrong or expired" in again.content.decode()
    assert PayeeChange.objects.count() == 1


def test_an_earlier_code_is_spent_by_asking_for_a_new_one(
    client, summer, owed, django_capture_on_commit_callbacks, monkeypatch
):
    pat = owed()
    # Codes that differ, whatever chance would draw (a wrong answer draws the third).
    import secrets

    drawn, randbelow = iter([111_111, 222_222, 333_333]), secrets.randbelow
    monkeypatch.setattr(
        secrets, "randbelow", lambda bound: next(drawn) if bound == 10**6 else randbelow(bound)
    )
    first = code_ask(client, pat, django_capture_on_commit_callbacks)
    second = code_ask(client, pat, django_capture_on_commit_callbacks)
    assert (first, second) == ("111111", "222222")

    assert change(client, pat, django_capture_on_commit_callbacks, code=first).status_code == 400
    _unchanged()


def test_codes_are_rate_limited_per_person(client, summer, owed, django_capture_on_commit_callbacks):
    pat = owed()
    for _ in range(CODES_PER_HOUR):
        code_ask(client, pat, django_capture_on_commit_callbacks)
    mail.outbox.clear()

    response = client.post(change_url(pat), {"action": "send"})
    guess = change(client, pat, django_capture_on_commit_callbacks, code="000000")

    assert response.status_code == 400 and "several codes" in response.content.decode()
    assert not [m for m in mail.outbox if "code" in m.subject.lower()]
    assert PayeeChangeCode.objects.count() == CODES_PER_HOUR
    assert guess.status_code == 400 and "several codes" in guess.content.decode()
    _unchanged()


def test_without_a_code_nothing_changes(client, summer, owed, django_capture_on_commit_callbacks):
    pat = owed()

    response = change(client, pat, django_capture_on_commit_callbacks, code="")

    assert response.status_code == 400 and "Enter the code we sent you" in response.content.decode()
    _unchanged()


def test_people_who_gave_only_whatsapp_get_the_code_there(
    client, summer, owed, monkeypatch, django_capture_on_commit_callbacks
):
    pat = owed(email="", phone="+4915123456789")
    sent = []
    monkeypatch.setattr(notifications.whatsapp, "template_send", lambda **m: sent.append(m) or "wamid.x")

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(change_url(pat), {"action": "send"})
    (message,) = sent
    new = MALLORY_SEPA | {"name": "Pat Example", "email": "", "phone": "+4915123456789"}
    code = message["parameters"][0]
    changed = change(client, pat, django_capture_on_commit_callbacks, details=new, code=code)

    assert "+•••6789" in response.content.decode() and message["template"] == "payee_change_code"
    assert message["to"] == "+4915123456789"
    assert changed.status_code == 302 and PayeeChange.objects.get().proof == "whatsapp code"
    (notice,) = [m for m in sent if m["template"] == "payee_details_changed"]
    assert notice["to"] == "+4915123456789"


def test_without_any_contact_the_person_is_sent_to_support(client, summer, owed):
    pat = owed()
    PayeeAccount.objects.update(email=None, phone=None)

    response = client.post(change_url(pat), {"action": "send"})

    assert response.status_code == 400 and "support" in response.content.decode()
    assert not PayeeChangeCode.objects.exists()


def test_a_submission_without_proof_does_not_replace_details_on_file(client, summer, owed):
    """The form refuses it; a submission that raced past the form is not stored either."""
    from payouts.payees.services import payee_submission_accept

    pat = owed()
    details = {
        "name": "Mallory Thief",
        "email": "mallory@example.net",
        "phone": "",
        "bank_account": {
            "rail": "sepa",
            "country": "DE",
            "details": {"iban": "DE75512108001245126199"},
            "masked": "DE75 •••• 6199",
            "bank_name": "",
        },
        "currency": "EUR",
        "consent_version": "2026-11",
        "language": "en",
        "site": "http://testserver/",
        "campaign_slug": summer.slug,
        "campaign_name": summer.name,
    }
    payee_submission_accept(participant_id=pat.pk, brand_id=pat.brand_id, details=details)
    submissions_process()

    assert PayeeAccount.objects.get().holder_name == "Pat Example"


def test_the_trail_cannot_be_edited(client, summer, owed, django_capture_on_commit_callbacks):
    pat = owed()
    code = code_ask(client, pat, django_capture_on_commit_callbacks)
    change(client, pat, django_capture_on_commit_callbacks, code=code)

    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        PayeeChange.objects.update(account_after="DE00")
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        PayeeChange.objects.all().delete()


def test_a_payout_made_before_the_change_still_goes_where_it_was_made_to(
    client, summer, owed, django_capture_on_commit_callbacks
):
    """A payout names its payee: one already sent goes where it was made to (one not yet sent goes
    to the new details: the tests below)."""
    pat = owed(iban=IBANS["pending"])
    made = Payout.objects.get()
    code = code_ask(client, pat, django_capture_on_commit_callbacks)

    change(client, pat, django_capture_on_commit_callbacks, code=code)

    made.refresh_from_db()
    assert made.payee.replaced_at is not None and made.payee.holder_name == "Pat Example"
    assert Payout.objects.count() == 1


def test_another_persons_change_page_shows_nothing_of_pat(client, summer, owed):
    owed()

    assert client.get(reverse("payouts:payee_change", args=["not-a-token"])).status_code == 404


def test_the_change_page_is_usable_with_htmx(client, summer, owed, django_capture_on_commit_callbacks):
    pat = owed()
    htmx = {"HX-Request": "true"}
    code = code_ask(client, pat, django_capture_on_commit_callbacks)

    page = client.get(change_url(pat), headers=htmx).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            change_url(pat), MALLORY_SEPA | {"action": "change", "code": code}, headers=htmx
        )

    assert "<html" not in page and 'name="code"' in page
    assert response.status_code == 204 and response["HX-Redirect"] == status_url(summer, pat)


def test_staff_read_the_trail_in_the_admin_and_cannot_edit_it(
    client, summer, owed, django_user_model, django_capture_on_commit_callbacks
):
    pat = owed()
    code = code_ask(client, pat, django_capture_on_commit_callbacks)
    change(client, pat, django_capture_on_commit_callbacks, code=code)
    rita = totp_enable(django_user_model.objects.create_superuser(email="rita@joyback.example", password="x"))
    admin = SignedInClient()
    admin.force_login(rita)
    trail = PayeeChange.objects.get()

    listing = admin.get(reverse("admin:payouts_payeechange_changelist")).content.decode()
    edit = admin.post(reverse("admin:payouts_payeechange_change", args=[trail.pk]), {"proof": "staff"})

    assert "email code" in listing and "DE•• •••• 6199" in listing and "pat@example.com" not in listing
    assert admin.get(reverse("admin:payouts_payeechange_add")).status_code == 403
    assert edit.status_code == 403
    trail.refresh_from_db()
    assert trail.proof == "email code"


NEW_DETAILS = {
    "name": "Pat Example",
    "email": "pat@example.com",
    "phone": "",
    "iban": "DE02120300000000202051",
    "consent": "on",
}


def _paid_to_the_new_details_only(pat, old):
    from joyback.ledger.models import Account, AccountKind
    from joyback.ledger.selectors import ledger_drift
    from payouts.models import SandboxBankPayment

    old.refresh_from_db()
    assert old.status == "cancelled" and old.reason_code == "REPLACED"
    assert old.events.last().to_status == "cancelled" and old.events.last().detail == "bank details replaced"
    assert not SandboxBankPayment.objects.filter(end_to_end_id=old.end_to_end_id).exists()
    again = Payout.objects.exclude(pk=old.pk).get(participant=pat)
    assert again.payee.replaced_at is None and again.amount == old.amount
    assert again.status == "settled"
    sent = SandboxBankPayment.objects.get(end_to_end_id=again.end_to_end_id)
    assert NEW_DETAILS["iban"] in sent.account
    payable = Account.objects.get(kind=AccountKind.PARTICIPANT_PAYABLE, subject=pat.ledger_subject)
    assert payable.balance == 0
    assert (
        sum(Account.objects.filter(kind=AccountKind.PAYOUT_IN_TRANSIT).values_list("balance", flat=True)) == 0
    )
    assert ledger_drift() == []


def _unsent_payout(client, summer):
    from payouts.submission.create import payout_for_participant
    from tests.conftest import rewarded_in_browser
    from tests.payouts.conftest import payee_details

    pat = rewarded_in_browser(client, summer)
    payee_details(client, summer)  # what it sets off is not run: the payout below is made first
    made = payout_for_participant(participant_id=pat.pk, currency="EUR")
    assert made.status == "created"
    return pat, made


def test_a_payout_not_yet_sent_when_the_details_change_goes_to_the_new_details_instead(
    client, summer, django_capture_on_commit_callbacks
):
    """Details replaced seconds after a payout was made to the old ones: the payout never goes to the
    old account (which Pat may have closed) and never waits for ever; it is cancelled, the money
    owed to Pat again, and one new payout takes it to the details Pat confirmed with the code."""
    from payouts import pipeline
    from payouts.submission.sweeps import payouts_sweep

    pat, made = _unsent_payout(client, summer)
    code = code_ask(client, pat, django_capture_on_commit_callbacks)

    change(client, pat, django_capture_on_commit_callbacks, details=NEW_DETAILS, code=code)
    page = client.get(status_url(summer, pat)).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        pipeline.payouts_due_process()
        payouts_sweep()

    _paid_to_the_new_details_only(pat, made)
    page = client.get(status_url(summer, pat)).content.decode()
    assert "Goes to your new bank details" in page and "Payee verified" not in page


def test_a_payout_left_waiting_for_replaced_details_is_remade_by_the_sweep(
    client, summer, django_capture_on_commit_callbacks, monkeypatch
):
    """One the earlier code left at "Payee verified" for details replaced since (it went nowhere and
    the person read "Payee verified" for ever): the sweep cancels it and pays the new details."""
    from payouts import pipeline
    from payouts.payees import services as payees_services
    from payouts.submission.sweeps import payouts_sweep
    from payouts.vop import payout_payee_verify

    pat, made = _unsent_payout(client, summer)
    assert payout_payee_verify(made)
    code = code_ask(client, pat, django_capture_on_commit_callbacks)
    with monkeypatch.context() as earlier_code:
        earlier_code.setattr(payees_services, "payouts_to_replaced_details_cancel", lambda **kwargs: [])
        change(client, pat, django_capture_on_commit_callbacks, details=NEW_DETAILS, code=code)
    Payout.objects.filter(pk=made.pk).update(next_check_at=timezone.now() - timedelta(seconds=1))

    with django_capture_on_commit_callbacks(execute=True):
        payouts_sweep()
        pipeline.payouts_due_process()
        payouts_sweep()

    _paid_to_the_new_details_only(pat, made)
