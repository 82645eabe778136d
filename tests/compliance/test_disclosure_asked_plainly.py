# ruff: noqa: RUF001 - Chinese punctuation is part of the briefs
"""A brief may ask for the disclosure only plainly: where and how it stands. A sentence that names it,
or the sentence after it that refers back to it, goes live on its own only when it says nothing of
how long, from when, how small, on what condition or in which other place; anything else goes to
JoyBack's review. Every unlawful brief below went live before (an outside attack wrote them), in the
four languages; the lawful ones beside them still go live."""

import re

import pytest

from tests.compliance.briefs import brief_findings
from tests.compliance.briefs import brief_outcome as outcome

UNLAWFUL = {
    "hidden only in part": [
        ("en", "Don't hide the #ad completely, just make it small."),
        ("en", "Don't hide the #ad too obviously."),
        ("en", "Never hide the #ad unless the client asks."),
        ("en", "Don't hide the #ad tag entirely."),
        ("en", "Don't hide the #ad 100%."),
        ("en", "Don't bury the #ad that deep."),
        ("de", "Versteckt die Werbung nicht ganz, macht sie nur klein."),
        ("de", "Versteck die Werbung nicht so sehr."),
        ("de", "Versteck die Werbekennzeichnung nicht völlig."),
        ("de", "Verstecke die Werbung nicht, außer wir fragen."),
        ("es", "No escondas la publi del todo."),
        ("es", "No ocultes la publi por completo."),
        ("es", "No escondas tanto la publi."),
        ("zh-hans", "别把广告藏得太深。"),
    ],
    "removed or switched later": [
        ("en", "Post the video with #ad. Then remove it."),
        ("en", "Add #ad. After a day, switch it to #coffee."),
        ("en", "Add #ad. Then tone it down."),
        ("en", "Add #ad. It can go after a day."),
        ("en", "Turn on the paid partnership label. After a day, switch it."),
        ("de", "Setz #werbung an den Anfang. Nach zwei Tagen nimm es wieder raus."),
        ("de", "Markiere es als Werbung. Nach einem Tag ersetze es durch #kaffee."),
        ("es", "Pon publicidad al principio. Después de un día, quítala."),
        ("es", "Pon #publi. A las 24 horas, sustitúyela por #café."),
        ("zh-hans", "开头标注广告。一天后拿掉。"),
        ("zh-hans", "开头写广告，一天后改为#咖啡。"),
    ],
    "kept for a while only": [
        ("en", "Keep the #ad tag up for one day only."),
        ("en", "Add #ad for the first hour."),
        ("en", "Switch on the branded content toggle for the first day."),
        ("de", "Die Werbung bleibt bis Freitag."),
        ("de", "Aktiviere das Label für einen Tag."),
        ("es", "Mantén la publicidad hasta el viernes."),
        ("es", "Activa la etiqueta de colaboración pagada durante un día."),
        ("zh-hans", "广告标识保留一天。"),
        ("zh-hans", "开启付费合作标签一天。"),
    ],
    "added late": [
        ("en", "Add #ad tomorrow."),
        ("en", "Post the video on Monday and add #ad on Friday."),
        ("de", "Kennzeichne das Video nach zwei Tagen als Werbung."),
        ("es", "Indica que es publicidad a partir del viernes."),
        ("zh-hans", "发布两天后标注广告。"),
    ],
    "put where it is not seen": [
        ("en", "Add #ad under the hashtags."),
        ("en", "Put #ad in your profile."),
        ("de", "Setze #werbung nach den Hashtags."),
        ("zh-hans", "广告放在一堆话题标签中间。"),
    ],
    "weakened or flashed": [
        ("en", "Write #ad in light grey text."),
        ("en", "Show #ad for one frame."),
        ("de", "Zeig die Werbung im Video nur zwei Sekunden."),
        ("es", "Muestra publicidad en el vídeo un segundo."),
        ("zh-hans", "广告标识在视频里出现一秒就行。"),
    ],
    "on a condition": [
        ("en", "Add #ad once the video has 10000 views."),
        ("en", "Add #ad on every second video."),
        ("en", "You can add #ad."),
        ("es", "Deja de poner la publi."),
    ],
    "buried among the hashtags or deep in the caption": [
        ("en", "Put the #ad in the hashtags."),
        ("en", "Don't hide the #ad and put it in the hashtags."),
        ("en", "Put the #ad in line 30."),
        ("de", "Versteck die Werbung nicht, pack sie in die Hashtags."),
        ("es", "Pon la publi en la línea 25."),
        ("zh-hans", "广告标识放在话题标签里。"),
    ],
    "moved to another post": [
        ("en", "Put the #ad in the next post."),
        ("de", "Lösch die Werbung nicht, setz sie in den anderen Post."),
        ("es", "No borres la publi, ponla en otro vídeo."),
        ("zh-hans", "把广告标识放在之前的视频里。"),
    ],
    "covered by the product": [
        ("en", "Put the mug in front of the #ad overlay."),
        ("de", "Stell das Produkt vor die Werbung."),
        ("zh-hans", "把产品放在广告标识前面。"),
    ],
    "flashed in the first second or said minutes in": [
        ("en", "Show the ad overlay during the first 1 second."),
        ("en", "Say it's an ad within the first 120 seconds."),
        ("zh-hans", "广告标识保留前3秒。"),
    ],
    "referred back to by a noun, before it, or in a hashtag": [
        ("en", "Add #ad. Tomorrow swap the tag for #coffee."),
        ("en", "Keep it out. Add #ad."),
        ("en", "Add #ad. Make it big. Put it away."),
        ("en", "Add #ad #for24hoursonly."),
        ("de", "Setz #werbung #morgenweg."),
        ("zh-hans", "加上广告标识。发布后缩小。"),
    ],
    "the label made something else, or put on the brand's post": [
        ("en", "Use #coffeelove as the ad disclosure."),
        ("en", "The product is the disclosure."),
        ("en", "Put the #ad in the brand's post."),
        ("en", "Use #ad or #coffee."),
        ("en", "Enable the paid partnership label and toggle it."),
        ("en", "Disclosure: the brand's post."),
        ("en", "Add #ad #jk."),
        ("en", "Add #ad. After a day, swap the word for #coffee."),
        ("en", "Show the product before the #ad."),
        ("de", "Setz die Werbung in den Post der Marke."),
        ("de", "Setz #werbung #temporär."),
        ("es", "Marca el vídeo como producto."),
        ("es", "Pon la publi o la marca."),
        ("zh-hans", "发布前保留广告标识。"),
        ("zh-hans", "有人问是不是广告，直接回答是就行，并加上广告标识。"),
    ],
    "a question about it, alone or not answered with a bare yes": [
        ("en", "Do you need to use the #ad?"),
        ("en", "Do we need #ad? No."),
        ("en", "Do we need #ad? Yes, but only for a day."),
        ("en", "Do we need #ad at all times? Yes, at first."),
        ("en", "Do we need to say it's an ad? Yes, to us."),
        ("de", "Müssen wir Werbung schreiben? Nein."),
        ("de", "Müssen wir die ganze Zeit Werbung zeigen? Ja, am Anfang."),
        ("es", "¿Hace falta poner #publi? No."),
        ("es", "¿Hace falta poner publi en cada vídeo? Sí, al principio."),
        ("es", "¿Hay que decir que es publicidad? Sí, a nosotros."),
        ("zh-hans", "要标广告吗？不用。"),
        ("zh-hans", "需要一直标广告吗？需要，开头标就行。"),
        ("zh-hans", "需要标广告吗？需要，让我们知道就行。"),
    ],
    "a time said with words of place": [
        ("en", "At first, put #ad in the caption."),
        ("en", "Use #ad to start with."),
        ("en", "The paid partnership label stays on at first."),
        ("de", "Zu Beginn Werbung in die Caption schreiben."),
        ("de", "Am Anfang bleibt das Label für bezahlte Partnerschaften an."),
        ("de", "Anfang: Werbung zeigen."),
        ("es", "Al principio, poned #publi en el texto."),
        ("es", "Al publicar, pon publi."),
    ],
    "made optional beside something else": [
        ("en", "Tag us or #ad."),
        ("en", "Put Alpaca Coffee or #ad at the start of the caption."),
        ("en", "Put #ad on every video or the first."),
        ("es", "Etiqueta a nuestra cuenta o #publi."),
    ],
    "said to the brand, or in its ads": [
        ("en", "Say it's sponsored to us."),
        ("en", "Put the #ad in your ads."),
        ("es", "Decid que es publicidad a nosotros."),
    ],
    "the platform's switch turned on, and off later": [
        ("en", "Before you hit post, flip the branded content switch on. Flip it off the next day."),
        ("de", "Vor dem Posten den Markeninhalt-Schalter aktivieren, nach einem Tag deaktivieren."),
        ("es", "Antes de publicar, activad el interruptor de contenido de marca; al día siguiente, apagadlo"),
    ],
    "a label the policies do not list": [
        ("en", "Add #paidcollab for the first day."),
        ("de", "Setz den Anzeige-Hinweis unter die Hashtags."),
        ("en", "Add #\u0430d for the first day."),
    ],
}


