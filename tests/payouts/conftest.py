import re

import pytest
from django.contrib.auth.models import Permission
from django.core import mail
from django.db import connection, transaction
from django.urls import reverse

from payouts import vop
from payouts.manual import services as manual_services
from payouts.models import PayeeSubmission
from payouts.payees import services as payees_services
from payouts.payees.changes import payee_details_on_file
from payouts.payees.services import payee_submission_process
from payouts.submission import create
from payouts.submission.crash import _crash_at
from tests.conftest import rewarded_in_browser, totp_enable

# Every payouts module that queues work, each with its own enqueue_on_commit.
ENQUEUING = (payees_services, create, vop, manual_services)


def enqueue_replace(monkeypatch, replacement) -> None:
    """What the payout services queue goes to `replacement` instead of the task queue."""
    for module in ENQUEUING:
        monkeypatch.setattr(module, "enqueue_on_commit", replacement)


# The sandbox bank's magic accounts (see README): the last four digits choose what the bank does.
IBANS = {
    "settle": "DE89370400440532013000",
    "AC01": "DE52370400440532019001",
    "AC04": "DE68370400440532019004",
    "return_AC04": "DE84370400440532019104",
    "return_MD07": "DE03370400440532019107",
    "timeout": "DE14370400440532019200",
    "pending": "DE30370400440532019300",
    "AB05": "DE49370400440532019055",
    "close_match": "DE19370400440532019401",
    "no_match": "DE89370400440532019402",
    "not_possible": "DE62370400440532019403",
}


def payee_details(client, campaign, *, iban=IBANS["settle"], name="Pat Example", **changes):
    details = {"name": name, "email": "pat@example.com", "phone": "", "iban": iban, "consent": "on"}
    response = client.post(reverse("payouts:payee", args=[campaign.slug]), details | changes)
    assert response.status_code == 302, response.content.decode()[:2000]
    submissions_process()
    return response


def payee_details_change(client, person, capture, *, iban=IBANS["settle"], name="Pat Example", **changes):
    """Details on file changed as the person changes them (payouts.payees.changes): a code sent to
    the contact on file, then the form with it; what that sets off is run as the workers would."""
    url = reverse("payouts:payee_change", args=[person.token])
    with capture(execute=True):
        client.post(url, {"action": "send"})
    code = re.search(r"\b(\d{6})\b", [m for m in mail.outbox if "code" in m.subject.lower()][-1].body)[1]
    details = {"name": name, "email": "pat@example.com", "phone": "", "iban": iban, "consent": "on"}
    with capture(execute=True):
        response = client.post(url, details | changes | {"action": "change", "code": code})
        assert response.status_code == 302, response.content.decode()[:2000]
        submissions_process()
    return response


def submissions_process():
    """The worker's part of a payee form: the request stored the details and queued their task,
    which a test's transaction never commits; run it here as the worker would (a queued run after
    this one finds the submission processed and does nothing)."""
    for submission_id in PayeeSubmission.objects.filter(processed_at__isnull=True).values_list(
        "pk", flat=True
    ):
        payee_submission_process(submission_id=submission_id)


@pytest.fixture
def owed(client, summer, django_capture_on_commit_callbacks):
    """Pat's TikTok login was rewarded (2.00 EUR by the package default); returns a function that
    gives Pat's bank details and runs what that sets off, as the workers would."""
    person = rewarded_in_browser(client, summer)

    def give(iban=IBANS["settle"], **changes):
        if payee_details_on_file(participant=person):
            payee_details_change(client, person, django_capture_on_commit_callbacks, iban=iban, **changes)
            return person
        with django_capture_on_commit_callbacks(execute=True):
            payee_details(client, summer, iban=iban, **changes)
        return person

    return give


@pytest.fixture(autouse=True)
def _no_crash_left():
    yield
    _crash_at.clear()


def staff_user(make_user, email, *codenames, app_label="payouts"):

    # Platform staff change money only with a second factor set up (joyback.admin_site).
    user = totp_enable(make_user(email, is_staff=True, first_name=email.split("@")[0].title()))
    user.user_permissions.add(
        *Permission.objects.filter(content_type__app_label=app_label, codename__in=codenames)
    )
    return type(user).objects.get(pk=user.pk)  # permissions are cached per instance


@pytest.fixture
def treasury(make_user):
    """Two platform staff who may confirm a four-eyes grant: one asks, the other confirms."""
    people = []
    for email in ("sam@joyback.example", "tara@joyback.example"):
        user = staff_user(make_user, email)
        user.user_permissions.add(Permission.objects.get(codename="change_staffgrant"))
        people.append(type(user).objects.get(pk=user.pk))
    return people


@pytest.fixture
def sam(make_user):
    """Platform staff in treasury: uploads the bank's statements and resolves exceptions."""
    return staff_user(
        make_user, "sam@joyback.example", "statement_upload", "statement_approve", "exception_resolve"
    )


@pytest.fixture
def tara(make_user):
    """Platform staff, the second person: approves Sam's uploads and resolutions."""
    return staff_user(
        make_user, "tara@joyback.example", "statement_upload", "statement_approve", "exception_resolve"
    )


@pytest.fixture
def drew(make_user):
    """Staff without the bank permissions (support): sees the admin, books nothing."""
    return staff_user(make_user, "drew@joyback.example")


def status_force(rows, status: str) -> None:
    """Put `rows` in `status` past the database's transition rule (payouts.models.transitions), as a
    restore or a hand edit would: for tests that need a state no step of the product leads to from
    where their rows are."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        rows.update(status=status)
        cursor.execute("SET LOCAL session_replication_role = origin")
