"""What the standing worker could not do reaches a person: /healthz/work/ fails for the uptime
monitor, the admin lists the rows, and an admin has them tried again once the cause is fixed."""

from datetime import timedelta

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Permission
from django.urls import reverse
from django.utils import timezone
from django_q.conf import Conf

from joyback.heartbeats import WORKER_KINDS, heartbeat_start
from payouts.models import PayeeSubmission, TransferEvent
from payouts.payees import services as payees_services
from payouts.payees.services import SUBMISSION_MAX_ATTEMPTS, payee_submissions_process
from tests.conftest import MONITORING, rewarded_in_browser, totp_enable

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("monitoring")]

PAT = {"name": "Pat Example", "email": "pat@example.com", "iban": "DE89370400440532013000", "consent": "on"}


@pytest.fixture
def no_task_workers_inline(monkeypatch):
    """As production: the request only stores the details, a worker processes them later (its
    heartbeat and the task cluster's written just now)."""
    monkeypatch.setattr(Conf, "SYNC", False)
    for kind in WORKER_KINDS:
        heartbeat_start(name=f"{kind}@test:1", kind=kind)


@pytest.fixture
def broken_processing(monkeypatch):
    """Making details a payee account fails, as when the bank's VoP service answers garbage."""

    def fails(*, submission_id):
        raise RuntimeError("the bank's answer could not be read")

    monkeypatch.setattr(payees_services, "payee_submission_process", fails)
    return monkeypatch


@pytest.fixture
def root(client, django_user_model):
    return totp_enable(django_user_model.objects.create_superuser(email="root@joyback.example", password="x"))


def details_sent(client, summer) -> PayeeSubmission:
    rewarded_in_browser(client, summer)
    client.post(reverse("payouts:payee", args=[summer.slug]), PAT)
    return PayeeSubmission.objects.get()


def worker_fails_until_it_gives_up() -> None:
    for _ in range(SUBMISSION_MAX_ATTEMPTS):
        payee_submissions_process()
        PayeeSubmission.objects.update(claimed_until=timezone.now() - timedelta(seconds=1))  # lease over


def try_again_in_admin(client, submission):
    """The admin's "Try again" action on this submission, as the changelist's form sends it."""
    return client.post(
        reverse("admin:payouts_payeesubmission_changelist"),
        {"action": "standing_work_retry_action", "_selected_action": [submission.pk]},
        follow=True,
    )


def work_health(client) -> tuple[int, dict]:
    response = client.get(reverse("healthz_work"), **MONITORING)
    return response.status_code, {kind["name"]: kind for kind in response.json()["work"]}


def test_with_nothing_waiting_the_check_passes(client):
    status, work = work_health(client)

    assert status == 200
    assert set(work) == {
        "provider webhook events",
        "API events",
        "bank details",
        "payment provider webhooks",
        "payouts due",
        "virtual accounts",
    }
    assert all(kind["waiting"] == kind["given_up"] == 0 for kind in work.values())


def test_details_waiting_for_a_moment_pass_and_waiting_too_long_fail(client, summer, no_task_workers_inline):
    submission = details_sent(client, summer)

    status, work = work_health(client)
    assert status == 200 and work["bank details"]["waiting"] == 1

    PayeeSubmission.objects.filter(pk=submission.pk).update(created_at=timezone.now() - timedelta(minutes=10))
    status, work = work_health(client)
    assert status == 503
    assert work["bank details"]["oldest_waiting_seconds"] >= 600


def test_details_the_worker_gave_up_on_fail_the_check_without_showing_them(
    client, summer, no_task_workers_inline, broken_processing
):
    details_sent(client, summer)
    worker_fails_until_it_gives_up()

    response = client.get(reverse("healthz_work"))
    status, work = work_health(client)

    assert status == 503 and response.json()["status"] == "failing"
    assert work["bank details"] == {
        "name": "bank details",
        "waiting": 0,
        "oldest_waiting_seconds": None,
        "given_up": 1,
    }
    assert payee_submissions_process() == 0  # the worker leaves it alone
    for secret in ("DE89", "pat@example.com", "Pat Example"):
        assert secret not in response.content.decode()


def test_an_admin_has_them_tried_again_once_the_cause_is_fixed(
    client, summer, root, no_task_workers_inline, broken_processing
):
    submission = details_sent(client, summer)
    worker_fails_until_it_gives_up()
    broken_processing.undo()  # the cause is fixed
    client.force_login(root)

    answer = try_again_in_admin(client, submission)

    assert "1 row will be tried again" in answer.content.decode()
    assert LogEntry.objects.get(object_id=str(submission.pk)).user == root  # who had it tried again
    assert payee_submissions_process() == 1
    submission.refresh_from_db()
    assert submission.processed_at is not None
    assert submission.participant.payee_accounts.get().account_masked.endswith("3000")
    assert work_health(client)[0] == 200


def test_rows_still_being_tried_are_not_reset(
    client, summer, root, no_task_workers_inline, broken_processing
):
    submission = details_sent(client, summer)
    payee_submissions_process()  # one failed attempt of five
    client.force_login(root)

    answer = try_again_in_admin(client, submission)

    assert "0 rows will be tried again" in answer.content.decode()
    assert not LogEntry.objects.exists()
    submission.refresh_from_db()
    assert submission.attempts == 1 and submission.claimed_until is not None


def test_staff_who_may_only_look_cannot_have_rows_tried_again(
    client, summer, django_user_model, no_task_workers_inline, broken_processing
):
    submission = details_sent(client, summer)
    worker_fails_until_it_gives_up()
    viewer = django_user_model.objects.create_user(email="ops-viewer@joyback.example", password="x")
    viewer.is_staff = True
    viewer.save()
    viewer.user_permissions.add(Permission.objects.get(codename="view_payeesubmission"))
    totp_enable(viewer)  # staff open the admin only with a second factor
    client.force_login(viewer)

    listing = client.get(reverse("admin:payouts_payeesubmission_changelist"))
    try_again_in_admin(client, submission)

    assert listing.status_code == 200 and "standing_work_retry_action" not in listing.content.decode()
    submission.refresh_from_db()
    assert submission.attempts == SUBMISSION_MAX_ATTEMPTS


def test_a_payment_providers_webhook_left_waiting_fails_the_check(client):
    """A signed transfer webhook stored ten minutes ago and never applied: a payout's money state
    is stale, so the uptime monitor is told."""
    TransferEvent.objects.create(
        provider="adyen",
        event_id="SBX1:1",
        payload={"type": "balancePlatform.transfer.updated", "data": {"id": "SBX1"}},
        received_at=timezone.now() - timedelta(minutes=10),
    )

    status, work = work_health(client)

    assert status == 503
    assert work["payment provider webhooks"]["waiting"] == 1
    assert work["payment provider webhooks"]["oldest_waiting_seconds"] >= 600
