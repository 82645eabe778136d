"""What the marketer's overview is looking at: which campaigns, which dates, per day or per week.

Every app's overview fragment reads the same query string through `overview_window`, so the
campaign and date chosen on the page hold for all of them.
"""

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django import forms
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from campaigns.models import Brand, Campaign
from joyback.charts import buckets_between
from joyback.tables import date_range_fields

PERIODS = [("day", _("Per day")), ("week", _("Per week"))]
DEFAULT_DAYS = {"day": 30, "week": 12 * 7}
LONGEST_DAYS = 400


class OverviewForm(forms.Form):
    campaign = forms.TypedChoiceField(label=_("Campaign"), coerce=int, required=False, empty_value=None)
    period = forms.ChoiceField(label=_("Show"), choices=PERIODS, required=False)
    start, end = date_range_fields()

    def __init__(self, data, *, brand: Brand):
        super().__init__(data)
        self.brand = brand
        self.campaigns = list(Campaign.objects.filter(brand=brand).order_by("-created_at"))
        self.fields["campaign"].choices = [("", _("All campaigns"))] + [
            (c.pk, c.name) for c in self.campaigns
        ]

    def clean(self):
        data = super().clean()
        start, end = data.get("start"), data.get("end")
        if start and end and start > end:
            self.add_error("end", _("The end date is before the start date."))
        elif start and end and (end - start).days > LONGEST_DAYS:
            self.add_error("start", _("Choose at most 400 days."))
        return data


@dataclass(frozen=True)
class Window:
    campaigns: list  # the campaigns looked at
    campaign: Campaign | None  # one campaign, or None for all
    period: str
    start: date
    end: date
    form: OverviewForm

    @property
    def campaign_ids(self) -> list[int]:
        return [c.pk for c in self.campaigns]

    @property
    def since(self) -> datetime:
        return datetime.combine(self.start, time.min, tzinfo=timezone.get_current_timezone())

    @property
    def until(self) -> datetime:
        """The end of the last day: an exclusive bound."""
        return datetime.combine(
            self.end + timedelta(days=1), time.min, tzinfo=timezone.get_current_timezone()
        )

    @property
    def buckets(self) -> list[date]:
        return buckets_between(start=self.start, end=self.end, period=self.period)

    @property
    def currencies(self) -> list[str]:
        return sorted({c.currency for c in self.campaigns}) or [self.form.brand.default_currency]

    def query(self) -> str:
        """The window as a query string, for the fragments and the links that keep it."""
        return self.form.data.urlencode() if hasattr(self.form.data, "urlencode") else ""


def overview_window(*, data, brand: Brand, today: date | None = None) -> Window:
    """The campaigns and dates asked for; what was asked wrongly falls back to the defaults (and
    the form says why)."""
    form = OverviewForm(data, brand=brand)
    form.is_valid()
    cleaned = getattr(form, "cleaned_data", {})
    period = cleaned.get("period") or "day"
    today = today or timezone.localdate()
    end = cleaned.get("end") if "end" not in form.errors else None
    start = cleaned.get("start") if not ({"start", "end"} & set(form.errors)) else None
    end = end or today
    if start and (end - start).days > LONGEST_DAYS:
        # A start alone is measured against today: years of days to count, one bucket each.
        form.add_error("start", _("Choose at most 400 days."))
        start = None
    start = start or end - timedelta(days=DEFAULT_DAYS[period] - 1)
    chosen = cleaned.get("campaign")
    campaign = next((c for c in form.campaigns if c.pk == chosen), None)
    if chosen is not None and campaign is None:
        form.add_error("campaign", _("No such campaign in this brand."))
    campaigns = [campaign] if campaign is not None else form.campaigns
    return Window(campaigns=campaigns, campaign=campaign, period=period, start=start, end=end, form=form)
