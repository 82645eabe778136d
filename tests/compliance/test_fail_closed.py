# ruff: noqa: RUF001 - Chinese punctuation is part of the captions
"""Fail closed: a caption is paid automatically only when its disclosure has a shape the policies
accept and nothing in it could change what it means. What the checker cannot show to be compliant
goes to the brand's review (or back to the person with what to fix), never to "compliant"."""

import pytest
from django.urls import reverse

from compliance.checker import caption_check, compiled, policies_for_countries, policies_from_source
from compliance.models import RemediationCase
from tests.verification.test_engagement import share
from tests.verification.test_tiktok_login import authorize
from verification.models import ActionClaim, SandboxTikTokUser
from verification.sandbox.tiktok.display_api import video_post, video_share_url

POLICIES = [compiled(code=p["code"], version=1, data=p) for p in policies_from_source()]
WHERE = {"en": "US", "de": "DE", "es": "ES", "zh-hans": "CN"}


def check(caption, language):
    return caption_check(
        caption,
        policies=policies_for_countries(POLICIES, [WHERE[language]]),
        languages=[language],
        brand="Alpaca Coffee",
        brand_names=("@drinkalpaca", "羊驼咖啡"),
    )


# Each passed as "compliant" before: the negation list lacked the wording, the word meant something
# else, the disclosure pointed elsewhere or named someone else, or China's mark was missing.
TRAPS = [
    ("en", "denial", "This isn't an ad, I just love Alpaca Coffee #ad"),
    ("en", "denial", "Is this an ad? No. Just my coffee #ad"),
    ("de", "denial", "Werbung? Nö, einfach mein Kaffee"),
    ("es", "denial", "#publi? qué va, lo pago yo"),
    ("zh-hans", "denial", "不打广告，真心推荐羊驼咖啡"),
    ("en", "other_sense", "Filed a police report about the ad on my car lol"),
    ("de", "other_sense", "Anzeige erstattet wegen Fahrraddiebstahl"),
    ("en", "other_sense", "Ad agency job open: we're hiring"),
    ("es", "other_sense", "Estudio publicidad en la uni"),
    ("en", "other_sense", "Saw this ad on the subway, had to try it"),
    ("zh-hans", "other_sense", "电视上的广告太洗脑了 买来试试"),
    ("en", "other_sense", "I work in advertising and this is my cup"),
    ("en", "elsewhere", "Ad - details in the comments"),
    ("de", "elsewhere", "#werbung steht in meinem Profil"),
    ("en", "other_company", "Ad: Oatly paid for this video, Alpaca Coffee is my own pick"),
    ("en", "other_company", "#ad @kitchenking blender review with my Alpaca Coffee"),
    ("de", "other_company", "Werbung für FitFuel, dazu mein Alpaca Coffee"),
    ("zh-hans", "shopping_link", "商业合作｜这款咖啡测评，链接在小黄车"),
    # Spanish, a disclosure word up front in another sense: the profession, the degree, a police
    # report, a spot seen elsewhere, the word as a noun in the sentence, a "with" naming no brand.
    ("es", "other_sense", "Publicidad, mi profesión desde hace 10 años. Alpaca Coffee mi combustible"),
    ("es", "other_sense", "Publicidad: soy creativa publicitaria y esto es lo que bebo: Alpaca Coffee"),
    ("es", "other_sense", "Publicidad: licenciada en Publicidad por fin 🎓 y lo celebro con Alpaca Coffee"),
    ("es", "other_sense", "Publicidad: mi TFG va de publicidad exterior. Alpaca Coffee me acompaña"),
    ("es", "other_sense", "Publicidad: hoy me han dado el título 🎓 Alpaca Coffee para celebrar"),
    ("es", "other_sense", "Publicidad: aprobé Publicidad y Relaciones Públicas 🎉 con Alpaca Coffee"),
    ("es", "other_sense", "Publicidad: atestado de la Guardia Civil por el accidente, y un Alpaca Coffee"),
    ("es", "other_sense", "Publicidad: mi madre trabaja en esto desde siempre. Hoy probamos Alpaca Coffee"),
    ("es", "other_sense", "Publi: el anuncio del concierto ya salió, y yo con mi Alpaca Coffee"),
    ("es", "other_sense", "Publicidad: odio la que sale en YouTube, pero Alpaca Coffee me encanta"),
    ("es", "other_sense", "Publicidad: la del cine antes de la peli, y yo con Alpaca Coffee"),
    ("es", "other_company", "En colaboración con el ayuntamiento, la feria. Yo llevo Alpaca Coffee"),
    ("es", "other_company", "Patrocinado por la beca Erasmus, desayunando Alpaca Coffee en Roma"),
    ("en", "other_company", "Paid partnership with my sister, we tried Alpaca Coffee"),
    # A paid post called a gift or a PR sample, whatever label stands beside it.
    ("en", "gift", "#ad #gifted new cold brew, obsessed"),
    ("en", "gift", "Ad | was gifted this Alpaca Coffee tin and honestly love it"),
    ("en", "gift", "#ad PR package from Alpaca Coffee arrived today"),
    ("de", "gift", "Werbung | PR-Sample von Alpaca Coffee, mein Morgen"),
    ("de", "gift", "Anzeige: wurde mir kostenlos zur Verfügung gestellt, mein Cold Brew"),
    ("es", "gift", "#publi me lo han regalado y me encanta este cold brew"),
    ("zh-hans", "gift", "广告｜品牌方送的羊驼咖啡，早上来一杯"),
    # "Ad" as somebody's name: who he is in brackets, or the word acting as a sentence's subject.
    ("en", "other_sense", "Ad (my cousin) swears by Alpaca Coffee so I tried it"),
    ("en", "other_sense", "Ad and I split a cold brew from Alpaca Coffee this morning"),
    ("en", "other_sense", "Ad says this is the best oat latte in town, Alpaca Coffee"),
]


