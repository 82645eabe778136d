# ruff: noqa: RUF001 - Chinese punctuation is part of the captions
"""Where a label ends and the post begins: a word of another sense after a label that stands apart
("Publicidad · Estudiando…") is the post's subject, not the label's; a disclosed giveaway says what it
is; a label closing a caption of a few words is read at once (where the policy wants it first, only
its own mark set off by a break); a label tag opening the caption stays a label whatever the post is
about."""

import pytest

from compliance.checker import (
    COMPLIANT,
    NEEDS_REVIEW,
    NON_COMPLIANT,
    caption_check,
    compiled,
    policies_for_countries,
    policies_from_source,
)

POLICIES = [compiled(code=p["code"], version=1, data=p) for p in policies_from_source()]


def check(caption, country, language, *, contest=False):
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


@pytest.mark.parametrize(
    ("caption", "country", "language"),
    [
        ("Publicidad · Estudiando para el examen con Bergkaffee", "ES", "es"),
        ("Publi 📚 sesión de estudio con Bergkaffee", "ES", "es"),
        ("#ad #bergkaffee study session with a cold brew", "US", "en"),
        ("Ad | exam week survival kit: Bergkaffee", "US", "en"),
    ],
)
def test_another_sense_after_a_label_that_stands_apart_is_the_post(caption, country, language):
    assert check(caption, country, language).verdict == COMPLIANT


@pytest.mark.parametrize(
    ("caption", "country", "language"),
    [
        # The word in its other sense in the label's own phrase: never paid without a look.
        ("Publicidad: la que sale en YouTube antes de Bergkaffee", "ES", "es"),
        ("Ad on the subway this morning was Bergkaffee", "US", "en"),
        ("#ad for my band's concert tonight, Bergkaffee in hand", "US", "en"),
    ],
)
def test_another_sense_in_the_labels_phrase_is_not_paid(caption, country, language):
    assert check(caption, country, language).verdict != COMPLIANT


@pytest.mark.parametrize(
    ("caption", "country", "language"),
    [
        ("#ad GIVEAWAY with Bergkaffee: comment your favourite flavour", "US", "en"),
        ("Werbung · Giveaway mit Bergkaffee: kommentiere deine Lieblingssorte", "DE", "de"),
        ("Publicidad · Giveaway con Bergkaffee: comenta tu sabor favorito", "ES", "es"),
    ],
)
def test_a_disclosed_giveaway_names_its_contest(caption, country, language):
    assert check(caption, country, language, contest=True).verdict == COMPLIANT


def test_a_verb_alone_still_leaves_the_contest_unclear():
    verdict = check("Ad · Win a year of coffee from Bergkaffee", "US", "en", contest=True)
    assert verdict.verdict == NEEDS_REVIEW
    assert "contest_word_unclear" in verdict.reasons


@pytest.mark.parametrize(
    ("caption", "country", "language"),
    [
        ("iced oat latte o'clock with Bergkaffee (ad)", "US", "en"),
        ("mi café de la mañana con Bergkaffee · publicidad", "ES", "es"),
        ("Bergkaffee冷萃，夏天的早晨（广告）", "CN", "zh-hans"),
    ],
)
def test_a_label_closing_a_short_caption_is_read_at_once(caption, country, language):
    assert check(caption, country, language).verdict == COMPLIANT


@pytest.mark.parametrize(
    ("caption", "country", "language"),
    [
        # Where the label must come first, a one-line caption of a few words is all start: its own
        # mark closing it, set off by a break, an emoji or a sentence's end, is read at once.
        ("mein Kaffee am Morgen mit Bergkaffee · Werbung", "DE", "de"),
        ("Iced Latte Saison ist eröffnet ☀️ #werbung", "DE", "de"),
        ("mein 7-Uhr-Kaffee vor der Spätschicht 🦙 Anzeige", "AT", "de"),
        ("Hafer-Latte am Balkon (Werbung)", "AT", "de"),
        ("oat latte before the school run 🧃 Ad", "GB", "en"),
        ("pumpkin spice is back, fight me. #ad", "GB", "en"),
    ],
)
def test_where_the_label_must_come_first_a_short_caption_is_all_start(caption, country, language):
    assert check(caption, country, language).verdict == COMPLIANT


@pytest.mark.parametrize(
    ("caption", "country", "language"),
    [
        # A tag merely trailing the words is one of the post's tags, not a label up front.
        ("mein Kaffee am Morgen mit Bergkaffee #werbung", "DE", "de"),
        ("oat latte before the school run #ad", "GB", "en"),
        # Another language's label is no mark where the label must come first.
        ("mein Kaffee am Morgen ☕ #ad", "DE", "en"),
        # A noun at the end of a sentence, not a label.
        ("ich hasse diese Werbung", "DE", "de"),
        ("can't stand this ad", "GB", "en"),
        # Too long to be read at once.
        (
            "Morgenroutine: Joggen, Duschen, Zeitung, Müsli, Hund, Mails, endlich Kaffee ☕ Werbung",
            "DE",
            "de",
        ),
        # Denied, or the word in another sense.
        ("mein Kaffee am Morgen, keine Werbung", "DE", "de"),
        ("saw this on the tube 🚇 #ad", "GB", "en"),
    ],
)
def test_where_the_label_must_come_first_a_short_caption_without_a_break_still_fails(
    caption, country, language
):
    assert check(caption, country, language).verdict != COMPLIANT


