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


def verdict(caption, language, country=None):
    return caption_check(
        caption,
        policies=policies_for_countries(POLICIES, [country or WHERE[language]]),
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


# Chinese openings and phrases: "本期视频为广告", "这条是广告哦", the brand's own name in a bracketed
# label, a full-width bar ending the label's phrase, and everyday words with 不/没 (不错, 没想到, 不管)
# that are no negation of the label.
@pytest.mark.parametrize(
    "caption",
    [
        "本期视频为广告，感谢Bergkaffee的支持",
        "这条是广告哦～Bergkaffee新品冷萃",
        "本视频包含广告：Bergkaffee燕麦拿铁",
        "【Bergkaffee广告】新品冷萃来啦",
        "广告｜这杯冷萃真不错",
        "#广告 Bergkaffee冷萃，没想到这么顺滑",
        "广告｜Bergkaffee冷萃，不管是上班还是周末都合适",
        "广告：上课前来一杯Bergkaffee",
    ],
)
def test_chinese_openings_and_everyday_words_keep_the_label_up_front(caption):
    assert verdict(caption, "zh-hans") == COMPLIANT


# Their look-alikes: the opening denied or asked, another brand's name in the bracket, the label's
# own phrase about advertising studies, a denial after the bar. None is paid without a look.
@pytest.mark.parametrize(
    ("caption", "expected"),
    [
        ("这不是广告哦～Bergkaffee冷萃", "non_compliant"),
        ("这条是广告吗？不是！就是自己喜欢Bergkaffee", "non_compliant"),
        ("本视频不包含广告，Bergkaffee纯分享", "non_compliant"),
        ("【雀巢广告】Bergkaffee冷萃测评", "needs_review"),
        ("【Bergkaffee广告牌】路过拍一下", "non_compliant"),
        ("广告｜没收钱，纯分享Bergkaffee", "non_compliant"),
        ("广告：学广告的第一年，喝Bergkaffee", "non_compliant"),
        ("广告｜不知道算不算广告，反正很好喝", "non_compliant"),
    ],
)
def test_their_look_alikes_are_not_paid(caption, expected):
    assert verdict(caption, "zh-hans") == expected


# A label taken back or the payment denied in other words ("mentira", "lo hemos pagado nosotros", "jk",
# "骗你的", "无偿推广"), and a cooperation naming someone else after its connector: never paid as it stands.
@pytest.mark.parametrize(
    ("language", "caption", "expected"),
    [
        ("es", "Publi · mentira jaja, lo hemos pagado nosotros: el cold brew de Bergkaffee", "non_compliant"),
        ("es", "Publicidad · es mentira, me lo compré yo", "non_compliant"),
        ("en", "#ad jk I bought it myself, Bergkaffee cold brew", "non_compliant"),
        ("de", "Werbung – war gelogen, selbst gekauft: Bergkaffee", "non_compliant"),
        ("zh-hans", "广告｜骗你的，Bergkaffee是我自己买的", "non_compliant"),
        ("zh-hans", "#广告 无偿推广Bergkaffee", "non_compliant"),
        # Someone else said to cooperate or pay, and no label names the brand: another's deal.
        (
            "de",
            "Werbung | Zusammenarbeit mit der Tassenmarke Kuppa, dazu Bergkaffee",
            "non_compliant",
        ),
        ("en", "#ad in collaboration with Blendr — Bergkaffee smoothie", "non_compliant"),
        ("es", "Publi · en alianza con Cafeteras Moka, y mi Bergkaffee", "non_compliant"),
        # A label that names the brand beside them: a person looks.
        ("en", "Ad for @bergkaffee, in collaboration with Blendr: smoothie time", "needs_review"),
    ],
)
def test_a_label_taken_back_or_shared_with_someone_else_is_not_paid(language, caption, expected):
    assert verdict(caption, language) == expected


# Their look-alikes: "parece mentira" (unbelievable) is no denial, the brand itself after the connector
# is no one else.
@pytest.mark.parametrize(
    ("language", "caption"),
    [
        ("es", "Publicidad · parece mentira lo rico que está el cold brew de Bergkaffee"),
        ("en", "#ad in partnership with Bergkaffee: cold brew mornings"),
        ("en", "#ad in collaboration with Blendr and Bergkaffee: smoothie time"),
    ],
)
def test_their_look_alikes_stay_compliant(language, caption):
    assert verdict(caption, language) == COMPLIANT


# An arrow emoji ends the label like any emoji, a Chinese "是广告" opens the caption without its subject,
# and a contest says what it is in more words (T&Cs, "sorteamos", 活动规则).
@pytest.mark.parametrize(
    ("language", "caption", "contest"),
    [
        ("de", "Werbung ⬇️ 3 Gründe für Bergkaffee Cold Brew", False),
        ("zh-hans", "是广告，但Bergkaffee是真的好喝", False),
        ("en", "#ad Win a cold brew hamper from Bergkaffee! T&Cs in the link, closes Friday", True),
        ("es", "Publicidad · ¡Sorteamos una cafetera con Bergkaffee!", True),
    ],
)
def test_more_shapes_of_a_label_up_front(language, caption, contest):
    found = caption_check(
        caption,
        policies=policies_for_countries(POLICIES, [WHERE[language]]),
        platform="tiktok",
        languages=[language],
        brand="Bergkaffee",
        brand_names=("@bergkaffee",),
        label_on=None,
        contest=contest,
    )
    assert found.verdict == COMPLIANT


# Their look-alikes: "不是广告" denies it, "AD 2026" is a year, a contest post with only "win" is unclear.
@pytest.mark.parametrize(
    ("language", "caption", "contest", "expected"),
    [
        ("zh-hans", "不是广告，但Bergkaffee是真的好喝", False, "non_compliant"),
        ("en", "AD 2026 and still no flying cars, but Bergkaffee cold brew exists", False, "non_compliant"),
        ("en", "#ad Win a cold brew hamper from Bergkaffee, closes Friday", True, "needs_review"),
    ],
)
def test_their_look_alikes_are_not_paid_either(language, caption, contest, expected):
    found = caption_check(
        caption,
        policies=policies_for_countries(POLICIES, [WHERE[language]]),
        platform="tiktok",
        languages=[language],
        brand="Bergkaffee",
        brand_names=("@bergkaffee",),
        label_on=None,
        contest=contest,
    )
    assert found.verdict == expected


def verdict_in(caption, language, country):
    return caption_check(
        caption,
        policies=policies_for_countries(POLICIES, [country]),
        platform="tiktok",
        languages=[language],
        brand="Bergkaffee",
        brand_names=("@bergkaffee",),
        label_on=None,
    ).verdict


# The label asked and answered yes at once ("is this sponsored? yep"), said with its reason (the
# payment: "Werbung weil bezahlt"), "with" written "w/", and in the US thanks that say the brand
# sponsored the post, first thing (FTC Disclosures 101: plain words are clear).
@pytest.mark.parametrize(
    ("language", "country", "caption"),
    [
        ("en", "US", "is this an ad? yes 🙋 Bergkaffee sent me their whole autumn range"),
        ("en", "US", "Sponsored? Yup. @bergkaffee pays for my caffeine habit now"),
        ("es", "ES", "¿Es publicidad? Sí 😅 el café frío de Bergkaffee me tiene loca"),
        ("zh-hans", "CN", "这是广告吗？是的 Bergkaffee请我喝了一周冷萃"),
        ("de", "DE", "Werbung? Ja. Bergkaffee hat mir den neuen Röstkaffee geschickt"),
        ("de", "AT", "Anzeige weil bezahlt – mein ehrlicher Bergkaffee-Test"),
        ("en", "US", "Ad because they paid me, review is still mine: Bergkaffee oat latte"),
        ("es", "ES", "Publi porque me pagan, opinión mía: Bergkaffee cortado"),
        ("en", "US", "Paid partnership w/ @bergkaffee — week 2 of early shifts"),
        ("en", "US", "Thanks @bergkaffee for sponsoring this video! my honest cold brew ranking"),
        ("en", "US", "thank you so much Bergkaffee for sponsoring today's vid 🙏 latte art fails"),
    ],
)
def test_a_label_answered_explained_or_thanked_for_up_front(language, country, caption):
    assert verdict_in(caption, language, country) == COMPLIANT


# Their look-alikes: answered no, or "yeah right"; the payment denied in the reason; "w/" someone else;
# thanks for sponsoring something else, someone else thanked, thanks not first, and thanks where the
# policy wants "Ad" (UK, Ireland) or "Werbung".
@pytest.mark.parametrize(
    ("language", "country", "caption", "expected"),
    [
        ("en", "US", "is this an ad? nope, Bergkaffee is just my favourite", "non_compliant"),
        ("en", "US", "is this sponsored? yeah right, as if Bergkaffee would call me", "needs_review"),
        ("es", "ES", "¿Es publi? No, Bergkaffee lo compro yo", "non_compliant"),
        ("zh-hans", "CN", "这是广告吗？不是 Bergkaffee自己买的", "non_compliant"),
        ("de", "DE", "Werbung? Nein, Bergkaffee hab ich selbst gekauft", "non_compliant"),
        ("de", "DE", "Werbung weil ich es selbst bezahlt habe: Bergkaffee", "non_compliant"),
        ("en", "US", "Ad because I paid for it myself lol: Bergkaffee", "non_compliant"),
        ("en", "US", "Paid partnership w/ @fitfuel — and my Bergkaffee on the side", "non_compliant"),
        ("en", "US", "Thanks Bergkaffee for sponsoring my kid's football team ⚽", "non_compliant"),
        ("en", "US", "Thanks @fitfuel for sponsoring! Bergkaffee in my bottle as always", "non_compliant"),
        (
            "en",
            "US",
            "my honest cold brew ranking, thanks @bergkaffee for sponsoring this video",
            "needs_review",
        ),
        ("en", "US", "Thanks @bergkaffee for the beans!", "non_compliant"),
        ("en", "GB", "Thanks @bergkaffee for sponsoring this video! my honest ranking", "non_compliant"),
        ("en", "IE", "Thanks @bergkaffee for sponsoring this video! my honest ranking", "non_compliant"),
    ],
)
def test_their_look_alikes_are_never_paid(language, country, caption, expected):
    assert verdict_in(caption, language, country) == expected


# Chinese points elsewhere with a verb or a place word ("见评论区", "在主页", "评论区见"); "评论区抽5位"
# (a draw in the comments) points nowhere. A 不 twenty characters on is about the coffee.
@pytest.mark.parametrize(
    "caption",
    [
        "#广告 评论区抽3位粉丝送Bergkaffee礼盒 活动规则见置顶",
        "广告 打工人续命水☕ Bergkaffee冰美式，苦但是不酸",
    ],
)
def test_chinese_words_that_point_or_deny_nothing_keep_the_label(caption):
    found = caption_check(
        caption,
        policies=policies_for_countries(POLICIES, ["CN"]),
        languages=["zh-hans"],
        brand="Bergkaffee",
        contest="抽" in caption,
    )
    assert found.verdict == COMPLIANT, found.reasons


@pytest.mark.parametrize(
    ("caption", "expected"),
    [
        ("#广告 见评论区 Bergkaffee新品", "non_compliant"),
        ("#广告在主页 Bergkaffee新品", "non_compliant"),
        ("#广告 评论区见 Bergkaffee新品", "non_compliant"),
        ("广告 其实不是啦 Bergkaffee", "needs_review"),
        ("广告（假的）Bergkaffee冷萃", "needs_review"),
    ],
)
def test_chinese_pointers_and_near_negations_still_hold(caption, expected):
    assert verdict(caption, "zh-hans") == expected


# More shapes of a label up front, each from a blind README's convention ("within the first few
# words"; "paid partnership", "patrocinado por" in any word order): the post itself named first
# ("Today's video is sponsored by…", "Vídeo patrocinado por…"), a label hashtag or bracket in the
# first few words, a "collab" said to be paid, and a giveaway named by its verb.
@pytest.mark.parametrize(
    ("language", "country", "caption", "contest"),
    [
        ("en", "US", "Today's video is sponsored by @bergkaffee! ranking their cold brews", False),
        ("es", "ES", "Este vídeo está patrocinado por Bergkaffee ☕ cata a ciegas", False),
        ("es", "ES", "Vídeo patrocinado por @bergkaffee · desayuno rápido", False),
        ("en", "US", "Week 2 of early shifts #ad @bergkaffee keeps me going", False),
        ("es", "ES", "Mi merienda de hoy (publi) con Bergkaffee", False),
        ("zh-hans", "CN", "下午茶 #广告 Bergkaffee新品", False),
        ("en", "US", "In paid partnership with @bergkaffee: my honest oat latte review", False),
        ("en", "US", "Paid collab with @bergkaffee 🤝 three iced drinks, ranked", False),
        ("en", "US", "Ad | I'm giving away two Bergkaffee hampers, comment to enter", True),
        ("de", "DE", "Werbung | Gemeinsam mit Bergkaffee verlose ich zwei Kaffee-Abos", True),
    ],
)
def test_more_openings_and_near_the_start_labels_are_up_front(language, country, caption, contest):
    found = caption_check(
        caption,
        policies=policies_for_countries(POLICIES, [country]),
        platform="tiktok",
        languages=[language],
        brand="Bergkaffee",
        brand_names=("@bergkaffee",),
        label_on=None,
        contest=contest,
    )
    assert found.verdict == COMPLIANT, found.reasons


# Their look-alikes: another post's sponsor, the label too far in, a tag after an article (the
# sentence's noun), a "collab" paid by someone else or unpaid, "colab pagada" in Spain (not the
# annex's wording: a person looks), the UK's "Ad" wanted, a giveaway with no label at all.
@pytest.mark.parametrize(
    ("language", "country", "caption", "contest", "expected"),
    [
        ("es", "ES", "Vídeo patrocinado por el ayuntamiento, y mi Bergkaffee", False, "needs_review"),
        (
            "es",
            "ES",
            "Hoy os enseño algo nuevo para merendar en casa, vídeo patrocinado por Bergkaffee",
            False,
            "needs_review",
        ),
        ("en", "US", "the #ad I made for my marketing class, with Bergkaffee", False, "non_compliant"),
        ("es", "ES", "mi #publi favorita de la tele, con Bergkaffee", False, "non_compliant"),
        ("en", "US", "Paid collab with @fitfuel 🤝 and my Bergkaffee on the side", False, "non_compliant"),
        ("en", "US", "unpaid collab with @bergkaffee", False, "non_compliant"),
        ("es", "ES", "Colab pagada con Bergkaffee ☕ tres recetas", False, "needs_review"),
        ("en", "GB", "Paid collab with @bergkaffee 🤝 three iced drinks, ranked", False, "needs_review"),
        ("de", "DE", "Verlose zwei Kaffee-Abos von Bergkaffee, kommentiert!", True, "non_compliant"),
    ],
)
def test_their_look_alikes_wait_or_fail(language, country, caption, contest, expected):
    found = caption_check(
        caption,
        policies=policies_for_countries(POLICIES, [country]),
        platform="tiktok",
        languages=[language],
        brand="Bergkaffee",
        brand_names=("@bergkaffee",),
        label_on=None,
        contest=contest,
    )
    assert found.verdict == expected, found.reasons


# A Chinese draw said in its own words ("抽3位", "抽一个宝子") names the contest; a bare "送" leaves it
# unclear. A pointer with 放/👉/👇 points elsewhere; a shopping link to click points nowhere.
@pytest.mark.parametrize(
    ("caption", "contest", "expected"),
    [
        ("广告 评论区抽3位粉丝送Bergkaffee月卡", True, "compliant"),
        ("广告 抽一个宝子送Bergkaffee礼盒", True, "compliant"),
        ("广告 送Bergkaffee礼盒", True, "needs_review"),
        ("抽3位粉丝送Bergkaffee月卡", True, "non_compliant"),
        ("#广告 放评论区了 Bergkaffee新品", False, "non_compliant"),
        ("#广告 👉主页 Bergkaffee新品", False, "non_compliant"),
        ("#广告 评论区👇 Bergkaffee新品", False, "non_compliant"),
        ("广告 点链接就能买到Bergkaffee", False, "compliant"),
    ],
)
def test_chinese_draws_and_pointers(caption, contest, expected):
    found = caption_check(
        caption,
        policies=policies_for_countries(POLICIES, ["CN"]),
        languages=["zh-hans"],
        brand="Bergkaffee",
        contest=contest,
    )
    assert found.verdict == expected, found.reasons


def verdict_with(caption, language, country, *, contest=False):
    return caption_check(
        caption,
        policies=policies_for_countries(POLICIES, [country]),
        platform="tiktok",
        languages=[language],
        brand="Bergkaffee",
        brand_names=("@bergkaffee",),
        label_on=None,
        contest=contest,
    )


# A notice preface before the label ("Kurz vorab:", "Heads up:", "Antes de nada,", "先说明一下") keeps
# it within the first few words, where even the German and UK policies want it, as does the market's
# own word opening a sentence of its own within the first three words; the bar 丨 Chinese
# titles use sets a label off as the full-width bar does; a label naming the post a giveaway says what it is;
# "Anuncio pagado por" is the plain word with its payer; a negation in the post's own sentence, after
# a break that ends the label's phrase, is about the post, not the label.
@pytest.mark.parametrize(
    ("language", "country", "caption", "contest"),
    [
        ("de", "DE", "Kurz vorab: Werbung! Ich zeig euch meinen Bergkaffee mit Orangenschale", False),
        ("de", "AT", "Hinweis: Anzeige · mein Bergkaffee am Morgen", False),
        ("en", "GB", "Heads up: ad · my Bergkaffee morning routine", False),
        ("en", "US", "quick heads up, this is an ad! Bergkaffee cold brew ranked", False),
        ("es", "ES", "Antes de nada, publicidad de Bergkaffee: mi café de hoy", False),
        ("zh-hans", "CN", "先说明一下：本条是广告🦙 今天测Bergkaffee三款冷萃", False),
        ("zh-hans", "CN", "广告丨考研人的深夜搭子，Bergkaffee冷萃陪我刷题", False),
        ("de", "DE", "Montagmorgen ☕ Werbung | mein Bergkaffee Cold Brew", False),
        ("de", "AT", "Servus Leitln! Werbung: des is jo koid, Bergkaffee", False),
        ("en", "GB", "Monday mood ☕ Ad | Bergkaffee cold brew", False),
        ("en", "GB", "Monday mood ☕ #ad Bergkaffee cold brew", False),
        ("en", "US", "Sponsored giveaway 🎁 me x @bergkaffee: 5 winners, comment to enter", True),
        ("es", "ES", "Anuncio pagado por Bergkaffee 📢 mi abuela probando el cold brew", False),
        ("de", "DE", "Werbung | Mein Morgen ohne Bergkaffee? Undenkbar ☕", False),
        ("es", "ES", "#Publicidad 👉 truco para que el café helado no se agüe, con Bergkaffee", False),
        ("en", "US", "#ad · this isn't even my usual order, Bergkaffee surprised me", False),
        ("zh-hans", "CN", "广告｜Bergkaffee冷萃，喝完不想睡", False),
        (
            "en",
            "US",
            "Advertisement: me pretending I don't need three shots to function 😭 @bergkaffee",
            False,
        ),
        ("es", "ES", "Publicidad: mi abuela, que nunca toma café frío, prueba Bergkaffee", False),
    ],
)
def test_a_preface_a_bar_and_the_posts_own_negation_keep_the_label_up_front(
    language, country, caption, contest
):
    found = verdict_with(caption, language, country, contest=contest)
    assert found.verdict == COMPLIANT, found.reasons


# Their look-alikes: a preface followed by other words, by a denial or by the word in another sense;
# the label anywhere but after the preface; the advertising profession; "Anuncio pagado por" someone
# else or seen on the metro; a negation after the break that speaks of the payment, a gift or a joke.
@pytest.mark.parametrize(
    ("language", "country", "caption", "expected"),
    [
        ("de", "DE", "Kurz vorab: ich liebe Werbung! Bergkaffee", "non_compliant"),
        ("de", "DE", "Kurz vorab: keine Werbung! Bergkaffee schmeckt einfach", "non_compliant"),
        ("de", "DE", "Mein Tipp ist Werbung! Bergkaffee am Morgen", "non_compliant"),
        ("de", "DE", "Ist das Werbung? Nö. Bergkaffee ist einfach gut", "non_compliant"),
        ("de", "DE", "Ich liebe Kaffee. Werbung ist doof, Bergkaffee", "needs_review"),
        ("de", "DE", "Mein Kaffee am frühen Montagmorgen ☕ Werbung | Bergkaffee", "non_compliant"),
        ("de", "DE", "Kaffee am Morgen ☕ Anzeige erstattet gegen den Nachbarn, Bergkaffee", "non_compliant"),
        ("en", "GB", "Monday mood ☕ Sponsored | Bergkaffee cold brew", "needs_review"),
        ("en", "GB", "Monday mood and the long week ahead ☕ #ad Bergkaffee", "non_compliant"),
        ("en", "GB", "Heads up: ad for my band's gig tonight, Bergkaffee on the bar", "non_compliant"),
        ("en", "US", "Heads up: I saw an ad for Bergkaffee on the subway", "non_compliant"),
        ("es", "ES", "Antes de nada, no es publicidad: Bergkaffee me encanta", "non_compliant"),
        ("zh-hans", "CN", "先说明一下：这不是广告，Bergkaffee真好喝", "non_compliant"),
        (
            "en",
            "US",
            "as someone who works in advertising I can confirm this Bergkaffee can is elite",
            "non_compliant",
        ),
        ("de", "DE", "Sie arbeitet in der Werbung und liebt Bergkaffee", "non_compliant"),
        ("es", "ES", "Anuncio pagado por Nescafé 📢 y mi Bergkaffee al lado", "non_compliant"),
        ("es", "ES", "Vi un anuncio pagado por Bergkaffee en el metro", "non_compliant"),
        ("de", "DE", "Werbung | nicht von Bergkaffee bezahlt, mein Morgen", "needs_review"),
        ("en", "US", "#ad 🙃 not that they paid me, I just love Bergkaffee", "needs_review"),
        ("en", "US", "Ad | honestly nobody asked me, Bergkaffee rocks", "needs_review"),
        ("es", "ES", "Publicidad · no es que me paguen, me encanta Bergkaffee", "needs_review"),
        ("zh-hans", "CN", "广告｜不是他们给钱，Bergkaffee真好喝", "needs_review"),
        ("de", "DE", "Werbung ohne Bezahlung: Bergkaffee am Morgen", "needs_review"),
        ("en", "US", "Ad: not really lol, Bergkaffee", "needs_review"),
        ("en", "US", "#ad 🙃 no, I just love this coffee anyway, Bergkaffee", "needs_review"),
        ("de", "DE", "Werbung: nö, Bergkaffee trink ich einfach so", "needs_review"),
        ("es", "ES", "Publicidad: sin cobrar nada, Bergkaffee me encanta", "needs_review"),
        ("en", "US", "Advertisement: I didn't get paid for this, Bergkaffee", "needs_review"),
        ("zh-hans", "CN", "广告：不是真的，Bergkaffee", "needs_review"),
    ],
)
def test_their_look_alikes_fail_or_wait(language, country, caption, expected):
    found = verdict_with(caption, language, country)
    assert found.verdict == expected, found.reasons
