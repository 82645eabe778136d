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


# This round's wordings of allowed kinds, written afresh in the blind READMEs' kinds (none taken from
# any evaluation set): reminders, a negation over a list, a claim forbidden without "that", the German
# verb before its negation, a price in brackets, a rating not expected, competitors kept out, tone.
THIS_ROUND = [
    ("de", "Zeig die Dose in den ersten drei Sekunden deutlich in die Kamera."),
    ("de", "Die Packung sollte mindestens einmal gut sichtbar im Bild sein."),
    ("de", "Bitte markiere @drinkalpaca in der Caption."),
    ("de", "Verlinke unseren Account im Video und in der Beschreibung."),
    ("de", "Poste das Video innerhalb von 48 Stunden nach Erhalt."),
    ("de", "Bitte veröffentliche den Beitrag spätestens am 30. Juni."),
    ("de", "Das Video muss mindestens 30 Tage online bleiben."),
    ("de", "Bitte lösch das Video in den ersten drei Monaten nicht."),
    ("de", 'Schreib „Werbung" an den Anfang der Caption.'),
    ("de", "Kennzeichne den Beitrag bitte klar als Werbung."),
    ("de", "Aktiviere vor dem Posten den Schalter für bezahlte Partnerschaften."),
    ("de", "Vergiss die Werbekennzeichnung nicht!"),
    ("de", 'Die Kennzeichnung „Werbung" muss die ganze Zeit drin bleiben.'),
    ("de", "Sag ehrlich, was du denkst."),
    ("de", "Deine ehrliche Meinung ist uns wichtig, auch wenn sie negativ ist."),
    ("de", "Kritik ist völlig okay."),
    ("de", "Wenn dir etwas nicht schmeckt, darfst du das sagen."),
    ("de", "Du bekommst dein Honorar unabhängig davon, wie du den Kaffee findest."),
    ("de", "Die Bezahlung hängt nicht von deiner Meinung ab."),
    ("de", "Du musst uns keine fünf Sterne geben."),
    ("de", "Du musst nicht sagen, dass es der beste Kaffee ist."),
    ("de", "Bitte kauf keine Likes oder Follower."),
    ("de", "Keine gekauften Views, keine Bots."),
    ("de", "Den Preis darfst du gerne nennen."),
    ("de", "Du kannst gern erwähnen, was er kostet."),
    ("de", "Erwähne bitte, welche Sorte du trinkst."),
    ("de", "Bitte keine Gesundheitsversprechen."),
    ("de", "Behaupte nicht, dass der Kaffee beim Abnehmen hilft."),
    ("de", "Sag nur, wie lange du ihn wirklich benutzt hast."),
    ("de", "Hochformat 9:16, 15 bis 60 Sekunden."),
    ("de", "Dreh im Hochformat, maximal eine Minute."),
    ("de", "Bitte bei Tageslicht filmen und die Kamera ruhig halten."),
    ("de", "Guter Ton und gutes Licht, bitte keine Hintergrundgeräusche."),
    ("de", "Bitte familienfreundlich bleiben, keine Schimpfwörter."),
    ("de", "Das Video bitte auf Deutsch."),
    ("de", "Bitte keine Produkte von Mitbewerbern zeigen."),
    ("de", "Füge die Hashtags #alpacacoffee und #coldbrew hinzu."),
    ("de", "Zeig, wie du deinen Kaffee morgens zubereitest."),
    ("en", "Please show the Alpaca Coffee can clearly within the first 3 seconds of the video."),
    ("en", "Make sure the bag is in frame at least once."),
    ("en", "Hold the cup up to the camera so people can see the logo."),
    ("en", "Tag @drinkalpaca in the caption and in the video."),
    ("en", "Remember to tag us! Our handle is @drinkalpaca."),
    ("en", "Tag the brand account so we can reshare your video."),
    ("en", "Post the video within 72 hours of receiving the product."),
    ("en", "Go live with your post between Monday and Friday next week."),
    ("en", "Please publish by 30 June at the latest."),
    ("en", "Keep the video up for at least 30 days."),
    ("en", "The post should stay public for a minimum of 60 days after publishing."),
    ("en", "Please don't archive or delete the video for 3 months."),
    ("en", "Start your caption with #ad so it's clear this is a paid partnership."),
    ("en", "Use the paid partnership label and put #ad at the beginning of the caption."),
    ("en", "Turn on TikTok's branded content toggle before posting."),
    ("en", 'Disclose the partnership clearly, e.g. "Ad" at the start of the caption.'),
    ("en", "Don't forget to add #ad!"),
    ("en", "Keep the #ad in the caption for as long as the video is live."),
    ("en", "Please do not edit out or remove the disclosure later."),
    ("en", "Give us your honest opinion, whatever it is."),
    ("en", "We want your genuine take, good or bad."),
    ("en", "Negative opinions are totally fine."),
    ("en", "If you don't like something about it, feel free to say so."),
    ("en", "Criticism is welcome, we want real feedback."),
    ("en", "You'll get paid no matter what you say about the coffee."),
    ("en", "Payment does not depend on your opinion or on how the video performs."),
    ("en", "You don't need to give us 5 stars."),
    ("en", "There's no need to say it's the best coffee ever."),
    ("en", "No superlatives required, just be yourself."),
    ("en", "Please don't buy views, likes or followers for this video."),
    ("en", "Do not use bots or engagement pods."),
    ("en", "Feel free to mention the price."),
    ("en", "You can say how much it costs if you like."),
    ("en", "Please don't make any health claims about the coffee."),
    ("en", "Don't say the coffee is healthy or helps you lose weight."),
    ("en", "Only talk about how long you have actually used the product."),
    ("en", "Be truthful about how you used it."),
    ("en", "Vertical 9:16, 15 to 60 seconds long."),
    ("en", "Film in portrait mode, max 60 seconds."),
    ("en", "Shoot in natural daylight and keep the camera steady."),
    ("en", "Good lighting and clear audio please, no background noise."),
    ("en", "Keep it family-friendly and avoid swearing."),
    ("en", "Light, fun tone, no profanity please."),
    ("en", "Please speak English in the video."),
    ("en", "The video should be in English, subtitles welcome."),
    ("en", "Please don't show competitor products in the video."),
    ("en", "No other coffee brands should appear in the shot."),
    ("en", "Use a trending sound if you like, but only royalty-free music."),
    ("en", "Add the hashtags #alpacacoffee and #coldbrew."),
    ("en", "Send us the draft for approval before posting."),
    ("en", "We'd love to see how you make your morning brew."),
    ("en", "Show how you prepare it at home."),
    ("es", "Muestra la lata en los primeros 3 segundos del vídeo."),
    ("es", "El paquete tiene que verse bien en algún momento del vídeo."),
    ("es", "Etiqueta a @drinkalpaca en la descripción."),
    ("es", "Menciona nuestra cuenta @drinkalpaca en el texto."),
    ("es", "Publica el vídeo en un plazo de 48 horas."),
    ("es", "Sube el vídeo antes del 30 de junio."),
    ("es", "El vídeo debe seguir publicado al menos 30 días."),
    ("es", "No borres el vídeo durante los próximos tres meses."),
    ("es", 'Pon "Publicidad" al principio del texto.'),
    ("es", "Activa la etiqueta de contenido de marca antes de publicar."),
    ("es", "¡No olvides poner #publi!"),
    ("es", "Deja la indicación de publicidad todo el tiempo."),
    ("es", "Danos tu opinión sincera."),
    ("es", "Queremos tu opinión real, sea buena o mala."),
    ("es", "Las opiniones negativas también valen."),
    ("es", "Si algo no te convence, puedes decirlo."),
    ("es", "Te pagamos igual, digas lo que digas del café."),
    ("es", "El pago no depende de tu opinión."),
    ("es", "No hace falta que nos pongas 5 estrellas."),
    ("es", "No tienes que decir que es el mejor café del mundo."),
    ("es", "Por favor, no compres likes ni seguidores."),
    ("es", "Nada de bots ni visualizaciones compradas."),
    ("es", "Puedes mencionar el precio si quieres."),
    ("es", "No hagas afirmaciones de salud."),
    ("es", "No digas que el café ayuda a adelgazar."),
    ("es", "Di solo el tiempo que realmente lo has usado."),
    ("es", "Formato vertical 9:16, entre 15 y 60 segundos."),
    ("es", "Graba en vertical, máximo un minuto."),
    ("es", "Graba con luz natural y con el móvil estable."),
    ("es", "Buen sonido y buena luz, sin ruido de fondo."),
    ("es", "Mantén un tono familiar, sin palabrotas."),
    ("es", "El vídeo tiene que ser en español."),
    ("es", "No muestres productos de la competencia."),
    ("es", "Añade los hashtags #alpacacoffee y #coldbrew."),
    ("es", "Enséñanos cómo preparas tu café por la mañana."),
    ("zh-hans", "请在视频前3秒清楚展示羊驼咖啡的罐子。"),
    ("zh-hans", "视频中产品包装要清晰可见。"),
    ("zh-hans", "请在文案中艾特@drinkalpaca。"),
    ("zh-hans", "收到产品后48小时内发布视频。"),
    ("zh-hans", "请在6月30日之前发布。"),
    ("zh-hans", "视频发布后至少保留30天。"),
    ("zh-hans", "三个月内请不要删除视频。"),
    ("zh-hans", "文案开头请标注“广告”。"),
    ("zh-hans", "发布前请打开品牌合作标签。"),
    ("zh-hans", "别忘了加#广告！"),
    ("zh-hans", "广告标识要一直保留。"),
    ("zh-hans", "请说出你的真实感受。"),
    ("zh-hans", "好评差评都可以，说真话就行。"),
    ("zh-hans", "负面意见也完全没问题。"),
    ("zh-hans", "不喜欢的地方可以直接说。"),
    ("zh-hans", "无论你怎么评价，报酬都照付。"),
    ("zh-hans", "报酬和你的评价无关。"),
    ("zh-hans", "不用非得打满分。"),
    ("zh-hans", "不需要说它是最好喝的咖啡。"),
    ("zh-hans", "请不要买粉买量。"),
    ("zh-hans", "不要刷赞，不要用机器人。"),
    ("zh-hans", "可以提到价格。"),
    ("zh-hans", "不要宣传任何保健功效。"),
    ("zh-hans", "不要说咖啡能减肥。"),
    ("zh-hans", "竖屏9:16，时长15到60秒。"),
    ("zh-hans", "请竖屏拍摄，最长一分钟。"),
    ("zh-hans", "请在自然光下拍摄，画面保持稳定。"),
    ("zh-hans", "声音清楚，光线充足，不要有背景噪音。"),
    ("zh-hans", "语气轻松，不要说脏话。"),
    ("zh-hans", "视频中不要出现其他品牌的产品。"),
    ("zh-hans", "请加上话题#羊驼咖啡 #冷萃。"),
    ("zh-hans", "拍一下你早上怎么冲咖啡。"),
    ("en", "Please don't feature any competitor coffee brands in the clip."),
    ("en", "Keep other coffee brands out of the shot."),
    ("en", "Speak in English throughout, please."),
    ("en", "Voiceover or on-screen text should be in English."),
    ("en", "Reminder: the #ad has to stay in the caption."),
    ("en", "Please remember to label the post as an ad."),
    ("en", "Never pay for likes or comments on this post."),
    ("en", "You don't have to call it the best coffee you've ever had."),
    ("en", "No need to say it's your favourite — just show how you drink it."),
    ("en", "A 5-star rating isn't required."),
    ("en", "We don't expect a perfect score."),
    ("en", "Let people know which flavour you're drinking."),
    ("en", "Name the flavour on screen or in the caption."),
    ("en", "You're welcome to mention the price ($4.99)."),
    ("en", "It's fine to talk about what it costs."),
    ("en", "Feel free to point out anything you didn't like."),
    ("en", "Mixed reviews are completely OK with us."),
    ("en", "Avoid any health or medical claims."),
    ("en", 'Please steer clear of health claims like "boosts your immune system".'),
    ("en", "Your fee is the same whatever you think of the coffee."),
    ("en", "We pay the agreed fee regardless of what you say."),
    ("en", "Post between 5 and 8 pm on a weekday."),
    ("en", "Upload the video by Friday the 14th."),
    ("en", "Film somewhere bright, avoid shaky footage."),
    ("en", "Make sure the audio is clear and the picture is sharp."),
    ("en", 'Put "Ad" or #ad at the very beginning of your caption.'),
    ("en", "Clearly disclose that this is a paid partnership."),
    ("en", "Make sure the can is visible in the first scene."),
    ("en", "Show yourself opening the bag."),
    ("en", "Tag @drinkalpaca and add #AlpacaCoffee."),
    ("en", "Mention @drinkalpaca in the caption."),
    ("en", "Keep it light-hearted and friendly, no crude jokes."),
    ("en", "Don't overstate how long you've been using it."),
    ("en", "Vertical video, between 20 and 45 seconds."),
    ("en", "Aspect ratio 9:16, no longer than a minute."),
    ("en", "Leave the video up for a minimum of 90 days."),
    ("en", "Please keep the post public and don't archive it for 6 weeks."),
    ("en", "Share your honest first impressions."),
    ("en", "Tell us what you really think, even if it's not positive."),
    ("de", "Bitte keine Produkte anderer Kaffeemarken ins Bild."),
    ("de", "Andere Kaffeemarken sollen nicht im Video auftauchen."),
    ("de", "Bitte sprich im Video Deutsch."),
    ("de", 'Erinnerung: Das „Werbung" muss in der Caption stehen bleiben.'),
    ("de", "Denk daran, den Beitrag als Werbung zu kennzeichnen."),
    ("de", "Kauf bitte keine Aufrufe oder Follower, wir wollen echte Zuschauer."),
    ("de", "Zahl nie für Likes oder Kommentare."),
    ("de", "Du musst ihn nicht als den besten Kaffee bezeichnen."),
    ("de", "Eine 5-Sterne-Bewertung ist nicht nötig."),
    ("de", "Wir erwarten keine Höchstnote."),
    ("de", "Sag, welche Sorte du trinkst."),
    ("de", "Nenn die Geschmacksrichtung im Video oder in der Caption."),
    ("de", "Du darfst den Preis (4,99 €) gerne erwähnen."),
    ("de", "Es ist okay, wenn du sagst, was er kostet."),
    ("de", "Sag ruhig, was dir nicht gefallen hat."),
    ("de", "Gemischte Meinungen sind für uns völlig in Ordnung."),
    ("de", "Bitte keine gesundheitsbezogenen Aussagen."),
    ("de", 'Verzichte auf Gesundheitsversprechen wie „stärkt das Immunsystem".'),
    ("de", "Dein Honorar bleibt gleich, egal was du über den Kaffee sagst."),
    ("de", "Wir zahlen das vereinbarte Honorar unabhängig davon, was du sagst."),
    ("de", "Poste an einem Werktag zwischen 17 und 20 Uhr."),
    ("de", "Lade das Video bis Freitag, den 14., hoch."),
    ("de", "Filme an einem hellen Ort, keine verwackelten Aufnahmen."),
    ("de", "Achte auf klaren Ton und ein scharfes Bild."),
    ("de", 'Setz „Werbung" ganz an den Anfang der Caption.'),
    ("de", "Kennzeichne deutlich, dass es sich um Werbung handelt."),
    ("de", "Die Dose soll in der ersten Szene zu sehen sein."),
    ("de", "Zeig, wie du die Packung öffnest."),
    ("de", "Markiere @drinkalpaca und füge #AlpacaCoffee hinzu."),
    ("de", "Erzähl nur, wie du ihn tatsächlich benutzt hast."),
    ("de", "Hochformat, zwischen 20 und 45 Sekunden."),
    ("de", "Lass das Video mindestens 90 Tage online."),
    ("de", "Teile deinen ehrlichen ersten Eindruck."),
    ("de", "Sag uns, was du wirklich denkst, auch wenn es nicht positiv ist."),
    ("es", "No saques productos de otras marcas de café."),
    ("es", "Que no aparezcan otras marcas de café en el vídeo."),
    ("es", "Habla en español durante todo el vídeo."),
    ("es", "Recuerda: el #publi tiene que quedarse en el texto."),
    ("es", "Acuérdate de marcar la publicación como publicidad."),
    ("es", "No compres visualizaciones ni seguidores, queremos alcance orgánico."),
    ("es", "Nunca pagues por likes o comentarios."),
    ("es", "No hace falta que digas que es el mejor café que has probado."),
    ("es", "No es necesario ponerle 5 estrellas."),
    ("es", "No esperamos una puntuación perfecta."),
    ("es", "Di qué sabor estás tomando."),
    ("es", "Menciona el sabor en pantalla o en el texto."),
    ("es", "Puedes mencionar el precio (4,99 €) sin problema."),
    ("es", "Está bien que digas cuánto cuesta."),
    ("es", "Puedes decir lo que no te gustó."),
    ("es", "Las opiniones mixtas están totalmente bien."),
    ("es", "Evita cualquier afirmación sobre salud."),
    ("es", "No afirmes que refuerza el sistema inmune."),
    ("es", "Te pagamos lo acordado digas lo que digas."),
    ("es", "Publica entre semana entre las 17 y las 20 h."),
    ("es", "Sube el vídeo como muy tarde el viernes 14."),
    ("es", "Graba en un sitio luminoso, sin planos movidos."),
    ("es", "Que el audio se oiga claro y la imagen esté nítida."),
    ("es", 'Pon "Publicidad" justo al principio del texto.'),
    ("es", "Indica claramente que es una colaboración pagada."),
    ("es", "La lata tiene que verse en la primera escena."),
    ("es", "Enseña cómo abres el paquete."),
    ("es", "Etiqueta a @drinkalpaca y añade #AlpacaCoffee."),
    ("es", "Tono desenfadado y cercano, pero sin chistes groseros."),
    ("es", "Cuenta solo cómo lo has usado de verdad."),
    ("es", "Vídeo vertical, entre 20 y 45 segundos."),
    ("es", "Deja el vídeo publicado un mínimo de 90 días."),
    ("es", "Comparte tu primera impresión sincera."),
    ("es", "Dinos lo que piensas de verdad, aunque no sea positivo."),
    ("zh-hans", "视频里不要出现其他咖啡品牌。"),
    ("zh-hans", "请全程用中文讲解。"),
    ("zh-hans", "提醒：文案里的#广告要一直保留。"),
    ("zh-hans", "记得把视频标注为广告。"),
    ("zh-hans", "不要花钱买播放和粉丝，我们要自然流量。"),
    ("zh-hans", "不用说它是你喝过最好喝的咖啡。"),
    ("zh-hans", "不需要给五星好评。"),
    ("zh-hans", "说一下你喝的是什么口味。"),
    ("zh-hans", "在画面或文案里写上口味名称。"),
    ("zh-hans", "可以说价格（29.9元）。"),
    ("zh-hans", "不喜欢的地方可以说出来。"),
    ("zh-hans", "褒贬不一也完全可以。"),
    ("zh-hans", "不要做任何健康方面的宣传。"),
    ("zh-hans", "无论你怎么说，我们都按约定付款。"),
    ("zh-hans", "请在工作日晚上5点到8点之间发布。"),
    ("zh-hans", "最晚14号周五之前上传视频。"),
    ("zh-hans", "在明亮的地方拍，不要晃。"),
    ("zh-hans", "声音要清楚，画面要清晰。"),
    ("zh-hans", "文案最开头写“广告”。"),
    ("zh-hans", "清楚标明这是付费合作。"),
    ("zh-hans", "第一个镜头就要看到罐子。"),
    ("zh-hans", "拍一下你打开包装的过程。"),
    ("zh-hans", "艾特@drinkalpaca，并加上#羊驼咖啡。"),
    ("zh-hans", "语气轻松友好，不要开低俗玩笑。"),
    ("zh-hans", "只讲你实际是怎么用的。"),
    ("zh-hans", "竖屏视频，20到45秒。"),
    ("zh-hans", "视频至少保留90天。"),
    ("zh-hans", "分享你真实的第一印象。"),
    ("zh-hans", "告诉我们你的真实想法，不好也没关系。"),
]


