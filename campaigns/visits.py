"""Landing visits, counted on the server: no third-party tracker, no cookie, nothing about a person
stored. A visit adds one to the campaign's counter of the day (one upsert statement). A visitor's
repeat visits that day count once: the address and browser are hashed with a key of the day
(HMAC of the secret key and the date), the hash is kept in the cache until the day ends and never
in the database; tomorrow's key makes a different hash, so days cannot be linked. Bots, link
previews and prefetches are not visits.
"""

import hashlib
import hmac
import re
from datetime import date, datetime, time, timedelta

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from campaigns.sql import landing_visit_upsert
from joyback.ratelimit import client_address

# Crawlers, link previews (chat apps unfurling a link), monitors and scripted clients.
BOT_AGENTS = re.compile(
    r"bot|crawl|spider|slurp|preview|facebookexternalhit|whatsapp|telegram|discord|skype|embedly|"
    r"headless|lighthouse|pingdom|uptime|monitor|curl|wget|python|httpx|java/|go-http|okhttp|"
    r"node-fetch|axios|scrapy|phantomjs|selenium|puppeteer|playwright",
    re.IGNORECASE,
)


def visit_is_counted(request) -> bool:
    """A person opening the page: not a bot, not a prefetch or prerender, not a HEAD."""
    if request.method != "GET":
        return False
    agent = request.headers.get("User-Agent", "")
    if not agent or BOT_AGENTS.search(agent):
        return False
    purpose = " ".join(
        request.headers.get(name, "") for name in ("Sec-Purpose", "Purpose", "X-Purpose", "X-Moz")
    ).lower()
    return not ("prefetch" in purpose or "prerender" in purpose or "preview" in purpose)


def _day_key(day: date) -> bytes:
    return hmac.new(
        settings.SECRET_KEY.encode(), f"landing-visits:{day.isoformat()}".encode(), "sha256"
    ).digest()


def visitor_hash(*, request, campaign_id: int, day: date) -> str:
    """The visitor of the day, unlinkable to other days and unreadable without the day's key."""
    seen = f"{campaign_id}|{client_address(request)}|{request.headers.get('User-Agent', '')}"
    return hmac.new(_day_key(day), seen.encode(), hashlib.sha256).hexdigest()


def landing_visit_add(*, campaign_id: int, day: date) -> None:
    """One more visit on the day: one statement, safe when many processes count at once."""
    with transaction.atomic(durable=True):
        landing_visit_upsert(campaign_id=campaign_id, day=day)


def landing_visit_record(*, request, campaign_id: int, now: datetime | None = None) -> bool:
    """Count this request as a visit if it is a person's first of the day; True if it counted."""
    if not visit_is_counted(request):
        return False
    now = now or timezone.now()
    day = now.date()
    # The hash lives until the day ends (UTC), then a new visit counts again.
    day_end = datetime.combine(day + timedelta(days=1), time.min, tzinfo=now.tzinfo)
    seconds = max(int((day_end - now).total_seconds()), 1)
    if not cache.add(f"visit:{visitor_hash(request=request, campaign_id=campaign_id, day=day)}", 1, seconds):
        return False
    landing_visit_add(campaign_id=campaign_id, day=day)
    return True
