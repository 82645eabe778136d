"""The dashboard, reconciliation and exports read from the replica; writes, reads inside a
transaction and the person who just changed something read from the primary; a replica that is
down or breaks mid-page leaves the primary to answer.

The test settings have a second alias, "replica", a mirror of the test database: its own
connection to the same rows, so which connection a page's queries ran on is what tells the
replica from the primary here. Its reads see only committed rows, so these tests commit
(transaction=True)."""

import pytest
from django.db import connections, transaction
from django.urls import reverse

from campaigns.models import Brand
from joyback import replicas

pytestmark = pytest.mark.django_db(transaction=True, databases=["default", "replica"])


@pytest.fixture(autouse=True)
def replica_on(settings):
    settings.REPLICA_READS = True
    replicas._replica_down_until["at"] = 0.0
    yield
    replicas._replica_down_until["at"] = 0.0


class Queries:
    """The statements each connection ran within the block (without connecting it)."""

    def __enter__(self):
        self.primary, self.replica = [], []
        self.blocks = [
            connections[alias].execute_wrapper(self._into(found))
            for alias, found in (("default", self.primary), ("replica", self.replica))
        ]
        for block in self.blocks:
            block.__enter__()
        return self

    def __exit__(self, *exc):
        for block in reversed(self.blocks):
            block.__exit__(*exc)

    @staticmethod
    def _into(found):
        def wrapper(execute, sql, params, many, context):
            found.append(sql)
            return execute(sql, params, many, context)

        return wrapper


def test_reads_go_to_the_replica_and_writes_to_the_primary(alpaca):
    with Queries() as seen, replicas.replica_reads() as on_replica:
        names = list(Brand.objects.values_list("name", flat=True))
        Brand.objects.filter(pk=alpaca.pk).update(name="Alpaca Roasters")

    assert on_replica
    assert names == ["Alpaca Coffee"]
    assert [sql for sql in seen.replica if "SELECT" in sql]
    assert not [sql for sql in seen.replica if "UPDATE" in sql]
    assert [sql for sql in seen.primary if "UPDATE" in sql]


def test_a_read_inside_a_transaction_sees_its_own_writes_on_the_primary(alpaca):
    with Queries() as seen, replicas.replica_reads(), transaction.atomic():
        Brand.objects.filter(pk=alpaca.pk).update(name="Alpaca Roasters")
        name = Brand.objects.get(pk=alpaca.pk).name

    assert name == "Alpaca Roasters"
    assert not seen.replica


def test_outside_the_replica_pages_every_read_is_the_primarys(alpaca):
    with Queries() as seen:
        assert Brand.objects.filter(slug="alpaca").exists()

    assert seen.primary
    assert not seen.replica


def test_the_dashboard_reads_from_the_replica(client, alice, summer):
    client.force_login(alice)

    with Queries() as seen:
        response = client.get(reverse("brand_dashboard", args=["alpaca"]))

    assert response.status_code == 200
    assert "Summer Glow" in response.content.decode()
    assert seen.replica


def test_the_reconciliation_export_streams_its_rows_from_the_replica(client, alice, summer):
    client.force_login(alice)

    with Queries() as seen:
        response = client.get(reverse("payouts:reconciliation_csv", args=["alpaca"]))
        body = b"".join(response.streaming_content)

    assert response.status_code == 200
    assert body
    assert seen.replica


def test_whoever_just_changed_something_reads_it_from_the_primary(client, alice, alpaca, make_user):
    client.force_login(alice)
    response = client.post(
        reverse("campaign_new", args=["alpaca"]),
        {
            "name": "Winter Warmers",
            "package": "whatsapp_reward",
            "currency": "EUR",
            "countries": ["DE"],
            "languages": ["en"],
        },
    )
    assert response.status_code in (200, 302)
    assert replicas.PIN_COOKIE in response.cookies

    with Queries() as seen:
        page = client.get(reverse("campaign_list", args=["alpaca"]))

    assert "Winter Warmers" in page.content.decode()
    assert not seen.replica
    # Another member, who changed nothing, reads the same page from the replica.
    other = type(client)()
    from campaigns.models import Role
    from campaigns.services.brands import member_add

    viewer = make_user("vic@alpaca.example")
    member_add(brand=alpaca, user=viewer, role=Role.VIEWER)
    other.force_login(viewer)
    with Queries() as seen:
        page = other.get(reverse("campaign_list", args=["alpaca"]))
    assert "Winter Warmers" in page.content.decode()
    assert seen.replica


def test_a_replica_that_is_down_leaves_the_primary_to_answer(client, alice, summer):
    client.force_login(alice)
    replica = connections["replica"]
    replica.close()
    port = replica.settings_dict["PORT"]
    replica.settings_dict["PORT"] = 1  # nothing listens there: connecting is refused at once
    try:
        with Queries() as seen:
            response = client.get(reverse("brand_dashboard", args=["alpaca"]))
        assert not replicas.replica_available()  # given up on for a while, not tried per request
    finally:
        replica.close()
        replica.settings_dict["PORT"] = port

    assert response.status_code == 200
    assert "Summer Glow" in response.content.decode()
    assert seen.primary
    assert not seen.replica


def test_a_replica_that_breaks_during_a_page_has_the_page_read_from_the_primary(client, alice, summer):
    client.force_login(alice)
    assert replicas.replica_available()
    replica_pid = connections["replica"].connection.info.backend_pid
    with connections["default"].cursor() as cursor:  # the replica restarts under the open connection
        cursor.execute("SELECT pg_terminate_backend(%s)", [replica_pid])
    connections["replica"]._answered_at = 0.0  # as after a moment: asked before it is trusted
    from joyback.postgresql import base

    # The restart lands between the health check and the page's first query.
    original = base.DatabaseWrapper.is_usable
    base.DatabaseWrapper.is_usable = lambda self: True
    try:
        response = client.get(reverse("brand_dashboard", args=["alpaca"]))
    finally:
        base.DatabaseWrapper.is_usable = original

    assert response.status_code == 200
    assert "Summer Glow" in response.content.decode()
    assert not replicas.replica_available()  # given up on for REPLICA_RETRY_SECONDS
