"""Pat's data: a copy and its erasure from the status link, confirmed by a link sent to Pat; staff do
both in the admin. Erasure keeps the ledger and payout records for the retention period."""

import json
import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django_q.models import Schedule

from campaigns.services.consent import consent_wording_save
from compliance.models import RemediationCase
from joyback.ledger.models import Entry
from payouts import notifications, privacy
from payouts.models import Notification, PayeeAccount, Payout, PrivacyRequest
from payouts.privacy import privacy_retention_enforce
from tests.conftest import rewarded_in_browser, totp_enable
from tests.payouts.audience_helpers import audience_person
from tests.payouts.conftest import IBANS
from tests.verification.test_tiktok_login import authorize
from verification.models import ActionClaim, ConsentRecord, Identity, Participant, TikTokToken

pytestmark = pytest.mark.django_db


@pytest.fixture
def ask(django_capture_on_commit_callbacks):
    """Pat asks on the status page; the confirmation goes out after the commit."""

    def post(client, person, kind):
        with django_capture_on_commit_callbacks(execute=True):
            return client.post(reverse("payouts:status_privacy", args=[person.token]), {"kind": kind})

    return post


def confirmation_link(mailoutbox) -> str:
    (mail,) = mailoutbox
    return re.search(r"http://\S+/p/privacy/\S+/", mail.body)[0].replace("http://testserver", "")


@pytest.fixture
def pat(owed, mailoutbox):
    """Pat was rewarded, gave bank details and was paid; then the mailbox is emptied."""
    person = owed()
    assert Payout.objects.get().status == "settled"
    mailoutbox.clear()
    return person


def test_pat_downloads_their_data_after_confirming_by_email(client, pat, mailoutbox, ask):
    asked = ask(client, pat, "export")

    assert asked.status_code == 200 and "confirmation link to your email" in asked.content.decode()
    assert "DE89" not in asked.content.decode()  # the status link alone gives nothing
    link = confirmation_link(mailoutbox)
    assert mailoutbox[0].to == ["pat@example.com"]
    assert "Download my data" in Client().get(link).content.decode()  # a look changes nothing

    download = Client().post(link)

    assert download["Content-Disposition"] == 'attachment; filename="joyback-my-data.json"'
    data = json.loads(download.content)
    assert data["bank_details"][0]["holder_name"] == "Pat Example"
    assert data["bank_details"][0]["account"]["iban"] == "DE89370400440532013000"
    assert data["claims"][0]["amount_minor"] == 1_00 and data["payouts"][0]["status"] == "settled"
    assert data["identities"][0]["id"] == "open-id-pat"


def test_pat_erases_their_data_and_the_money_records_stay(client, pat, mailoutbox, ask):
    entries = Entry.objects.count()
    ask(client, pat, "erase")

    page = Client().post(confirmation_link(mailoutbox))

    assert "Your data has been erased." in page.content.decode()
    payee = PayeeAccount.objects.get()
    assert (payee.email, payee.phone, payee.email_fingerprint, payee.replaced_at is not None) == (
        None,
        None,
        "",
        True,
    )
    identity = Identity.objects.get()
    assert identity.subject.startswith("erased:") and identity.display_name == ""
    assert not TikTokToken.objects.exists()
    assert ActionClaim.objects.get().client_ip is None
    # Kept for the retention period: the payout, the account it went to, the ledger.
    assert Payout.objects.get().amount == 1_00 and payee.holder_name == "Pat Example"
    assert Entry.objects.count() == entries
    assert PrivacyRequest.objects.get().done_at is not None


def test_after_the_retention_period_the_kept_records_are_pseudonymised(pat, summer, settings):
    claim = ActionClaim.objects.get()
    RemediationCase.objects.create(
        brand=summer.brand,
        campaign=summer,
        claim_id=claim.pk,
        participant_id=pat.pk,
        caption="Pat's summer look",
        wording="#ad",
        opened_at=timezone.now(),
    )
    privacy.participant_erase(participant=pat)
    assert privacy_retention_enforce() == 0  # not yet

    later = timezone.now() + timedelta(days=settings.PRIVACY_RETENTION_DAYS + 1)
    assert privacy_retention_enforce(now=later) == 1

    payee = PayeeAccount.objects.get()
    assert payee.holder_name == "erased" and payee.account is None
    assert payee.account_masked.endswith("3000")  # the bank's reference for the old payout
    assert ActionClaim.objects.get().evidence == {}
    assert RemediationCase.objects.get().caption == ""
    assert privacy_retention_enforce(now=later) == 0


def test_the_retention_job_is_scheduled_daily():
    schedule = Schedule.objects.get(name="privacy-retention")
    assert (schedule.func, schedule.schedule_type) == ("payouts.tasks.privacy_retention_task", "D")


def test_an_erased_tiktok_account_does_not_earn_again(client, summer):
    client.get(authorize(client, summer.slug))
    privacy.participant_erase(participant=Participant.objects.get())

    again = Client()
    response = again.get(authorize(again, summer.slug), follow=True)

    assert ActionClaim.objects.count() == 1
    assert "already claimed this reward" in response.content.decode()


def test_without_email_the_confirmation_goes_by_whatsapp(client, owed, monkeypatch, ask):
    pat = owed(email="", phone="+4915123456789")
    sent = []
    monkeypatch.setattr(
        notifications.whatsapp, "template_send", lambda **message: sent.append(message) or "wamid.privacy"
    )

    asked = ask(client, pat, "export")

    assert "confirmation link to your WhatsApp number" in asked.content.decode()
    (message,) = sent
    assert message["to"] == "+4915123456789" and message["template"] == "privacy_export"
    assert "/p/privacy/" in message["parameters"][0]


