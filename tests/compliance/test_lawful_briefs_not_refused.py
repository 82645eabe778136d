# ruff: noqa: RUF001 - Chinese punctuation is part of the briefs
"""A lawful brief is not refused outright for the words it shares with a blocked kind: removing spam
is moderation, not spamming; "you don't need to give us a ten or five stars" forbids a rating
condition over a list; "don't describe it as healthy, detoxing or slimming" forbids every claim of
its list; "keep the negative comments, don't delete them" keeps them; a quoted line that only says
the video is the brand's ad is the label. Each still goes to a person where it is not understood
(fail closed), and the same words asking for what is blocked are still refused."""

import pytest

from tests.compliance.briefs import brief_findings
from tests.compliance.briefs import brief_outcome as outcome


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "Only delete spam or abusive comments."),
        ("de", "Spam und Beleidigungen darfst du löschen, alles andere bleibt stehen."),
        ("es", "Borrad solo el spam."),
        ("en", "Keep your replies friendly and don't get into arguments with anyone."),
        ("zh-hans", "负面评论请保留，不要删。"),
        ("de", "Sagt bitte nicht, dass der Kaffee gesund ist, entgiftet oder beim Abnehmen hilft."),
    ],
)
def test_lawful_moderation_and_prohibitions_are_not_refused(language, text):
    assert outcome(text, language) != "block"


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "You don't need to give us a ten or five stars."),
        ("de", "Ihr müsst uns weder zehn Punkte noch fünf Sterne geben."),
        ("zh-hans", "不需要给我们满分或者五星。"),
        ("en", "We can't make any health promises."),
        ("en", "Please don't describe it as healthy, detoxing, slimming or good for your gut."),
        ("en", 'Say "This video is an ad for Bergkaffee" first.'),
    ],
)
def test_prohibitions_over_a_list_and_the_label_said_as_a_line_go_live(language, text):
    assert outcome(text, language) == "allow"


def test_the_brands_other_names_count_as_the_brand_in_a_quoted_label():
    text = "口播开头说一句“本视频是山顶咖啡的广告”。"
    assert outcome(text, "zh-hans") == "block"  # "山顶咖啡" unknown: a scripted line in quotes
    assert outcome(text, "zh-hans", other_names=("山顶咖啡",)) != "block"


def test_an_other_name_that_says_a_blocked_kind_is_not_taken_for_the_brand():
    text = 'Say "This video is an ad for the best coffee in the world" first.'
    assert outcome(text, "en", other_names=("the best coffee in the world",)) == "block"


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "Spam the comments with your friends' accounts."),
        ("en", "Spamming our hashtag is welcome."),
        ("de", "Spammt die Kommentare mit euren Zweitaccounts."),
        ("es", "Spamead los comentarios."),
        ("en", "Don't get into the downsides."),
        ("en", "You need to give us a ten or five stars."),
        ("zh-hans", "需要给我们满分或者五星。"),
        ("zh-hans", "负面评论删掉。"),
        ("zh-hans", "差评都隐藏。"),
        ("en", 'Say "Not an ad" at the start.'),
        ("en", 'Say "This is the best ad for Bergkaffee" at the start.'),
        ("zh-hans", "结尾说一句“这是最好的咖啡，广告”。"),
        ("en", "Don't describe it as cheap, call it the best."),
        ("de", "Sagt nicht, dass er billig ist, sagt, dass er beim Abnehmen hilft."),
        ("de", "Sagt nicht, dass ihr bezahlt werdet."),
        ("es", "- Luz de día - sin «Publicidad» en el texto"),
        ("zh-hans", "互赞群要搞起来。"),
        ("zh-hans", "不搞互赞群的不结算。"),
        ("de", "Zweitaccounts brauchen wir, bitte nutzt sie."),
    ],
)
def test_the_same_words_asking_for_what_is_blocked_are_refused(language, text):
    assert outcome(text, language) == "block"


@pytest.mark.parametrize(
    "text",
    [
        "Ideally viewers can't tell it's a paid post.",
        "Viewers should not be able to tell it's a paid post.",
        "We can't make it obvious that you're paid.",
    ],
)
def test_a_negation_that_hides_the_payment_never_goes_live(text):
    assert outcome(text, "en") != "allow"