@pytest.mark.parametrize(("language", "text"), THIS_ROUND)
def test_this_rounds_wordings_of_allowed_kinds_go_live(language, text):
    assert outcome(text, language) == "allow"


# Their look-alikes: the same shapes asking for what is blocked (a reminder to remove the #ad, a dislike
# kept to yourself, a rating required, a claim scripted after a forbidden one, bots after "don't worry").
# None goes live; those that name a blocked kind are blocked, the rest wait for review.
THIS_ROUNDS_LOOK_ALIKES = [
    ("en", "Don't forget to remove the #ad after a day.", "block"),
    ("es", "No olvides quitar el #publi después de un día.", "block"),
    ("zh-hans", "别忘了删掉广告标识。", "block"),
    ("de", "Vergiss nicht, die Werbekennzeichnung nach einem Tag zu entfernen.", "block"),
    ("en", "Use bots or engagement pods to boost the numbers.", "block"),
    ("en", "Don't worry, use bots.", "block"),
    ("de", "Keine Sorge, nutze einfach Bots.", "block"),
    ("en", "Don't say it's sponsored, say it helps you lose weight.", "block"),
    ("en", "Say the coffee helps you lose weight.", "block"),
    ("de", "Sag nicht, dass du bezahlt wirst.", "block"),
    ("de", "Behaupte nicht, dass du bezahlt wirst.", "block"),
    ("es", "No digas que te pagamos.", "block"),
    ("es", "No tienes que decir que es publicidad.", "block"),
    ("es", "Di que es el mejor café del mundo.", "block"),
    ("en", "If you didn't like it, keep it to yourself.", "block"),
    ("de", "Wenn er dir nicht schmeckt, behalt das für dich.", "block"),
    ("es", "Si no te gusta, guárdatelo para ti.", "block"),
    ("zh-hans", "不喜欢的话就藏着别说。", "block"),
    ("en", "A 5-star rating is required.", "block"),
    ("de", "Eine 5-Sterne-Bewertung ist Pflicht.", "block"),
    ("en", "We expect a perfect score.", "block"),
    ("es", "Esperamos una puntuación perfecta.", "review"),
    ("en", "Don't mention the price.", "block"),
    ("en", "Say it beats the competitor brands.", "block"),
    ("en", "Make it look organic.", "block"),
    ("es", "Queremos que parezca orgánico, sin #publi.", "block"),
    ("en", "Give it (5) stars.", "review"),
    ("zh-hans", "用两个号发布。", "block"),
    ("zh-hans", "把广告放在文案最后。", "block"),
    ("es", "Valóralo con un 9 de 10 como mínimo.", "block"),
    ("es", "Publica sin #publi.", "block"),
    ("en", "Steer clear of mentioning the sugar.", "review"),
    ("zh-hans", "不要说缺点，说真话就行。", "block"),
    ("zh-hans", "不好的地方也不要说。", "review"),
    ("en", "Feel free to say whatever you like, but leave out the sugar.", "block"),
    ("de", "Gemischte Meinungen sind nicht in Ordnung.", "review"),
    ("es", "Las opiniones mixtas no están bien.", "review"),
    ("zh-hans", "无论你怎么说，都要打五星。", "block"),
    ("de", "Egal was du sagst, am Ende musst du fünf Sterne geben.", "block"),
    ("en", "You're welcome to mention the price, but don't mention the sugar.", "block"),
    ("de", "Du musst ihn als den besten Kaffee bezeichnen.", "block"),
    ("en", "No other coffee is as good as ours, say that.", "review"),
    ("en", "Don't overstate it: just say you've used it for a year.", "block"),
    ("de", "Kauf bitte keine Aufrufe, sondern lass deine Freunde liken.", "block"),
    ("es", "No compres visualizaciones, pide a tus amigos que comenten.", "block"),
    ("zh-hans", "不要花钱买播放，让朋友用小号点赞。", "block"),
    ("en", "Do not use bots, buy real views from our partner instead.", "review"),
    ("de", "Bitte keine gesundheitsbezogenen Aussagen außer dass er beim Abnehmen hilft.", "block"),
    ("zh-hans", "文案最开头写“礼物”，不要写广告。", "block"),
    ("en", "Reminder: remove the #ad after 24 hours.", "block"),
    ("es", "Recuerda: borra el #publi a las 24 horas.", "block"),
    ("zh-hans", "提醒：24小时后删掉广告标识。", "block"),
    ("en", "Don't forget to remove the #ad after a day.", "block"),
    ("en", "Don't forget to delete the disclosure once the video has some views.", "block"),
    ("en", "Don't mention that we paid you.", "block"),
    ("en", "Please don't add #ad, it kills reach.", "block"),
    ("en", "Don't say the coffee is too sweet.", "review"),
    ("en", "Do not mention the sugar content.", "block"),
    ("en", "Say it helps you lose weight.", "block"),
    ("en", "Tell viewers it's the best coffee you've ever had.", "block"),
    ("en", "Say you've been drinking it every morning for a year.", "block"),
    ("en", "Buy some views to get the video going.", "block"),
    ("en", "Use bots or engagement pods to boost the numbers.", "block"),
    ("en", "Post it from your second account too.", "block"),
    ("en", "Don't show anything negative about the coffee.", "block"),
    ("en", "If you didn't like it, keep it to yourself.", "block"),
    ("en", "Criticism is not welcome in this campaign.", "block"),
    ("en", "Negative opinions are not allowed.", "block"),
    ("en", "You only get paid if you give it 5 stars.", "block"),
    ("en", "Mention which flavour is the best on the market.", "block"),
    ("en", "Tell viewers which flavour beats Starbucks.", "block"),
    ("en", "Call it a gift, not an ad.", "block"),
    ("en", "Leave the disclosure out and keep it natural.", "block"),
    ("en", "Please delete the #ad after 24 hours.", "block"),
    ("en", "Don't archive the video, but remove the #ad after a week.", "block"),
    ("en", "Put the #ad at the very end after all the hashtags.", "block"),
    ("en", "Don't say you were paid.", "block"),
    ("en", "No need to mention it's sponsored.", "block"),
    ("en", "We'll only pay if the video reaches 10k views.", "review"),
    ("en", "Make sure every viewer buys a bag.", "block"),
    ("en", "Don't tell anyone this is paid.", "block"),
    ("de", "Vergiss nicht, die Werbekennzeichnung nach einem Tag zu entfernen.", "block"),
    ("de", "Lösch die Werbekennzeichnung nach 24 Stunden.", "block"),
    ("de", "Sag nicht, dass du bezahlt wirst.", "block"),
    ("de", "Erwähne den Zucker nicht.", "block"),
    ("de", "Sag, dass der Kaffee beim Abnehmen hilft.", "block"),
    ("de", "Kauf dir ein paar Views, damit das Video startet.", "block"),
    ("de", "Nutze Bots, um die Zahlen zu pushen.", "block"),
    ("de", "Kritik ist nicht erwünscht.", "block"),
    ("de", "Negatives bitte weglassen.", "block"),
    ("de", "Nur bei fünf Sternen zahlen wir.", "block"),
    ("de", "Nenn die Sorte, die besser als Starbucks ist.", "block"),
    ("de", "Schreib einfach Kooperation statt Werbung.", "block"),
    ("de", "Keine Werbekennzeichnung, das wirkt natürlicher.", "block"),
    ("de", "Sag, dass du ihn seit Jahren jeden Morgen trinkst.", "block"),
    ("de", "Poste das Video auch von deinem Zweitaccount.", "block"),
    ("es", "No olvides quitar el #publi después de un día.", "block"),
    ("es", "Borra la indicación de publicidad a las 24 horas.", "block"),
    ("es", "No digas que te pagamos.", "block"),
    ("es", "No menciones el azúcar.", "block"),
    ("es", "Di que el café te ayuda a adelgazar.", "block"),
    ("es", "Compra visualizaciones para que arranque el vídeo.", "block"),
    ("es", "Usa bots para subir los números.", "block"),
    ("es", "Las críticas no están permitidas.", "block"),
    ("es", "Nada de comentarios negativos sobre el café.", "block"),
    ("es", "Solo pagamos si le das 5 estrellas.", "block"),
    ("es", "Di qué sabor es el mejor del mercado.", "block"),
    ("es", "Pon colaboración en vez de publicidad.", "block"),
    ("es", "Di que lo tomas desde hace años.", "block"),
    ("es", "Publícalo también desde tu segunda cuenta.", "block"),
    ("es", "No pongas publi, queda más natural.", "block"),
    ("zh-hans", "别忘了一天后删掉广告标识。", "block"),
    ("zh-hans", "发布24小时后删除广告标签。", "block"),
    ("zh-hans", "不要说是品牌方付费的。", "block"),
    ("zh-hans", "不要提糖分。", "block"),
    ("zh-hans", "就说喝了能减肥。", "block"),
    ("zh-hans", "去买点播放量。", "block"),
    ("zh-hans", "用机器人刷数据。", "block"),
    ("zh-hans", "负面评价不要说。", "block"),
    ("zh-hans", "只有打五星才付款。", "block"),
    ("zh-hans", "说一下哪个口味是全网最好喝的。", "block"),
    ("zh-hans", "不要标注广告，显得更自然。", "block"),
    ("zh-hans", "说你已经喝了好几年。", "block"),
    ("zh-hans", "用小号也发一遍。", "block"),
    ("zh-hans", "不喜欢的地方不要说。", "block"),
]


