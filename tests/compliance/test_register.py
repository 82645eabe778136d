# ruff: noqa: RUF001 - Chinese punctuation is part of the captions and briefs
"""Captions and briefs as people type them: a label set in brackets or before a title, the brand's
partner tag, chat shorthand ("cud u tag us pls"), the things a video is made of, and the disclosure
shrunk to a flash in a corner, which is hiding it in any register."""

import pytest

from compliance.checker import COMPLIANT, NEEDS_REVIEW, NON_COMPLIANT
from compliance.linter import brand_names, shorthand_written_out
from tests.compliance.test_brief_reading import outcome
from tests.compliance.test_caption_openings import verdict


@pytest.mark.parametrize(
    ("language", "caption"),
    [
        ("de", "Anzeige – Mein Montag in Graz: Vorlesung, Seminar und dazwischen @bergkaffee ☕"),
        ("zh-hans", "【广告】研究生的早八：一杯@bergkaffee 冷萃 #大学生"),
        ("zh-hans", "（广告）考研第二百天的早餐，配@bergkaffee"),
        ("es", "#Publi lo que llevo en la mochila de Erasmus, café de @bergkaffee incluido"),
    ],
)
def test_a_label_set_off_by_brackets_or_before_a_title_is_not_read_with_what_follows(language, caption):
    assert verdict(caption, language) == COMPLIANT


@pytest.mark.parametrize(
    ("language", "caption"),
    [
        ("en", "ad exec by day, home barista by night: dialling in @bergkaffee"),
        ("en", "that ad break felt endless so I made a @bergkaffee flat white"),
    ],
)
def test_the_word_joined_to_its_trade_with_no_label_up_front_is_no_label(language, caption):
    assert verdict(caption, language) == NON_COMPLIANT


@pytest.mark.parametrize(
    ("country", "caption"),
    [
        ("US", "#BergkaffeePartner my 6am espresso before the night shift ends"),
        ("US", "#bergkaffee_ambassador cold brew on the porch"),
        ("GB", "#BergkaffeePartner my 6am espresso before the night shift ends"),
    ],
)
def test_the_brands_partner_tag_alone_goes_to_a_person(country, caption):
    assert verdict(caption, "en", country) == NEEDS_REVIEW


def test_another_brands_partner_tag_is_no_disclosure_of_this_one():
    assert verdict("#NespressoPartner my 6am espresso", "en") == NON_COMPLIANT


def test_chat_shorthand_is_written_out_and_words_of_other_languages_are_left_alone():
    assert shorthand_written_out("cud u tag us pls b4 u post") == "could you tag us please before you post"
    assert shorthand_written_out("porfa di q es publi") == "por favor di que es publi"
    assert shorthand_written_out("im eck, w/ the mug") == "im eck, with the mug"


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "pls tag @bergkaffee in ur vid"),
        ("en", "Film it on the balcony at golden hour, steam coming off the mug"),
        ("en", "Put BERG15 in the caption"),
        ("de", "Filme bitte auf dem Balkon im Sonnenaufgang, mit Dampf über der Tasse"),
        ("es", "Graba en la terraza al atardecer, con la taza y el molinillo"),
        ("zh-hans", "在阳台拍，日落的时候，杯子冒热气"),
    ],
)
def test_a_brief_in_chat_shorthand_or_naming_where_and_when_goes_live(language, text):
    assert outcome(text, language) == "allow"


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "put the #ad on screen but make it tiny, same colour as the background"),
        ("en", "the #ad can just flash up for a split second in the corner"),
        ("de", "die Werbung bitte nur ganz kurz einblenden, klein unten im Eck"),
        ("es", "pon la publi chiquitita en una esquina, que casi no se vea"),
        ("zh-hans", "视频里的广告两个字弄小点，放角落闪一下就行"),
    ],
)
def test_a_disclosure_shrunk_to_a_flash_in_a_corner_is_blocked(language, text):
    assert outcome(text, language) == "block"


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "don't make the #ad tiny, put it first"),
        ("de", "Die Werbung bitte nicht klein oder im Eck verstecken"),
    ],
)
def test_forbidding_a_shrunk_disclosure_is_never_allowed_unread(language, text):
    # A prohibition of hiding is lawful, but these readings are not sure of it: never allowed unseen.
    assert outcome(text, language) in ("review", "block")


def test_a_brief_may_name_the_brand_by_its_first_word():
    assert brand_names("Bergkaffee Roasters") == ["Bergkaffee Roasters", "Bergkaffee"]
    assert brand_names("Oat") == ["Oat"]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "If a follower asks whether we paid for this, tell them no, you're just a longtime fan"),
        ("en", "Please swap the #ad for #collab this time"),
        ("en", "Could you caption it as gifted instead"),
        ("en", "Open with how you've drunk it for ages, even if you've never tried it before"),
        ("en", "Mention that it speeds up your metabolism"),
        ("de", "Wenn jemand fragt, ob das Werbung ist, sag einfach nein"),
        ("de", "Die Kennzeichnung könnt ihr euch diesmal sparen"),
        ("de", "Sag, dass es den Stoffwechsel ankurbelt"),
        ("de", "Negative Kommentare bitte sofort löschen"),
        ("es", "Si alguien pregunta si es publi, dile que no"),
        ("es", "Esta vez os podéis ahorrar el #publi"),
        ("es", "Decid que mejora la piel y cuida las articulaciones"),
        ("es", "Borrad los comentarios negativos en cuanto salgan"),
        ("zh-hans", "有人问是不是广告，就说不是"),
        ("zh-hans", "这次广告标识就省了吧"),
        ("zh-hans", "请说它能暖胃、调理气血"),
        ("zh-hans", "就算你是第一次喝，也照这么说"),
    ],
)
def test_each_blocked_kind_in_a_strangers_wording_is_blocked(language, text):
    assert outcome(text, language) == "block"


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "Rate it however you like: the fee is the same whatever score you give"),
        ("de", "Bewertet, wie ihr wollt, die Vergütung bleibt in jedem Fall gleich"),
        ("es", "No hace falta poner cinco estrellas, el pago es el mismo"),
        ("zh-hans", "不用给五星，稿费都一样"),
    ],
)
def test_a_fee_unchanged_by_the_verdict_is_never_refused(language, text):
    assert outcome(text, language) != "block"


def test_a_list_typed_on_one_line_is_read_item_by_item():
    text = "- 20 to 45 seconds - no harsh overhead light - 'Ad' as the very first word of the caption"

    assert outcome(text, "en") != "block"


@pytest.mark.parametrize(
    ("language", "caption"),
    [
        ("en", "ok so ad 🙃 but the oat one from @bergkaffee is my whole personality"),
        ("es", "Sí, es publi 🙈 pero el descafeinado de @bergkaffee me salva las noches"),
    ],
)
def test_a_word_or_two_of_speech_before_the_label_keeps_it_up_front(language, caption):
    assert verdict(caption, language) == COMPLIANT