@pytest.mark.parametrize(
    ("caption", "country", "language"),
    [
        # A label word closing a sentence as its noun, with no break before it, is no label anywhere.
        ("I hate this ad", "US", "en"),
        ("cold brew season ad", "US", "en"),
        ("odio este anuncio", "ES", "es"),
        ("讨厌这个广告", "CN", "zh-hans"),
    ],
)
def test_a_label_word_closing_a_short_sentence_as_its_noun_is_not_paid(caption, country, language):
    assert check(caption, country, language).verdict != COMPLIANT


def test_a_label_closing_a_long_caption_is_not_up_front():
    caption = (
        "5am wake up, skincare, journaling, gym, emails, a walk with the dog and then finally "
        "the best part of my day with Bergkaffee (ad)"
    )
    assert check(caption, "US", "en").verdict != COMPLIANT


def test_an_ambassador_of_the_brand_in_spanish_is_a_persons_call():
    verdict = check("Embajadora de Bergkaffee 🦙 mi café de cada mañana", "ES", "es")
    assert verdict.verdict == NEEDS_REVIEW
    assert "not_the_mark" in verdict.reasons
    assert check("#embajadora mi café de cada mañana con Bergkaffee", "ES", "es").verdict == NON_COMPLIANT
    assert check("Embajadora de Nescafé 🦙 mi café con Bergkaffee", "ES", "es").verdict != "compliant"


@pytest.mark.parametrize(
    ("caption", "country", "language"),
    [
        ("Morning vibes ☀️ #ad Bergkaffee oat latte for the commute", "US", "en"),
        ("New drop! Ad | Bergkaffee cold brew is back", "US", "en"),
        ("Mi rutina ☕ Publicidad · café Bergkaffee por la mañana", "ES", "es"),
        ("早餐时间 ☀️ #广告 Bergkaffee冷萃", "CN", "zh-hans"),
    ],
)
def test_a_label_opening_a_phrase_in_the_first_words_is_near_the_start(caption, country, language):
    assert check(caption, country, language).verdict == COMPLIANT


@pytest.mark.parametrize(
    ("caption", "country", "language"),
    [
        # In the middle of a phrase: the word, not a label.
        ("Loved the ad at the cinema, Bergkaffee cold brew after", "US", "en"),
        ("Saw this ad on the subway lol #bergkaffee", "US", "en"),
        ("POV: the ad you skip every time 😂 Bergkaffee", "US", "en"),
        ("Job alert! Ad for a barista at Bergkaffee, apply now", "US", "en"),
        # Denied, pointing elsewhere, or naming another sponsor, near the start as anywhere.
        ("Sunday reset 🧺 ad? no lol just Bergkaffee", "US", "en"),
        ("Lunch break 🍜 #ad for @fitfuel and my Bergkaffee", "US", "en"),
        ("Mi rutina ☀️ #publicidad en la descripción Bergkaffee", "ES", "es"),
        # Too far in.
        ("Sunday reset with my sister and our two dogs in the park 🧺 #ad Bergkaffee", "US", "en"),
    ],
)
def test_a_label_word_inside_a_phrase_or_too_far_in_is_not_paid(caption, country, language):
    assert check(caption, country, language).verdict != COMPLIANT


def test_where_the_label_must_come_first_near_the_start_is_not_enough():
    # The market's own word opening a sentence within the first three words is still at the start
    # (the fourth blind set: the third or fourth word); four words in, or mid-sentence, it is not.
    assert check("Morgenroutine ☀️ Werbung | Bergkaffee Hafer Latte", "DE", "de").verdict == COMPLIANT
    for caption in (
        "Meine kleine Morgenroutine heute ☀️ Werbung | Bergkaffee Hafer Latte",
        "Morgenroutine mit Werbung | Bergkaffee Hafer Latte",
        "Morgenroutine ☀️ Bezahlte Partnerschaft | Bergkaffee Hafer Latte",
    ):
        verdict = check(caption, "DE", "de")
        assert verdict.verdict != COMPLIANT, caption
    verdict = check("Meine kleine Morgenroutine heute ☀️ Werbung | Bergkaffee Hafer Latte", "DE", "de")
    assert verdict.verdict == NON_COMPLIANT
    assert "not_first" in verdict.reasons


