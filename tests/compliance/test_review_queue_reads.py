"""JoyBack's review queue stays quick as briefs pile up: the list and a brief's page read the
policies and each campaign's decisions together, whatever the number of briefs waiting, and a
policy's terms are read once, until a new version (or any write to it) is in force."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from compliance.models import Policy
from compliance.selectors import instructions_awaiting_review, policies_current, read_once
from compliance.services import policy_revise
from tests.compliance.conftest import funded_draft, share_instructions
from tests.compliance.test_brief_review import HONEST, decide, reviewer, signed_in

pytestmark = pytest.mark.django_db

QUEUE = reverse("admin:compliance_briefreview_changelist")


@pytest.fixture
def sam(make_user):
    return reviewer(make_user, "sam@joyback.example")


def briefs_waiting(brand, count: int, *, first: int = 0) -> list:
    return [
        share_instructions(funded_draft(brand, f"Stories {n}"), f"{HONEST}, story number {n}")
        for n in range(first, first + count)
    ]


def queries_of(client, url: str) -> tuple[int, str]:
    with CaptureQueriesContext(connection) as read:
        page = client.get(url)
    assert page.status_code == 200
    return len(read), page.content.decode()


def test_the_queue_reads_as_much_for_twelve_briefs_as_for_two(alpaca, sam):
    client = signed_in(sam)
    first, _second = briefs_waiting(alpaca, 2)
    one_brief = reverse("admin:compliance_briefreview_change", args=[first.pk])
    client.get(QUEUE)  # the session's and the permissions' reads, once
    two, _page = queries_of(client, QUEUE)
    its_page_among_two, _page = queries_of(client, one_brief)

    briefs_waiting(alpaca, 10, first=2)
    twelve, page = queries_of(client, QUEUE)

    assert twelve == two
    assert "12 briefs waiting for review" in page
    assert all(f"story number {n}" in page for n in range(12))
    assert queries_of(client, one_brief)[0] <= its_page_among_two


def test_what_staff_decide_shows_on_the_next_page(alpaca, sam):
    client = signed_in(sam)
    approved, waiting = briefs_waiting(alpaca, 2)

    decide(sam, approved, "approve", "A story brief: nothing bought, nothing scripted")
    _queries, page = queries_of(client, QUEUE)

    assert "story number 1" in page and "story number 0" not in page
    assert [rule.pk for rule in instructions_awaiting_review()] == [waiting.pk]


def test_a_policy_version_is_read_once_and_the_next_one_at_once(admin_user):
    current = policies_current()
    with CaptureQueriesContext(connection) as read:
        assert policies_current() == current
    assert len(read) == 1 and "data" not in read[0]["sql"].split("FROM")[0]

    ftc = Policy.objects.get(code="us-ftc", is_current=True)
    policy_revise(
        policy=ftc,
        data={**ftc.data, "require_first": True},
        name=ftc.name,
        countries=ftc.countries,
        notes=ftc.notes,
        user=admin_user,
    )
    revised = next(p for p in policies_current() if p.code == "us-ftc")

    assert revised.version == ftc.version + 1 and revised.data["require_first"] is True


def test_terms_written_over_in_place_are_read_again(admin_user):
    ftc = Policy.objects.get(code="us-ftc", is_current=True)
    assert next(p for p in policies_current() if p.code == "us-ftc").data["label_required"] is False

    Policy.objects.filter(pk=ftc.pk).update(data={**ftc.data, "label_required": True})

    assert next(p for p in policies_current() if p.code == "us-ftc").data["label_required"] is True


def test_within_one_read_the_policies_are_asked_once(alpaca):
    with read_once(), CaptureQueriesContext(connection) as read:
        first, again = policies_current(), policies_current()

    assert first is again and len(read) == 1
