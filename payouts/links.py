"""The path of a person's status page, which every accepted claim redirects to."""

from functools import lru_cache

from django.urls import get_script_prefix, reverse

_SLUG, _TOKEN = "slug-here", "token-here"


@lru_cache(maxsize=8)
def _status_page_parts(script_prefix: str) -> tuple[str, str, str]:
    path = reverse("payouts:status_page", args=[_SLUG, _TOKEN])
    before, after = path.split(_SLUG)
    between, end = after.split(_TOKEN)
    return before, between, end


def status_page_path(*, slug: str, token: str) -> str:
    """reverse("payouts:status_page", args=[slug, token]) for a campaign's slug and a participant's
    token (neither needs quoting in a path), without walking the URLconf on every claim."""
    before, between, end = _status_page_parts(get_script_prefix())
    return f"{before}{slug}{between}{token}{end}"
