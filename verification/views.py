import json
import secrets
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpResponse, HttpResponseForbidden
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods

from campaigns.access import brand_member_required
from campaigns.selectors import campaign_claimability, campaign_get_for_brand, campaign_public_get
from verification.providers import tiktok, whatsapp
from verification.selectors import (
    campaign_funnel,
    campaign_recent_claims,
    campaign_steps,
    optin_pending,
    participant_claims,
    participant_get_by_token,
)
from verification.services import (
    optin_code_get_or_create,
    participant_create,
    refusal_text,
    tiktok_login_complete,
    whatsapp_messages_record,
)
from verification.sessions import session_participant, session_participant_set

TIKTOK_STATE = "joyback.tiktok_state"


def _public_campaign(slug):
    campaign = campaign_public_get(slug=slug)
    if campaign is None:
        raise Http404("No such campaign")
    return campaign


@require_GET
def steps(request, slug):
    """The claim flow's action steps for the person in this browser (a fragment of the landing page)."""
    campaign = _public_campaign(slug)
    participant = session_participant(request, campaign)
    optin = optin_pending(campaign=campaign, participant=participant)
    landing = reverse("campaign_landing", args=[campaign.slug]) + "#steps"
    context = {
        "campaign": campaign,
        "steps": campaign_steps(campaign=campaign, participant=participant),
        "claimability": campaign_claimability(campaign=campaign),
        "optin": optin,
        "optin_link": whatsapp_link(code=optin.code, back=landing) if optin else "",
        "optin_outcome": refusal_text(optin.outcome) if optin else "",
        "participant": participant,
    }
    return render(request, "verification/_steps.html", context)


@require_http_methods(["POST"])
def whatsapp_start(request, slug):
    campaign = _public_campaign(slug)
    if not campaign_claimability(campaign=campaign).open:
        return redirect("campaign_landing", slug=slug)
    participant = session_participant(request, campaign) or participant_create(brand=campaign.brand)
    session_participant_set(request.session, participant)
    optin_code_get_or_create(campaign=campaign, participant=participant)
    return redirect(reverse("campaign_landing", args=[slug]) + "#steps")


def whatsapp_link(*, code: str, back: str) -> str:
    """wa.me with the code prefilled; in the sandbox, the sandbox phone that delivers the webhook."""
    text = f"JOY {code}"
    if settings.SANDBOX:
        return reverse("verification:sandbox_whatsapp_phone") + "?" + urlencode({"text": text, "next": back})
    return f"https://wa.me/{settings.WHATSAPP_BUSINESS_NUMBER}?" + urlencode({"text": text})


@require_http_methods(["POST"])
def tiktok_start(request, slug):
    campaign = _public_campaign(slug)
    if not campaign_claimability(campaign=campaign).open:
        return redirect("campaign_landing", slug=slug)
    state = secrets.token_urlsafe(24)
    request.session[TIKTOK_STATE] = {"state": state, "campaign": campaign.slug}
    redirect_uri = request.build_absolute_uri(reverse("verification:tiktok_callback"))
    return redirect(tiktok.authorize_url(state=state, redirect_uri=redirect_uri))


@require_GET
def tiktok_callback(request):
    pending = request.session.pop(TIKTOK_STATE, None)
    if not pending or not secrets.compare_digest(pending["state"], request.GET.get("state", "")):
        return HttpResponseForbidden(
            _("This sign-in link has expired. Please start again from the campaign page.")
        )
    campaign = _public_campaign(pending["campaign"])
    landing = reverse("campaign_landing", args=[campaign.slug]) + "#steps"
    if request.GET.get("error"):
        messages.info(request, _("TikTok sign-in was cancelled. You can try again whenever you like."))
        return redirect(landing)
    try:
        user = tiktok.login_complete(
            code=request.GET.get("code", ""),
            redirect_uri=request.build_absolute_uri(reverse("verification:tiktok_callback")),
        )
    except tiktok.TikTokError:
        messages.error(request, _("TikTok could not confirm your sign-in. Please try again."))
        return redirect(landing)
    participant = session_participant(request, campaign) or participant_create(brand=campaign.brand)
    identity, refusal = tiktok_login_complete(
        campaign=campaign, participant=participant, open_id=user.open_id, display_name=user.display_name
    )
    session_participant_set(request.session, identity.participant)
    if refusal:
        messages.warning(request, refusal.message)
    else:
        messages.success(request, _("TikTok connected as %(name)s.") % {"name": user.display_name})
    return redirect(landing)


@csrf_exempt
@require_http_methods(["GET", "POST"])
def whatsapp_webhook(request):
    if request.method == "GET":
        challenge = whatsapp.handshake_answer(params=request.GET, verify_token=settings.WHATSAPP_VERIFY_TOKEN)
        if challenge is None or not settings.WHATSAPP_VERIFY_TOKEN:
            return HttpResponseForbidden()
        return HttpResponse(challenge, content_type="text/plain")
    if not settings.WHATSAPP_APP_SECRET or not whatsapp.signature_valid(
        body=request.body,
        header=request.headers.get("X-Hub-Signature-256", ""),
        app_secret=settings.WHATSAPP_APP_SECRET,
    ):
        return HttpResponseForbidden()
    try:
        payload = json.loads(request.body)
    except ValueError:
        return HttpResponse(status=400)
    whatsapp_messages_record(payload=payload, messages=whatsapp.inbound_messages(payload))
    return HttpResponse("ok")


@require_GET
def status_actions(request, token):
    participant = participant_get_by_token(token=token)
    if participant is None:
        raise Http404("No such claim")
    return render(
        request, "verification/_status_actions.html", {"claims": participant_claims(participant=participant)}
    )


def _brand_campaign(request, campaign_id):
    campaign = campaign_get_for_brand(brand=request.brand, campaign_id=campaign_id)
    if campaign is None:
        raise Http404("No such campaign")
    return campaign


@brand_member_required()
def funnel(request, campaign_id):
    campaign = _brand_campaign(request, campaign_id)
    return render(
        request,
        "verification/_funnel.html",
        {"campaign": campaign, "funnel": campaign_funnel(campaign=campaign)},
    )


@brand_member_required()
def recent_claims(request, campaign_id):
    campaign = _brand_campaign(request, campaign_id)
    context = {"campaign": campaign, "claims": campaign_recent_claims(campaign=campaign)}
    return render(request, "verification/_recent_claims.html", context)
