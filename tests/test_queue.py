"""Queued work with the database as the broker: the task commits with the data it concerns."""

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


def test_payee_details_and_their_tasks_are_one_commit(client, summer, broker_in_database):
    rewarded_in_browser(client, summer)
    good = {
        "name": "Pat Example",
        "email": "pat@example.com",
        "iban": "DE89370400440532013000",
        "consent": "on",
    }

    with CaptureQueriesContext(connection) as queries:
        response = client.post(reverse("payouts:payee", args=[summer.slug]), good)

    assert response.status_code == 302
    statements = [query["sql"].split()[0] for query in queries.captured_queries]
    assert statements.count("COMMIT") == 1
    last_insert = max(i for i, sql in enumerate(queries.captured_queries) if "django_q_ormq" in sql["sql"])
    assert last_insert < statements.index("COMMIT")  # the tasks are written before the one commit
    assert "payouts.tasks.status_link_send_task" in queued()
