import logging
import secrets
import time
from urllib.parse import quote, urlencode

from django.conf import settings
from django.contrib import messages
from django.core.cache import cache
from django.core.files.uploadhandler import FileUploadHandler, StopUpload
from django.http import Http404, HttpResponse, HttpResponseBadRequest, HttpResponseForbidden, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.datastructures import MultiValueDict
from django.utils.translation import get_language, gettext_lazy
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from campaigns import roles
from campaigns.access import brand_member_required
from campaigns.licence import licence_terms_current
from campaigns.models import Trigger
from campaigns.selectors import campaign_claimability, campaign_get_for_brand, campaign_public_get
from compliance.models import CaseStatus, RemediationCase
from compliance.selectors import disclosure_for
from joyback.limits import json_loads
from joyback.machine import machine_endpoint
from joyback.mfa import reauthentication_required
from joyback.modes import provider_routed_for
from joyback.ratelimit import client_address, rate_limit_hit, rate_limit_over
from verification import posting
from verification.content import SPARK_DAYS, purchase_gate_refusal
from verification.device import browser_device
from verification.models import LicenceGrant, Provider, ShopConnection
from verification.providers import tiktok, whatsapp
from verification.providers.shops import CLICK_PARAMETER, LANDING_PARAMETER
from verification.referrals import (
    REFERRAL_MISSES_PER_HOUR,
    referral_click_record,
    referral_code_find,
    referral_code_for,
)
from verification.selectors import (
    campaign_funnel,
    campaign_recent_claims,
    campaign_steps,
    claim_get_for_brand,
    optin_pending,
    participant_can_publish,
    participant_claims,
    participant_get_by_token,
    person_consents,
    publishing_identity,
    referral_campaigns_of,
    referral_sales,
    review_decisions_for_brand,
    review_queue_for_brand,
)
from verification.services.participants import participant_create
from verification.services.provider_events import (
    optin_code_get_or_create,
    tiktok_event_store,
    tiktok_login_complete,
    whatsapp_messages_store,
)
from verification.services.refusals import ClaimRefused, refusal_text
from verification.services.review import claim_review
from verification.services.rewards import ClaimContext
from verification.services.shares import (
    engagement_window_close_now,
    remediation_recheck,
    share_submit,
    tiktok_recent_videos,
)
from verification.sessions import browser_participant, browser_participant_set

TIKTOK_STATE = "joyback.tiktok_state"
# A refused video link, kept for one showing so the step can say what is wrong next to what was typed.
SHARE_ATTEMPT = "joyback.share_attempt"
# Actions proven by a video the person posted and whose counts TikTok reports back.
SHARE_TRIGGERS = (Trigger.UGC_SHARE, Trigger.VIEW_THRESHOLD)
logger = logging.getLogger(__name__)


def claim_context(request) -> ClaimContext:
    device, new = browser_device(request)
    return ClaimContext(client_ip=client_address(request), device=device, device_new=new)


def public_campaign_or_404(slug):
    campaign = campaign_public_get(slug=slug)
    if campaign is None:
        raise Http404("No such campaign")
    return campaign