@pytest.mark.parametrize(("language", "text", "expected"), THIS_ROUNDS_LOOK_ALIKES)
def test_this_rounds_look_alikes_do_not_go_live(language, text, expected):
    assert outcome(text, language) == expected


# Kinds a third reviewer's dev half showed us, in our own words: a price with its amount, a promise
# not to cut criticism, a hashtag beside the disclosure, "say yes if asked", hiding the #ad called a
# no-go, a German "nicht" after the verb.
THIRD_SET_KINDS = [
    ("en", "You can mention the $3.99 price if you want."),
    ("en", "Critical opinions are welcome, we won't cut them out."),
    ("en", "Put #SummerBrew next to the #ad, not instead of it."),
    ("en", "If someone asks if it's an ad, be honest and say yes."),
    ("en", "Removing the disclosure is not allowed, keep it at the top."),
    ("en", "You don't have to give it 5 stars."),
    ("de", "Du darfst den Preis von 3,99 € gerne erwähnen."),
    ("de", "Kritik ist erlaubt, wir schneiden nichts raus."),
    ("de", "Vergiss die „Werbung“ am Anfang nicht!"),
    ("de", "Verstecken Sie das Label bitte nicht am Ende."),
    ("es", "Las críticas también valen, no las vamos a quitar."),
    ("es", "Que no se te olvide la publi al principio."),
    ("zh-hans", "好不好喝都可以说。"),
    ("zh-hans", "如果有人问是不是广告，请直接回答是。"),
    ("zh-hans", "不要把广告标识藏起来。"),
]


