"""Every message to Pat goes one way (payouts.notifications): a Notification row per message and
channel, sent once, tried again on one policy; each message worded in Pat's language and zone."""

from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from django.core import mail
from django.urls import reverse
from django.utils import timezone

from payouts import notifications
from payouts.models import Notification, PayeeAccount, Payout
from payouts.notifications import NOTIFICATION_ATTEMPTS, notification_backoff, notifications_due
from payouts.payees.services import status_link_send
from payouts.submission.sweeps import payouts_sweep
from tests.conftest import rewarded_in_browser
from tests.payouts.conftest import submissions_process

GOOD = {
    "name": "Pat Example",
    "email": "pat@example.com",
    "phone": "",
    "iban": "DE89370400440532013000",
    "consent": "on",
}

pytestmark = pytest.mark.django_db


@pytest.fixture
def whatsapp_sent(monkeypatch):
    sent = []
    monkeypatch.setattr(
        notifications.whatsapp, "template_send", lambda **m: sent.append(m) or f"wamid.{len(sent)}"
    )
    return sent


def test_pat_who_gave_only_a_whatsapp_number_gets_the_status_link_there(owed, summer, whatsapp_sent):
    person = owed(email="", phone="+49 151 23456789")

    (link,) = [m for m in whatsapp_sent if m["template"] == "status_link"]
    assert link["to"] == "+4915123456789"
    assert link["parameters"] == [summer.name, f"http://testserver/c/{summer.slug}/status/{person.token}/"]
    note = Notification.objects.get(kind="status_link")
    assert (note.channel, note.participant_id) == ("whatsapp", person.pk) and note.sent_at


def test_pat_with_an_email_gets_the_status_link_by_mail_only(owed, summer, whatsapp_sent):
    owed(phone="+49 151 23456789")

    assert [m.to for m in mail.outbox if summer.name in m.subject] == [["pat@example.com"]]
    assert not [m for m in whatsapp_sent if m["template"] == "status_link"]


def test_a_repeated_task_does_not_send_the_status_link_twice(owed, summer):
    owed()
    payee = PayeeAccount.objects.get()

    status_link_send(payee=payee, status_url="http://testserver/x/", campaign_name=summer.name)

    assert len([m for m in mail.outbox if summer.name in m.subject]) == 1


def test_a_failed_send_is_tried_again_on_the_one_policy_then_given_up(owed, summer, monkeypatch):
    def down(*args, **kwargs):
        raise ConnectionRefusedError("mail server down")

    # The brand was told of its deposit before the mail server went down.
    notifications.notifications_send(ids=list(Notification.objects.values_list("pk", flat=True)))
    mail.outbox.clear()
    monkeypatch.setattr("django.core.mail.backends.locmem.EmailBackend.send_messages", down)
    owed()  # the status link and the receipt both fail
    failed = Notification.objects.filter(sent_at__isnull=True)
    assert failed.count() == 2 and set(failed.values_list("attempts", flat=True)) == {1}
    first_try = timezone.now()
    assert notifications_due(now=first_try) == []  # waits for its backoff
    later = first_try + notification_backoff(1) + timedelta(seconds=1)
    assert sorted(notifications_due(now=later)) == sorted(failed.values_list("pk", flat=True))

    for _attempt in range(NOTIFICATION_ATTEMPTS - 1):
        with pytest.raises(ConnectionRefusedError):
            notifications.notifications_send(ids=list(failed.values_list("pk", flat=True)))
    assert set(failed.values_list("attempts", flat=True)) == {NOTIFICATION_ATTEMPTS}
    assert notifications_due(now=timezone.now() + timedelta(days=1)) == []  # left for staff

    monkeypatch.undo()
    Notification.objects.update(attempts=1, next_attempt_at=timezone.now() - timedelta(seconds=1))
    payouts_sweep()
    assert not failed.exists() and len(mail.outbox) == 2


GERMAN_MONTHS = [
    "Januar",
    "Februar",
    "März",
    "April",
    "Mai",
    "Juni",
    "Juli",
    "August",
    "September",
    "Oktober",
    "November",
    "Dezember",
]


