# ruff: noqa: RUF001 - Chinese punctuation is part of the briefs
"""Forbidding what the law forbids is a lawful brief: "don't say it cures headaches", "you don't need
to give us five stars", "never claim it's the best coffee in the world" ask for less promotion. The
same words still block where the negation forbids the truth (the payment, the sugar), sets a floor
("never below five stars"), or asks for more ("don't forget to say…", "don't just say…")."""

from types import SimpleNamespace

import pytest

from compliance.checker import compiled, policies_for_countries, policies_from_source
from compliance.linter import rules_lint

POLICIES = [compiled(code=p["code"], version=1, data=p) for p in policies_from_source()]
WHERE = {"en": "US", "de": "DE", "es": "ES", "zh-hans": "CN"}


def outcome(text, language):
    rule = SimpleNamespace(
        pk=None,
        instructions=text,
        trigger="ugc_share",
        min_likes=0,
        min_comments=0,
        verification_mode="engagement",
        get_trigger_display=lambda: "UGC share",
        campaign=SimpleNamespace(brand=SimpleNamespace(name="Bergkaffee")),
    )
    findings = rules_lint([rule], policies_for_countries(POLICIES, [WHERE[language]]))
    blocking = {finding.code for finding in findings if finding.blocking}
    if blocking - {"instructions_review"}:
        return "block"
    return "review" if blocking else "allow"


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "You don't need to give us 5 stars, rate it however you genuinely feel."),
        (
            "de",
            "Bitte keine Heilversprechen machen, z. B. nicht behaupten, "
            "dass der Kaffee gegen Kopfschmerzen hilft.",
        ),
    ],
)
def test_a_prohibition_of_promotion_goes_live(language, text):
    assert outcome(text, language) == "allow"


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "Don't forget to say it's the best coffee in the world."),
        ("en", "Don't just say it's good, say it's the best coffee ever."),
        ("en", "Never rate it below 5 stars."),
        ("en", "Don't give it less than five stars."),
        ("en", "Don't mention the sugar."),
        ("en", "Don't say that you were paid."),
        ("en", "Don't use bots, but buy views from a service."),
        ("en", "You don't need to disclose, just say you love it."),
        ("de", "Nicht sagen, dass es Werbung ist."),
        ("de", "Vergiss nicht zu sagen, dass es der beste Kaffee der Welt ist."),
        ("de", "Gib nie weniger als 5 Sterne."),
        ("es", "No digas que te pagamos."),
        ("es", "No olvides decir que es el mejor café del mundo."),
        ("zh-hans", "不要提广告，说是自己买的。"),
        ("zh-hans", "不能低于五星。"),
    ],
)
def test_the_same_words_still_block_where_they_ask_for_more(language, text):
    assert outcome(text, language) != "allow"


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "Do not post without saying it's the best coffee in the world."),
        ("en", "Never say anything negative."),
        ("en", "Don't tell anyone you got paid, say you found it yourself."),
        ("en", "Don't post unless you give it 5 stars."),
        ("de", "Poste nicht, ohne zu sagen, dass es der beste Kaffee ist."),
        ("es", "No publiques sin decir que es el mejor café."),
    ],
)
def test_a_second_negation_makes_the_prohibition_a_demand(language, text):
    assert outcome(text, language) != "allow"


# Our own briefs in plain wordings of the allowed kinds, and beside them the same words asking for
# what is blocked.
@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("de", "Schreib gut sichtbar Werbung an den Anfang."),
        ("es", "El vídeo no debe durar más de un minuto."),
        ("es", "Si algo no te gusta, puedes decirlo sin problema."),
        ("es", "Cobras lo mismo digas lo que digas."),
        ("zh-hans", "视频里请展示一下包装。"),
        ("zh-hans", "视频时长不要超过一分钟。"),
        ("zh-hans", "尽量在自然光下拍摄。"),
        ("en", "Mentioning the price is totally okay."),
        ("en", "Keep your #ad visible, don't hide it in the comments."),
        ("en", "Post whenever you like, as long as it's before Friday."),
        ("de", "Poste, wann du willst, aber bis Sonntag."),
        ("en", "Tell us your honest opinion, including the negatives."),
        ("de", "Uns interessiert deine ehrliche Meinung, auch Kritik."),
        ("es", "Queremos tu opinión sincera, también lo negativo."),
    ],
)
def test_plain_wordings_of_allowed_kinds_go_live(language, text):
    assert outcome(text, language) == "allow"


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("de", "Schreib, dass es der beste Kaffee der Welt ist."),
        ("es", "Si algo no te gusta, no lo digas."),
        ("es", "Digas lo que digas, pon cinco estrellas."),
        ("zh-hans", "装作是自己买的。"),
        ("zh-hans", "找人帮忙刷量。"),
        ("zh-hans", "包装要拍好，然后说这是最好喝的咖啡。"),
        ("en", "Move the #ad to the comments."),
        ("en", "Don't put the #ad first, move it to the comments."),
        ("en", "Don't hide the #ad, just put it in the comments."),
        ("en", "Mentioning the price is not okay."),
        ("en", "Post whenever you like, but make sure viewers want to buy it."),
        ("en", "Even the negatives should be left out."),
        ("de", "Deine ehrliche Meinung, aber ohne Kritik."),
        ("es", "Tu opinión sincera, sin lo negativo."),
        ("es", "Cuando quieras, pero di que lo tomas desde hace años."),
    ],
)
def test_the_same_words_asking_for_what_is_blocked_do_not_go_live(language, text):
    assert outcome(text, language) != "allow"
