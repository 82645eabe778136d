# ruff: noqa: RUF001 - Chinese punctuation is part of the briefs
"""A brief's sentence read by its structure (compliance.reading): a task a brand may ask over an open
object goes live without a review in en, de, es and zh-hans; an element of a blocked kind is blocked
as that kind, its lawful look-alikes (a negation, "negatives are fine", "no need for 5 stars",
"don't forget #ad") are not; a sentence neither understood nor of a blocked kind goes to review."""

import pytest

from compliance.checker import policies_from_source
from compliance.reading import ALLOW, BLOCK, UNKNOWN, Grammar
from tests.compliance.briefs import brief_outcome as outcome

# Tasks over objects no list names word by word.
ALLOWED = [
    ("en", "Film the mug on your desk next to a plant."),
    ("en", "Record it in portrait mode on a steady phone."),
    ("en", "Hold the pouch up to the camera while you pour."),
    ("en", "Upload the clip before Friday evening."),
    ("en", "Keep the post up for two weeks."),
    ("en", "Don't forget the #ad at the start."),
    ("en", "Please don't purchase views or followers."),
    ("en", "No swearing and no copyrighted songs."),
    ("de", "Filme die Tasse auf deinem Frühstückstisch."),
    ("de", "Halte die Packung kurz in die Kamera."),
    ("de", "Lade das Video bis Sonntagabend hoch."),
    ("de", "Vergiss die Kennzeichnung als Werbung nicht."),
    ("de", "Bitte keine Follower oder Aufrufe kaufen."),
    ("de", "Das Video sollte im Hochformat gedreht sein."),
    ("es", "Graba la taza encima de la mesa del salón."),
    ("es", "Sube el clip antes del domingo por la noche."),
    ("es", "Sostén el paquete delante de la cámara unos segundos."),
    ("es", "No te olvides de poner #publi al principio."),
    ("es", "Nunca compres seguidores ni visualizaciones."),
    ("zh-hans", "拍一下杯子放在书桌上的画面。"),
    ("zh-hans", "请在周日晚上之前上传视频。"),
    ("zh-hans", "别忘了加#广告。"),
    ("zh-hans", "请不要买粉丝或刷播放。"),
    # Honesty asked for, in wordings of our own.
    ("en", "Give us your real opinion, even a critical one."),
    ("en", "A five-star rating is not required."),
    ("en", "Don't worry, you'll get paid either way."),
    ("de", "Erzähl ehrlich, wie du den Kaffee findest, auch wenn es Kritik gibt."),
    ("de", "Du kannst gern erwähnen, was der Kaffee kostet."),
    ("es", "Te pagamos aunque el café no te convenza."),
    ("es", "No hace falta darle la puntuación máxima."),
    ("zh-hans", "说说你真实的看法，好坏都行。"),
]

# Each blocked kind in each language, in wordings of our own.
BLOCKED = [
    ("en", "false_testimony", "Mention that you have been drinking it since college."),
    ("en", "suppress_negatives", "Keep any complaints about the taste out of the video."),
    ("en", "require_persuasion", "Your followers should feel they need to buy it right away."),
    ("en", "rating_condition", "The fee is only paid for a rating of nine or more."),
    ("en", "scripted_superlative", "Tell everyone it beats every other brew they have tried."),
    ("en", "fake_engagement", "Repost it from your second profile to double the views."),
    ("de", "hide_payment", "Verzichte auf die Kennzeichnung als Werbung."),
    ("de", "false_testimony", "Erzähl, dass du den Kaffee seit Jahren jeden Morgen trinkst."),
    ("de", "suppress_negatives", "Über den Zucker bitte kein Wort."),
    ("de", "require_persuasion", "Am Ende sollen alle Zuschauer bestellen wollen."),
    ("de", "rating_condition", "Bezahlt wird nur bei einer Bewertung von 5 Sternen."),
    ("de", "scripted_superlative", "Sag, dass es der leckerste Kaffee ist, den du je hattest."),
    ("de", "fake_engagement", "Lass deine Freunde das Video von ihren Accounts liken."),
    ("es", "hide_payment", "Mejor no pongas que es publicidad."),
    ("es", "false_testimony", "Comenta que lo tomas desde hace años."),
    ("es", "suppress_negatives", "Nada de críticas sobre el sabor."),
    ("es", "require_persuasion", "Tus seguidores tienen que acabar comprándolo."),
    ("es", "rating_condition", "Solo pagamos si la valoración es de 5 estrellas."),
    ("es", "scripted_superlative", "Di que es el café más rico que has probado."),
    ("es", "fake_engagement", "Pide a tus amigos que le den like desde varias cuentas."),
    ("zh-hans", "hide_payment", "文案里不用写广告两个字。"),
    ("zh-hans", "false_testimony", "说你从大学开始就一直喝这款。"),
    ("zh-hans", "suppress_negatives", "关于甜度的问题别提。"),
    ("zh-hans", "require_persuasion", "要让粉丝看完马上去下单。"),
    ("zh-hans", "rating_condition", "打9分以上才付款。"),
    ("zh-hans", "scripted_superlative", "告诉大家这是你喝过最好的咖啡。"),
    ("zh-hans", "fake_engagement", "用你的小号也发一遍。"),
    ("en", "hide_payment", "Leave the #ad off this time, it looks too salesy."),
    ("en", "hide_payment", "Don't let anyone know we're paying you."),
    ("de", "hide_payment", "Verzichte auf die Kennzeichnung als Werbung."),
    ("en", "rating_condition", "A five-star rating is required."),
]

# Neither understood nor of a blocked kind: JoyBack's review before launch.
REVIEWED = [
    ("en", "Talk about your weekend plans while the kettle boils."),
    ("de", "Sprich über deine Pläne fürs Wochenende."),
    ("es", "Habla de tus planes para el fin de semana."),
]


@pytest.mark.parametrize(("language", "text"), ALLOWED)
def test_a_task_over_an_open_object_goes_live_without_a_review(language, text):
    assert outcome(text, language) == "allow"


@pytest.mark.parametrize(("language", "kind", "text"), BLOCKED)
def test_each_blocked_kind_is_blocked_in_each_language(language, kind, text):
    assert outcome(text, language) == "block"


@pytest.mark.parametrize(("language", "text"), REVIEWED)
def test_a_sentence_neither_understood_nor_blocked_goes_to_review(language, text):
    assert outcome(text, language) == "review"


def test_the_grammar_reads_a_sentence_as_task_kind_or_unknown():
    grammar = Grammar(policies_from_source()[0]["languages"])

    assert grammar.read("film the jar on the windowsill").verdict == ALLOW
    blocked = grammar.read("buy likes from a growth app")
    assert (blocked.verdict, blocked.kind) == (BLOCK, "fake_engagement")
    assert grammar.read("film the jar and say how amazing it is").verdict == BLOCK
    assert grammar.read("talk about the weather").verdict == UNKNOWN


def test_a_praise_word_in_the_object_is_never_read_as_a_task():
    for text in (
        "Film yourself loving the new blend.",
        "Show how delicious the latte is.",
        "Post it from your sister's phone as well.",
        "Keep it natural.",
    ):
        assert outcome(text, "en") != "allow"