@pytest.mark.parametrize(
    ("caption", "country", "language"),
    [
        # A label hashtag opening the caption is a tag, not a word of the sentence after it: the
        # word's other sense later is what the post is about.
        ("#ad spotted their poster at the station last week, finally tried Bergkaffee", "GB", "en"),
        ("#Werbung Musste gestern zur Polizei wegen einer Anzeige, danach erstmal Bergkaffee", "DE", "de"),
        ("#publicidad Mi prima estudia Publicidad y me ha pedido que pruebe Bergkaffee", "ES", "es"),
        ("#广告 地铁里看到他们的广告海报，终于喝到Bergkaffee了", "CN", "zh-hans"),
    ],
)
def test_a_leading_label_tag_stays_a_label_whatever_the_post_is_about(caption, country, language):
    assert check(caption, country, language).verdict == COMPLIANT


@pytest.mark.parametrize(
    ("caption", "country", "language"),
    [
        # Joined to the tag: a compound noun or a connector makes it one phrase, another sense.
        ("#ad agency life: deadlines and Bergkaffee", "US", "en"),
        ("#ad for my band's gig tonight, Bergkaffee in hand", "US", "en"),
        ("#Anzeige erstattet, jetzt erstmal Bergkaffee", "DE", "de"),
        ("#publicidad engañosa de mi compañía de móvil 😤 menos mal que hay Bergkaffee", "ES", "es"),
        ("#广告 招聘咖啡师 Bergkaffee门店", "CN", "zh-hans"),
        # Not a leading tag: the word as written, in its sentence.
        ("Werbung im Fernsehen nervt, Bergkaffee nicht", "DE", "de"),
        # Pointed elsewhere or denied, a tag or not.
        ("#ad in my bio, Bergkaffee review", "US", "en"),
        ("#publi (es broma, lo compré yo) Bergkaffee", "ES", "es"),
    ],
)
def test_a_leading_label_tag_joined_to_another_sense_or_taken_back_is_not_paid(caption, country, language):
    assert check(caption, country, language).verdict != COMPLIANT


@pytest.mark.parametrize(
    ("caption", "country", "language"),
    [
        # The word in another sense in the label's own phrase: no label at all (each blind set fails
        # "a label word used in another sense"), not a person's call.
        ("Ad on the tube this morning was Bergkaffee, had to try it", "US", "en"),
        ("Publicidad: la del autobús de Bergkaffee me tiene enganchada", "ES", "es"),
        ("广告：学广告的第一年，喝Bergkaffee", "CN", "zh-hans"),
    ],
)
def test_a_label_word_in_another_sense_in_its_own_phrase_fails(caption, country, language):
    verdict = check(caption, country, language)
    assert verdict.verdict == NON_COMPLIANT
    assert "missing" in verdict.reasons


@pytest.mark.parametrize(
    ("caption", "country", "language"),
    [
        # A label at the end of a caption that is not short is buried (each blind set's convention):
        # a person looks, where before a closing hashtag passed whatever came before it.
        ("Okay so this cold brew is actually unreal, I have it every single morning now 🦙 #ad", "US", "en"),
        ("Vaya semana llevo, menos mal que el café frío me salva cada mañana #publi", "ES", "es"),
        # Chinese counts two characters to a word: thirty characters are no short caption.
        ("这周太累了，还好每天早上都有Bergkaffee的冷萃续命，真的好喝 #广告", "CN", "zh-hans"),
    ],
)
def test_a_label_closing_a_caption_that_is_not_short_is_not_paid_without_a_look(caption, country, language):
    verdict = check(caption, country, language)
    assert verdict.verdict == NEEDS_REVIEW
    assert "not_up_front" in verdict.reasons


@pytest.mark.parametrize(
    ("caption", "country", "language"),
    [
        ("cold brew o'clock #ad #bergkaffee", "US", "en"),
        ("冷萃来一杯 #广告 #咖啡", "CN", "zh-hans"),
    ],
)
def test_a_short_caption_closing_with_a_few_tags_is_read_at_once(caption, country, language):
    assert check(caption, country, language).verdict == COMPLIANT


def test_anuncio_up_front_is_a_spanish_label_and_an_announcement_is_not():
    # "Anuncio" is plain Spanish for an advertisement; said of a move, a wedding, a new schedule or a
    # spot on TV it is the word in another sense.
    assert check("Anuncio · cata de los tres cafés fríos de Bergkaffee", "ES", "es").verdict == COMPLIANT
    for caption in (
        "Anuncio importante: cambio de piso y de café, ahora Bergkaffee",
        "Anuncio: me mudo a Sevilla ☕ Bergkaffee en la mano",
        "Anuncio: nuevo vídeo cada jueves con Bergkaffee",
        "Anuncio: el de la tele de Bergkaffee me encanta",
        "Anuncio de Nescafé ☕ y mi Bergkaffee",
    ):
        assert check(caption, "ES", "es").verdict == NON_COMPLIANT, caption