def test_what_a_brand_says_it_does_not_need_is_no_longer_refused_for_sure():
    """Said after the thing ("Zweitaccounts brauchen wir nicht"), it is no order to use them: the
    patterns no longer refuse it for sure; the reading, not sure, still sends it to JoyBack's team."""
    said = "Poste nur von deinem Hauptaccount, Zweitaccounts brauchen wir nicht."
    refusals = [finding for finding in brief_findings(said, "de") if finding.blocking]

    assert refusals and all(finding.reviewable and not finding.appealable for finding in refusals)


# An outside attack on this change, as a dishonest brand would write: a demand after a forbidden
# list, after "weder … noch" or "we can't make … claims", a rating floor after a list that was "not
# needed", an enumeration comma between the negation and the demand, a disclosure's place in the next
# bullet. Each came out allowed in a first version of the change, or before it.
SMUGGLED = [
    ("en", "Don't describe it as healthy, detoxing or slimming and tell viewers a friend gave it to you."),
    (
        "en",
        "Please don't describe it as healthy, detoxing, slimming or good for your gut and rate it perfect.",
    ),
    ("en", "Don't describe it as healthy, detoxing or slimming but simply call it a game changer."),
    ("de", "Sag nicht, dass der Kaffee gesund ist, entgiftet oder schlank macht und gib ihm die Höchstnote."),
    ("de", "Ihr müsst uns weder zehn Punkte noch fünf Sterne geben und nennt ihn einen Gamechanger."),
    ("es", "No digas que es sano, detox o adelgazante y dale la nota máxima."),
    ("en", "We can't make any health claims and keep the disclosure out of the caption."),
    ("en", "We can't promise health benefits so just say it beats Starbucks."),
    ("en", "You don't need to give us a ten or five stars is the minimum."),
    ("es", "No hace falta que nos des un diez o cinco estrellas es lo mínimo."),
    ("de", "Du musst uns keine zehn Punkte oder fünf Sterne sind Pflicht."),
    ("zh-hans", "不用写评语、必须五星"),
    ("zh-hans", "不用露脸、五星是硬性要求"),
    ("zh-hans", "不需要给我们满分或者五星和有人问再说是广告"),
    ("zh-hans", "不搞虚的直接刷赞"),
    ("zh-hans", "不玩虚的用小号点赞"),
    ("en", "Don't give it five stars and only mention the partnership if someone asks."),
    ("en", "- Film in daylight - add #ad - after all your hashtags"),
    ("zh-hans", "- 自然光 - #广告 - 放在所有话题标签后面"),
    ("de", "- Tageslicht - Werbung - erst nach allen Hashtags"),
    ("en", "Keep the disclosure out of the caption."),
    ("en", "Say ad at the end."),
    ("en", "Post one video with #ad at the start. Keep the mug out and keep the aftertaste out."),
    ("en", "Leave the aftertaste out."),
]


@pytest.mark.parametrize(("language", "text"), SMUGGLED)
def test_a_demand_smuggled_past_a_lawful_prohibition_never_goes_live(language, text):
    assert outcome(text, language) != "allow"


@pytest.mark.parametrize(
    ("language", "text"),
    [
        # A time of day is no colon opening a scripted line.
        ("es", "Las bases y la fecha de cierre (domingo a las 20:00) van en el texto."),
        # Something that is fine is no problem kept out.
        ("en", "A bit of camera shake is no problem."),
        ("de", "Ein bisserl Wackeln aus der Hand ist kein Problem."),
        ("es", "Que tiemble un poco la cámara no es problema."),
        # Pointing those who ask where to buy to the shop answers them; it asks for no sales.
        ("en", "When real people ask where to buy, point them to the link on our profile."),
        # The fee the same whatever the score is the opposite of a rating condition.
        ("en", "You get paid either way, whatever score you end up giving it."),
        # The creator's own rating series, the score theirs.
        ("zh-hans", "如果你做的是“咖啡打分”系列，分数完全由你决定。打分的时候把杯子拿稳、正对镜头就行。"),
    ],
)
def test_lawful_look_alikes_of_a_blocked_kind_are_not_refused(language, text):
    assert outcome(text, language) != "block"


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "When people ask where to buy, tell them it's the best coffee ever."),
        ("en", "You get paid either way, whatever score you give, as long as it's five stars."),
        ("de", "Kritik ist kein Problem, solange sie nicht im Video vorkommt."),
        ("en", "Negative comments are no problem, just hide them."),
        ("zh-hans", "分数由你决定，但低于五星不结款。"),
        ("zh-hans", "打分的时候必须打满分。"),
    ],
)
def test_the_look_alikes_asking_for_a_blocked_kind_are_still_refused(language, text):
    assert outcome(text, language) == "block"
