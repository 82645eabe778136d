"""Alice connects Alpaca Coffee's Mailchimp audience with an API key (its datacenter suffix names
the host); the people who confirmed the brand's email news go to Mailchimp as subscribed members
with the time of their opt-in and the campaign as a tag; unsubscribes made in Mailchimp come back,
by its webhook (a secret in the address, confirmed by reading the member back) and by the periodic
read; Mailchimp's refusals are the ones it documents.

What the formats rest on (Mailchimp Marketing API 3.0 reference and guides):
- Add or update list member, PUT /3.0/lists/{list_id}/members/{subscriber_hash}, the hash "the MD5
  hash of the lowercase version of the list member's email address"; status_if_new "required only
  if the email address is not already present on the list"; timestamp_opt, ip_opt,
  marketing_permissions[{marketing_permission_id, enabled}]
  (https://mailchimp.com/developer/marketing/api/list-members/add-or-update-list-member/).
- List members, GET /3.0/lists/{list_id}/members with status, since_last_changed, count (at most
  1,000), offset, fields; answer {members[], list_id, total_items}
  (https://mailchimp.com/developer/marketing/api/list-members/list-members-info/).
- Tags, POST …/members/{subscriber_hash}/tags {tags: [{name, status: "active"}]}, 204.
- Errors as problem+json {type, title, status, detail, instance} (+ errors[{field, message}] for
  "Invalid Resource"), "API Key Invalid" 401, "Resource Not Found" 404, "Member Exists" 400,
  "Forgotten Email Not Subscribed" 400 ("… was permanently deleted and cannot be re-imported. The
  contact must re-subscribe to get back on the list."), "Too Many Requests" 429 (10 simultaneous
  connections, no Retry-After) (https://mailchimp.com/developer/marketing/docs/errors/,
  https://mailchimp.com/developer/marketing/docs/fundamentals/).
- Webhooks: saved with a GET to the address, then form-encoded POSTs (type=unsubscribe|cleaned,
  data[email], data[list_id]); not signed, so the address carries a secret
  (https://mailchimp.com/developer/marketing/guides/sync-audience-data-webhooks/)."""

import base64
import hashlib
from datetime import UTC, timedelta
from urllib.parse import urlsplit

import pytest
from django.urls import reverse
from django.utils import timezone

from payouts.audience.crm import CrmRefused, crm_connect, crm_disconnect, crm_sync, crm_webhook_url
from payouts.models import CrmConnection, SandboxCrmProfile
from payouts.providers import mailchimp
from payouts.providers.klaviyo import Subscriber
from payouts.sandbox.mailchimp import member_forget, member_unsubscribe
from tests.payouts.audience_helpers import audience_email_person, audience_person
from verification.models import ConsentRecord
from verification.selectors import consent_in_force

pytestmark = pytest.mark.django_db
KEY = "0123456789abcdef0123456789abcdef-us21"
LIST = "a1b2c3d4e5"


@pytest.fixture
def club(make_live_campaign):
    return make_live_campaign(slug="club", package="whatsapp_reward")


def _auth(key=KEY):
    return {"Authorization": "Basic " + base64.b64encode(f"any:{key}".encode()).decode()}


def test_the_key_names_its_datacenter_and_the_member_is_the_md5_of_the_lower_cased_address():
    assert mailchimp.datacenter(KEY) == "us21"
    # Mailchimp's own example: the hash of "urist.mcvankab@freddiesjokes.com".
    assert (
        mailchimp.subscriber_hash(" Urist.McVankab@FreddiesJokes.com ")
        == hashlib.md5(b"urist.mcvankab@freddiesjokes.com", usedforsecurity=False).hexdigest()
    )
    with pytest.raises(mailchimp.CrmError):
        mailchimp.datacenter("0123456789abcdef0123456789abcdef")


def test_the_member_body_is_a_subscribed_opt_in_with_its_time_address_and_permission():
    at = timezone.now().replace(microsecond=0)
    body = mailchimp.member_body(
        subscriber=Subscriber("email", "pat@example.com", at, "JoyBack: Club"),
        permission_ids=["e7f8a1b2c3"],
        ip="203.0.113.7",
    )
    assert (body["status_if_new"], body["status"]) == ("subscribed", "subscribed")
    assert body["timestamp_opt"] == at.strftime("%Y-%m-%d %H:%M:%S") and body["ip_opt"] == "203.0.113.7"
    assert body["marketing_permissions"] == [{"marketing_permission_id": "e7f8a1b2c3", "enabled": True}]
    assert mailchimp.tags_body(source="JoyBack: Club") == {
        "tags": [{"name": "JoyBack: Club", "status": "active"}]
    }


