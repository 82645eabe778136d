"""Alice sees who agreed to hear from Alpaca Coffee again, filters them, and exports the people
whose consent is in force; every export is recorded; Vic the viewer sees counts; Bob's brand sees
none of it."""

import csv
import io

import pytest
from django.db import transaction
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from campaigns.services.brands import brand_create
from payouts.audience.broadcasts import broadcast_plan, templates_sync
from payouts.audience.selectors import audience_export_rows
from payouts.models import AudienceExport
from tests.conftest import verified
from tests.payouts.audience_helpers import audience_person, audience_stop, waba_connect
from verification.selectors import consent_in_force
from verification.services.consent import consent_record_give, consent_record_withdraw
from verification.services.participants import identity_attach

pytestmark = pytest.mark.django_db


@pytest.fixture
def club(make_live_campaign):
    return make_live_campaign(slug="club", package="whatsapp_reward")


def _csv(response) -> list[list[str]]:
    text = b"".join(response.streaming_content).decode().lstrip("\ufeff")
    return list(csv.reader(io.StringIO(text), delimiter=";" if ";" in text.splitlines()[0] else ","))


def test_the_page_lists_the_audience_with_its_state_and_filters(client, alice, club):
    kept = audience_person(campaign=club, wa_id="4915100000001")
    gone = audience_person(campaign=club, wa_id="4915100000002")
    audience_stop(gone)
    client.force_login(alice)

    page = client.get(reverse("payouts:audience", args=["alpaca"])).content.decode()
    assert "+4915100000001" in page and "+4915100000002" in page
    assert "Agreed" in page and "Withdrawn" in page
    withdrawn = client.get(
        reverse("payouts:audience", args=["alpaca"]), {"state": "withdrawn"}
    ).content.decode()
    assert "+4915100000002" in withdrawn and "+4915100000001" not in withdrawn
    assert kept.participant_id != gone.participant_id


def test_the_export_holds_only_people_in_force_and_is_recorded(client, alice, club):
    audience_person(campaign=club, wa_id="4915100000001")
    audience_stop(audience_person(campaign=club, wa_id="4915100000002"))
    audience_person(campaign=club, wa_id="4915100000003", consented=False)
    client.force_login(alice)

    response = client.get(reverse("payouts:audience_csv", args=["alpaca"]), {"state": "withdrawn"})

    rows = _csv(response)
    assert [row[0] for row in rows[1:]] == ["'+4915100000001"]  # a spreadsheet never runs it
    export = AudienceExport.objects.get()
    assert (export.user, export.people, export.filters) == (alice, 1, {"state": "withdrawn"})
    assert "I agree that Alpaca Coffee sends me news on WhatsApp." in rows[1]


def test_a_viewer_sees_counts_and_cannot_export(client, vic, club):
    audience_person(campaign=club, wa_id="4915100000001")
    client.force_login(vic)

    page = client.get(reverse("payouts:audience", args=["alpaca"])).content.decode()
    assert "+4915100000001" not in page and 'data-testid="audience-counts"' in page
    assert client.get(reverse("payouts:audience_csv", args=["alpaca"])).status_code == 403
    assert not AudienceExport.objects.exists()


@pytest.mark.parametrize(
    "name",
    [
        "payouts:audience",
        "payouts:audience_csv",
        "payouts:broadcasts",
        "payouts:crm",
        "payouts:whatsapp_account",
    ],
)
def test_another_brand_gets_404(client, bob, bison, club, name):
    audience_person(campaign=club)
    client.force_login(bob)
    assert client.get(reverse(name, args=["alpaca"])).status_code == 404
    assert not AudienceExport.objects.exists()


def test_a_filter_typed_wrongly_is_said_and_changes_nothing(client, alice, club):
    audience_person(campaign=club, wa_id="4915100000001")
    client.force_login(alice)
    response = client.get(
        reverse("payouts:audience", args=["alpaca"]), {"start": "not-a-date", "channel": "fax"}
    )
    assert response.status_code == 200
    assert "Enter a valid date" in response.content.decode()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.integers(0, 3),
            st.sampled_from(["whatsapp", "email"]),
            st.sampled_from(["give", "stop", "again"]),
        ),
        max_size=14,
    )
)
def test_no_export_or_send_includes_a_person_without_a_current_consent(alice, make_live_campaign, steps):
    """Whatever order people agree, stop and agree again in, on WhatsApp and by email, an export,
    a send's plan and a CRM push hold exactly the people (and channels) whose latest consent row is
    in force (and a send never one without)."""
    from payouts.audience.crm import _subscribers  # deferred: the CRM push's own reading

    n = _fresh()
    brand = verified(brand_create(name=f"Prop {n}", slug=f"prop-{n}", owner=alice, currency="EUR"))
    campaign = make_live_campaign(slug=f"prop-{n}", package="whatsapp_reward", brand=brand)
    people = [audience_person(campaign=campaign, consented=False) for _ in range(4)]
    emails = [
        identity_attach(participant=p.participant, provider="email", subject=f"p{n}-{i}@example.com")
        for i, p in enumerate(people)
    ]
    for index, (who, channel, step) in enumerate(steps):
        identity = people[who] if channel == "whatsapp" else emails[who]
        source = "whatsapp_message" if channel == "whatsapp" else "form"
        with transaction.atomic():
            if step == "stop":
                consent_record_withdraw(
                    participant_id=identity.participant_id, channel=channel, source="status_page",
                    proof=f"stop-{index}",
                )  # fmt: skip
            else:
                consent_record_give(
                    identity=identity, channel=channel, campaign=campaign, text=f"Prop news by {channel}",
                    language="en", wording=None, source=source,
                    proof=f"give-{index}",
                )  # fmt: skip
    in_force = {
        (p.participant_id, channel)
        for p in people
        for channel in ("whatsapp", "email")
        if consent_in_force(participant_id=p.participant_id, channel=channel)
    }

    exported = set(audience_export_rows(brand=brand, filters={}).values_list("participant_id", "channel"))
    assert exported == in_force
    waba_connect(brand=brand)
    templates_sync(brand=brand)
    plan = broadcast_plan(brand=brand, template_name="joyback_news")
    assert {participant for participant, *_rest in plan.send} == {p for p, c in in_force if c == "whatsapp"}
    contacts = {("whatsapp", "+" + p.subject): p.participant_id for p in people}
    contacts |= {("email", e.subject): e.participant_id for e in emails}
    pushed = {(contacts[(s.channel, s.contact)], s.channel) for s in _subscribers(brand, since=None)}
    assert pushed == in_force


_counter = iter(range(10**6))


def _fresh() -> int:
    return next(_counter)


def test_the_overview_shows_growth_opt_outs_and_what_the_audience_bought(client, alice, bob, bison, club):
    from django.utils import timezone  # deferred: this test's own setup

    from verification.models import Purchase  # deferred: as above

    buyer = audience_person(campaign=club, wa_id="4915100000001")
    audience_stop(audience_person(campaign=club, wa_id="4915100000002"))
    Purchase.objects.create(
        brand=club.brand,
        order_id="A-1",
        amount=42_00,
        currency="EUR",
        identity=buyer,
        confirm_at=timezone.now(),
    )
    client.force_login(alice)

    tiles = client.get(reverse("payouts:overview_audience", args=["alpaca"])).content.decode()

    assert "50.0 %" in tiles and "€42.00" in tiles and "Bought after agreeing (1 people)" in tiles
    client.force_login(bob)
    assert client.get(reverse("payouts:overview_audience", args=["alpaca"])).status_code == 404
