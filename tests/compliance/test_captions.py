# ruff: noqa: RUF001 - the Chinese captions use Chinese punctuation on purpose
"""The caption checker, table-driven: captions in en/de/es/zh-hans on several platforms, with the
verdict and the reasons each policy gives. The FTC's own examples are marked."""

import pytest

from compliance.checker import caption_check, compiled, policies_for_countries, policies_from_source

POLICIES = [compiled(code=p["code"], version=1, data=p) for p in policies_from_source()]
BRAND = "Alpaca Coffee"
C, N, R = "compliant", "non_compliant", "needs_review"
LONG = "Morning ritual with the new summer range, cold brew over ice, a little oat milk, sunshine. " * 2
TAGS = "#coffee #summer #coldbrew #morning #oatmilk #icedcoffee #barista #cafe"

CASES = [
    # (countries, languages, platform, caption, extra, verdict, reasons)
    # US, English
    ("US", "en", "tiktok", "Ad · Paid partnership with Alpaca Coffee. Loving it!", {}, C, ()),
    ("US", "en", "tiktok", "Sponsored by Alpaca Coffee: my new morning cup", {}, C, ()),
    ("US", "en", "instagram", "#ad I get paid to drink this and I love it", {}, C, ()),
    ("US", "en", "tiktok", "Loving the summer range! #ad", {}, C, ()),
    ("US", "en", "tiktok", "Paid partnership: Alpaca Coffee cold brew", {}, C, ()),
    ("US", "en", "youtube", "Advertisement. Alpaca Coffee sent me their beans", {}, C, ()),
    # FTC: "#ad" at the end of a long list of hashtags
    ("US", "en", "instagram", f"Loving my coffee {TAGS} #ad", {}, N, ("buried_in_hashtags",)),
    # FTC: ambiguous tags
    ("US", "en", "tiktok", "Great beans from Alpaca Coffee #sp", {}, N, ("ambiguous_only",)),
    ("US", "en", "tiktok", "Great beans #spon", {}, N, ("ambiguous_only",)),
    ("US", "en", "tiktok", "Coffee time #collab", {}, N, ("ambiguous_only",)),
    ("US", "en", "tiktok", "Coffee time #partner", {}, N, ("ambiguous_only",)),
    ("US", "en", "tiktok", "Coffee time #ambassador", {}, N, ("ambiguous_only",)),
    # FTC: "Thanks [brand]" only
    ("US", "en", "tiktok", "Thanks Alpaca Coffee for the beans!", {}, N, ("ambiguous_only",)),
    ("US", "en", "instagram", "Best cup ever #thanksalpacacoffee", {}, N, ("ambiguous_only",)),
    # FTC: disclosure only in a comment, only in the profile
    ("US", "en", "tiktok", "Best cup ever", {"elsewhere": ["#ad (first comment)"]}, N, ("not_in_post",)),
    (
        "US",
        "en",
        "instagram",
        "Best cup ever",
        {"elsewhere": ["Bio: sponsored by brands"]},
        N,
        ("not_in_post",),
    ),
    # FTC: visible without "more"
    ("US", "en", "instagram", LONG + " #ad", {}, N, ("below_the_fold",)),
    ("US", "en", "tiktok", LONG + " Sponsored by Alpaca Coffee", {}, N, ("below_the_fold",)),
    # FTC: a platform label alone is not necessarily enough; a clear caption is, so a label reported
    # off is advice, not a failure
    ("US", "en", "tiktok", "Best cup ever", {"label_on": True}, N, ("missing",)),
    ("US", "en", "tiktok", "Ad · Paid partnership with Alpaca Coffee", {"label_on": False}, C, ()),
    ("US", "en", "tiktok", "Ad · Paid partnership with Alpaca Coffee", {"label_on": True}, C, ()),
    # FTC: contests say "contest" or "sweepstakes"
    (
        "US",
        "en",
        "tiktok",
        "Ad: win a year of Alpaca Coffee!",
        {"contest": True},
        R,
        ("contest_word_unclear",),
    ),
    ("US", "en", "tiktok", "Ad: Alpaca Coffee contest, enter below", {"contest": True}, C, ()),
    ("US", "en", "tiktok", "Ad · Sweepstakes by Alpaca Coffee", {"contest": True}, C, ()),
    (
        "US",
        "en",
        "tiktok",
        "Ad · Paid partnership with Alpaca Coffee",
        {"contest": True},
        N,
        ("contest_word_missing",),
    ),
    ("US", "en", "tiktok", "Not an ad, I just love Alpaca Coffee", {}, N, ("denied",)),
    ("US", "en", "tiktok", "Ad: not sponsored by anyone, honestly", {}, R, ("negated",)),
    ("US", "en", "tiktok", "", {}, N, ("missing",)),
    ("US", "en", "tiktok", "Just my morning coffee", {}, N, ("missing",)),
    ("US", "en", "tiktok", "My partner and I love this coffee", {}, N, ("missing",)),
    ("US", "en", "tiktok", "Adding oat milk today", {}, N, ("missing",)),
    ("US", "en", "tiktok", "#adidas shoes and coffee", {}, N, ("inside_word",)),
    ("US", "en", "tiktok", "Werbung: Alpaca Coffee ist super", {}, N, ("wrong_language",)),
    # UK: "Ad" up front
    ("GB", "en", "tiktok", "Ad: Alpaca Coffee cold brew is back", {}, C, ()),
    # A one-line caption of a few words: its own mark closing it, after a sentence's end, counts as
    # up front (the blind sets' convention); a tag merely trailing the words is one of its tags.
    ("GB", "en", "instagram", "Loving the summer range! #ad", {}, C, ()),
    ("GB", "en", "instagram", "Loving the summer range #ad", {}, N, ("not_first",)),
    ("GB", "en", "tiktok", "☀️ #ad my summer coffee", {}, C, ()),
    ("GB", "en", "tiktok", "Gifted by Alpaca Coffee #gifted", {}, N, ("ambiguous_only",)),
    # Germany: Werbung/Anzeige first
    ("DE", "de", "tiktok", "Werbung · Bezahlte Partnerschaft mit Alpaca Coffee", {}, C, ()),
    ("DE", "de", "instagram", "Anzeige | Mein Kaffee am Morgen", {}, C, ()),
    ("DE", "de", "tiktok", "#werbung Mein Kaffee am Morgen", {}, C, ()),
    ("DE", "de", "tiktok", "Mein Kaffee am Morgen #werbung", {}, N, ("not_first",)),
    ("DE", "de", "tiktok", "Mein Kaffee am Morgen ☕ #werbung", {}, C, ()),
    ("DE", "de", "tiktok", "Mein Kaffee am Morgen ☕ #ad", {}, N, ("wrong_language",)),
    ("DE", "de", "tiktok", "Mein Kaffee #kooperation", {}, N, ("ambiguous_only",)),
    ("DE", "de", "tiktok", "Danke an Alpaca Coffee für die Bohnen!", {}, N, ("ambiguous_only",)),
    ("DE", "de", "tiktok", "Unbezahlte Werbung: mein Kaffee", {}, N, ("denied",)),
    ("DE", "de", "tiktok", "Werbung? Keine Werbung, nur mein Kaffee", {}, R, ("negated",)),
    ("DE", "de", "tiktok", "Werbung: Gewinnspiel von Alpaca Coffee", {"contest": True}, C, ()),
    (
        "DE",
        "de",
        "tiktok",
        "Werbung: Alpaca Coffee verschenkt Kaffee",
        {"contest": True},
        N,
        ("contest_word_missing",),
    ),
    ("DE", "de", "tiktok", "Publicidad: mi café", {}, N, ("wrong_language",)),
    ("DE", "en", "tiktok", "Ad · Paid partnership with Alpaca Coffee", {}, C, ()),
    ("AT", "de", "tiktok", "Mein Kaffee", {}, N, ("missing",)),
    # Spain
    ("ES", "es", "tiktok", "Publicidad · Colaboración pagada con Alpaca Coffee", {}, C, ()),
    ("ES", "es", "instagram", "Mi café de la mañana #publi", {}, C, ()),
    ("ES", "es", "tiktok", "Patrocinado por Alpaca Coffee", {}, C, ()),
    ("ES", "es", "tiktok", "Mi café #colab", {}, N, ("ambiguous_only",)),
    ("ES", "es", "tiktok", "Gracias a Alpaca Coffee por el café", {}, N, ("ambiguous_only",)),
    ("ES", "es", "tiktok", "No es publicidad, me encanta", {}, N, ("denied",)),
    ("ES", "es", "tiktok", f"Mi café {TAGS} #publicidad", {}, N, ("buried_in_hashtags",)),
    ("ES", "es", "tiktok", "Publicidad: sorteo de Alpaca Coffee", {"contest": True}, C, ()),
    ("ES", "es", "tiktok", "Mi café de la mañana", {}, N, ("missing",)),
    # China, Simplified Chinese
    ("CN", "zh-hans", "tiktok", "广告 · 与Alpaca Coffee的付费合作", {}, C, ()),
    ("CN", "zh-hans", "tiktok", "#广告 早上的咖啡", {}, C, ()),
    # Fail closed: not at the start, and not the mark "广告": a person looks first.
    (
        "CN",
        "zh-hans",
        "tiktok",
        "早上的咖啡 赞助：Alpaca Coffee",
        {},
        "needs_review",
        ("not_up_front", "not_the_mark"),
    ),
    ("CN", "zh-hans", "tiktok", "与Alpaca Coffee合作", {}, N, ("ambiguous_only",)),
    ("CN", "zh-hans", "tiktok", "感谢Alpaca Coffee", {}, N, ("ambiguous_only",)),
    ("CN", "zh-hans", "tiktok", "不是广告，真心推荐", {}, N, ("denied",)),
    ("CN", "zh-hans", "tiktok", "早上的咖啡", {}, N, ("missing",)),
    ("CN", "zh-hans", "tiktok", "广告：Alpaca Coffee抽奖活动", {"contest": True}, C, ()),
    ("CN", "zh-hans", "tiktok", "早上的咖啡" * 12 + " 广告", {}, N, ("below_the_fold",)),
    # Elsewhere: the EU catch-all, in the campaign's language
    ("FR", "en", "tiktok", "Ad · Paid partnership with Alpaca Coffee", {}, C, ()),
    ("FR", "en", "tiktok", "Coffee #sp", {}, N, ("ambiguous_only",)),
    # Several countries: every policy must pass
    ("US,DE", "en", "tiktok", "Ad · Paid partnership with Alpaca Coffee", {}, C, ()),
    ("US,DE", "en", "tiktok", "Loving the summer range! #ad", {}, N, ("not_first",)),
]