@require_GET
def steps(request, slug):
    """The claim flow's action steps for the person in this browser: a fragment of the landing page
    for htmx, a page of its own without JavaScript."""
    campaign = public_campaign_or_404(slug)
    participant = browser_participant(request, campaign)
    optin = optin_pending(campaign=campaign, participant=participant)
    landing = reverse("campaign_landing", args=[campaign.slug]) + "#steps"
    steps = campaign_steps(campaign=campaign, participant=participant)
    under_way = [step.post for step in steps if step.post is not None and not step.claim]
    if under_way and request.htmx:
        # The page asks while the person watches: TikTok's publish status, not only its webhooks.
        for post in under_way:
            posting.tiktok_post_refresh(post=post)
        steps = campaign_steps(campaign=campaign, participant=participant)
    can_publish = participant_can_publish(participant=participant)
    context = {
        "campaign": campaign,
        "steps": steps,
        "posting_under_way": any(
            step.post and step.post.status not in ("failed", "public") and not step.claim for step in steps
        ),
        "disclosure": disclosure_for(campaign=campaign, language=get_language()) if can_publish else None,
        "claimability": campaign_claimability(campaign=campaign),
        "optin": optin,
        "optin_link": whatsapp_link(code=optin.code, back=landing) if optin else "",
        "optin_outcome": refusal_text(optin.outcome) if optin else "",
        "participant": participant,
        "can_publish": can_publish,
        "post_max_bytes": settings.TIKTOK_POST_MAX_BYTES,
        "attempt": request.session.pop(SHARE_ATTEMPT, None),
        "sandbox": settings.SANDBOX,
        "landing_next": quote(landing, safe=""),
        "page": not request.htmx,
        **_share_extras(campaign=campaign, participant=participant, steps=steps),
    }
    if not request.htmx:
        return render(request, "verification/steps_page.html", context)
    response = render(request, "verification/_steps.html", context)
    if request.GET.get("waiting") == "optin" and (optin is None or optin.used_at):
        # The WhatsApp step polls only itself; once the message is in, the rest of the page follows.
        response["HX-Trigger"] = "rewards-changed"
    return response


def _share_extras(*, campaign, participant, steps) -> dict:
    """What the video steps show besides the form: the licence to agree to, the purchase gate,
    the Spark Ads periods, and a reach share's readings so far."""
    gates = {
        step.rule.trigger: purchase_gate_refusal(rule=step.rule, participant=participant)
        for step in steps
        if step.rule.trigger in SHARE_TRIGGERS and not step.claim
    }
    for step in steps:
        if step.claim is not None and step.rule.pays_by_reach:
            step.claim.readings = list(step.claim.metrics.filter(found=True).order_by("at", "pk"))
    return {
        "licence_terms": licence_terms_current(campaign=campaign),
        "purchase_gates": gates,
        "spark_days": SPARK_DAYS,
        "recent_videos": _recent_videos(participant=participant, steps=steps),
        "shop_url": _shop_url(campaign=campaign, steps=steps),
    }


def _shop_url(*, campaign, steps) -> str:
    """Where to buy, for a purchase step: the campaign's connected shop (its sandbox storefront in
    the sandbox, as the shop's own address leads nowhere there)."""
    if not any(step.rule.trigger == Trigger.PURCHASE for step in steps):
        return ""

    shop = (
        ShopConnection.objects.filter(campaign=campaign, disconnected_at__isnull=True).order_by("pk").first()
    )
    if shop is None:
        return ""
    if settings.SANDBOX:
        return reverse("verification:sandbox_shop", args=[shop.public_id])
    return f"https://{shop.domain}/"


def _recent_videos(*, participant, steps) -> list:
    """The person's own recent TikTok videos, for a video step still open: a short while in the
    cache, as the steps fragment reloads itself while the person waits for something."""
    if participant is None or not any(
        step.rule.trigger in SHARE_TRIGGERS and not step.claim and not step.locked for step in steps
    ):
        return []
    identity = participant.identities.filter(provider=Provider.TIKTOK).first()
    if identity is None:
        return []
    key = f"joyback.tiktok_recent_videos.{identity.pk}"
    videos = cache.get(key)
    if videos is None:
        videos = tiktok_recent_videos(identity=identity)
        if videos:  # nothing yet: asked again next time, a video may just have been posted
            cache.set(key, videos, 15)
    return videos


@require_http_methods(["POST"])
def whatsapp_start(request, slug):
    campaign = public_campaign_or_404(slug)
    if not campaign_claimability(campaign=campaign).open:
        return redirect("campaign_landing", slug=slug)
    participant = browser_participant(request, campaign) or participant_create(brand=campaign.brand)
    browser_participant_set(request, participant)
    optin_code_get_or_create(campaign=campaign, participant=participant, language=get_language() or "en")
    return redirect(reverse("campaign_landing", args=[slug]) + "#steps")


