"""The brand's claims, people and payouts tables: search, filters, pages of 25 rows, and the CSV of
exactly the filtered rows, in words and the reader's number format, safe to open in a spreadsheet."""

import csv
import io
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import override
from hypothesis import given
from hypothesis import strategies as st

from joyback.tables import csv_amount, csv_safe
from verification.models import ActionClaim, ClaimStatus
from verification.services.participants import identity_attach, participant_create
from verification.services.rewards import action_reward

pytestmark = pytest.mark.django_db


def rewarded(campaign, name, trigger="tiktok_login"):
    person = participant_create(brand=campaign.brand)
    identity = identity_attach(participant=person, provider="tiktok", subject=f"id-{name}", display_name=name)
    return action_reward(rule=campaign.rules.get(trigger=trigger), identity=identity)


def csv_rows(response, delimiter=","):
    body = b"".join(response.streaming_content).decode("utf-8").lstrip("\ufeff")
    return list(csv.reader(io.StringIO(body), delimiter=delimiter))


# CSV escaping


@pytest.mark.parametrize(
    "cell, shown",
    [
        ('=HYPERLINK("http://evil")', '\'=HYPERLINK("http://evil")'),
        ("+SUM(A1)", "'+SUM(A1)"),
        ("-2+3", "'-2+3"),
        ("@cmd", "'@cmd"),
        ("\tTAB", "'\tTAB"),
        ("Pat", "Pat"),
        ("-12.50", "-12.50"),  # a negative amount stays a number
        ("-12,50", "-12,50"),
        (-1250, "-1250"),
    ],
)
def test_cells_a_spreadsheet_would_run_are_escaped(cell, shown):
    assert csv_safe(cell) == shown


@given(st.text(min_size=1))
def test_no_cell_starts_a_formula(text):
    cell = csv_safe(text)
    assert not cell.startswith(("=", "+", "@", "\t", "\r")) or cell.startswith("'")
    if cell.startswith("-"):
        assert cell.lstrip("-")[:1].isdigit()


def test_amounts_are_numbers_in_the_readers_format():
    with override("en"):  # whatever language an earlier test left active
        assert csv_amount(123456, "EUR") == "1234.56"
        assert csv_amount(5, "JPY") == "5"
    with override("de"):
        assert csv_amount(123456, "EUR") == "1234,56"


# Claims


def test_claims_are_searched_filtered_and_paged(client, alice, alpaca, summer):
    for index in range(27):
        rewarded(summer, f"Person {index:02d}")
    client.force_login(alice)
    url = reverse("verification:claims", args=["alpaca"])

    first = client.get(url)
    second = client.get(url, {"page": 2})
    found = client.get(url, {"q": "Person 07"})

    assert first.status_code == 200 and len(first.context["page"].object_list) == 25
    assert len(second.context["page"].object_list) == 2
    assert "1\u201325 of 27 rows" in first.content.decode()  # an en dash
    assert [c.identity.display_name for c in found.context["page"]] == ["Person 07"]


def test_claims_filter_by_status_campaign_step_and_dates(client, alice, alpaca, summer, make_live_campaign):
    winter = make_live_campaign(slug="winter-glow")
    rewarded(summer, "Summer Sam")
    late = rewarded(winter, "Winter Wes")
    ActionClaim.objects.filter(pk=late.pk).update(created_at=timezone.now() - timedelta(days=10))
    client.force_login(alice)
    url = reverse("verification:claims", args=["alpaca"])

    def names(**filters):
        return sorted(c.identity.display_name for c in client.get(url, filters).context["page"])

    assert names(campaign=winter.pk) == ["Winter Wes"]
    assert names(step="tiktok_login") == ["Summer Sam", "Winter Wes"]
    assert names(step="whatsapp_optin") == []
    assert names(status=ClaimStatus.REJECTED) == []
    assert names(status=ClaimStatus.APPROVED) == ["Summer Sam", "Winter Wes"]
    since = (timezone.now() - timedelta(days=3)).date().isoformat()
    assert names(start=since) == ["Summer Sam"]


def test_bad_filters_are_refused_with_a_message(client, alice, alpaca, summer):
    rewarded(summer, "Kept")
    client.force_login(alice)

    response = client.get(
        reverse("verification:claims", args=["alpaca"]),
        {"start": "2026-05-10", "end": "2026-05-01", "status": "nonsense"},
    )

    body = response.content.decode()
    assert response.status_code == 200
    assert "The end date is before the start date." in body
    assert "Select a valid choice" in body
    assert len(response.context["page"].object_list) == 1  # the valid filters still hold: none


