"""The brand's content library, the person's licence on their status page, and the sandbox's
"read the views now" for reach shares."""

from urllib.parse import urlsplit

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from campaigns.access import brand_member_required
from campaigns.selectors import campaigns_for_brand
from verification.content import (
    LIBRARY_FILTERS,
    content_library,
    content_library_claim,
    content_library_csv,
    licence_revoke,
    video_embed,
)
from verification.models import LicenceGrant
from verification.providers import tiktok
from verification.reach import reach_recheck
from verification.selectors import participant_get_by_token
from verification.services.refusals import ClaimRefused
from verification.sessions import browser_participant
from verification.views import public_campaign_or_404, steps_return_url


def _filters(request) -> dict:
    return {name: request.GET.get(name, "")[:20] for name in LIBRARY_FILTERS}


@brand_member_required()
@require_GET
def library(request):
    filters = _filters(request)
    context = {
        "brand": request.brand,
        "membership": request.membership,
        "claims": content_library(brand=request.brand, filters=filters),
        "campaigns": campaigns_for_brand(brand=request.brand),
        "filters": filters,
        "query": request.GET.urlencode(),
        "now": timezone.now(),
    }
    template = (
        "verification/content_library.html#library-rows"
        if request.htmx
        else "verification/content_library.html"
    )
    return render(request, template, context)


@brand_member_required()
@require_GET
def library_csv(request):
    rows = content_library(brand=request.brand, filters=_filters(request))
    response = HttpResponse(content_library_csv(rows=rows), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{request.brand.slug}-content.csv"'
    return response


@brand_member_required()
@require_GET
def library_item(request, share_id):
    claim = content_library_claim(brand=request.brand, claim_id=share_id)
    if claim is None:
        raise Http404("No such video")
    video = claim.evidence.get("video", {})
    url = video.get("share_url") or claim.evidence.get("submitted_url", "")
    context = {
        "brand": request.brand,
        "membership": request.membership,
        "claim": claim,
        "embed": video_embed(url=url, livemode=request.brand.livemode) if url else None,
        "video_url": url,
        "now": timezone.now(),
    }
    return render(request, "verification/content_item.html", context)


def _local_path(url: str) -> str:
    path = urlsplit(url or "").path
    return path if path.startswith("/") and not path.startswith("//") else ""


@require_POST
def licence_revoke_view(request, token, grant_id):
    """From the person's status page: the licence they granted with a share ends for the future."""
    participant = participant_get_by_token(token=token)
    if participant is None:
        raise Http404("No such claim")
    try:
        licence_revoke(participant=participant, grant_id=grant_id)
        messages.success(
            request, _("Your licence is taken back. The brand may not use your video from now on.")
        )
    except LicenceGrant.DoesNotExist:
        raise Http404("No such licence") from None
    except ClaimRefused as refusal:
        messages.error(request, refusal.message)
    back = _local_path(request.POST.get("back", ""))
    if back:
        return redirect(back)
    return redirect("verification:status_actions", token=token)


@require_POST
def reach_read_now_view(request, slug):
    """Sandbox only: read a reach share's views now, as the next scheduled re-check would."""
    if not settings.SANDBOX:
        raise Http404("The sandbox is off")
    campaign = public_campaign_or_404(slug)
    participant = browser_participant(request, campaign)
    claim_id = request.POST.get("claim", "")
    claim = (
        participant.claims.filter(campaign=campaign, pk=claim_id, status="pending").first()
        if participant and claim_id.isdigit()
        else None
    )
    if claim is None:
        raise Http404("No such video")
    try:
        reach_recheck(claim_id=claim.pk)
    except tiktok.TikTokError:
        messages.error(request, _("TikTok did not answer. Please try again in a moment."))
    return redirect(steps_return_url(request, campaign))
