"""English dates are written day before month, as the European brands JoyBack serves write them
(config/formats/en), with the language code still `en`; German keeps its own, and the CSV exports
keep ISO dates whatever the reader's language."""

from datetime import UTC, date, datetime

import pytest
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.formats import date_format

from joyback.charts import when_label
from payouts.notifications import when_text

pytestmark = pytest.mark.django_db
SIXTH_OF_DECEMBER = datetime(2026, 12, 6, 15, 30, tzinfo=UTC)


def test_english_dates_are_day_month_year_and_the_language_stays_en(settings):
    assert settings.LANGUAGE_CODE == "en" and "en" in dict(settings.LANGUAGES)
    with translation.override("en"):
        assert date_format(date(2026, 12, 6)) == "6 Dec 2026"
        assert date_format(date(2026, 12, 6), "SHORT_DATE_FORMAT") == "06/12/2026"
        assert date_format(SIXTH_OF_DECEMBER, "SHORT_DATETIME_FORMAT") == "06/12/2026 15:30"
        assert when_label(date(2026, 12, 6), "day") == "6 Dec"
        assert when_text(SIXTH_OF_DECEMBER, payee=None).startswith("6 December 2026 15:30")
    with translation.override("de"):
        assert date_format(date(2026, 12, 6), "SHORT_DATE_FORMAT") == "06.12.2026"


def test_a_page_in_english_shows_dates_day_first_and_the_csv_stays_iso(owed, client, fiona, alpaca):
    owed()
    client.force_login(fiona)
    created = timezone.localtime(alpaca.payouts.get().created_at)
    european, american = created.strftime("%d/%m/%Y"), created.strftime("%m/%d/%Y")

    page = client.get(
        reverse("payouts:payout_table", args=["alpaca"]), HTTP_ACCEPT_LANGUAGE="en"
    ).content.decode()
    assert european in page
    assert created.day == created.month or american not in page
    assert created.strftime("%b. %-d, %Y") not in page

    export = client.get(reverse("payouts:payout_table_csv", args=["alpaca"]), HTTP_ACCEPT_LANGUAGE="en")
    assert created.strftime("%Y-%m-%d %H:%M") in b"".join(export.streaming_content).decode()