def test_a_sync_pushes_the_email_audience_in_force_with_its_tag_and_gdpr_permission(club, alice):
    pat = audience_email_person(campaign=club, email="Pat@Example.com")
    audience_person(campaign=club, wa_id="4915100000001")  # WhatsApp consents are not Mailchimp's
    connection = crm_connect(brand=club.brand, user=alice, kind="mailchimp", api_key=KEY, list_id="gdpr01")

    assert crm_sync(connection_id=connection.pk) == "synced"

    [member] = SandboxCrmProfile.objects.all()
    consent = ConsentRecord.objects.get(identity=pat)
    assert (member.email, member.consent, member.custom_source) == (
        "pat@example.com",
        "subscribed",
        "JoyBack: Club",
    )
    assert member.consented_at == consent.at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
    connection.refresh_from_db()
    assert (connection.pushed, connection.last_error) == (1, "")


def test_an_unsubscribe_in_mailchimp_comes_back_at_the_next_read(club, alice):
    pat = audience_email_person(campaign=club, email="pat@example.com")
    connection = crm_connect(brand=club.brand, user=alice, kind="mailchimp", api_key=KEY, list_id=LIST)
    crm_sync(connection_id=connection.pk)

    member_unsubscribe(api_key=KEY, email="pat@example.com")
    assert crm_sync(connection_id=connection.pk) == "synced"

    assert not consent_in_force(participant_id=pat.participant_id, channel="email")
    assert ConsentRecord.objects.latest("pk").source == "crm"


def _hook(client, connection, secret=None, **data):
    url = reverse("payouts:mailchimp_webhook", args=[connection.pk, secret or connection.webhook_secret])
    body = {"type": "unsubscribe", "fired_at": "2026-12-06 14:00:00", "data[list_id]": LIST, **data}
    return client.post(url, body)  # form-encoded, as Mailchimp posts


def test_the_webhook_ends_the_consent_once_mailchimp_confirms_it(client, club, alice):
    pat = audience_email_person(campaign=club, email="pat@example.com")
    connection = crm_connect(brand=club.brand, user=alice, kind="mailchimp", api_key=KEY, list_id=LIST)
    crm_sync(connection_id=connection.pk)
    assert crm_webhook_url(connection).endswith(
        f"/webhooks/mailchimp/{connection.pk}/{connection.webhook_secret}/"
    )
    # Mailchimp checks the address answers a GET when the webhook is saved.
    assert client.get(urlsplit(crm_webhook_url(connection)).path).status_code == 200

    # A post Mailchimp contradicts (the member is still subscribed there) changes nothing.
    assert _hook(client, connection, **{"data[email]": "pat@example.com"}).content == b"still_subscribed"
    assert consent_in_force(participant_id=pat.participant_id, channel="email")

    member_unsubscribe(api_key=KEY, email="pat@example.com")
    assert _hook(client, connection, **{"data[email]": "pat@example.com"}).content == b"withdrawn"
    assert not consent_in_force(participant_id=pat.participant_id, channel="email")


def test_a_webhook_with_a_wrong_secret_or_another_audience_changes_nothing(client, club, alice):
    pat = audience_email_person(campaign=club, email="pat@example.com")
    connection = crm_connect(brand=club.brand, user=alice, kind="mailchimp", api_key=KEY, list_id=LIST)
    crm_sync(connection_id=connection.pk)
    member_unsubscribe(api_key=KEY, email="pat@example.com")

    assert (
        _hook(client, connection, secret="guessed", **{"data[email]": "pat@example.com"}).status_code == 404
    )
    other = {"data[email]": "pat@example.com", "data[list_id]": "ffffffffff"}
    assert _hook(client, connection, **other).content == b"ignored"
    assert consent_in_force(participant_id=pat.participant_id, channel="email")


def test_a_member_mailchimp_cannot_be_asked_about_is_taken_as_stopped(client, club, alice):
    pat = audience_email_person(campaign=club, email="pat@example.com")
    connection = crm_connect(brand=club.brand, user=alice, kind="mailchimp", api_key=KEY, list_id=LIST)
    crm_sync(connection_id=connection.pk)
    CrmConnection.objects.filter(pk=connection.pk).update(api_key="429456789abcdef0123456789abcdef0-us21")

    assert _hook(client, connection, **{"data[email]": "pat@example.com"}).content == b"withdrawn"
    assert not consent_in_force(participant_id=pat.participant_id, channel="email")


def test_a_permanently_deleted_member_is_skipped_and_the_sync_goes_on(club, alice):
    audience_email_person(campaign=club, email="gone@example.com")
    connection = crm_connect(brand=club.brand, user=alice, kind="mailchimp", api_key=KEY, list_id=LIST)
    crm_sync(connection_id=connection.pk)
    member_forget(api_key=KEY, email="gone@example.com")
    audience_email_person(campaign=club, email="new@example.com")
    CrmConnection.objects.filter(pk=connection.pk).update(synced_at=timezone.now() - timedelta(days=1))

    assert crm_sync(connection_id=connection.pk) == "synced"
    assert SandboxCrmProfile.objects.get(email="new@example.com").consent == "subscribed"
    assert SandboxCrmProfile.objects.get(email="gone@example.com").consent == "forgotten"


