"""The disclosure box of a campaign's landing page, rendered inside the page's cached body (the
cache is per language, as the wording is), and the words for finding codes."""

from django import template
from django.utils.translation import get_language

from compliance.reasons import caption_reasons, explain_texts, fix_texts
from compliance.selectors import campaign_policies, caption_verdict, disclosure_for

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


@register.simple_tag
def case_reasons(case):
    """What is wrong with a case's caption, what to write instead and the policy, in the reader's
    language. The case keeps the codes; checking its caption again finds what they were about (the
    other sponsor's name, the word a term was inside of) as long as it gives the same codes."""
    policies = campaign_policies(campaign=case.campaign)
    again = caption_verdict(campaign=case.campaign, caption=case.caption)
    return caption_reasons(
        again if list(again.reasons) == list(case.reasons) else list(case.reasons),
        wording=case.wording,
        brand=case.campaign.brand.name,
        language=get_language() or case.language,
        policies=policies,
    )