def whatsapp_link(*, code: str, back: str) -> str:
    """wa.me with the code prefilled; in the sandbox, the sandbox phone that delivers the webhook."""
    text = f"JOY {code}"
    if settings.SANDBOX:
        return reverse("verification:sandbox_whatsapp_phone") + "?" + urlencode({"text": text, "next": back})
    return f"https://wa.me/{settings.WHATSAPP_BUSINESS_NUMBER}?" + urlencode({"text": text})


@require_http_methods(["POST"])
def tiktok_start(request, slug):
    """TikTok's consent page; with publish=1 (the person chose "Post it through JoyBack") it also
    asks for video.publish, which nobody is asked for otherwise."""
    campaign = public_campaign_or_404(slug)
    if not campaign_claimability(campaign=campaign).open:
        return redirect("campaign_landing", slug=slug)
    publish = request.POST.get("publish") == "1"
    state = secrets.token_urlsafe(24)
    request.session[TIKTOK_STATE] = {"state": state, "campaign": campaign.slug, "publish": publish}
    redirect_uri = request.build_absolute_uri(reverse("verification:tiktok_callback"))
    # A test campaign's person is sent to the sandbox's consent page, never to TikTok's with the
    # live app's key (where the sandbox is off, that page is closed: the sign-in fails closed).
    with provider_routed_for(livemode=campaign.brand.livemode):
        consent = tiktok.authorize_url(state=state, redirect_uri=redirect_uri, publish=publish)
    return redirect(consent)


@require_GET
def tiktok_callback(request):
    pending = request.session.pop(TIKTOK_STATE, None)
    if not pending or not secrets.compare_digest(pending["state"], request.GET.get("state", "")):
        return HttpResponseForbidden(
            _("This sign-in link has expired. Please start again from the campaign page.")
        )
    campaign = public_campaign_or_404(pending["campaign"])
    landing = reverse("campaign_landing", args=[campaign.slug]) + "#steps"
    if request.GET.get("error"):
        messages.info(request, _("TikTok sign-in was cancelled. You can try again whenever you like."))
        return redirect(landing)
    try:
        with provider_routed_for(livemode=campaign.brand.livemode):
            user = tiktok.login_complete(
                code=request.GET.get("code", ""),
                redirect_uri=request.build_absolute_uri(reverse("verification:tiktok_callback")),
            )
    except tiktok.TikTokError:
        messages.error(request, _("TikTok could not confirm your sign-in. Please try again."))
        return redirect(landing)
    participant = browser_participant(request, campaign) or participant_create(brand=campaign.brand)
    identity, refusal = tiktok_login_complete(
        campaign=campaign, participant=participant, user=user, context=claim_context(request)
    )
    browser_participant_set(request, identity.participant)
    if pending.get("publish"):
        # The scopes granted, not those asked for: the person may untick video.publish.
        if tiktok.PUBLISH_SCOPE in user.tokens.get("scope", "").split(","):
            messages.success(request, _("JoyBack may now post your video on TikTok. Choose it below."))
        else:
            messages.info(
                request,
                _("You did not let JoyBack post for you. You can still post it yourself and paste the link."),
            )
    elif refusal:
        messages.warning(request, refusal.message)
    else:
        messages.success(request, _("TikTok connected as %(name)s.") % {"name": user.display_name})
    return redirect(landing)


@machine_endpoint
@require_http_methods(["GET", "POST"])
def whatsapp_webhook(request):
    """Meta's webhook: the verify handshake (GET) and signed event notifications (POST).

    Verify, dedupe and store in one statement (one commit), answer: the standing worker
    (provider_events_process) does the work, so Meta gets its 200 fast, a slow step never makes it
    deliver again, and an event answered 200 is processed even if this process dies right after.
    """
    if request.method == "GET":
        challenge = whatsapp.handshake_answer(params=request.GET, verify_token=settings.WHATSAPP_VERIFY_TOKEN)
        if challenge is None or not settings.WHATSAPP_VERIFY_TOKEN:
            logger.warning("whatsapp handshake refused: wrong mode or verify token")
            return HttpResponseForbidden()
        return HttpResponse(challenge, content_type="text/plain")
    signature = request.headers.get("X-Hub-Signature-256", "")
    if not settings.WHATSAPP_APP_SECRET or not whatsapp.signature_valid(
        body=request.body, header=signature, app_secret=settings.WHATSAPP_APP_SECRET
    ):
        logger.warning("whatsapp webhook refused: bad or missing X-Hub-Signature-256")
        return HttpResponseForbidden()
    try:
        payload = json_loads(request.body)
    except ValueError:
        logger.warning("whatsapp webhook refused: body is not JSON")
        return HttpResponseBadRequest("body is not JSON")
    if not isinstance(payload, dict):
        return HttpResponseBadRequest("body is not a JSON object")
    whatsapp_messages_store(
        messages=whatsapp.inbound_messages(payload), statuses=whatsapp.status_updates(payload)
    )
    return HttpResponse("ok")


