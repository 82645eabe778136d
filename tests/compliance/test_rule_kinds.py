# ruff: noqa: RUF001 - Chinese punctuation is part of the briefs
"""The kinds of brief the rule linter understands as allowed in en, de, es (tú and usted) and
zh-hans: honesty asked for and negatives welcome, paid whatever is said, keeping the video public,
posting within a time, disclosing with the label, filming conditions, the flavour tried, length,
music, language, hashtags and deadlines, bought engagement refused. Beside each, the look-alikes
that must stay blocked: criticism forbidden, a dislike kept quiet, scripted use, a rating or a
positive review as the condition, hidden payment, bought followers, several accounts."""

from types import SimpleNamespace

import pytest

from compliance.checker import compiled, policies_for_countries, policies_from_source
from compliance.linter import rules_lint

POLICIES = [compiled(code=p["code"], version=1, data=p) for p in policies_from_source()]
WHERE = {"en": "US", "de": "DE", "es": "ES", "zh-hans": "CN"}


def blocking(text, language):
    rule = SimpleNamespace(
        pk=None,
        instructions=text,
        trigger="ugc_share",
        min_likes=0,
        min_comments=0,
        verification_mode="engagement",
        get_trigger_display=lambda: "UGC share",
        campaign=SimpleNamespace(brand=SimpleNamespace(name="Alpaca Coffee")),
    )
    findings = rules_lint([rule], policies_for_countries(POLICIES, [WHERE[language]]))
    return {finding.code for finding in findings if finding.blocking}


# Each went to JoyBack's review before (or was blocked as hiding the payment): not understood.
UNDERSTOOD = [
    ("en", "Tell us honestly what you think, good or bad."),
    ("en", "Negative opinions are welcome as long as they are honest."),
    ("en", "If you don't like the coffee, say so; you get paid either way."),
    ("en", "Rate it however you genuinely feel."),
    ("en", "You can mention the price if you want."),
    ("en", "Keep the video public for at least 30 days."),
    ("en", "Post within 48 hours of receiving the coffee."),
    ("en", "Put #ad at the start of the caption and switch on the paid partnership label."),
    ("en", "Film in natural light and keep the product in frame."),
    ("en", "Mention which flavour you tried."),
    ("en", "The video should be 15 to 60 seconds long."),
    ("en", "Use trending music if you like."),
    ("en", "Write the caption in English."),
    ("en", "Add #AlpacaCoffee and tag @drinkalpaca."),
    ("en", "No bought followers or views, we only want real reach."),
    ("en", "Post by Friday 15 March."),
    ("en", "Vertical video, 9:16."),
    ("de", "Sag ehrlich, was du denkst, auch wenn dir etwas nicht schmeckt."),
    ("de", "Kritik ist erlaubt, solange sie ehrlich ist."),
    ("de", "Wenn Ihnen der Kaffee nicht schmeckt, sagen Sie es uns, bezahlt werden Sie trotzdem."),
    ("de", "Halten Sie das Video mindestens 30 Tage öffentlich."),
    ("de", "Poste das Video innerhalb von 48 Stunden nach Erhalt."),
    (
        "de",
        "Kennzeichne das Video am Anfang mit „Werbung“ und aktiviere das Label für bezahlte Partnerschaften.",
    ),
    ("de", "Filme bei Tageslicht und zeig die Verpackung."),
    ("de", "Erwähne, welche Sorte du probiert hast."),
    ("de", "Das Video sollte 15 bis 60 Sekunden lang sein."),
    ("de", "Bitte keine gekauften Follower oder Views, wir wollen nur echte Reichweite."),
    ("de", "Erzähl nur, wie lange du den Kaffee wirklich schon trinkst."),
    ("de", "Du kannst den Preis gern erwähnen."),
    ("de", "Bewerte ihn so, wie du ihn wirklich findest."),
    ("es", "Di sinceramente lo que piensas, sea bueno o malo."),
    ("es", "Las críticas están permitidas si son sinceras."),
    ("es", "Si no te gusta el café, dínoslo; te pagamos igual."),
    ("es", "Mantenga el vídeo público durante al menos 30 días."),
    ("es", "Mantén el vídeo público al menos 30 días."),
    ("es", "Publica el vídeo en las 48 horas siguientes a recibir el café."),
    ("es", "Publique el vídeo en un plazo de 48 horas."),
    ("es", "Indica #publi al principio del texto y activa la etiqueta de colaboración pagada de TikTok."),
    ("es", "Graba con luz natural y enseña el envase."),
    ("es", "Menciona qué sabor probaste."),
    ("es", "El vídeo debe durar entre 15 y 60 segundos."),
    ("es", "No compres seguidores ni visualizaciones, solo queremos alcance real."),
    ("es", "Cuenta solo el tiempo que de verdad llevas tomándolo."),
    ("es", "Puedes mencionar el precio si quieres."),
    ("es", "Valóralo como de verdad te parezca."),
    ("zh-hans", "说出你的真实想法，好坏都可以。"),
    ("zh-hans", "可以说缺点，只要是真实体验就行。"),
    ("zh-hans", "如果不喜欢这款咖啡，直接告诉我们，报酬照付。"),
    ("zh-hans", "视频至少公开保留30天。"),
    ("zh-hans", "收到产品后48小时内发布。"),
    ("zh-hans", "在文案开头标注广告，并打开付费合作标签。"),
    ("zh-hans", "光线要好，尽量用自然光拍。"),
    ("zh-hans", "提一下你喝的是哪个口味。"),
    ("zh-hans", "请不要买粉买量，我们只要真实流量。"),
    ("zh-hans", "想说价格的话可以说。"),
    ("zh-hans", "不用非得打满分，按你的真实感受打分就好。"),
]