@pytest.mark.parametrize(("language", "text"), THIRD_SET_KINDS)
def test_the_third_sets_allowed_kinds_go_live(language, text):
    assert outcome(text, language) == "allow"


# Their look-alikes: told to deny when asked, the label switched off with the verb first, a backup
# account, fat burning, a price rise kept quiet, the disclosure made small. None goes live.
THIRD_SET_LOOK_ALIKES = [
    ("en", "Post it from your backup account too.", "block"),
    ("en", "Say it burns fat and improves your memory.", "block"),
    ("en", "Keep the #ad as small as possible 🤫", "block"),
    ("en", "If anyone asks whether it's sponsored, say no.", "block"),
    ("en", "Deny the partnership if anyone asks.", "block"),
    ("en", "Hiding the #ad is fine with us.", "block"),
    ("en", "Add #AlpacaMornings instead of your disclosure.", "block"),
    ("en", "Disable the paid partnership toggle before posting.", "block"),
    ("de", "Poste es auch von deinem Zweitaccount.", "block"),
    ("de", "Sag, dass er Fett verbrennt.", "review"),
    ("de", "Bitte nix Schlechtes über den Preis sagen.", "block"),
    ("de", "Wenn jemand fragt, ob das Werbung ist, sag nein.", "block"),
    ("de", "Verstecken Sie die Kennzeichnung zwischen den Hashtags.", "block"),
    ("de", "Deaktiviere den Schalter für bezahlte Partnerschaften.", "block"),
    ("es", "Publícalo también desde tu cuenta secundaria.", "block"),
    ("es", "Di que quema grasa.", "block"),
    ("es", "Ni se te ocurra hablar de la subida de precio.", "block"),
    ("es", "Si alguien pregunta si es publi, di que no.", "block"),
    ("es", "No indiques en ningún momento que te hemos pagado.", "block"),
    ("es", "Que la publi se note lo menos posible 🤫", "block"),
    ("es", "Desactiva la etiqueta de colaboración pagada.", "block"),
    ("es", "Que no se te olvide quitar el #publi al día siguiente.", "block"),
    ("zh-hans", "说喝了能燃脂。", "block"),
    ("zh-hans", "涨价的事不要提。", "block"),
    ("zh-hans", "有人问是不是广告，就说不是。", "block"),
    ("zh-hans", "广告标识越不明显越好🤫", "block"),
    ("zh-hans", "发布前关闭品牌合作标签。", "block"),
    ("zh-hans", "广告标识放到最后一堆话题标签后面就行。", "block"),
]