@machine_endpoint
@require_POST
def tiktok_webhook(request):
    """TikTok's webhook: Tiktok-Signature over "t.body", fresh within the tolerance, stored once."""
    if not settings.TIKTOK_CLIENT_SECRET:
        # Anyone can sign with an empty key: without the secret nothing is genuine (as WhatsApp's).
        logger.warning("tiktok webhook refused: TIKTOK_CLIENT_SECRET is not set")
        return HttpResponse(status=401)
    try:
        tiktok.webhook_verify(
            body=request.body,
            header=request.headers.get("Tiktok-Signature", ""),
            secret=settings.TIKTOK_CLIENT_SECRET,
            tolerance=settings.TIKTOK_WEBHOOK_TOLERANCE,
            now=int(time.time()),
        )
    except tiktok.TikTokError as error:
        logger.warning("tiktok webhook refused: %s", error)
        return HttpResponse(status=401 if error.code == "bad_signature" else 400)
    try:
        payload = json_loads(request.body)
    except ValueError:
        return HttpResponseBadRequest("body is not JSON")
    if not isinstance(payload, dict) or payload.get("client_key") != settings.TIKTOK_CLIENT_KEY:
        logger.warning("tiktok webhook refused: not for our client_key")
        return HttpResponse(status=401)
    if tiktok_event_store(body=request.body, payload=payload) is None:
        logger.info("tiktok webhook replayed; already stored")
    return HttpResponse("ok")


@require_GET
def status_actions(request, token):
    participant = participant_get_by_token(token=token)
    if participant is None:
        raise Http404("No such claim")

    # Referred sales are listed under the person's code, not as actions of theirs.
    claims = [
        claim for claim in participant_claims(participant=participant) if not claim.referred_purchase_id
    ]
    # A share whose disclosure must be fixed says by when, not only "Pending".
    cases = RemediationCase.objects.filter(participant_id=participant.pk, status=CaseStatus.OPEN)
    fix_by = dict(cases.values_list("claim_id", "deadline"))
    for claim in claims:
        claim.fix_by = fix_by.get(claim.pk)
    context = {
        "claims": claims,
        "now": timezone.now(),
        "licences": LicenceGrant.objects.filter(participant=participant)
        .select_related("terms__campaign__brand", "claim__rule")
        .order_by("-granted_at"),
        "token": token,
        "back": request.headers.get("HX-Current-URL", ""),
        "referrals": _referrals_for_status(request, participant),
        "consents": person_consents(participant=participant),
    }
    return render(request, "verification/_status_actions.html", context)


# What a referred sale's state means to the poster, in their words: a short badge, and a line.
REFERRAL_STATES = {
    "pending": (gettext_lazy("Pending"), gettext_lazy("Confirmed once the shop's return window closes")),
    "approved": (gettext_lazy("Confirmed"), ""),
    "needs_review": (gettext_lazy("Being checked"), gettext_lazy("The brand looks at this order first")),
    "rejected": (gettext_lazy("Returned"), gettext_lazy("The order came back: it earns nothing")),
    "clawed_back": (gettext_lazy("Taken back"), gettext_lazy("The order came back after it was paid")),
}