@pytest.mark.parametrize(("language", "text"), UNDERSTOOD)
def test_a_brief_of_an_understood_kind_goes_live_without_a_review(language, text):
    assert blocking(text, language) == set()


LOOK_ALIKES = [
    ("en", "Only say positive things about the coffee."),
    ("en", "Negative opinions are not allowed."),
    ("en", "Don't mention that you were paid, just say what you think."),
    ("en", "If you don't like it, don't post; you only get paid for positive videos."),
    ("en", "Rate it 5 stars however you feel."),
    ("en", "Say you have used it for months."),
    ("en", "Post from two accounts if you like."),
    ("en", "Buy followers if you want real reach."),
    ("en", "Tell us honestly what you think and then say it is the best coffee in the world."),
    ("en", "Hide the #ad in the comments if you like."),
    ("en", "Don't mention the price."),
    ("en", "You only get paid if the review is positive."),
    ("de", "Nur positive Meinungen, bitte."),
    ("de", "Kritik ist nicht erlaubt."),
    ("de", "Wenn dir der Kaffee nicht schmeckt, erwähne das bitte nicht."),
    ("de", "Erwähne nicht, dass du bezahlt wirst."),
    ("de", "Sag ehrlich, dass es der beste Kaffee der Welt ist."),
    ("de", "Bezahlt wird nur bei 5 Sternen."),
    ("de", "Kauf dir Follower, wenn du willst."),
    ("de", "Poste das Video von mehreren Accounts."),
    ("de", "Sagen Sie, dass Sie den Kaffee seit Monaten trinken."),
    ("es", "Las críticas no están permitidas."),
    ("es", "Solo comentarios positivos."),
    ("es", "Si no te gusta, no lo digas."),
    ("es", "No digas que es publicidad."),
    ("es", "Di sinceramente que es el mejor café del mundo."),
    ("es", "Solo te pagamos si la valoración es de 5 estrellas."),
    ("es", "Compra seguidores si quieres."),
    ("es", "Publica desde varias cuentas."),
    ("es", "Diga que lleva meses tomándolo."),
    ("zh-hans", "不要说缺点。"),
    ("zh-hans", "只能说好话。"),
    ("zh-hans", "必须打五星好评才付款。"),
    ("zh-hans", "不要标注广告。"),
    ("zh-hans", "可以买粉。"),
    ("zh-hans", "用多个账号发布。"),
    ("zh-hans", "说你喝了三个月。"),
]


@pytest.mark.parametrize(("language", "text"), LOOK_ALIKES)
def test_a_look_alike_of_an_understood_kind_stays_blocked(language, text):
    assert blocking(text, language) - {"instructions_review"}