def test_a_throttled_sync_is_retried_on_the_backoff_and_says_why(club, alice):
    audience_email_person(campaign=club, email="pat@example.com")
    connection = crm_connect(brand=club.brand, user=alice, kind="mailchimp", api_key=KEY, list_id=LIST)
    CrmConnection.objects.filter(pk=connection.pk).update(api_key="429456789abcdef0123456789abcdef0-us21")

    assert crm_sync(connection_id=connection.pk) == "retry"
    connection.refresh_from_db()
    assert "429 Too Many Requests" in connection.last_error and connection.next_attempt_at > timezone.now()


@pytest.mark.parametrize(
    ("key", "list_id"),
    [
        ("0123456789abcdef0123456789abcdef", LIST),  # no datacenter
        (KEY, ""),  # no audience
        (KEY, "missing01"),  # 404 Resource Not Found
        ("0123456789abcdef0123456789abcdef-us99x", LIST),
    ],
)
def test_a_key_or_audience_mailchimp_refuses_connects_nothing(club, alice, key, list_id):
    with pytest.raises(CrmRefused):
        crm_connect(brand=club.brand, user=alice, kind="mailchimp", api_key=key, list_id=list_id)
    assert not CrmConnection.objects.exists()


def test_the_sandbox_answers_with_mailchimps_documented_problems(client):
    members = f"/sandbox/mailchimp/us21/3.0/lists/{LIST}/members"
    wrong_dc = client.get(members, headers=_auth(KEY.replace("us21", "us6")))
    assert wrong_dc.status_code == 401 and wrong_dc.json()["title"] == "API Key Invalid"
    assert wrong_dc["Content-Type"].startswith("application/problem+json")

    new = {"email_address": "pat@example.com", "status": "subscribed"}
    assert client.post(members, new, content_type="application/json", headers=_auth()).status_code == 200
    again = client.post(members, new, content_type="application/json", headers=_auth())
    assert (again.status_code, again.json()["title"]) == (400, "Member Exists")

    member = f"{members}/{mailchimp.subscriber_hash('sam@example.com')}"
    invalid = client.put(member, {"email_address": "sam@example.com", "timestamp_opt": "yesterday"},
                         content_type="application/json", headers=_auth())  # fmt: skip
    assert invalid.json()["title"] == "Invalid Resource"
    assert {e["field"] for e in invalid.json()["errors"]} == {"status_if_new", "timestamp_opt"}

    member_forget(api_key=KEY, email="pat@example.com")
    forgotten = client.put(f"{members}/{mailchimp.subscriber_hash('pat@example.com')}",
                           {"email_address": "pat@example.com", "status": "subscribed"},
                           content_type="application/json", headers=_auth())  # fmt: skip
    assert (forgotten.status_code, forgotten.json()["title"]) == (400, "Forgotten Email Not Subscribed")
    missing = client.get("/sandbox/mailchimp/us21/3.0/lists/missing01", headers=_auth())
    assert (missing.status_code, missing.json()["title"]) == (404, "Resource Not Found")


def test_connecting_mailchimp_takes_the_owners_second_factor_and_registers_the_webhook(
    client, alice, fiona, club
):
    url = reverse("payouts:crm", args=["alpaca"])
    client.force_login(fiona)
    assert client.post(url, {"kind": "mailchimp", "api_key": KEY, "list_id": LIST}).status_code == 403
    client.force_login(alice)
    assert client.post(url, {"kind": "mailchimp", "api_key": KEY, "list_id": LIST}).status_code == 302
    connection = CrmConnection.objects.get()
    assert (connection.kind, connection.last_error) == ("mailchimp", "") and len(
        connection.webhook_secret
    ) > 30
    assert 'data-testid="crm-mailchimp"' in client.get(url).content.decode()


def test_another_brands_person_cannot_reach_the_mailchimp_page(client, club, alice, bob):
    crm_connect(brand=club.brand, user=alice, kind="mailchimp", api_key=KEY, list_id=LIST)
    client.force_login(bob)
    assert client.get(reverse("payouts:crm", args=["alpaca"])).status_code == 404


# --- As an attacker -------------------------------------------------------------------------------
# The Mailchimp webhook `/webhooks/mailchimp/<id>/<secret>/` as a stranger and as another brand:
# all of it held. Another brand's connection id with that brand's own secret, a disconnected
# connection's old address, a secret of another length or case, forged audiences and events.


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
