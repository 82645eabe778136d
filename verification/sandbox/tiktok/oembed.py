"""The sandbox TikTok's oEmbed: a public video's embed card, as www.tiktok.com/oembed serves it."""

from django.http import JsonResponse
from django.utils.text import slugify

from verification.models import SandboxTikTokVideo
from verification.sandbox.tiktok.common import sandbox_only
from verification.sandbox.tiktok.display_api import video_share_url


def oembed(request):
    """GET https://www.tiktok.com/oembed?url=...: a public video's embed card, as TikTok serves it."""
    sandbox_only(request)
    url = request.GET.get("url", "")
    video_id = (
        "".join(ch for ch in url.rsplit("/video/", 1)[-1].split("?")[0] if ch.isdigit())
        if "/video/" in url
        else ""
    )
    video = SandboxTikTokVideo.objects.filter(video_id=video_id, deleted=False).select_related("user").first()
    if video is None:
        return JsonResponse({"code": 400, "message": "Something went wrong"}, status=400)
    handle = slugify(video.user.display_name).replace("-", "") or "user"
    share_url = video_share_url(video)
    html = (
        f'<blockquote class="tiktok-embed" cite="{share_url}" data-video-id="{video.video_id}" '
        f'style="max-width: 605px;min-width: 325px;" > <section> <a target="_blank" title="@{handle}" '
        f'href="https://www.tiktok.com/@{handle}?refer=embed">@{handle}</a> </section> </blockquote> '
        '<script async src="https://www.tiktok.com/embed.js"></script>'
    )
    return JsonResponse(
        {
            "version": "1.0",
            "type": "video",
            "title": video.caption[:150],
            "author_url": f"https://www.tiktok.com/@{handle}",
            "author_name": video.user.display_name,
            "width": "100%",
            "height": "100%",
            "html": html,
            "thumbnail_width": 576,
            "thumbnail_height": 1024,
            "thumbnail_url": f"https://p16-sign.sandbox.localhost/{video.video_id}~tplv-noop.image",
            "provider_url": "https://www.tiktok.com",
            "provider_name": "TikTok",
            "author_unique_id": handle,
            "embed_product_id": video.video_id,
            "embed_type": "video",
        }
    )