def test_the_paid_receipt_names_the_brand_the_amount_the_date_the_reference_and_the_link(
    client, summer, django_capture_on_commit_callbacks
):
    person = rewarded_in_browser(client, summer)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("payouts:payee", args=[summer.slug]), GOOD, headers={"Accept-Language": "de"})
        submissions_process()
    payout = Payout.objects.get(status="settled")

    (receipt,) = [m for m in mail.outbox if "ausgezahlt" in m.subject]
    assert summer.brand.name in receipt.subject and "1,00\xa0€" in receipt.subject
    assert payout.end_to_end_id in receipt.body and "DE•• •••• 3000" in receipt.body
    assert f"/c/{summer.slug}/status/{person.token}/" in receipt.body
    local = timezone.localtime(payout.settled_at, timezone=ZoneInfo("Europe/Berlin"))
    assert f"{local.day}. {GERMAN_MONTHS[local.month - 1]} {local.year} {local:%H:%M}" in receipt.body
    assert "(Mitteleuropäische " in receipt.body  # the zone, named in German


def _share_undisclosed(client, summer, capture):
    from tests.verification.test_engagement import share
    from verification.models import SandboxTikTokUser
    from verification.sandbox.tiktok.display_api import video_post, video_share_url

    pat = SandboxTikTokUser.objects.get(display_name="Pat Creator")
    video = video_post(user=pat, caption="Loving the summer range! #coffee #summer #ad", view_count=10)
    with capture(execute=True):
        share(client, summer, video_share_url(video))


def _creator(client, summer, capture, *, details=True):
    """Pat logs in with TikTok on the landing page (and gives bank details, unless not)."""
    from tests.verification.test_tiktok_login import authorize
    from verification.models import Participant

    client.get(authorize(client, summer.slug, display_name="Pat Creator"))
    if details:
        with capture(execute=True):
            client.post(reverse("payouts:payee", args=[summer.slug]), GOOD)
            submissions_process()
    return Participant.objects.get()


def test_a_disclosure_to_fix_is_told_at_once_with_what_and_by_when_in_pats_zone(
    client, summer, django_capture_on_commit_callbacks
):
    from compliance.models import RemediationCase

    person = _creator(client, summer, django_capture_on_commit_callbacks)
    _share_undisclosed(client, summer, django_capture_on_commit_callbacks)

    case = RemediationCase.objects.get()
    (message,) = [m for m in mail.outbox if "caption" in m.subject]
    deadline = timezone.localtime(case.deadline, timezone=ZoneInfo("Europe/Berlin"))
    assert f"{deadline.day} {deadline:%B %Y %H:%M}" in message.subject  # in Berlin, in English, day first
    assert "(Central European" in message.subject
    assert "Ad · Paid partnership with Alpaca Coffee" in message.body
    assert "Here the disclosure has to come before anything else." in message.body
    assert f"/c/{summer.slug}/status/{person.token}/" in message.body
    assert Notification.objects.get(kind="disclosure_fix").participant_id == person.pk


def test_pat_who_gives_a_contact_only_after_the_share_is_told_then(
    client, summer, django_capture_on_commit_callbacks
):
    _creator(client, summer, django_capture_on_commit_callbacks, details=False)
    _share_undisclosed(client, summer, django_capture_on_commit_callbacks)
    assert not [m for m in mail.outbox if "caption" in m.subject]

    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("payouts:payee", args=[summer.slug]), GOOD)
        submissions_process()

    assert len([m for m in mail.outbox if "caption" in m.subject]) == 1


def test_the_status_page_shows_the_deadline_instead_of_only_pending(
    client, summer, django_capture_on_commit_callbacks
):
    from compliance.models import RemediationCase

    person = _creator(client, summer, django_capture_on_commit_callbacks)
    _share_undisclosed(client, summer, django_capture_on_commit_callbacks)
    case = RemediationCase.objects.get()

    actions = client.get(reverse("verification:status_actions", args=[person.token])).content.decode()

    assert "needs a change by" in actions and f"{case.deadline:%H:%M}" in actions
    assert "(UTC), or the reward is released" in actions


def test_the_status_page_shows_the_total_paid_so_far(client, summer, owed):
    person = owed()
    assert Payout.objects.get().status == "settled"

    page = client.get(reverse("payouts:status_payout", args=[person.token])).content.decode()

    total = page.split("Paid to you so far")[1]
    assert '<dd class="strong paid-total">€1.00</dd>' in total[:60]