def _referrals_for_status(request, participant) -> list[dict]:
    """The person's code in each campaign that pays for referred sales (made on first showing),
    their link, and the orders it brought."""
    shown = []
    for campaign in referral_campaigns_of(participant=participant):
        code = referral_code_for(participant=participant, campaign=campaign)
        if code is None:
            continue
        sales = referral_sales(code=code)
        for sale in sales:
            sale.state, sale.note = REFERRAL_STATES.get(sale.status, (sale.get_status_display(), ""))
            sale.partly_returned = bool(sale.referred_purchase.refunds)
        shown.append(
            {
                "campaign": campaign,
                "code": code,
                "link": request.build_absolute_uri(
                    reverse("verification:referral_link", args=[campaign.slug, code.code])
                ),
                "sales": sales,
            }
        )
    return shown


@require_GET
def referral_link(request, slug, code):
    """A poster's link: the visit is remembered (its browser, to compare with the poster's own),
    then the buyer goes on to the shop, the code and the visit in the landing parameters the shop
    keeps with the order. A code that is not the campaign's goes to the campaign's page."""
    campaign = public_campaign_or_404(slug)
    address = client_address(request)
    misses = {
        "scope": "referral_miss",
        "key": address,
        "limit": REFERRAL_MISSES_PER_HOUR,
        "window_seconds": 3600,
    }
    if rate_limit_over(**misses):
        # Guessing codes finds none: after too many wrong ones even a right one waits.
        response = HttpResponse(
            _("Too many wrong codes from your connection. Please try again later."), status=429
        )
        response["Retry-After"] = "3600"
        return response
    found = referral_code_find(campaign=campaign, raw=code)
    landing = reverse("campaign_landing", args=[campaign.slug])
    if found is None or found.campaign_id != campaign.pk:
        rate_limit_hit(**misses)
        return redirect(landing)
    device, _new = browser_device(request)
    click = referral_click_record(code=found, device=device, client_ip=address)
    query = urlencode({LANDING_PARAMETER: found.code, CLICK_PARAMETER: click.public_id})
    # The campaign's own shop, else the brand's: a creators' campaign sells through the brand's shop.
    shops = ShopConnection.objects.filter(brand_id=campaign.brand_id, disconnected_at__isnull=True)
    shop = shops.filter(campaign=campaign).first() or shops.order_by("pk").first()
    if shop is None:
        return redirect(f"{landing}?{query}")
    if settings.SANDBOX:
        # The sandbox shop stands in for the shop's storefront (development and tests only).
        return redirect(reverse("verification:sandbox_shop", args=[shop.public_id]) + f"?{query}")
    return redirect(f"https://{shop.domain}/?{query}")


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
    context = {
        "brand": request.brand,
        "campaign": campaign,
        "claims": campaign_recent_claims(campaign=campaign),
    }
    return render(request, "verification/_recent_claims.html", context)


def steps_return_url(request, campaign) -> str:
    """Back to where the form was: the landing page, or the steps page when JavaScript is off."""
    if request.POST.get("from") == "page":
        return reverse("verification:steps", args=[campaign.slug])
    return reverse("campaign_landing", args=[campaign.slug]) + "#steps"


def _share_refused(request, campaign, *, trigger: str, message: str):
    request.session[SHARE_ATTEMPT] = {
        "trigger": trigger,
        "video_url": request.POST.get("video_url", "")[:500],
        "label_attested": request.POST.get("label_attested") == "on",
        "licence_accepted": request.POST.get("licence_accepted") == "on",
        "spark_code": request.POST.get("spark_code", "")[:200],
        "spark_days": request.POST.get("spark_days", "")[:4],
        "error": str(message),
    }
    return redirect(steps_return_url(request, campaign))