def test_another_brands_campaign_is_not_a_filter(client, alice, alpaca, bison, summer, make_live_campaign):
    theirs = make_live_campaign(slug="bison-summer", brand=bison)
    rewarded(theirs, "Their person")
    client.force_login(alice)

    response = client.get(reverse("verification:claims", args=["alpaca"]), {"campaign": theirs.pk})

    assert "Their person" not in response.content.decode()
    assert list(response.context["page"]) == []


def test_the_claims_csv_is_the_filtered_view_in_words(client, alice, alpaca, summer, make_live_campaign):
    winter = make_live_campaign(slug="winter-glow")
    rewarded(summer, "=cmd|' /C calc'!A0")
    rewarded(winter, "Winter Wes")
    client.force_login(alice)

    response = client.get(reverse("verification:claims_csv", args=["alpaca"]), {"campaign": summer.pk})

    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    header, *rows = csv_rows(response)
    assert header[:4] == ["Claim", "When", "Campaign", "Step"]
    assert len(rows) == 1
    row = rows[0]
    assert row[4].startswith("'=cmd")  # escaped
    assert row[5] == "Approved" and row[6] == "Verified with the provider"  # words, not verified_identity
    assert "verified_identity" not in ",".join(row)


def test_the_csv_speaks_the_readers_language(client, alice, alpaca, summer):
    rewarded(summer, "Pat")
    client.force_login(alice)

    response = client.get(reverse("verification:claims_csv", args=["alpaca"]), HTTP_ACCEPT_LANGUAGE="de")

    header, row = csv_rows(response, delimiter=";")
    assert header[0] != "Claim"  # in German
    assert "," in row[7]  # 0,50 not 0.50


# People


def test_people_show_their_accounts_and_earnings(client, alice, alpaca, summer):
    claim = rewarded(summer, "Pat")
    client.force_login(alice)

    response = client.get(reverse("verification:people", args=["alpaca"]))
    csv_response = client.get(reverse("verification:people_csv", args=["alpaca"]), {"q": "Pat"})

    body = response.content.decode()
    assert "Pat (TikTok)" in body
    _header, row = csv_rows(csv_response)
    assert row[2] == "Pat (TikTok)" and row[4] == "1"
    assert row[5] == f"{claim.amount / 100:.2f} EUR"


def test_empty_tables_offer_the_next_step(client, alice, alpaca):
    client.force_login(alice)

    claims = client.get(reverse("verification:claims", args=["alpaca"])).content.decode()
    people = client.get(reverse("verification:people", args=["alpaca"])).content.decode()

    assert "No claims yet" in claims and "Go to your campaigns" in claims
    assert "Nobody has taken part yet" in people


def test_a_viewer_is_not_offered_what_they_cannot_do(client, vic, alpaca):
    client.force_login(vic)

    claims = client.get(reverse("verification:claims", args=["alpaca"])).content.decode()

    assert "Go to your campaigns" not in claims
    assert "As a viewer you can see everything here but change nothing." in claims


def test_the_tables_answer_htmx_with_their_rows_only(client, alice, alpaca, summer):
    rewarded(summer, "Pat")
    client.force_login(alice)

    for name in ("verification:claims", "verification:people", "payouts:payout_table"):
        body = client.get(reverse(name, args=["alpaca"]), headers={"HX-Request": "true"}).content.decode()
        assert body.lstrip().startswith('<div id="results">'), name
        assert "<html" not in body


# Payouts


def test_the_payouts_table_and_its_csv(client, fiona, alpaca):
    client.force_login(fiona)

    page = client.get(reverse("payouts:payout_table", args=["alpaca"]))
    export = client.get(reverse("payouts:payout_table_csv", args=["alpaca"]), {"status": "settled"})

    assert page.status_code == 200 and "No payouts yet" in page.content.decode()
    assert csv_rows(export)[0][0] == "EndToEndId"


def test_a_banks_code_is_shown_in_words_with_the_code_beside_them():
    from django.template import Context, Template

    from payouts.templatetags.bank_words import bank_reason

    with override("en"):
        assert bank_reason("AC01") == "the account number is not valid"
        assert "name check" in bank_reason("VOP")
        row = Template(
            "{% load bank_words %}{{ code|bank_reason }}"
            '{% if code != "VOP" %} <code>{{ code }}</code>{% endif %}'
        )
        assert row.render(Context({"code": "VOP"})).strip().endswith("name check")  # no "(VOP)"
        assert "<code>AC01</code>" in row.render(Context({"code": "AC01"}))
