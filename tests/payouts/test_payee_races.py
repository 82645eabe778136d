"""Bank details under concurrency, on PostgreSQL: double clicks and two people racing with one IBAN."""

import re

import pytest
from django.core import mail
from django.test import Client

from payouts.models import PayeeAccount, PayeeChange, PayeeSubmission
from payouts.payees.changes import payee_change_code_send
from tests.conftest import rewarded_in_browser
from tests.verification.test_claim_races import race
from verification.models import ActionClaim

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

DETAILS = {
    "name": "Pat Example",
    "email": "pat@example.com",
    "iban": "DE89370400440532013000",
    "consent": "on",
}


def test_one_person_submitting_twice_at_once_keeps_one_current_account(summer):
    browser = Client()
    rewarded_in_browser(browser, summer)

    responses = race(6, lambda i: browser.post(f"/p/c/{summer.slug}/payee/", DETAILS))

    # Those that came after details were kept are refused: a change needs the person's code
    # (payouts.payees.changes); those that raced past that check are stored one after another,
    # or superseded by a newer one a worker took first.
    codes = [r.status_code for r in responses]
    assert set(codes) <= {302, 409} and 302 in codes
    assert not PayeeSubmission.objects.filter(processed_at__isnull=True).exists()
    assert PayeeAccount.objects.filter(replaced_at__isnull=True).count() == 1
    assert 1 <= PayeeAccount.objects.count() <= codes.count(302)


def test_people_sharing_one_iban_at_the_same_moment_are_all_flagged_without_deadlock(summer):
    browsers = [Client() for _ in range(6)]
    for i, browser in enumerate(browsers):
        rewarded_in_browser(browser, summer, subject=f"oid-{i}")

    responses = race(
        6, lambda i: browsers[i].post(f"/p/c/{summer.slug}/payee/", DETAILS | {"email": f"p{i}@x.org"})
    )

    assert [r.status_code for r in responses] == [302] * 6
    assert set(ActionClaim.objects.values_list("status", flat=True)) == {"needs_review"}
    assert all(claim.signals.filter(code="payee_iban_shared").exists() for claim in ActionClaim.objects.all())


def test_one_code_sent_by_several_browsers_at_once_changes_the_details_once(summer):
    """A leaked code (or a double click) racing: the code is spent under the person's lock by the
    first answer, so one change is made and the others are refused."""
    browser = Client()
    pat = rewarded_in_browser(browser, summer)
    browser.post(f"/p/c/{summer.slug}/payee/", DETAILS)
    payee_change_code_send(participant=pat)
    code = re.search(r"\b(\d{6})\b", mail.outbox[-1].body)[1]
    ibans = [
        "DE75512108001245126199",
        "DE02120300000000202051",
        "DE12500105170648489890",
        "DE02500105170137075030",
    ]
    browsers = [Client() for _ in ibans]

    responses = race(
        len(ibans),
        lambda i: browsers[i].post(
            f"/p/status/{pat.token}/change/", DETAILS | {"iban": ibans[i], "action": "change", "code": code}
        ),
    )

    codes = sorted(r.status_code for r in responses)
    assert codes == [302] + [400] * (len(ibans) - 1)
    assert PayeeChange.objects.count() == 1
    winner = ibans[[r.status_code for r in responses].index(302)]
    assert winner[-4:] in PayeeAccount.objects.get(replaced_at__isnull=True).account_masked