@require_POST
def share_submit_view(request, slug):
    """The person pastes the link of the video they posted; it is checked now and when its window closes."""
    campaign = public_campaign_or_404(slug)
    participant = browser_participant(request, campaign)
    trigger = request.POST.get("trigger", Trigger.UGC_SHARE)
    rule = campaign.rules.filter(trigger=trigger).first() if trigger in SHARE_TRIGGERS else None
    identity = participant.identities.filter(provider=Provider.TIKTOK).first() if participant else None
    if rule is None or identity is None:
        # Said at the top: without TikTok the video step is locked and shows no form to put it by.
        messages.error(request, _("Connect TikTok first, then share your video."))
        return redirect(steps_return_url(request, campaign))
    try:
        claim = share_submit(
            rule=rule,
            identity=identity,
            # A link typed wins over one of the person's recent videos chosen below it.
            video_url=(request.POST.get("video_url", "").strip() or request.POST.get("video_pick", ""))[:500],
            context=claim_context(request),
            label_attested=request.POST.get("label_attested") == "on",
            language=get_language(),
            licence_accepted=request.POST.get("licence_accepted") == "on",
            spark_code=request.POST.get("spark_code", "")[:200].strip(),
            spark_days=int(days) if (days := request.POST.get("spark_days", "")).isdigit() else None,
        )
    except ClaimRefused as refusal:
        return _share_refused(request, campaign, trigger=trigger, message=refusal.message)
    except tiktok.TikTokError:
        return _share_refused(
            request,
            campaign,
            trigger=trigger,
            message=_("TikTok did not answer. Please try again in a moment."),
        )
    if claim.reason == "disclosure_fix":
        messages.warning(
            request,
            _("Your video is in and your reward is reserved, but its disclosure needs a fix: see below."),
        )
    else:
        messages.success(request, _("Thank you! We check your video when its window closes."))
    return redirect(steps_return_url(request, campaign))


@require_POST
def share_window_close_view(request, slug):
    """Sandbox only: close a waiting video's engagement window now, so a demo need not wait for days."""
    if not settings.SANDBOX:
        raise Http404("The sandbox is off")
    campaign = public_campaign_or_404(slug)
    participant = browser_participant(request, campaign)
    claim_id = request.POST.get("claim", "")
    claim = (
        participant.claims.filter(campaign=campaign, pk=claim_id).first()
        if participant and claim_id.isdigit()
        else None
    )
    if claim is None:
        raise Http404("No such video")
    try:
        engagement_window_close_now(claim_id=claim.pk)
    except tiktok.TikTokError:
        messages.error(request, _("TikTok did not answer. Please try again in a moment."))
    return redirect(steps_return_url(request, campaign))


class _UploadTooLarge(FileUploadHandler):
    """Stops reading a chosen file past TikTok's limit, instead of storing gigabytes to refuse them."""

    def receive_data_chunk(self, raw_data, start):
        if start + len(raw_data) > settings.TIKTOK_POST_MAX_BYTES:
            self.request.upload_too_large = True
            raise StopUpload(connection_reset=False)
        return raw_data

    def file_complete(self, file_size):
        return None


@csrf_exempt  # checked below, once the size guard is in place (the CSRF check reads the body)
@require_POST
def tiktok_post_view(request, slug):
    """ "Post it through JoyBack": the chosen video is stored (on disk, as Django streams it) and a
    worker publishes it with the disclosure label on after the commit."""
    request.upload_handlers.insert(0, _UploadTooLarge(request))
    # A declared length over the limit is refused before a byte of it is read.
    declared = request.META.get("CONTENT_LENGTH", "")
    if declared.isdigit() and int(declared) > settings.TIKTOK_POST_MAX_BYTES + 64 * 1024:
        request.upload_too_large = True
        request._files, request._post = MultiValueDict(), QueryDict()  # the form is not read at all
        messages.error(request, str(posting.REFUSALS["video_too_large"]))
        return redirect(reverse("campaign_landing", args=[public_campaign_or_404(slug).slug]) + "#steps")
    return _tiktok_post(request, slug)


