"""Bank details under concurrency, on PostgreSQL: double clicks and two people racing with one IBAN."""

import pytest
from django.test import Client

from payouts.models import PayeeAccount, PayeeSubmission
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
