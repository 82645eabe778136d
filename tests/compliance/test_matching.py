# ruff: noqa: RUF001 - the Chinese captions use Chinese punctuation on purpose
"""Matching by language, not by substring: each failure kind of issue 18 in en/de/es/zh-hans, with
the neighbour that must still pass; the label as advice where the law asks only for a caption; and
the reasons a creator reads, in their language, naming the policy."""

from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compliance.checker import caption_check, compiled, policies_for_countries, policies_from_source
from compliance.linter import rules_lint
from compliance.reasons import INSTEAD, WHAT, caption_reasons, label_advice

POLICIES = [compiled(code=p["code"], version=1, data=p) for p in policies_from_source()]
BRAND = "Alpaca Coffee"
WHERE = {"en": "US", "de": "DE", "es": "ES", "zh-hans": "CN"}


def check(caption, language, **extra):
    extra.setdefault("brand", BRAND)
    policies = policies_for_countries(POLICIES, [WHERE[language]])
    return caption_check(caption, policies=policies, languages=[language], **extra)


def lint(text, language):
    rule = SimpleNamespace(
        pk=7,
        instructions=text,
        trigger="ugc_share",
        min_likes=0,
        min_comments=0,
        verification_mode="engagement",
        get_trigger_display=lambda: "UGC share",
    )
    return [f.code for f in rules_lint([rule], policies_for_countries(POLICIES, [WHERE[language]]))]


# 1. A disclosure word inside another word or a compound that means something else.
INSIDE = [
    ("en", "Ad-free mornings with my favourite brew", "Ad · Ad-free mornings with my favourite brew"),
    ("en", "My #adfree coffee routine", "#ad My #adfree coffee routine"),
    ("de", "#werbungfrei Mein Kaffee am Morgen", "Werbung · #werbungfrei Mein Kaffee am Morgen"),
    ("de", "Anzeige-Tafel am Bahnhof, Kaffee in der Hand", "Anzeige: Anzeige-Tafel am Bahnhof"),
    ("es", "Mi #publicidadcero café", "#publi Mi #publicidadcero café"),
    ("es", "Anuncio-free mañana con café", "Publicidad · Anuncio-free mañana con café"),
    ("zh-hans", "路边的广告牌上有一杯咖啡", "广告 · 路边的广告牌上有一杯咖啡"),
    ("zh-hans", "学广告学的我每天喝咖啡", "#广告 学广告学的我每天喝咖啡"),
]


@pytest.mark.parametrize(("language", "caption", "neighbour"), INSIDE)
def test_a_term_inside_another_word_is_no_disclosure_but_the_word_on_its_own_is(language, caption, neighbour):
    refused, passed = check(caption, language), check(neighbour, language)

    assert (refused.verdict, refused.reasons) == ("non_compliant", ("inside_word",))
    assert refused.detail("inside_word") and refused.detail("inside_word") in caption
    # Fail closed: the neighbour is a disclosure, though one a person may still look at first.
    assert passed.verdict != "non_compliant", passed.reasons


# 2. A disclosure that names a different sponsor than the campaign's brand.
OTHER = [
    ("en", "Sponsored by Nescafé: my morning cup", "Nescafé", "Sponsored by Alpaca Coffee: my morning cup"),
    (
        "en",
        "Ad · Paid partnership with Costa Coffee. My morning",
        "Costa Coffee",
        "Ad · Paid partnership with Alpaca Coffee. My",
    ),
    ("en", "#ad @nescafe my new cup", "@nescafe", "#ad @drinkalpaca my new cup"),
    (
        "de",
        "Werbung · Bezahlte Partnerschaft mit Tchibo",
        "Tchibo",
        "Werbung · Bezahlte Partnerschaft mit @drinkalpaca",
    ),
    ("de", "Werbung für @jacobs_kaffee", "@jacobs_kaffee", "Werbung für Kaffee von Alpaca Coffee"),
    ("es", "Patrocinado por Starbucks: mi café", "Starbucks", "Patrocinado por Alpaca Coffee: mi café"),
    ("es", "#patrocinadopornescafe mi mañana", "nescafe", "#patrocinadoporalpacacoffee mi mañana"),
    ("zh-hans", "本视频由星巴克赞助", "星巴克", "本视频由羊驼咖啡赞助"),
    ("zh-hans", "广告 · 与雀巢的付费合作", "雀巢", "广告 · 与Alpaca Coffee的付费合作"),
]


