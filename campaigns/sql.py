"""Every SQL statement of campaigns that the ORM does not write, each with why it cannot."""

from django.db import connection

from campaigns.models import LandingVisitDay

# Why raw: the ORM has no "add one, or insert the row" in one statement; update_or_create reads
# first and races, and bulk_create(update_conflicts=True) sets the value rather than adding to it.
# The counter's brand is its campaign's, read in the same statement.
_LANDING_VISIT_ADD = (
    f"INSERT INTO {LandingVisitDay._meta.db_table} (campaign_id, brand_id, day, visits) "  # noqa: S608
    "SELECT id, brand_id, %s, 1 FROM campaigns_campaign WHERE id = %s "
    f"ON CONFLICT (campaign_id, day) DO UPDATE SET visits = {LandingVisitDay._meta.db_table}.visits + 1"
)


def landing_visit_upsert(*, campaign_id: int, day) -> None:
    with connection.cursor() as cursor:
        cursor.execute(_LANDING_VISIT_ADD, [day, campaign_id])
