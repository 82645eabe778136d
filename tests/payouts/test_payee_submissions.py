"""Pat's bank details are kept the moment Pat sends them and stored as the payee account by a
standing worker: out of order, twice, or after a failure, Pat's latest details are the ones paid to."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from joyback.queue import standing_work_sweep
from payouts import sql
from payouts.models import PayeeAccount, PayeeSubmission
from payouts.payees.services import payee_submission_process, payee_submissions_process
from tests.conftest import rewarded_in_browser

pytestmark = pytest.mark.django_db

GOOD = {"name": "Pat Example", "email": "pat@example.com", "phone": "", "consent": "on"}
FIRST_IBAN, SECOND_IBAN = "DE89370400440532013000", "DE02120300000000202051"


def send(client, campaign, iban):
    response = client.post(reverse("payouts:payee", args=[campaign.slug]), GOOD | {"iban": iban})
    assert response.status_code == 302, response.content.decode()[:1000]
    return PayeeSubmission.objects.order_by("created_at").last()


def current_iban():
    return PayeeAccount.objects.get(replaced_at__isnull=True).account.iban


def test_the_details_wait_encrypted_and_the_status_page_says_they_are_being_saved(client, summer):
    person = rewarded_in_browser(client, summer)

    submission = send(client, summer, FIRST_IBAN)
    waiting = client.get(reverse("payouts:status_page", args=[summer.slug, person.token])).content.decode()
    with connection.cursor() as cursor:
        cursor.execute("SELECT details FROM payouts_payeesubmission")
        (raw,) = cursor.fetchone()
    payee_submission_process(submission_id=submission.pk)
    submission.refresh_from_db()
    saved = client.get(reverse("payouts:status_payout", args=[person.token])).content.decode()

    assert "are saving them" in waiting and "do not have your bank details" not in waiting
    assert raw.startswith("gAAAAA")  # a Fernet token
    assert "Pat Example" not in raw and FIRST_IBAN not in raw and "pat@example.com" not in raw
    assert submission.processed_at is not None and submission.details == ""  # erased once stored
    assert "DE•• •••• 3000" in saved and "are saving them" not in saved


def two_tabs_at_once(client, campaign, monkeypatch):
    """Two tabs sent details at the same moment: each statement's check that none are on file
    (payouts.sql) ran before the other's details were committed, so neither saw them."""
    monkeypatch.setitem(sql._SUBMISSION_ACCEPT, True, sql._SUBMISSION_ACCEPT[False])
    return send(client, campaign, FIRST_IBAN), send(client, campaign, SECOND_IBAN)


def test_older_details_taken_first_are_superseded_by_the_waiting_newer_ones(client, summer, monkeypatch):
    rewarded_in_browser(client, summer)
    older, newer = two_tabs_at_once(client, summer, monkeypatch)

    assert payee_submission_process(submission_id=older.pk) is None  # newer details are on their way
    assert not PayeeAccount.objects.exists()
    assert payee_submission_process(submission_id=newer.pk) is not None

    assert current_iban() == SECOND_IBAN and PayeeAccount.objects.count() == 1
    assert not PayeeSubmission.objects.filter(processed_at__isnull=True).exists()


def test_newer_details_taken_first_take_the_older_ones_with_them(client, summer, monkeypatch):
    rewarded_in_browser(client, summer)
    older, newer = two_tabs_at_once(client, summer, monkeypatch)

    payee_submission_process(submission_id=newer.pk)

    assert payee_submission_process(submission_id=older.pk) is None
    assert current_iban() == SECOND_IBAN and PayeeAccount.objects.count() == 1
    assert not PayeeSubmission.objects.filter(processed_at__isnull=True).exists()


def test_a_task_run_twice_stores_the_details_once(client, summer):
    rewarded_in_browser(client, summer)
    submission = send(client, summer, FIRST_IBAN)

    payee_submission_process(submission_id=submission.pk)
    payee_submission_process(submission_id=submission.pk)

    assert PayeeAccount.objects.count() == 1


def test_the_standing_worker_stores_details_the_request_only_kept(client, summer):
    rewarded_in_browser(client, summer)
    send(client, summer, FIRST_IBAN)  # the inline worker never runs: the test's transaction never commits
    assert not PayeeAccount.objects.exists()

    call_command("work", "--once")

    assert current_iban() == FIRST_IBAN
    assert not PayeeSubmission.objects.filter(processed_at__isnull=True).exists()


def test_details_whose_storing_failed_are_tried_again_once_their_lease_ends(client, summer, monkeypatch):
    from payouts.payees import services as payees_services
    from payouts.pipeline import payouts_due_process

    rewarded_in_browser(client, summer)
    payouts_due_process()  # the reward's pass: no bank details yet, nothing to pay
    submission = send(client, summer, FIRST_IBAN)
    real = payees_services.payee_submission_process
    monkeypatch.setattr(payees_services, "payee_submission_process", lambda **kw: 1 / 0)
    assert payee_submissions_process() == 1  # claimed, failed (logged), leased
    monkeypatch.setattr(payees_services, "payee_submission_process", real)

    assert payee_submissions_process() == 0  # still leased to the worker that failed
    assert standing_work_sweep(seconds=1) == 0
    later = timezone.now() + timedelta(minutes=6)
    monkeypatch.setattr(timezone, "now", lambda: later)
    assert standing_work_sweep(seconds=5) == 1  # the cluster's safety net

    submission.refresh_from_db()
    assert current_iban() == FIRST_IBAN and submission.attempts == 2


def test_details_for_another_brands_participant_store_nothing(client, summer, bison, make_live_campaign):
    rewarded_in_browser(client, summer)
    elsewhere = make_live_campaign(brand=bison, slug="bison-club", package="tiktok_only")

    response = client.post(reverse("payouts:payee", args=[elsewhere.slug]), GOOD | {"iban": FIRST_IBAN})

    assert response.status_code == 400
    assert "Complete at least one step above first" in response.content.decode()
    assert not PayeeSubmission.objects.exists()