@pytest.mark.parametrize(("language", "caption", "sponsor", "neighbour"), OTHER)
def test_a_disclosure_naming_another_sponsor_does_not_count_for_this_brand(
    language, caption, sponsor, neighbour
):
    names = ("@drinkalpaca", "羊驼咖啡")
    refused = check(caption, language, brand_names=names)
    passed = check(neighbour, language, brand_names=names)

    assert (refused.verdict, refused.reasons) == ("non_compliant", ("other_sponsor",))
    assert refused.detail("other_sponsor") == sponsor
    # Fail closed: the neighbour is a disclosure, though one a person may still look at first.
    assert passed.verdict != "non_compliant", passed.reasons


def test_the_brands_own_handle_counts_only_once_it_is_configured():
    caption = "#ad @drinkalpaca my new cup"

    assert check(caption, "en").reasons == ("other_sponsor",)
    assert check(caption, "en", brand_names=["@drinkalpaca"]).passed


# 3. Rules that make the reward depend on recommending or praising, in any of the four languages.
CONDITIONED = [
    ("en", "Only videos that recommend our coffee are paid", "We recommend filming in daylight"),
    (
        "en",
        "You must praise the taste to get the reward",
        "You don't have to recommend us: any honest opinion is paid",
    ),
    (
        "de",
        "Nur Videos, die unseren Kaffee empfehlen, werden bezahlt",
        "Wir empfehlen, bei Tageslicht zu filmen",
    ),
    (
        "de",
        "Du musst den Kaffee loben, um die Belohnung zu bekommen",
        "Nur Videos, die den Becher zeigen, zählen",
    ),
    ("es", "Solo pagamos los vídeos que recomienden nuestro café", "Recomendamos grabar con luz natural"),
    (
        "es",
        "Tienes que elogiar el sabor para cobrar la recompensa",
        "Solo cuentan los vídeos que muestran la taza",
    ),
    ("zh-hans", "只有推荐我们咖啡的视频才能获得奖励", "我们建议在白天拍摄"),
    ("zh-hans", "必须夸赞咖啡的味道才能拿到奖励", "你不需要推荐我们：任何真实的看法都会得到奖励"),
]


@pytest.mark.parametrize(("language", "text", "neighbour"), CONDITIONED)
def test_a_reward_that_depends_on_praise_is_blocked_and_its_neighbour_is_not(language, text, neighbour):
    assert "sentiment_conditioned" in lint(text, language)
    # Fail closed: the neighbour is not blocked, though JoyBack may review its free text first.
    assert set(lint(neighbour, language)) <= {"instructions_review"}


# 4. Buying or faking engagement with words or numbers between verb and object, or conjugated.
BOUGHT = [
    (
        "en",
        "Buy 500 likes if you need to reach the threshold",
        "Don't buy likes: bought engagement is removed",
    ),
    ("en", "Buying a few hundred followers is fine", "Buy our coffee and follow us for updates"),
    ("de", "Kauft 1.000 billige Aufrufe, bevor das Fenster schließt", "Kauf keine Likes"),
    ("de", "Ein paar hundert Follower zu kaufen ist okay", "Niemals Follower oder Aufrufe kaufen"),
    ("es", "Compra 500 likes si necesitas llegar al mínimo", "No compres likes"),
    ("es", "Compren visualizaciones para llegar antes", "Compra nuestro café y síguenos"),
    ("zh-hans", "如果达不到门槛可以买500个赞", "不要买赞：买来的互动会被删除"),
    ("zh-hans", "花钱买点赞也行", "买我们的咖啡并关注我们"),
]


@pytest.mark.parametrize(("language", "text", "neighbour"), BOUGHT)
def test_bought_engagement_is_found_across_words_and_conjugations_and_its_neighbour_passes(
    language, text, neighbour
):
    assert "fake_engagement" in lint(text, language)
    # Fail closed: the neighbour is not blocked, though JoyBack may review its free text first.
    assert set(lint(neighbour, language)) <= {"instructions_review"}


# The label: advice where the law asks only for a clear caption; required where a policy says so.
@pytest.mark.parametrize("language", ["en", "de", "es", "zh-hans"])
def test_a_label_reported_off_is_advice_where_the_caption_discloses(language):
    wording = policies_for_countries(POLICIES, [WHERE[language]])[0].wording(language=language, brand=BRAND)

    result = check(wording, language, label_on=False)

    assert result.verdict == "compliant" and "label_off" in result.advisories
    assert check("Just coffee", language, label_on=False).verdict == "non_compliant"


def test_a_policy_that_requires_the_label_fails_without_it_and_says_why():
    data = {**policies_from_source()[0], "label_required": True, "label_why": "Our brand's own rule."}
    strict = compiled(code="us-ftc-label", version=1, data=data)

    result = caption_check(
        "Ad · Paid partnership with Alpaca Coffee", policies=[strict], brand=BRAND, label_on=False
    )

    assert (result.verdict, result.reasons) == ("non_compliant", ("label_off",))
    assert result.policies_for("label_off") == ["us-ftc-label@1"]
    assert label_advice(policies=[strict], language="en") == ["us-ftc-label: Our brand's own rule."]