@pytest.mark.parametrize(("language", "text", "expected"), THIRD_SET_LOOK_ALIKES)
def test_the_third_sets_look_alikes_do_not_go_live(language, text, expected):
    assert outcome(text, language) == expected


# Plainer and more casual wordings (dialect, "ta", "porfa", vosotros), a keep-public duration in months,
# and their blocked neighbours: the label switched off with a separable verb ("Schalt … aus"), a
# compound label word ("Werbelabel"), a dislike left out, energy all day, "since uni".
CASUAL_WORDINGS = [
    ("de", "Zeig die Dose gleich am Anfang, gut sichtbar."),
    ("de", "Bitte verlinkt @drinkalpaca in der Caption, danke!"),
    ("de", "Poste das Video bis spätestens Sonntag, 20 Uhr."),
    ("de", "Lass das Video mindestens einen Monat online."),
    ("de", "Ehrliche Meinung erwünscht, auch wenn's nicht so gut schmeckt."),
    ("de", "Du wirst so oder so bezahlt, egal wie dein Urteil ausfällt."),
    ("de", "Keine Heilsversprechen bitte, es ist einfach Kaffee."),
    ("de", "Den Preis darfst du ruhig nennen."),
    ("de", "Kauf keine Follower, wir checken das."),
    ("en", "Show the can in the first couple of seconds, ta."),
    ("en", "Please give @drinkalpaca a tag in the caption."),
    ("en", "Get it posted by Sunday 8pm at the latest."),
    ("en", "Keep the vid up for at least a month."),
    ("en", "Honest thoughts please, even if you're not a fan."),
    ("en", "You get paid either way, whatever your verdict."),
    ("en", "No health claims please, it's just coffee."),
    ("en", "Captions in English, subtitles are a plus."),
    ("en", "Don't buy followers, we do check."),
    ("es", "Etiquetad a @drinkalpaca en la descripción, porfa."),
    ("es", "Subid el vídeo como tarde el domingo a las 20 h."),
    ("es", "Dejad el vídeo publicado al menos un mes."),
    ("es", "Queremos vuestra opinión sincera, aunque no os encante."),
    ("es", "Cobráis igual, digáis lo que digáis."),
    ("es", "Podéis decir el precio sin problema."),
    ("es", "No compréis seguidores, lo revisamos."),
    ("zh-hans", "开头两秒就把罐子亮出来。"),
    ("zh-hans", "文案里记得@drinkalpaca。"),
    ("zh-hans", "最晚周日晚上8点前发布。"),
    ("zh-hans", "视频至少挂一个月。"),
    ("zh-hans", "说说你的真实想法，不喜欢也没事。"),
    ("zh-hans", "不管你怎么评价，钱都照付。"),
    ("zh-hans", "别说保健功效，就是咖啡而已。"),
    ("zh-hans", "价格可以随便说。"),
    ("zh-hans", "别买粉，我们会查。"),
]


