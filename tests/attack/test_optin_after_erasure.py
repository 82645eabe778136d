"""A person asks for the brand's email news, then has their data erased (GDPR Art. 17) before
opening the confirmation mail: the address they typed goes from the message's row, and the link,
still within its week, brings nothing back."""

import re

import pytest
from django.urls import reverse

from campaigns.services.consent import consent_wording_save
from payouts import privacy
from payouts.models import Notification
from tests.payouts.audience_helpers import audience_person
from verification.models import ConsentRecord, Identity

pytestmark = pytest.mark.django_db
ADDRESS = "pat@example.org"


@pytest.fixture
def asked(client, make_live_campaign, alice, mailoutbox, django_capture_on_commit_callbacks):
    club = make_live_campaign(slug="club", package="whatsapp_reward")
    text = "I agree that Alpaca Coffee sends me news and offers by email."
    consent_wording_save(campaign=club, channel="email", language="en", text=text, user=alice)
    pat = audience_person(campaign=club, wa_id="4915100000001")
    body = {
        "campaign": club.pk,
        "wording": club.consent_wordings.get().pk,
        "email": ADDRESS,
        "agree": "yes",
    }
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("payouts:email_optin", args=[pat.participant.token]), body)
    link = re.search(r"https?://\S+/email/confirm/\S+/", mailoutbox[-1].body).group(0)
    return pat.participant, link.split("testserver")[-1]


def test_erasure_forgets_the_address_typed_into_the_email_form(asked):
    participant, _link = asked
    privacy.participant_erase(participant=participant)

    kept = [n.pk for n in Notification.objects.filter(participant=participant) if ADDRESS in str(n.context)]
    assert kept == [], "the erased person's address stays in the confirmation message's row"


def test_a_confirmation_link_mailed_before_the_erasure_brings_nothing_back(client, asked):
    participant, link = asked
    privacy.participant_erase(participant=participant)

    client.post(link)

    assert not Identity.objects.filter(participant=participant, subject=ADDRESS).exists()
    assert not ConsentRecord.objects.filter(participant=participant, channel="email").exists()