def test_every_shipped_policy_says_why_the_label_is_not_required():
    assert all(not p.label_required and p.label_why for p in POLICIES)


# Reasons a creator understands, in their language, with the policy.
FAILING_CAPTIONS = [
    ("Sponsored by Nescafé", "other_sponsor"),
    ("#adfree coffee", "inside_word"),
    ("Just coffee", "missing"),
    ("Coffee #sp", "ambiguous_only"),
    ("Not an ad, I just love it", "denied"),
]
EXPECTED = {
    "de": (
        "Deine Kennzeichnung nennt „Nescafé“ als Sponsor",
        "Werbung · Bezahlte Partnerschaft mit Alpaca Coffee",
    ),
    "es": (
        "Tu aviso nombra a «Nescafé» como patrocinador",
        "Publicidad · Colaboración pagada con Alpaca Coffee",
    ),
    "zh-hans": ("您的广告标识写的赞助方是“Nescafé”", "广告 · 与Alpaca Coffee的付费合作"),
    "en": ("Your disclosure names “Nescafé” as the sponsor", "Ad · Paid partnership with Alpaca Coffee"),
}


@pytest.mark.parametrize("language", ["en", "de", "es", "zh-hans"])
def test_each_failing_reason_says_what_is_wrong_what_to_write_and_the_policy_in_the_creators_language(
    language,
):
    policies = policies_for_countries(POLICIES, ["US"])
    said, wording = EXPECTED[language]
    for caption, code in FAILING_CAPTIONS:
        verdict = caption_check(caption, policies=policies, brand=BRAND)
        assert verdict.reasons == (code,), caption

        (reason,) = caption_reasons(
            verdict, wording=wording, brand=BRAND, language=language, policies=policies
        )

        assert reason.code == code and reason.what and wording in reason.instead
        assert reason.policies and "FTC" in reason.policies[0]
        if code == "other_sponsor":
            assert reason.what.startswith(said)
        if language != "en":
            english = caption_reasons(verdict, wording=wording, brand=BRAND, language="en", policies=policies)
            assert reason.what != english[0].what  # translated, not English


def test_every_failing_code_has_words_for_what_is_wrong_and_what_to_write():
    from compliance.checker import FAILING

    assert set(FAILING) <= set(WHAT) and set(FAILING) <= set(INSTEAD)


def test_stored_codes_name_every_policy_in_force():
    policies = policies_for_countries(POLICIES, ["US", "DE"])

    reasons = caption_reasons(["missing"], wording="Ad", brand=BRAND, language="en", policies=policies)

    assert len(reasons[0].policies) == 2


# A property: a disclosure term joined by a hyphen to any word never discloses.
@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["ad", "werbung", "publicidad", "sponsored"]),
    st.from_regex(r"[a-z]{2,8}", fullmatch=True),
)
def test_a_term_hyphenated_to_another_word_never_passes(term, word):
    for language in ("en", "de", "es"):
        assert not check(f"{term}-{word} coffee time", language).passed
        assert not check(f"{word}-{term} coffee time", language).passed


@pytest.mark.django_db
def test_a_brands_configured_handle_is_used_by_the_claim_flow(make_live_campaign):
    from compliance.selectors import caption_verdict

    campaign = make_live_campaign(slug="handles")
    caption = "Werbung · Bezahlte Partnerschaft mit @drinkalpaca"
    assert caption_verdict(campaign=campaign, caption=caption).reasons == ("other_sponsor",)

    campaign.brand.disclosure_names = ["@drinkalpaca"]
    campaign.brand.save(update_fields=["disclosure_names"])
    campaign.refresh_from_db()

    assert caption_verdict(campaign=campaign, caption=caption).passed


@pytest.mark.django_db
def test_the_policy_migration_makes_a_new_version_and_keeps_the_old_for_the_record():
    import importlib

    from django.apps import apps

    from compliance.models import Policy

    revise = importlib.import_module("compliance.migrations.0004_policies_language_matching").revise
    current = Policy.objects.get(code="us-ftc", is_current=True)
    Policy.objects.filter(pk=current.pk).update(data={**current.data, "label_required": True})

    revise(apps, None)

    versions = list(
        Policy.objects.filter(code="us-ftc").order_by("version").values_list("version", "is_current")
    )
    assert versions[-2:] == [(current.version, False), (current.version + 1, True)]
    assert Policy.objects.get(code="us-ftc", is_current=True).data["label_required"] is False
