"""The sandbox TikTok's studio: the tester's side of TikTok (post videos, set their counts and growth,
delete them, pass moderation, make ad codes, revoke access)."""

from urllib.parse import urlencode

from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from verification.models import (
    SandboxTikTokGrant,
    SandboxTikTokPublish,
    SandboxTikTokUser,
    SandboxTikTokVideo,
)
from verification.sandbox.tiktok.business import AD_CODE_DAYS, ad_code_generate
from verification.sandbox.tiktok.common import sandbox_only, webhook_deliver
from verification.sandbox.tiktok.content_posting import publish_moderated
from verification.sandbox.tiktok.display_api import video_post, video_short_url


@require_http_methods(["GET", "POST"])
def studio(request):
    """The tester's side of TikTok: post videos, set their counts, delete them, revoke access."""
    sandbox_only(request)
    if request.method == "POST":
        action = request.POST.get("action")
        if action == "post":
            name = request.POST.get("display_name", "").strip()[:60]
            user = SandboxTikTokUser.objects.filter(display_name=name).first()
            if user is not None:
                video_post(user=user, caption=request.POST.get("caption", "")[:2200], **_counts(request.POST))
        video = SandboxTikTokVideo.objects.filter(video_id=request.POST.get("video_id", "")).first()
        if video is not None and action == "update":
            SandboxTikTokVideo.objects.filter(pk=video.pk).update(**_counts(request.POST))
        elif video is not None and action == "delete":
            SandboxTikTokVideo.objects.filter(pk=video.pk).update(deleted=True)
            publish = SandboxTikTokPublish.objects.filter(video=video).first()
            if publish is not None:
                # The docs' own spelling of the event.
                content = {
                    "publish_id": publish.publish_id,
                    "post_id": video.video_id,
                    "publish_type": "DIRECT_PUBLISH",
                }
                webhook_deliver(
                    event="post.publish.no_longer_publicaly_available", user=video.user, content=content
                )
        publish = SandboxTikTokPublish.objects.filter(publish_id=request.POST.get("publish_id", "")).first()
        if publish is not None and action == "moderate" and publish.status == "PUBLISH_COMPLETE":
            publish_moderated(publish)
        elif video is not None and action == "growth":
            SandboxTikTokVideo.objects.filter(pk=video.pk).update(**_growth(request.POST))
        elif video is not None and action == "ad_code":
            ad_code_generate(video=video, days=int(request.POST.get("days", "30") or 30))
        user = SandboxTikTokUser.objects.filter(open_id=request.POST.get("open_id", "")).first()
        if user is not None and action == "revoke":
            SandboxTikTokGrant.objects.filter(user=user).update(access_token=None, refresh_token=None)
            webhook_deliver(event="authorization.removed", user=user, content={"reason": 1})
        back = _studio_back(request.POST.get("next", ""))
        return redirect(
            reverse("verification:sandbox_tiktok_studio") + (f"?{urlencode({'next': back})}" if back else "")
        )
    users = list(SandboxTikTokUser.objects.order_by("display_name").prefetch_related("videos__ad_codes"))

    for user in users:
        for video in user.videos.all():
            video.short_url = video_short_url(video)
    in_moderation = SandboxTikTokPublish.objects.filter(
        status="PUBLISH_COMPLETE", video__isnull=True, post_info__privacy_level="PUBLIC_TO_EVERYONE"
    ).select_related("grant__user")
    context = {
        "users": users,
        "in_moderation": in_moderation,
        "back": _studio_back(request.GET.get("next", "")),
        "ad_code_days": AD_CODE_DAYS,
    }
    return render(request, "sandbox/tiktok_studio.html", context)


def _growth(form) -> dict:
    values = {}
    for field in ("views_per_hour", "report_lag_minutes", "dip_every"):
        try:
            values[field] = max(0, int(form.get(field, "0") or 0))
        except ValueError:
            values[field] = 0
    return values


def _studio_back(path: str) -> str:
    """Where the campaign page that sent the tester here is: a path on this site, nothing else."""
    return path if path.startswith("/") and not path.startswith("//") and "\\" not in path else ""


def _counts(form) -> dict:
    counts = {}
    for field in ("view_count", "like_count", "comment_count", "share_count"):
        try:
            counts[field] = max(0, int(form.get(field, "0") or 0))
        except ValueError:
            counts[field] = 0
    return counts
