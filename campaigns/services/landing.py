"""The public landing page's cache, forgotten when the brand changes what it shows."""

from django.conf import settings
from django.core.cache import cache

from campaigns.models import (
    Campaign,
)
from campaigns.selectors import (
    landing_pages_local_forget,
)


def landing_cache_clear(*, campaign: Campaign) -> None:
    """Forget the cached public page, so a change the brand makes shows at once (with Redis, within
    LANDING_LOCAL_SECONDS in the other web processes)."""
    keys = [f"landing:{campaign.slug}:{code}" for code, _name in settings.LANGUAGES]
    pages = [f"landing-page:{campaign.slug}:{code}" for code, _name in settings.LANGUAGES]
    cache.delete_many([*keys, *pages, f"campaign:{campaign.slug}"])
    landing_pages_local_forget(page_keys=pages)
