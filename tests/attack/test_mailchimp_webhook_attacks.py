"""The Mailchimp webhook `/webhooks/mailchimp/<id>/<secret>/` as a stranger and as another brand:
all of it held. Another brand's connection id with that brand's own secret, a disconnected
connection's old address, a secret of another length or case, forged audiences and events."""

import pytest
from django.urls import reverse

from payouts.audience.crm import crm_connect, crm_disconnect, crm_sync
from payouts.sandbox.mailchimp import member_unsubscribe
from tests.payouts.audience_helpers import audience_email_person
from tests.payouts.test_mailchimp_sync import KEY, LIST
from verification.selectors import consent_in_force

pytestmark = pytest.mark.django_db
BISON_KEY = "fedcba9876543210fedcba9876543210-us21"


def _post(client, connection_id, secret, **data):
    url = reverse("payouts:mailchimp_webhook", args=[connection_id, secret])
    body = {"type": "unsubscribe", "data[list_id]": LIST, "data[email]": "pat@example.com", **data}
    return client.post(url, body)


@pytest.fixture
def two_brands(make_live_campaign, alice, bob, bison):
    club = make_live_campaign(slug="club", package="whatsapp_reward")
    bikes = make_live_campaign(slug="bikes", brand=bison, package="whatsapp_reward")
    pat = audience_email_person(campaign=club, email="pat@example.com")
    pat_at_bison = audience_email_person(campaign=bikes, email="pat@example.com")
    alpaca_hook = crm_connect(brand=club.brand, user=alice, kind="mailchimp", api_key=KEY, list_id=LIST)
    bison_hook = crm_connect(brand=bison, user=bob, kind="mailchimp", api_key=BISON_KEY, list_id=LIST)
    crm_sync(connection_id=alpaca_hook.pk)
    crm_sync(connection_id=bison_hook.pk)
    return pat, pat_at_bison, alpaca_hook, bison_hook


def test_another_brands_connection_never_ends_this_brands_consent(client, two_brands):
    pat, pat_at_bison, alpaca_hook, bison_hook = two_brands
    member_unsubscribe(api_key=BISON_KEY, email="pat@example.com")

    # Bison's own id and secret end Pat's consent at Bison only.
    assert _post(client, bison_hook.pk, bison_hook.webhook_secret).content == b"withdrawn"
    assert consent_in_force(participant_id=pat.participant_id, channel="email")
    assert not consent_in_force(participant_id=pat_at_bison.participant_id, channel="email")
    # Alpaca's id with Bison's secret, and the reverse, are unknown addresses.
    assert _post(client, alpaca_hook.pk, bison_hook.webhook_secret).status_code == 404
    assert _post(client, bison_hook.pk, alpaca_hook.webhook_secret).status_code == 404
    assert client.get(reverse("payouts:mailchimp_webhook", args=[alpaca_hook.pk, "x"])).status_code == 404


def test_wrong_secrets_forged_events_and_an_old_address_change_nothing(client, two_brands):
    pat, _pat_at_bison, alpaca_hook, _bison_hook = two_brands
    secret = alpaca_hook.webhook_secret
    for wrong in (secret.upper() if secret.upper() != secret else secret.lower(), secret[:-1], secret + "A"):
        assert _post(client, alpaca_hook.pk, wrong).status_code == 404
    # The right address, but Mailchimp, asked again, still has Pat subscribed; other events are ignored.
    assert _post(client, alpaca_hook.pk, secret).content == b"still_subscribed"
    assert _post(client, alpaca_hook.pk, secret, type="profile").content == b"ignored"
    assert _post(client, alpaca_hook.pk, secret, **{"data[list_id]": "other"}).content == b"ignored"
    assert consent_in_force(participant_id=pat.participant_id, channel="email")

    crm_disconnect(connection=alpaca_hook)
    member_unsubscribe(api_key=KEY, email="pat@example.com")
    assert _post(client, alpaca_hook.pk, secret).status_code == 404
    assert consent_in_force(participant_id=pat.participant_id, channel="email")
