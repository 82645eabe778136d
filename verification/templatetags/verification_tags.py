from django import template
from django.contrib.humanize.templatetags.humanize import intcomma
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.html import format_html
from django.utils.translation import gettext as _

from joyback.words import said_to_person
from verification.posting import failure_text

register = template.Library()


@register.filter
def post_failure(code: str) -> str:
    """Why a video JoyBack tried to post did not go out, in the reader's language."""
    return failure_text(code)


@register.filter
def gate_for(gates: dict, trigger: str) -> str:
    """The purchase gate's words for this step, "" when it is open."""
    return (gates or {}).get(trigger, "")


@register.inclusion_tag("verification/_decision.html")
def claim_decision(claim, timeline=True):
    """Why a claim stands where it does, for the person whose claim it is: the reason in a
    sentence, what was measured against what was asked (the views a rejected video had and
    needed), when the next thing happens, and what to do next."""

    what, next_step = said_to_person(claim.reason)
    measured = []
    if claim.reason == "below_threshold":
        read = claim.evidence.get("recheck") or claim.evidence.get("video") or {}
        asked = [
            (
                claim.rule.min_views,
                read.get("view_count"),
                _("%(needed)s views needed, your video had %(had)s."),
            ),
            (
                claim.rule.min_likes,
                read.get("like_count"),
                _("%(needed)s likes needed, your video had %(had)s."),
            ),
            (
                claim.rule.min_comments,
                read.get("comment_count"),
                _("%(needed)s comments needed, your video had %(had)s."),
            ),
        ]
        for needed, had, sentence in asked:
            if needed and had is not None and int(had) < needed:
                measured.append(sentence % {"needed": _count(needed), "had": _count(int(had))})
    return {
        "claim": claim,
        "what": what,
        "measured": measured,
        "next_step": next_step,
        "timeline": timeline,
    }


def _count(number: int) -> str:

    return intcomma(number, use_l10n=True)


@register.filter
def order_number(order_id: str) -> str:
    """The order's number as the shop's own mail shows it: a connected shop's orders are kept as
    kind:domain:number, so that two shops' number 1001 stay apart."""
    return str(order_id or "").rsplit(":", 1)[-1]


@register.filter
def local_time(value, style: str = "datetime"):
    """A moment in the reader's own time zone: the server writes it in the reader's language (in
    UTC, and says so), the browser rewrites it in its own zone (static/js/public.js)."""

    if not value:
        return ""
    if style == "date":
        text = date_format(timezone.localtime(value), "DATE_FORMAT")
    else:
        text = date_format(timezone.localtime(value), "SHORT_DATETIME_FORMAT") + " UTC"
    return format_html('<time datetime="{}" data-local="{}">{}</time>', value.isoformat(), style, text)
