# ruff: noqa: RUF001 - full-width commas and typographic apostrophes are read on purpose
"""What a brand may ask of a creator for a post, as fields of the rule rather than free text.

Each field is one thing a brief lawfully asks (show the product, tag the brand, hashtags, post within
hours, keep public for days, the paid-partnership label, the language, the video's length, the
flavour or product to name, that the price may be said). The fields are validated here, stored on
the rule (`ActionRule.brief`) and rendered to the creator in their language; the free text beside
them (`ActionRule.instructions`) is read by the rule linter and, where not understood, reviewed by
JoyBack before launch. A brief made of fields needs no such review: every line it renders says only
what a brand may ask, and every creator is told their opinion is their own.
"""

import re

from django.utils.translation import gettext, ngettext

LANGUAGES = ("en", "de", "es", "zh-hans")
MAX_HASHTAGS = 10
_HANDLE = re.compile(r"^@[A-Za-z0-9_.]{2,30}$")
_HASHTAG = re.compile(r"^#[^\W_][\w]{0,49}$")
# A product or flavour name: letters, digits, spaces, hyphens and apostrophes, a few words.
_NAME = re.compile(r"^[^\W_][\w '’&-]{0,59}$")

BOOLEANS = ("show_product", "label_on", "price_allowed")
NUMBERS = {
    # field: (least, most)
    "show_within_seconds": (1, 60),
    "post_within_hours": (1, 24 * 30),
    "keep_public_days": (1, 365),
    "min_seconds": (1, 600),
    "max_seconds": (1, 600),
}
TEXTS = ("tag_handle", "mention", "language")
FIELDS = (*BOOLEANS, *NUMBERS, *TEXTS, "hashtags")


class BriefError(ValueError):
    """A brief field that cannot be accepted; the message says which and why."""


def _number(name: str, value) -> int | None:
    if value in (None, ""):
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise BriefError(
            gettext("“%(field)s” must be a whole number.") % {"field": field_label(name)}
        ) from None
    least, most = NUMBERS[name]
    if not least <= number <= most:
        raise BriefError(
            gettext("“%(field)s” must be between %(least)s and %(most)s.")
            % {"field": field_label(name), "least": least, "most": most}
        )
    return number


def hashtags_parse(text: str) -> list[str]:
    """Hashtags as a brand types them: separated by spaces or commas, the # optional."""
    tags = []
    for part in re.split(r"[\s,，、]+", text or ""):
        if part:
            tags.append(part if part.startswith("#") else f"#{part}")
    return tags


def brief_clean(data: dict) -> dict:
    """The brief as stored: only known fields, each checked, empty ones left out. Raises BriefError
    with a message for the brand on the first field it cannot accept."""
    unknown = set(data) - set(FIELDS)
    if unknown:
        raise BriefError(gettext("Unknown brief field: %(field)s.") % {"field": ", ".join(sorted(unknown))})
    brief: dict = {}
    for name in BOOLEANS:
        value = data.get(name)
        if value not in (None, "", False, True):
            raise BriefError(gettext("“%(field)s” must be yes or no.") % {"field": field_label(name)})
        if value:
            brief[name] = True
    for name in NUMBERS:
        number = _number(name, data.get(name))
        if number is not None:
            brief[name] = number
    if brief.get("min_seconds") and brief.get("max_seconds") and brief["min_seconds"] > brief["max_seconds"]:
        raise BriefError(gettext("The shortest length of the video is longer than its longest."))
    handle = (data.get("tag_handle") or "").strip()
    if handle:
        handle = handle if handle.startswith("@") else f"@{handle}"
        if not _HANDLE.match(handle):
            raise BriefError(
                gettext("“%(value)s” is not a handle: @ and 2 to 30 letters, digits, dots or underscores.")
                % {"value": handle}
            )
        brief["tag_handle"] = handle
    tags = data.get("hashtags") or []
    if isinstance(tags, str):
        tags = hashtags_parse(tags)
    if len(tags) > MAX_HASHTAGS:
        raise BriefError(gettext("At most %(count)s hashtags.") % {"count": MAX_HASHTAGS})
    for tag in tags:
        if not isinstance(tag, str) or not _HASHTAG.match(tag):
            raise BriefError(
                gettext("“%(value)s” is not a hashtag: # and one word of letters or digits.") % {"value": tag}
            )
    if tags:
        brief["hashtags"] = list(dict.fromkeys(tags))
    mention = " ".join((data.get("mention") or "").split())
    if mention:
        if not _NAME.match(mention) or len(mention.split()) > 5:
            raise BriefError(
                gettext("“%(value)s” is not a product or flavour name: a few words, no sentence.")
                % {"value": mention}
            )
        brief["mention"] = mention
    language = data.get("language") or ""
    if language:
        if language not in LANGUAGES:
            raise BriefError(gettext("“%(value)s” is not a language JoyBack offers.") % {"value": language})
        brief["language"] = language
    return brief