def test_without_any_contact_the_request_is_refused_clearly(client, summer, ask):
    pat = rewarded_in_browser(client, summer)

    asked = ask(client, pat, "erase")

    assert asked.status_code == 400 and "no email address or WhatsApp number" in asked.content.decode()
    assert not PrivacyRequest.objects.exists()


def test_erasure_waits_while_a_payout_is_on_its_way(client, owed, mailoutbox, ask):
    pat = owed(iban=IBANS["pending"])  # the bank has it and has not paid it yet
    assert Payout.objects.get().open
    mailoutbox.clear()
    ask(client, pat, "erase")

    page = Client().post(confirmation_link(mailoutbox))

    assert page.status_code == 400 and "still on its way" in page.content.decode()
    assert PayeeAccount.objects.get().email == "pat@example.com"


def test_an_expired_link_does_nothing(client, pat, mailoutbox, ask):
    ask(client, pat, "erase")
    PrivacyRequest.objects.update(expires_at=timezone.now() - timedelta(seconds=1))

    page = Client().post(confirmation_link(mailoutbox))

    assert page.status_code == 400 and "expired" in page.content.decode()
    assert PayeeAccount.objects.get().email == "pat@example.com"


def test_a_leaked_status_link_cannot_flood_pats_inbox(client, pat, mailoutbox, ask):
    for _ in range(3):
        ask(client, pat, "export")

    fourth = ask(client, pat, "erase")

    assert fourth.status_code == 400 and "several confirmation links" in fourth.content.decode()
    assert len(mailoutbox) == 3


def test_unknown_links_and_kinds_are_not_found(client, pat, ask):
    assert (
        client.post(reverse("payouts:status_privacy", args=["nope"]), {"kind": "export"}).status_code == 404
    )
    assert ask(client, pat, "everything").status_code == 404
    assert Client().post(reverse("payouts:privacy_confirm", args=["nope"])).status_code == 404


def test_staff_download_and_erase_from_the_admin(admin_client, admin_user, pat):
    totp_enable(admin_user)  # staff change things in the admin only with a second factor
    changelist = reverse("admin:verification_participant_changelist")

    download = admin_client.post(changelist, {"action": "data_export", "_selected_action": [pat.pk]})
    assert json.loads(download.content)["bank_details"][0]["email"] == "pat@example.com"

    admin_client.post(changelist, {"action": "data_erase", "_selected_action": [pat.pk]})

    assert PayeeAccount.objects.get().email is None
    erased = PrivacyRequest.objects.get(kind="erase")
    assert erased.channel == "admin" and erased.requested_by.is_superuser
    assert Participant.objects.get().privacy_requests.count() == 1


def test_the_latin_spelling_and_the_address_are_exported_and_erased(owed, settings):
    """The details the bank needed (a name's Latin spelling, an address abroad) are the person's
    data too: in their download, the address gone at erasure, the spelling after the retention."""
    person = owed(name="山田太郎", name_latin="YAMADA TARO")
    PayeeAccount.objects.update(address=json.dumps({"line1": "1 Chome", "city": "Tokyo", "country": "JP"}))

    bank_details = privacy.participant_export(participant=person)["bank_details"][0]
    assert bank_details["holder_name_latin"] == "YAMADA TARO"
    assert bank_details["address"]["city"] == "Tokyo"

    privacy.participant_erase(participant=person)
    payee = PayeeAccount.objects.get()
    assert payee.address == "" and payee.holder_name_latin == "YAMADA TARO"
    privacy_retention_enforce(now=timezone.now() + timedelta(days=settings.PRIVACY_RETENTION_DAYS + 1))
    payee.refresh_from_db()
    assert (payee.holder_name, payee.holder_name_latin) == ("erased", "")


# --- As an attacker -------------------------------------------------------------------------------
# A person asks for the brand's email news, then has their data erased (GDPR Art. 17) before
# opening the confirmation mail: the address they typed goes from the message's row, and the link,
# still within its week, brings nothing back.


OPTIN_ADDRESS = "pat@example.org"


@pytest.fixture
def email_asked(client, make_live_campaign, alice, mailoutbox, django_capture_on_commit_callbacks):
    club = make_live_campaign(slug="club", package="whatsapp_reward")
    text = "I agree that Alpaca Coffee sends me news and offers by email."
    consent_wording_save(campaign=club, channel="email", language="en", text=text, user=alice)
    pat = audience_person(campaign=club, wa_id="4915100000001")
    body = {
        "campaign": club.pk,
        "wording": club.consent_wordings.get().pk,
        "email": OPTIN_ADDRESS,
        "agree": "yes",
    }
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("payouts:email_optin", args=[pat.participant.token]), body)
    link = re.search(r"https?://\S+/email/confirm/\S+/", mailoutbox[-1].body).group(0)
    return pat.participant, link.split("testserver")[-1]


def test_erasure_forgets_the_address_typed_into_the_email_form(email_asked):
    participant, _link = email_asked
    privacy.participant_erase(participant=participant)

    kept = [
        n.pk for n in Notification.objects.filter(participant=participant) if OPTIN_ADDRESS in str(n.context)
    ]
    assert kept == [], "the erased person's address stays in the confirmation message's row"


def test_a_confirmation_link_mailed_before_the_erasure_brings_nothing_back(client, email_asked):
    participant, link = email_asked
    privacy.participant_erase(participant=participant)

    client.post(link)

    assert not Identity.objects.filter(participant=participant, subject=OPTIN_ADDRESS).exists()
    assert not ConsentRecord.objects.filter(participant=participant, channel="email").exists()
