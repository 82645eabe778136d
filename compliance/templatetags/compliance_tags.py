"""The disclosure box of a campaign's landing page, rendered inside the page's cached body (the
cache is per language, as the wording is), and the words for finding codes."""

from django import template
from django.utils.translation import get_language

from compliance.reasons import explain_texts, fix_texts
from compliance.selectors import disclosure_for

register = template.Library()


@register.inclusion_tag("compliance/_disclosure.html")
def disclosure_box(campaign, platform="tiktok"):
    return {
        "campaign": campaign,
        "disclosure": disclosure_for(campaign=campaign, language=get_language() or "en", platform=platform),
    }


@register.filter
def fixes(codes):
    return fix_texts(codes or [])


@register.filter
def explained(codes):
    return explain_texts(codes or [])