def field_label(name: str) -> str:
    return {
        "show_product": gettext("Show the product"),
        "show_within_seconds": gettext("Show it within the first seconds"),
        "label_on": gettext("Switch on the paid-partnership label"),
        "price_allowed": gettext("The price may be mentioned"),
        "post_within_hours": gettext("Post within (hours)"),
        "keep_public_days": gettext("Keep public for (days)"),
        "min_seconds": gettext("Video at least (seconds)"),
        "max_seconds": gettext("Video at most (seconds)"),
        "tag_handle": gettext("Tag this account"),
        "mention": gettext("Name this flavour or product"),
        "language": gettext("Language spoken"),
        "hashtags": gettext("Hashtags to add"),
    }[name]


def language_name(code: str) -> str:
    return {
        "en": gettext("English"),
        "de": gettext("German"),
        "es": gettext("Spanish"),
        "zh-hans": gettext("Chinese"),
    }[code]


def brief_lines(brief: dict, *, brand: str = "") -> list[str]:
    """The brief as the creator reads it, in the active language, one line per field and the line
    that keeps their opinion their own."""
    if not brief:
        return []
    lines = []
    if brief.get("show_product"):
        seconds = brief.get("show_within_seconds")
        if seconds:
            lines.append(
                ngettext(
                    "Show the product clearly within the first %(count)s second.",
                    "Show the product clearly within the first %(count)s seconds.",
                    seconds,
                )
                % {"count": seconds}
            )
        else:
            lines.append(gettext("Show the product clearly in the video."))
    if brief.get("tag_handle"):
        lines.append(gettext("Tag %(handle)s in your caption.") % {"handle": brief["tag_handle"]})
    if brief.get("hashtags"):
        lines.append(gettext("Add these hashtags: %(tags)s.") % {"tags": " ".join(brief["hashtags"])})
    if brief.get("mention"):
        lines.append(gettext("Say which product you tried: %(name)s.") % {"name": brief["mention"]})
    if brief.get("label_on"):
        lines.append(gettext("Switch on TikTok's paid-partnership label when you post."))
    if brief.get("post_within_hours"):
        hours = brief["post_within_hours"]
        lines.append(
            ngettext("Post within %(count)s hour.", "Post within %(count)s hours.", hours) % {"count": hours}
        )
    if brief.get("keep_public_days"):
        days = brief["keep_public_days"]
        lines.append(
            ngettext(
                "Keep the video public for at least %(count)s day.",
                "Keep the video public for at least %(count)s days.",
                days,
            )
            % {"count": days}
        )
    least, most = brief.get("min_seconds"), brief.get("max_seconds")
    if least and most:
        lines.append(
            gettext("The video is %(least)s to %(most)s seconds long.") % {"least": least, "most": most}
        )
    elif least:
        lines.append(gettext("The video is at least %(count)s seconds long.") % {"count": least})
    elif most:
        lines.append(gettext("The video is at most %(count)s seconds long.") % {"count": most})
    if brief.get("language"):
        lines.append(
            gettext("Speak %(language)s in the video.") % {"language": language_name(brief["language"])}
        )
    if brief.get("price_allowed"):
        lines.append(gettext("You may mention the price."))
    lines.append(gettext("Say what you really think, good or bad: you are paid whatever your opinion."))
    return lines
