"""Pat's posting screen for "Post it through JoyBack", rule by rule as TikTok's Direct Post guidelines
have it: the account that will post, the privacy picked with none preselected, comments, duets and
stitches off unless switched on, the account's longest video, the branded-content disclosure that
JoyBack's campaigns keep on, the caption as it will go out (counted as TikTok counts it), the status
after posting, and what to do when TikTok will not let the account post now."""

import io
import random
import re
import struct

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from campaigns.services.funding import campaign_budget_account
from tests.verification.test_tiktok_posting import DISCLOSURE, connect, mp4, post_video, posted, stored_files
from verification import posting
from verification.models import ActionClaim, SandboxTikTokPublish, TikTokPost

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


@pytest.fixture(autouse=True)
def uploads(settings, tmp_path):
    settings.STORAGES = {
        **settings.STORAGES,
        "video_uploads": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "uploads")},
        },
    }
    return tmp_path / "uploads"


def screen(client, campaign, **headers) -> str:
    response = client.get(
        reverse("verification:tiktok_post_compose", args=[campaign.slug]),
        {"trigger": "ugc_share"},
        headers=headers,
    )
    assert response.status_code == 200
    return response.content.decode()


def tag(html: str, name: str, value: str = "") -> str:
    """The <input> of this name (and value), as the browser gets it."""
    pattern = rf'<input[^>]*name="{name}"' + (rf'[^>]*value="{value}"' if value else "") + r"[^>]*>"
    found = re.search(pattern, html)
    assert found, f"no input {name} {value}"
    return found.group(0)


def sent_post_info() -> dict:
    return SandboxTikTokPublish.objects.get().post_info


def nothing_stored(uploads) -> bool:
    return not TikTokPost.objects.exists() and not stored_files(uploads)


# Who posts: creator_info, before anything else.


def test_the_screen_shows_the_tiktok_account_that_will_post(client, summer):
    connect(client, summer, display_name="Pat Creator")

    html = screen(client, summer)

    assert "Posting to TikTok as" in html
    assert "<strong>Pat Creator</strong>" in html and "@patcreator" in html
    avatar = re.search(r'<img class="creator-avatar" src="([^"]+)"', html).group(1)
    assert avatar.startswith("/sandbox/tiktok/avatar/") and avatar.endswith(".svg")
    assert client.get(avatar)["Content-Type"] == "image/svg+xml"


def test_htmx_gets_the_screen_as_a_fragment_and_a_browser_without_it_a_page(client, summer):
    connect(client, summer)

    fragment, page = screen(client, summer, **HTMX), screen(client, summer)

    assert "<html" not in fragment and 'name="privacy_level"' in fragment
    assert "<html" in page and 'name="privacy_level"' in page


def test_a_browser_that_has_not_let_joyback_post_gets_no_screen(client, summer):
    connect(client, summer, publish=False)
    url = reverse("verification:tiktok_post_compose", args=[summer.slug])

    assert client.get(url, {"trigger": "ugc_share"}, headers=HTMX).status_code == 204
    page = client.get(url, {"trigger": "ugc_share"}, follow=True).content.decode()
    assert "Connect TikTok first" in page and 'name="privacy_level"' not in page


# Privacy: from the account's options, none preselected, never private for branded content.


def test_no_privacy_is_preselected_and_posting_without_one_is_refused(client, summer, uploads):
    connect(client, summer)
    html = screen(client, summer)
    assert "<fieldset" in html and "<legend>Who can see this video</legend>" in html
    radios = re.findall(r'<input type="radio" name="privacy_level"[^>]*>', html)
    assert len(radios) == 4 and not any("checked" in radio for radio in radios)

    response = post_video(client, summer, mp4(), privacy="")

    assert response.status_code == 400
    page = response.content.decode()
    assert "Choose who can see your video." in page
    assert 'class="choices privacy invalid"' in page
    assert "autofocus" in tag(page, "privacy_level", "PUBLIC_TO_EVERYONE")  # the first radio takes the focus
    assert nothing_stored(uploads)


def test_only_me_is_greyed_out_for_branded_content_and_refused(client, summer, uploads):
    connect(client, summer)
    html = screen(client, summer)
    assert "disabled" in tag(html, "privacy_level", "SELF_ONLY")
    assert "Branded content cannot be private." in html

    response = post_video(client, summer, mp4(), privacy="SELF_ONLY")

    assert response.status_code == 400
    assert "Branded content cannot be private on TikTok" in response.content.decode()
    assert nothing_stored(uploads)


@pytest.mark.parametrize(
    ("privacy", "said"),
    [
        ("FRIENDS", "Your TikTok account does not offer this privacy setting."),
        ("MUTUAL_FOLLOW_FRIENDS", "Only a video everyone can see can earn this reward."),
    ],
)
def test_a_privacy_the_account_does_not_offer_or_that_earns_nothing_is_refused(
    client, summer, uploads, privacy, said
):
    connect(client, summer)

    response = post_video(client, summer, mp4(), privacy=privacy)

    assert response.status_code == 400 and said in response.content.decode()
    assert nothing_stored(uploads)


