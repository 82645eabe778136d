"""Queued work with the database as the broker: the task commits with the data it concerns."""

import uuid

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django_q.conf import Conf
from django_q.models import OrmQ

from joyback.queue import enqueue_on_commit
from tests.conftest import rewarded_in_browser

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def broker_in_database(monkeypatch):
    """As production without REDIS_URL: tasks go to the django_q_ormq table, not run inline."""
    monkeypatch.setattr(Conf, "SYNC", False)
    monkeypatch.setattr(Conf, "ORM", "default")


def queued() -> list[str]:
    return [task.func() for task in OrmQ.objects.all()]


def test_a_task_queued_in_a_transaction_commits_with_it(broker_in_database):
    with transaction.atomic():
        enqueue_on_commit("payouts.tasks.status_link_send_task", 1, "https://x/", "Summer", "en")

    assert queued() == ["payouts.tasks.status_link_send_task"]


def test_a_task_queued_in_a_rolled_back_transaction_is_never_seen(broker_in_database):
    class Refused(Exception):
        pass

    with pytest.raises(Refused), transaction.atomic():
        enqueue_on_commit("payouts.tasks.status_link_send_task", 1, "https://x/", "Summer", "en")
        raise Refused

    assert queued() == []


def test_outside_a_transaction_the_task_is_queued_at_once(broker_in_database):
    enqueue_on_commit("payouts.tasks.status_link_send_task", 1, "https://x/", "Summer", "en")

    assert queued() == ["payouts.tasks.status_link_send_task"]


@pytest.mark.postgres
def test_payee_details_are_one_statement_and_one_commit_in_the_worker(client, summer, broker_in_database):
    from payouts.models import PayeeSubmission
    from payouts.payees.services import payee_submission_process

    rewarded_in_browser(client, summer)
    OrmQ.objects.all().delete()  # what the reward queued
    good = {
        "name": "Pat Example",
        "email": "pat@example.com",
        "iban": "DE89370400440532013000",
        "consent": "on",
    }

    with CaptureQueriesContext(connection) as request:
        response = client.post(reverse("payouts:payee", args=[summer.slug]), good)
    writes = [query["sql"] for query in request.captured_queries if not query["sql"].startswith("SELECT")]
    submission = PayeeSubmission.objects.get()
    with CaptureQueriesContext(connection) as worker:
        payee_submission_process(submission_id=submission.pk)

    assert response.status_code == 302
    # The request: the session's read, then the details in one statement, and no task row: the
    # standing worker claims the submission itself.
    assert len(writes) == 1 and writes[0].startswith("WITH") and "django_q_ormq" not in writes[0]
    assert "payouts.tasks.status_link_send_task" in queued()
    # The worker: the payee account and the tasks it sets off, in one commit.
    statements = [query["sql"].split()[0] for query in worker.captured_queries]
    assert statements.count("COMMIT") == 1
    last_insert = max(i for i, sql in enumerate(worker.captured_queries) if "django_q_ormq" in sql["sql"])
    assert last_insert < statements.index("COMMIT")


@pytest.mark.postgres
def test_standing_workers_racing_claim_disjoint_rows_and_a_lease_is_claimed_again_when_it_ends(
    client, summer, broker_in_database
):
    from datetime import timedelta

    from django.utils import timezone

    from joyback.queue import lease_claim
    from payouts.models import PayeeSubmission
    from tests.verification.test_claim_races import race

    person = rewarded_in_browser(client, summer)
    now = timezone.now()
    PayeeSubmission.objects.bulk_create(
        PayeeSubmission(
            id=uuid.uuid4(), participant=person, brand_id=person.brand_id, details="{}", created_at=now
        )
        for _ in range(40)
    )
    waiting = PayeeSubmission.objects.filter(processed_at__isnull=True)

    def claim(limit):
        return lease_claim(waiting, limit=limit, lease=timedelta(minutes=5), order_by="created_at")

    taken = [pk for claimed in race(4, lambda i: claim(15)) for pk in claimed]

    assert len(taken) == len(set(taken)) == 40  # every row once, whichever worker took it
    assert claim(50) == []
    PayeeSubmission.objects.filter(pk=taken[0]).update(claimed_until=now - timedelta(seconds=1))
    assert claim(50) == [taken[0]]
    assert PayeeSubmission.objects.get(pk=taken[0]).attempts == 2