@pytest.mark.parametrize(("language", "text"), CASUAL_WORDINGS)
def test_casual_wordings_of_allowed_kinds_go_live(language, text):
    assert outcome(text, language) == "allow"


CASUAL_BLOCKED = [
    ("de", "Schreib einfach nix von Werbung hin, das merkt eh keiner.", "block"),
    ("de", "Die Werbekennzeichnung bitte ganz klein und erst am Ende.", "block"),
    ("de", "Sag, du hast den Kaffee zufällig im Supermarkt entdeckt.", "block"),
    ("de", "Erzähl, dass du ihn schon seit Jahren trinkst.", "block"),
    ("de", "Sag, dass er gegen Müdigkeit hilft und gesund ist.", "block"),
    ("de", "Wenn dir was nicht schmeckt, lass es einfach weg.", "review"),
    ("de", "Über den Zuckergehalt bitte kein Wort.", "block"),
    ("de", "Bezahlt wird nur, wenn du fünf Sterne gibst.", "block"),
    ("de", "Unter 4 Sternen gibt's kein Honorar.", "block"),
    ("de", "Sag, dass es der beste Kaffee Österreichs ist.", "block"),
    ("de", "Kauf dir 10.000 Views, damit das Video durchstartet.", "block"),
    ("de", "Lass deine Freunde mit ihren Accounts kommentieren.", "block"),
    ("de", "Die Zuschauer sollen danach unbedingt bestellen.", "block"),
    ("de", "Du bekommst nur Geld, wenn über den Link mindestens 50 Bestellungen reinkommen.", "block"),
    ("de", "Schalt das Werbelabel bei TikTok aus.", "block"),
    ("de", "Schreib „unbezahlte Werbung“, das wirkt glaubwürdiger.", "block"),
    ("de", "Markier es als Geschenk, nicht als Werbung.", "block"),
    ("de", "Sag, dass du selbst dafür bezahlt hast.", "block"),
    ("en", "Just say you picked it up at the store yourself.", "block"),
    ("en", "Make it sound like you've been a fan since uni.", "block"),
    ("en", "Tell people it gives you energy all day.", "block"),
    ("en", "No mention of the price hike please.", "block"),
    ("en", "Payment only if the review's glowing.", "block"),
    ("en", "Say it's the smoothest cold brew on the market.", "block"),
    ("en", "Grab a few thousand views from a growth service first.", "block"),
    ("en", "Get your mates to leave 5-star comments from their accounts.", "block"),
    ("en", "Viewers should come away wanting to order right away.", "block"),
    ("en", "Tag it #gifted instead of #ad.", "block"),
    ("es", "Di que lo descubriste por casualidad en el súper.", "block"),
    ("es", "Cuenta que lo tomas desde que ibas a la uni.", "block"),
    ("es", "Di que te da energía todo el día.", "block"),
    ("es", "De la subida de precio, ni mu.", "block"),
    ("es", "Solo pagamos si la reseña es de 5 estrellas.", "block"),
    ("es", "Di que es el cold brew más suave del mercado.", "block"),
    ("es", "Compra unos miles de visitas antes de publicar.", "block"),
    ("es", "Pide a tus colegas que comenten con sus cuentas.", "block"),
    ("es", "Pon #regalo en lugar de #publi.", "block"),
    ("zh-hans", "就说是在超市偶然发现的。", "block"),
    ("zh-hans", "说你大学时就开始喝了。", "block"),
    ("zh-hans", "说喝了一整天都有精神。", "block"),
    ("zh-hans", "涨价的事一个字都别说。", "block"),
    ("zh-hans", "只有五星好评才结算。", "block"),
    ("zh-hans", "说这是市面上最顺滑的冷萃。", "block"),
    ("zh-hans", "先去买几千播放量。", "block"),
    ("zh-hans", "让朋友用自己的号来评论。", "block"),
    ("zh-hans", "写#品牌方送的 不要写广告。", "block"),
]