@csrf_protect
def _tiktok_post(request, slug):
    campaign = public_campaign_or_404(slug)
    landing = reverse("campaign_landing", args=[campaign.slug]) + "#steps"
    participant = browser_participant(request, campaign)
    trigger = request.POST.get("trigger", Trigger.UGC_SHARE)
    rule = campaign.rules.filter(trigger=trigger).first() if trigger in SHARE_TRIGGERS else None
    identity = publishing_identity(participant=participant)
    if rule is None or identity is None:
        messages.error(request, _("Connect TikTok first, then share your video."))
        return redirect(landing)
    if getattr(request, "upload_too_large", False):
        messages.error(request, str(posting.REFUSALS["video_too_large"]))
        return redirect(landing)
    form = request.POST
    try:
        posting.tiktok_post_start(
            rule=rule,
            identity=identity,
            upload=request.FILES.get("video"),
            text=form.get("caption", "")[:2200],
            language=get_language(),
            licence_accepted=form.get("licence_accepted") == "on",
            privacy_level=form.get("privacy_level", ""),
            allow_comment=form.get("allow_comment") == "on",
            allow_duet=form.get("allow_duet") == "on",
            allow_stitch=form.get("allow_stitch") == "on",
            your_brand=form.get("your_brand") == "on",
            duration_reported=form.get("duration", ""),
        )
    except posting.PostRefused as refusal:
        if refusal.code == "publish_consent":
            messages.error(request, refusal.message)
            return redirect(landing)
        # The posting screen again, with what was picked and the refusal next to its field.
        return _compose_render(request, campaign=campaign, rule=rule, identity=identity, refusal=refusal)
    except ClaimRefused as refusal:
        messages.error(request, refusal.message)
    else:
        messages.success(
            request,
            _(
                "Your video is on its way to TikTok, with the “Paid partnership” label on. It may take a "
                "few minutes to appear on your TikTok profile. This page updates by itself."
            ),
        )
    return redirect(landing)


def _compose_render(request, *, campaign, rule, identity, refusal=None):
    """The posting screen: who will post (TikTok's creator_info), the privacy to pick, comments,
    duets and stitches, the disclosure that stays on, and the caption as it will go out. A
    fragment for htmx, a page of its own otherwise."""
    values = request.POST if request.method == "POST" else QueryDict()
    context = {
        "campaign": campaign,
        "rule": rule,
        "refusal": refusal,
        "error_field": getattr(refusal, "field", ""),
        "values": values,
        "landing": reverse("campaign_landing", args=[campaign.slug]) + "#steps",
        "post_max_bytes": settings.TIKTOK_POST_MAX_BYTES,
        "disclosure": disclosure_for(campaign=campaign, language=get_language()),
        "licence_terms": licence_terms_current(campaign=campaign),
        "caption_max": tiktok.CAPTION_MAX,
        "sandbox": settings.SANDBOX,
    }
    try:
        creator = posting.creator_info_get(identity=identity)
    except posting.CannotPostNow as cannot:
        context["cannot_post"] = cannot.message
    except posting.PostRefused as problem:
        context["cannot_post"] = problem.message
    else:
        if tiktok.PUBLIC not in (creator.get("privacy_level_options") or []):
            context["cannot_post"] = posting.failure_text("private_only")
        context |= {
            "creator": creator,
            "avatar_src": _avatar_src(creator.get("creator_avatar_url", "")),
            "privacy_choices": posting.privacy_choices(creator=creator),
            "interactions": [
                {
                    "name": name,
                    "label": label,
                    "off": bool(creator.get(f"{name}_disabled")),
                    "on": values.get(f"allow_{name}") == "on",
                }
                for name, label in INTERACTIONS
            ],
        }
    context |= _caption_preview_context(
        campaign=campaign, text=values.get("caption", ""), participant=identity.participant
    )
    context["trigger"] = rule.trigger
    status = 400 if refusal is not None else 200
    if request.htmx:
        return render(request, "verification/_post_compose.html", context, status=status)
    return render(request, "verification/post_compose_page.html", context, status=status)


# The interactions TikTok lets a poster allow, as its posting screens name them.
INTERACTIONS = (
    ("comment", gettext_lazy("Allow comment")),
    ("duet", gettext_lazy("Duet")),
    ("stitch", gettext_lazy("Stitch")),
)


