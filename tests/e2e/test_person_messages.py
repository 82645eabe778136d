"""Pat gives only a WhatsApp number: the private status link arrives there, and opened in another
browser it shows the payout paid and the total paid so far."""

import pytest
from django.conf import settings

from payouts import notifications
from payouts.models import Notification
from tests.e2e.conftest import no_serious_violations
from tests.e2e.test_caption_fix import kaffee  # noqa: F401  (the fixture)
from tests.e2e.test_claim_flow import (  # noqa: F401  (the fixture)
    POLL_MS,
    both_rewards,
    claim_both_rewards,
    live_campaign,
    payout_badge,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_pat_with_only_whatsapp_gets_the_status_link_there_and_sees_the_total_paid(
    live_server,
    open_page,
    screenshot,
    live_campaign,  # noqa: F811
    monkeypatch,
):
    sent = []
    real_send = notifications.whatsapp.template_send
    monkeypatch.setattr(
        notifications.whatsapp,
        "template_send",
        lambda **message: sent.append(message) or real_send(**message),
    )
    first = open_page("phone")
    claim_both_rewards(first, live_server)
    first.get_by_label("Full name, as your bank knows it").fill("Pat Example")
    first.get_by_label("WhatsApp number").fill("+49 151 23456789")
    first.get_by_label("IBAN").fill("DE89 3704 0044 0532 0130 00")
    first.get_by_label("I agree").check()
    first.get_by_role("button", name="Send me my money").click()
    first.wait_for_url("**/status/**")
    payout_badge(first).filter(has_text="Paid").wait_for(timeout=POLL_MS)

    (link,) = [message for message in sent if message["template"] == "status_link"]
    assert link["to"].endswith("4915123456789")
    assert Notification.objects.get(kind="status_link").channel == "whatsapp"
    other = open_page("phone")  # the link, opened from WhatsApp on another phone
    other.goto(link["parameters"][1].replace(settings.SITE_URL, live_server.url))
    payout_badge(other).filter(has_text="Paid").wait_for(timeout=POLL_MS)
    total = other.locator("#status-payout .paid-total")
    assert total.inner_text() == both_rewards(live_campaign)
    screenshot(other, "60-status-link-from-whatsapp-total-paid")
    no_serious_violations(other)


def test_the_status_page_says_by_when_a_disclosure_must_be_fixed(live_server, open_page, screenshot, kaffee):  # noqa: F811
    from verification.models import Participant, SandboxTikTokUser
    from verification.sandbox.tiktok.display_api import video_post, video_share_url

    page = open_page("phone", "de")
    page.goto(f"{live_server.url}/c/kaffee/")
    page.get_by_role("button", name="TikTok verbinden").click()
    page.get_by_label("Sandbox TikTok user (display name)").fill("Pat Creator")
    page.get_by_role("button", name="Authorize").click()
    pat = SandboxTikTokUser.objects.get(display_name="Pat Creator")
    video = video_post(user=pat, caption="Mein Morgen! #kaffee #ad", view_count=40)
    page.get_by_label("Link zu deinem TikTok-Video").fill(video_share_url(video))
    page.get_by_role("button", name="Video einreichen").click()
    page.get_by_role("button", name="Erledigt: bitte erneut prüfen").wait_for()  # the 24 hours began

    page.goto(f"{live_server.url}/c/kaffee/status/{Participant.objects.get().token}/")
    line = page.locator(".fix-by")
    line.wait_for()
    assert "Die Kennzeichnung deines Videos braucht bis" in line.inner_text()
    assert "(UTC) eine Änderung, sonst wird die Belohnung freigegeben" in line.inner_text()
    screenshot(page, "61-status-disclosure-deadline-de")
    no_serious_violations(page)