@pytest.mark.parametrize(("language", "kind", "caption"), TRAPS)
def test_a_caption_that_could_mean_otherwise_is_never_compliant(language, kind, caption):
    assert check(caption, language).verdict != "compliant", kind


ACCEPTED = [
    ("en", "Ad · Paid partnership with Alpaca Coffee. my new morning cold brew"),
    ("en", "#ad oat milk latte time"),
    ("en", "Sponsored post | Alpaca Café oat cortado"),
    ("en", "my new morning cold brew #ad"),
    ("de", "Werbung · Bezahlte Partnerschaft mit Alpaca Coffee"),
    ("de", "Anzeige (bezahlt von Alpaca Coffee): mein Morgen"),
    ("es", "#publi el nuevo cold brew ya está aquí"),
    ("es", "Publicidad · Colaboración pagada con @drinkalpaca"),
    ("es", "Publicidad: Alpaca Coffee caramelo, mi favorito 🦙"),
    ("en", "Sponsored by my friends at Alpaca Coffee"),
    ("zh-hans", "【广告】Alpaca Coffee冷萃"),
    ("zh-hans", "广告 上海街头试喝羊驼咖啡"),
    # Look-alikes of a gift and of "Ad" as a name that are still a plain disclosure.
    ("en", "#ad this gift set of Alpaca cold brew cans is cute"),
    ("en", "Ad: Alpaca Coffee oat latte, my morning"),
    ("en", "#ad Alpaca Coffee is my go-to this week"),
]


@pytest.mark.parametrize(("language", "caption"), ACCEPTED)
def test_the_accepted_shapes_are_still_paid_without_a_look(language, caption):
    verdict = check(caption, language)

    assert verdict.verdict == "compliant", verdict.reasons


@pytest.mark.parametrize(
    ("language", "caption", "reason"),
    [
        ("de", "Bezahlte Kooperation mit Alpaca Coffee: mein Morgen", "not_the_mark"),
        ("zh-hans", "商业合作 | 早上的咖啡", "not_the_mark"),
        ("en", "#ad what do you think of this blend? not sure yet", "doubtful_context"),
    ],
)
def test_what_the_checker_cannot_show_goes_to_a_persons_review(language, caption, reason):
    verdict = check(caption, language)

    assert verdict.verdict == "needs_review" and reason in verdict.reasons


@pytest.mark.django_db
def test_a_doubtful_share_waits_in_the_brands_queue_with_the_reason(client, summer, alice):
    client.get(authorize(client, summer.slug, display_name="Pat Creator"))
    pat = SandboxTikTokUser.objects.get(display_name="Pat Creator")
    video = video_post(
        user=pat, caption="Ad: my pick, freely chosen. Alpaca Coffee cold brew", view_count=900
    )
    share(client, summer, video_share_url(video))

    claim = ActionClaim.objects.get(rule__trigger="ugc_share")
    case = RemediationCase.objects.get(claim_id=claim.pk)
    assert (claim.status, claim.reason, case.status) == ("pending", "compliance_review", "review")
    assert "doubtful_context" in case.reasons
    client.force_login(alice)
    queue = client.get(reverse("compliance:queue", args=["alpaca"])).content.decode()
    assert "Words near the disclosure may contradict it" in queue


@pytest.mark.parametrize("policy", POLICIES, ids=[p.code for p in POLICIES])
def test_the_wording_people_are_told_to_use_is_itself_paid_without_a_look(policy):
    for language in policy.allowed_languages(["en"]) + tuple(policy.data.get("national_languages", [])):
        for contest in (False, True):
            wording = policy.wording(language=language, brand="Alpaca Coffee", contest=contest)
            verdict = caption_check(
                f"{wording}. Morning cup",
                policies=[policy],
                languages=[language],
                brand="Alpaca Coffee",
                contest=contest,
            )
            assert verdict.verdict == "compliant", (language, wording, verdict.reasons)