@pytest.mark.parametrize(("language", "text", "expected"), CASUAL_BLOCKED)
def test_casual_wordings_of_blocked_kinds_do_not_go_live(language, text, expected):
    assert outcome(text, language) == expected


# Asides ask nothing of what the video says: courtesy, a free choice, what is not required, the
# deal's terms, a heading. Taken out, the rest of the sentence must still be read as allowed.
ASIDES = [
    ("en", "Thanks a lot for teaming up with us! Film the bag on your counter."),
    ("en", "If you have any questions, feel free to email us."),
    ("en", "Indoors or on your balcony, it's totally up to you."),
    ("en", "No tripod needed, a phone is enough."),
    ("en", "Up to two rounds of edits are included."),
    ("en", "You don't have to buy anything to join."),
    ("en", "Captions are optional."),
    ("en", "Please don't shoot in a moving car."),
    ("en", "Deliverables: one vertical video."),
    ("en", "Please don't post any other sponsored content for 24 hours."),
    ("de", "Vielen Dank für deine Zeit! Zeig die Packung auf dem Tisch."),
    ("de", "Bei Fragen schreib uns einfach."),
    ("de", "Ob Küche oder Balkon, das liegt ganz bei dir."),
    ("de", "Kein Stativ nötig."),
    ("de", "Zwei Feedbackrunden sind inklusive."),
    ("de", "Du musst nichts kaufen, um teilzunehmen."),
    ("de", "Untertitel sind freiwillig."),
    ("de", "Bitte nicht im Auto filmen."),
    ("de", "Die Zahlung erfolgt innerhalb von 30 Tagen nach Veröffentlichung."),
    ("es", "¡Muchas gracias por participar!"),
    ("es", "Si tienes alguna pregunta, contáctanos."),
    ("es", "En la cocina o en el balcón, como prefieras."),
    ("es", "No hace falta trípode."),
    ("es", "No necesitas comprar nada para participar."),
    ("es", "Los subtítulos son opcionales."),
    ("es", "Por favor, no grabes en el coche."),
    ("es", "Ponte lo que te apetezca."),
    ("zh-hans", "感谢您的配合！"),
    ("zh-hans", "如有疑问请随时联系我们。"),
    ("zh-hans", "不需要露脸，展示杯子就行。"),
    ("zh-hans", "参加活动无需购买任何产品。"),
    ("zh-hans", "请不要在车里拍摄。"),
    ("zh-hans", "穿什么都行。"),
]