def _avatar_src(url: str) -> str:
    """The creator's picture as the browser loads it: TikTok's https URL; the sandbox TikTok's is
    on this site."""
    if settings.SANDBOX and url.startswith("http://sandbox.localhost/"):
        return url.removeprefix("http://sandbox.localhost")
    return url if url.startswith("https://") else ""


def _caption_preview_context(*, campaign, text: str, participant=None) -> dict:
    code = posting.caption_referral_code(campaign=campaign, participant=participant)
    caption = posting.caption_compose(
        campaign=campaign, text=text[:2200], language=get_language(), referral_code=code
    )
    length = tiktok.utf16_length(caption)
    return {"caption_preview": caption, "caption_length": length, "caption_over": length > tiktok.CAPTION_MAX}


@require_GET
def tiktok_post_compose_view(request, slug):
    """ "Post it through JoyBack": the posting screen for one video step."""
    campaign = public_campaign_or_404(slug)
    landing = reverse("campaign_landing", args=[campaign.slug]) + "#steps"
    participant = browser_participant(request, campaign)
    trigger = request.GET.get("trigger", Trigger.UGC_SHARE)
    rule = campaign.rules.filter(trigger=trigger).first() if trigger in SHARE_TRIGGERS else None
    identity = publishing_identity(participant=participant)
    if rule is None or identity is None or not participant_can_publish(participant=participant):
        if request.htmx:
            return HttpResponse(status=204)
        messages.error(request, _("Connect TikTok first, then share your video."))
        return redirect(landing)
    return _compose_render(request, campaign=campaign, rule=rule, identity=identity)


@require_GET
def tiktok_post_caption_view(request, slug):
    """The caption exactly as it will be posted, and its length as TikTok counts it, while typing."""
    campaign = public_campaign_or_404(slug)
    context = _caption_preview_context(
        campaign=campaign,
        text=request.GET.get("caption", ""),
        participant=browser_participant(request, campaign),
    )
    trigger = request.GET.get("trigger", "")
    context |= {"caption_max": tiktok.CAPTION_MAX, "trigger": trigger if trigger in SHARE_TRIGGERS else ""}
    return render(request, "verification/_caption_preview.html", context)


@require_POST
def share_recheck_view(request, slug):
    """The person says they fixed their caption: look again now, before the deadline."""
    campaign = public_campaign_or_404(slug)
    landing = steps_return_url(request, campaign)
    participant = browser_participant(request, campaign)
    claim = (
        participant.claims.filter(
            campaign=campaign, reason="disclosure_fix", pk=request.POST.get("claim", 0)
        ).first()
        if participant and str(request.POST.get("claim", "")).isdigit()
        else None
    )
    if claim is None:
        messages.error(request, _("There is no video of yours waiting for a fix."))
        return redirect(landing)
    try:
        claim = remediation_recheck(claim_id=claim.pk)
    except tiktok.TikTokError:
        messages.error(request, _("TikTok did not answer. Please try again in a moment."))
        return redirect(landing)
    if claim.reason == "disclosure_fix":
        messages.warning(request, _("Your caption still needs the change described below."))
    else:
        messages.success(request, _("Thank you, your disclosure is fixed."))
    return redirect(landing)


@brand_member_required()
def review_queue(request):
    context = {
        "brand": request.brand,
        "membership": request.membership,
        "roles": roles,
        "claims": review_queue_for_brand(brand=request.brand),
        "decisions": review_decisions_for_brand(brand=request.brand),
    }
    return render(request, "verification/review_queue.html", context)


@brand_member_required(roles.REVIEW, money=True)
@require_POST
@reauthentication_required
def review_decide(request, claim_id):
    claim = claim_get_for_brand(brand=request.brand, claim_id=claim_id)
    if claim is None:
        raise Http404("No such claim")
    try:
        claim_review(
            claim=claim,
            decided_by=request.user,
            decision=request.POST.get("decision", ""),
            reason=request.POST.get("reason", "")[:300],
        )
    except ClaimRefused as refusal:
        messages.error(request, refusal.message)
    else:
        messages.success(request, _("Decision recorded."))
    return redirect("verification:review_queue", brand_slug=request.brand.slug)