def test_the_privacy_picked_is_the_one_sent(client, summer, django_capture_on_commit_callbacks):
    connect(client, summer)

    posted(client, summer, django_capture_on_commit_callbacks)

    assert sent_post_info()["privacy_level"] == "PUBLIC_TO_EVERYONE"
    assert TikTokPost.objects.get().chosen["privacy_level"] == "PUBLIC_TO_EVERYONE"


# Comments, duets, stitches: off unless switched on; greyed out where the account has them off.


def test_interactions_are_off_until_switched_on(client, summer, django_capture_on_commit_callbacks):
    connect(client, summer, display_name="Pat Creator")
    html = screen(client, summer)
    for name in ("allow_comment", "allow_duet"):
        assert "checked" not in tag(html, name) and "disabled" not in tag(html, name)
    assert "Allow comment" in html and "Duet" in html and "Stitch" in html

    posted(client, summer, django_capture_on_commit_callbacks)

    info = sent_post_info()
    assert (info["disable_comment"], info["disable_duet"], info["disable_stitch"]) == (True, True, True)


def test_interactions_switched_on_are_allowed_where_the_account_allows_them(
    client, summer, django_capture_on_commit_callbacks
):
    connect(client, summer, display_name="Pat Creator")

    posted(
        client,
        summer,
        django_capture_on_commit_callbacks,
        allow_comment="on",
        allow_duet="on",
        allow_stitch="on",
    )

    info = sent_post_info()
    # The sandbox account has stitches off: switched on here, it stays off.
    assert (info["disable_comment"], info["disable_duet"], info["disable_stitch"]) == (False, False, True)


def test_an_account_with_comments_off_greys_them_out_and_keeps_them_off(
    client, summer, django_capture_on_commit_callbacks
):
    connect(client, summer, display_name="Lena limited")
    html = screen(client, summer)
    assert "disabled" in tag(html, "allow_comment") and "disabled" in tag(html, "allow_duet")
    assert "Switched off on your TikTok account." in html

    posted(client, summer, django_capture_on_commit_callbacks, allow_comment="on", allow_duet="on")

    info = sent_post_info()
    assert (info["disable_comment"], info["disable_duet"]) == (True, True)


# The account's longest video, refused before the upload.


def test_a_video_longer_than_the_account_allows_is_refused_in_words(client, summer, uploads):
    connect(client, summer, display_name="Lena limited")
    assert "Your TikTok account can post videos of up to 15 seconds." in screen(client, summer)

    response = post_video(client, summer, mp4(seconds=20))

    assert response.status_code == 400
    assert "This video is 20 seconds long; your TikTok account can post videos of up to 15 seconds." in (
        response.content.decode()
    )
    assert nothing_stored(uploads) and not SandboxTikTokPublish.objects.exists()


def test_a_video_within_the_accounts_length_goes_out(client, summer, django_capture_on_commit_callbacks):
    connect(client, summer, display_name="Lena limited")

    posted(client, summer, django_capture_on_commit_callbacks, video=mp4(seconds=14.5))

    assert TikTokPost.objects.get().chosen["duration_sec"] == 14.5
    assert SandboxTikTokPublish.objects.exists()


def test_a_webm_is_measured_by_the_browser_and_refused_without_a_length(client, summer, uploads):
    connect(client, summer, display_name="Lena limited")

    def webm():
        return SimpleUploadedFile("clip.webm", b"\x1aE\xdf\xa3" + b"\x00" * 2000, content_type="video/webm")

    too_long = post_video(client, summer, webm(), duration="31.2")
    unknown = post_video(client, summer, webm())

    assert "This video is 32 seconds long" in too_long.content.decode()
    assert "We could not read how long this video is." in unknown.content.decode()
    assert nothing_stored(uploads)


# The disclosure: on, and on it stays, for JoyBack pays for the post.


def test_the_branded_content_disclosure_is_on_and_cannot_be_switched_off(client, summer):
    connect(client, summer)

    html = screen(client, summer)

    switch = re.search(
        r'<input type="checkbox" role="switch" checked disabled[^>]*>\s*<span>Disclose video', html
    )
    assert switch, "the disclosure switch is on and cannot be changed"
    assert re.search(r'<input type="checkbox" checked disabled>\s*<span>Branded content', html)
    assert "checked" not in tag(html, "your_brand")
    assert "Your video will be labelled “Paid partnership”." in html
    assert "Branded Content Policy" in html and "Music Usage Confirmation" in html
    assert html.index("Music Usage Confirmation") < html.index("Post it on TikTok")


def test_branded_content_goes_out_whatever_the_form_says_and_your_brand_adds_to_it(
    client, summer, django_capture_on_commit_callbacks
):
    connect(client, summer)

    posted(client, summer, django_capture_on_commit_callbacks, your_brand="on", brand_content_toggle="")

    info = sent_post_info()
    assert (info["brand_content_toggle"], info["brand_organic_toggle"]) == (True, True)


# The caption as it will be posted, counted in UTF-16 code units.


