# ruff: noqa: RUF001 - Chinese punctuation is part of the captions
"""A caption that opens by saying what it is ("ok this is an ad but…", "Das ist Werbung:", "Esto es
publicidad ·", "这是广告") has its disclosure up front (German policy aside: the Medienanstalten want
the mark itself first); the same opening denied,
about an ad seen elsewhere, or naming another sponsor is never paid without a person's look."""

import pytest

from compliance.checker import (
    COMPLIANT,
    caption_check,
    compiled,
    policies_for_countries,
    policies_from_source,
)

POLICIES = [compiled(code=p["code"], version=1, data=p) for p in policies_from_source()]
WHERE = {"en": "US", "de": "DE", "es": "ES", "zh-hans": "CN"}


def verdict(caption, language):
    return caption_check(
        caption,
        policies=policies_for_countries(POLICIES, [WHERE[language]]),
        platform="tiktok",
        languages=[language],
        brand="Bergkaffee",
        brand_names=("@bergkaffee",),
        label_on=None,
    ).verdict


@pytest.mark.parametrize(
    ("language", "caption"),
    [
        ("en", "ok this is an ad but my mornings got easier with Bergkaffee ☕"),
        ("en", "This is an ad | Bergkaffee cold brew on a hot day"),
        ("en", "This is an #ad for Bergkaffee"),
        ("es", "Esto es publicidad · mi café Bergkaffee de la mañana"),
        ("zh-hans", "这是广告 Bergkaffee冷萃，夏天的早晨"),
    ],
)
def test_an_opening_that_says_it_is_an_ad_is_up_front(language, caption):
    assert verdict(caption, language) == COMPLIANT


@pytest.mark.parametrize(
    ("language", "caption"),
    [
        ("en", "ok this isn't an ad but I love Bergkaffee"),
        ("en", "this is an ad I saw on the subway, anyway Bergkaffee time"),
        ("en", "This is an ad for Nescafe, but I drink Bergkaffee"),
        ("de", "Das ist keine Werbung: mein Bergkaffee"),
        ("es", "Esto no es publicidad, solo me gusta Bergkaffee"),
        ("zh-hans", "这不是广告，Bergkaffee真好喝"),
    ],
)
def test_the_same_opening_denied_elsewhere_or_for_another_sponsor_is_not_paid(language, caption):
    assert verdict(caption, language) != COMPLIANT