@pytest.mark.parametrize(("language", "text"), [case for cases in UNLAWFUL.values() for case in cases])
def test_a_disclosure_asked_for_with_a_limit_does_not_go_live(language, text):
    assert outcome(text, language) != "allow"


@pytest.mark.parametrize(
    ("language", "text"),
    # "#ad" typed with a Cyrillic letter names no disclosure: it is held as words not understood.
    [case for cases in UNLAWFUL.values() for case in cases if not re.search("[\u0400-\u04ff]", case[1])],
)
def test_the_brand_is_told_to_ask_for_the_disclosure_plainly(language, text):
    held = [finding.message for finding in brief_findings(text, language) if finding.blocking]
    if outcome(text, language) == "block":
        return  # refused for sure, with the words that refused it

    assert any("asks for the disclosure with more than where it stands" in message for message in held)
    assert any("“Switch on the paid-partnership label”" in message for message in held)


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "Don't hide the #ad in the hashtags."),
        ("en", "Please add #ad to the caption."),
        ("en", "Start your caption with #ad and switch on TikTok's paid partnership label."),
        ("en", "Keep the #ad visible at the start of the caption for the whole campaign."),
        ("en", "If anyone asks whether it's sponsored, be upfront and say yes."),
        ("en", "Please don't post any other sponsored content for 24 hours."),
        ("de", "Versteckt die Kennzeichnung bitte nicht zwischen den Hashtags."),
        ("de", "Lösch die Werbekennzeichnung nicht."),
        ("de", "Die Kennzeichnung „Werbung“ muss die ganze Zeit drin bleiben."),
        ("es", "No escondas la publi entre los hashtags."),
        ("es", "No borres la indicación de publicidad."),
        ("es", "Mantén el #publi en el texto mientras el vídeo esté publicado."),
        ("zh-hans", "不要把广告标识藏在话题标签里。"),
        ("zh-hans", "发布后不要删掉广告标识。"),
        ("zh-hans", "别忘了加#广告。"),
        ("en", "Please include the hashtags #Bergkaffee and #ad."),
        ("en", "Hashtag #ad right up top, ty!"),
        # A question the brand answers itself with a bare yes, then where the label stands.
        ("en", "Do we need #ad? Yes, every single time. Put #ad in the first line of the caption."),
        ("de", "Müssen wir Werbung schreiben? Ja, immer. Setz Werbung an den Anfang der Caption."),
        ("es", "¿Hace falta poner #publi? Sí, siempre. Pon #publi al principio del texto."),
        ("zh-hans", "要标广告吗？要。放在文案最前面。"),
        ("de", "Bitte kennzeichnen Sie den Beitrag gleich zu Beginn deutlich als Werbung."),
        # The platform's switch turned on before posting.
        ("en", "Before you post, add #ad and switch on the branded content toggle."),
    ],
)
def test_a_disclosure_asked_for_plainly_still_goes_live(language, text):
    assert outcome(text, language) == "allow"


@pytest.mark.parametrize(
    ("language", "text"),
    [
        # The caption the label stands in changed on a later day, the label never named.
        ("en", "On day three, update the caption to 'Morning vibes #coffee'."),
        ("en", "After the first week, keep just #coffee in the caption."),
        ("de", "Kürze die Caption in Woche zwei auf den Produktnamen."),
        # The post kept free of the label: refused for sure.
        ("en", "Keep the video label-free."),
        ("de", "Das Video bleibt kennzeichnungsfrei."),
        ("es", "La publicación queda libre de etiquetas."),
    ],
)
def test_a_label_taken_away_without_naming_it_never_goes_live(language, text):
    assert outcome(text, language) != "allow"


def test_a_later_sentence_about_the_video_after_a_disclosure_goes_live():
    assert outcome("Put #ad at the start of the caption. Post the video before Friday.", "en") == "allow"