def test_the_caption_preview_is_the_caption_as_posted_with_its_length(client, summer):
    connect(client, summer)

    preview = client.get(
        reverse("verification:tiktok_post_caption", args=[summer.slug]),
        {"caption": "  Morning   ritual ☕️🙂 ", "trigger": "ugc_share"},
        headers=HTMX,
    ).content.decode()

    caption = f"{DISCLOSURE} Morning ritual ☕️🙂"
    assert f"<code>{caption}</code>" in preview
    assert f"{len(caption) + 1} of 2200 characters" in preview  # the emoji counts 2, the coffee cup 1 + 1


def test_a_caption_of_emoji_over_tiktoks_utf16_limit_is_refused(client, summer, uploads):
    connect(client, summer)
    emoji = "🙂" * 1090  # 1,090 characters, 2,180 UTF-16 units: with the disclosure, over 2,200

    response = post_video(client, summer, mp4(), caption=emoji)

    assert response.status_code == 400
    assert "an emoji counts as 2" in response.content.decode()
    assert nothing_stored(uploads)


# After posting: it may take a few minutes; the status is asked for while the person watches.


def test_after_posting_the_step_says_it_may_take_minutes_and_reads_tiktoks_status(
    client, summer, django_capture_on_commit_callbacks
):
    connect(client, summer)
    with django_capture_on_commit_callbacks(execute=True):
        post_video(client, summer, mp4())  # the webhooks TikTok sent are not processed
    assert TikTokPost.objects.get().status == "processing"

    steps = client.get(reverse("verification:steps", args=[summer.slug]), headers=HTMX).content.decode()

    assert TikTokPost.objects.get().status == "public"  # status/fetch said so
    assert ActionClaim.objects.filter(rule__trigger="ugc_share").exists()
    assert "Posted through JoyBack" in steps


def test_while_tiktok_processes_the_step_says_it_may_take_a_few_minutes(
    client, summer, settings, django_capture_on_commit_callbacks
):
    settings.SANDBOX_TIKTOK_HOLD_MODERATION = True
    connect(client, summer)
    with django_capture_on_commit_callbacks(execute=True):
        post_video(client, summer, mp4())

    steps = client.get(reverse("verification:steps", args=[summer.slug]), headers=HTMX).content.decode()

    assert "It may take a few minutes for your video to appear on your TikTok profile." in steps
    assert TikTokPost.objects.get().status == "published"  # TikTok has it; moderation is pending


# When TikTok will not let the account post now: said in words, with the other way.


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("Bea banned", "TikTok does not let this account post through apps at the moment"),
        ("Cai capped", "TikTok has limited how many people JoyBack can post for today"),
    ],
)
def test_an_account_that_cannot_post_now_is_told_why_and_offered_the_link(
    client, summer, uploads, name, said
):
    connect(client, summer, display_name=name)

    html = screen(client, summer)
    response = post_video(client, summer, mp4())

    assert said in html and "Paste a link to a video posted in the app" in html
    assert 'name="privacy_level"' not in html
    assert said in response.content.decode()
    assert nothing_stored(uploads) and campaign_budget_account(campaign=summer).held == 0


def test_the_login_step_no_longer_says_joyback_never_posts(client, summer):
    steps = client.get(reverse("verification:steps", args=[summer.slug]), headers=HTMX).content.decode()

    assert "We never post for you" not in steps
    assert "only the video you choose, when you press Post" in steps


@pytest.mark.parametrize(
    ("accept_language", "said"),
    [
        ("de", ["Wer dieses Video sehen kann", "Videoinhalt offenlegen", "Bestätigung zur Musiknutzung"]),
        (
            "es",
            [
                "Quién puede ver este vídeo",
                "Declarar el contenido del vídeo",
                "Confirmación de uso de música",
            ],
        ),
        ("zh-CN", ["谁可以观看此视频", "披露视频内容", "音乐使用确认"]),
    ],
)
def test_the_posting_screen_speaks_the_persons_language(client, summer, accept_language, said):
    connect(client, summer)

    html = screen(client, summer, **{"Accept-Language": accept_language})

    assert all(words in html for words in said)


# The length read from the file: MP4 and MOV keep it in the movie header, wherever that is.


def box(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I4s", 8 + len(body), kind) + body


def test_a_movie_header_after_the_media_and_in_version_1_is_read():
    mvhd_v1 = b"\x01\x00\x00\x00" + b"\x00" * 16 + struct.pack(">IQ", 600, 600 * 42) + b"\x00" * 80
    file = io.BytesIO(
        box(b"ftyp", b"qt  " * 4) + box(b"mdat", b"\x00" * 5000) + box(b"moov", box(b"mvhd", mvhd_v1))
    )

    assert posting.mp4_duration(file) == 42.0
    assert file.tell() == 0  # left where the upload reads it from


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x00\x00\x00\x01mdat",
        b"\x1aE\xdf\xa3" * 40,
        box(b"moov", b"\x00\x00\x00\x04free"),
        random.Random(7).randbytes(3000),
    ],
)
def test_a_file_without_a_readable_movie_header_has_no_length(data):
    assert posting.mp4_duration(io.BytesIO(data)) is None