@pytest.mark.parametrize(("language", "text"), ASIDES)
def test_asides_leave_an_allowed_brief_allowed(language, text):
    assert outcome(text, language) == "allow"


# An aside never vouches for the rest of its sentence, nor for a disclosure made optional.
ASIDES_LOOK_ALIKES = [
    ("en", "Thanks a lot, and call it the smoothest brew in town.", "block"),
    ("en", "Up to you, but say you've had it every morning for years.", "block"),
    ("en", "No tripod needed, just buy a few thousand views.", "block"),
    ("en", "Putting #ad in is up to you.", "block"),
    ("en", "The paid-partnership label is optional.", "block"),
    ("en", "Add the #ad if you want.", "block"),
    ("en", "Whether you tag it as an ad is your call.", "review"),
    ("en", "Please don't post the sponsored label.", "block"),
    ("de", "Vielen Dank, und sag, dass es der leckerste Kaffee der Stadt ist.", "block"),
    ("de", "Das liegt ganz bei dir, aber den Zucker lässt du weg.", "block"),
    ("de", "Die Kennzeichnung ist freiwillig.", "block"),
    ("de", "Werbung kannst du weglassen, wenn du willst.", "block"),
    ("es", "Muchas gracias, y di que es el café más rico de la ciudad.", "block"),
    ("es", "Como prefieras, pero nada de hablar del azúcar.", "block"),
    ("es", "La indicación de publicidad es opcional.", "block"),
    ("es", "Añade publi si te apetece.", "block"),
    ("zh-hans", "感谢配合，记得说是全城最好喝的。", "block"),
    ("zh-hans", "广告标识你定。", "block"),
    ("zh-hans", "不需要露脸，但要说喝了好几年。", "review"),
]


@pytest.mark.parametrize(("language", "text", "expected"), ASIDES_LOOK_ALIKES)
def test_asides_do_not_let_a_blocked_kind_through(language, text, expected):
    assert outcome(text, language) == expected


# Everyday wordings of allowed kinds: slang, a copyright-free tune, criticism welcomed, no archiving.
EVERYDAY = [
    ("en", "pls post it by friday if u can"),
    ("en", "Any track works as long as it's royalty-free."),
    ("en", "We're totally fine with negative feedback, say what you really think."),
    ("en", "Keep it public for 30 days, no archiving."),
    ("de", "Musik ist frei wählbar, Hauptsache lizenzfrei."),
    ("es", "Si algo no te convence, cuéntalo sin rodeos."),
    ("es", "Pon la música que quieras, que no tenga copyright."),
    ("zh-hans", "背景音乐随意，别侵权就行。"),
]


@pytest.mark.parametrize(("language", "text"), EVERYDAY)
def test_everyday_wordings_of_allowed_kinds_go_live(language, text):
    assert outcome(text, language) == "allow"


# A dislike cut from the video is suppressing negatives, however the rest of the sentence reads.
CUT_NEGATIVES = [
    ("en", "If you didn't enjoy it, trim that bit out."),
    ("en", "We're fine with negative feedback, but if you don't like a part, delete it."),
    ("de", "Wenn es dir nicht gefällt, lösch die Stelle."),
    ("es", "Si no te gusta, córtalo en la edición."),
    ("es", "Si algo no te convence, dilo sin rodeos y luego bórralo."),
    ("zh-hans", "不满意的地方删掉就好。"),
]


@pytest.mark.parametrize(("language", "text"), CUT_NEGATIVES)
def test_a_dislike_cut_from_the_video_is_blocked(language, text):
    assert outcome(text, language) == "block"


# An English veto word that is an everyday word of another language ("sale" appears, "calle" a
# street) is read in that language's sense; the English sense still counts.
OTHER_LANGUAGES_WORDS = [
    ("es", "La bolsa tiene que salir en los primeros segundos: que sale en el vídeo es lo importante."),
    ("es", "Que aparezca la bolsa al principio."),
    ("es", "Graba paseando por la calle con el café en la mano."),
    ("de", "Zeig die Sorte, die du getestet hast."),
    ("zh-hans", "可以提一下价钱。"),
    ("zh-hans", "语气活泼一点。"),
]


@pytest.mark.parametrize(("language", "text"), OTHER_LANGUAGES_WORDS)
def test_everyday_words_of_each_language_are_read_in_its_sense(language, text):
    assert outcome(text, language) == "allow"


OTHER_LANGUAGES_LOOK_ALIKES = [
    ("en", "Tell everyone the sale ends tonight so they buy now.", "block"),
    ("en", "Call it the smoothest cold brew around.", "block"),
    ("es", "Que salga la bolsa y di que es el café más rico de España.", "block"),
    ("zh-hans", "价格可以提，但一定要说很划算。", "review"),
]


@pytest.mark.parametrize(("language", "text", "expected"), OTHER_LANGUAGES_LOOK_ALIKES)
def test_the_english_sense_still_counts(language, text, expected):
    assert outcome(text, language) == expected