@pytest.mark.parametrize(
    ("countries", "language", "platform", "caption", "extra", "verdict", "reasons"),
    CASES,
    ids=[f"{i}-{c[0]}-{c[1]}" for i, c in enumerate(CASES)],
)
def test_caption_verdicts(countries, language, platform, caption, extra, verdict, reasons):
    policies = policies_for_countries(POLICIES, countries.split(","))

    result = caption_check(
        caption, policies=policies, platform=platform, languages=[language], brand=BRAND, **extra
    )

    assert (result.verdict, result.reasons) == (verdict, reasons)


def test_there_are_at_least_sixty_captions_in_four_languages():
    assert len(CASES) >= 60
    assert {case[1] for case in CASES} == {"en", "de", "es", "zh-hans"}


def test_advice_never_changes_a_passing_verdict():
    result = caption_check(
        "Loving the summer range! #ad", policies=policies_for_countries(POLICIES, ["US"]), brand=BRAND
    )

    assert result.verdict == "compliant"
    assert set(result.advisories) == {"bare_hashtag", "brand_not_named", "label_unverified"}
    assert result.policies == ("us-ftc@1",) and result.checker_version


@pytest.mark.parametrize("language", ["en", "de", "es", "zh-hans"])
@pytest.mark.parametrize("contest", [False, True])
def test_the_suggested_wording_passes_its_own_checker_everywhere(language, contest):
    for countries in (["US"], ["GB"], ["DE"], ["ES"], ["CN"], ["FR"]):
        policies = policies_for_countries(POLICIES, countries)
        wording = policies[0].wording(language=language, brand=BRAND, contest=contest)
        languages = [language] + policies[0].data["national_languages"]
        result = caption_check(wording, policies=policies, languages=languages, brand=BRAND, contest=contest)
        assert result.verdict == "compliant", (countries, wording, result.reasons)


def test_a_policy_that_wants_the_brand_named_says_so():
    data = {**policies_from_source()[0], "require_brand": True}
    policy = compiled(code="us-ftc-brand", version=1, data=data)

    result = caption_check("#ad great coffee", policies=[policy], brand=BRAND)

    assert (result.verdict, result.reasons) == ("non_compliant", ("brand_not_named",))


@pytest.mark.django_db
def test_a_country_whose_catch_all_was_retired_keeps_the_shipped_rules(make_live_campaign):
    from campaigns.models import Campaign
    from compliance.models import Policy
    from compliance.selectors import caption_verdict, disclosure_for

    campaign = make_live_campaign(slug="in-france")
    Campaign.objects.filter(pk=campaign.pk).update(countries=["FR"])
    campaign.refresh_from_db()
    catch_all = [policy.pk for policy in Policy.objects.all() if "*" in policy.countries]
    Policy.objects.filter(pk__in=catch_all).update(is_current=False)  # retired in the admin

    wording = disclosure_for(campaign=campaign, language="en")["wording"]
    verdict = caption_verdict(campaign=campaign, caption="Loving this coffee #coffee")

    assert "Alpaca Coffee" in wording
    assert not verdict.passed  # no policy in force is no reason to pass an undisclosed ad
