"""Posting through JoyBack: the person's video published on their TikTok with the disclosure on.

TikTok cannot report its "Paid partnership" label back, so a post JoyBack makes is the one share
whose disclosure is known: the label is switched on by the request (brand_content_toggle) and the
caption starts with the campaign's disclosure wording. What was sent is stored with the publish_id
as the evidence, and the claim records `label: set_by_joyback` instead of the person's attestation.

The request only stores the chosen file (streamed to disk by Django's upload handler, never read
into memory) and holds the reward on the budget; a worker uploads it after the commit, chunk by
chunk. TikTok's status (its post.publish.* webhooks, or status/fetch when they are late) moves the
post on; the claim is made once the post is public, because its post_id is what the engagement
check reads. A post that fails releases the hold, deletes the file and tells the person why.

Before anything is stored, TikTok is asked who is posting (creator_info): the person sees that
account, picks the privacy from the options it offers (none preselected), switches comments, duets
and stitches on if they want them (off unless they do, and never where the account has them off),
and the video must fit the account's longest allowed post. The branded-content disclosure is on and
cannot be switched off: JoyBack pays for the post.

A post TikTok would only publish privately (an app it has not audited yet, or a private account)
is not made at all: TikTok's rules forbid private branded content, and a private video reaches
nobody, so it could never earn a reach reward. The person is told so and can post it themselves.
"""

import logging
import struct
import uuid
from datetime import timedelta
from pathlib import PurePath

import httpx
from django.conf import settings
from django.core.cache import cache
from django.core.files.storage import storages
from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext, gettext_lazy

from campaigns.fees import fee_for_reward, fee_plan_for
from campaigns.models import ActionRule, LicenceTerms
from campaigns.services.funding import campaign_budget_account
from compliance.selectors import caption_verdict, disclosure_for
from compliance.services import caption_check_record
from joyback.ledger.models import Hold
from joyback.ledger.services import InsufficientFunds, hold_reserve, hold_void
from joyback.modes import brand_livemode, provider_routed_for
from joyback.queue import enqueue_on_commit, task_schedule_once
from verification.content import licence_grant_record, licence_terms_for_share, purchase_gate, share_reward
from verification.models import ActionClaim, ClaimStatus, Identity, PostStatus, TikTokPost, TikTokToken
from verification.providers import tiktok
from verification.reach import reach_ceiling
from verification.referrals import referral_code_for
from verification.services.participants import tiktok_tokens_store
from verification.services.refusals import ClaimRefused
from verification.services.rewards import claim_allowed_check, rule_lock
from verification.services.shares import engagement_recheck_schedule

logger = logging.getLogger(__name__)

LABEL = "set_by_joyback"
VIDEO_TYPES = {"video/mp4", "video/quicktime", "video/webm"}
UPLOAD_MAX_ATTEMPTS = 5
RETRY_AFTER = timedelta(minutes=1)  # video/init allows 6 a minute per token
POLL_EVERY = timedelta(minutes=2)  # status/fetch allows 30 a minute; webhooks usually come first
POLL_FOR = timedelta(hours=24)  # moderation usually takes a minute, sometimes hours

# TikTok's failures that trying again soon will not fix, and those worth another attempt.
TRANSIENT = {"rate_limit_exceeded", "internal_error", "internal", "network", "invalid_response"}

# What the person is told when their post did not go out, by TikTok's code (or ours).
FAILURES = {
    "private_only": gettext_lazy(
        "TikTok only lets JoyBack post privately for now (the app is awaiting TikTok's review, or "
        "your account is private). A private video reaches nobody, and TikTok does not allow private "
        "paid partnerships, so we did not post it and it cannot earn this reward. You can post it "
        "yourself with the disclosure and paste the link below."
    ),
    "spam_risk_too_many_posts": gettext_lazy(
        "TikTok says you have posted through apps as often as it allows today. Please try again tomorrow, "
        "or post it yourself and paste the link below."
    ),
    "spam_risk_user_banned_from_posting": gettext_lazy(
        "TikTok does not let this account post through apps at the moment, so we could not post your video."
    ),
    "reached_active_user_cap": gettext_lazy(
        "TikTok has limited how many people JoyBack can post for today. Please try again tomorrow, "
        "or post it yourself and paste the link below."
    ),
    "publish_consent": gettext_lazy(
        "TikTok no longer lets JoyBack post for you. Allow posting again to retry."
    ),
    "file_format_check_failed": gettext_lazy(
        "TikTok could not read this file as a video. Please choose an MP4, MOV or WebM video."
    ),
    "duration_check_failed": gettext_lazy("TikTok refused the video's length (3 seconds to 10 minutes)."),
    "frame_rate_check_failed": gettext_lazy(
        "TikTok refused the video's frame rate (23 to 60 frames a second)."
    ),
    "picture_size_check_failed": gettext_lazy(
        "TikTok refused the video's size (at least 360 pixels each way)."
    ),
    "spam_risk_text": gettext_lazy("TikTok refused the caption. Please change your words and try again."),
    "upload_failed": gettext_lazy(
        "We could not get your video to TikTok after several tries. Please choose it again in a while."
    ),
    "already_claimed": gettext_lazy("This account has already claimed this reward."),
    "privacy_changed": gettext_lazy(
        "Your TikTok account no longer offers the privacy you picked, so we did not post it. "
        "Please choose again."
    ),
}
FAILURES["unaudited_client_can_only_post_to_private_accounts"] = FAILURES["private_only"]
DEFAULT_FAILURE = gettext_lazy("TikTok did not publish your video. Please try again, or post it yourself.")

# Why a chosen file or caption is refused before anything is stored.
REFUSALS = {
    "publish_consent": gettext_lazy("Allow JoyBack to post on your TikTok first."),
    "video_missing": gettext_lazy("Choose your video file."),
    "video_type": gettext_lazy("Choose an MP4, MOV or WebM video."),
    "video_too_large": gettext_lazy("This video is larger than TikTok takes (4 GB)."),
    "caption_too_long": gettext_lazy(
        "Your caption is too long for TikTok: with the disclosure it may have at most 2,200 characters, "
        "and an emoji counts as 2."
    ),
    "creator_unavailable": gettext_lazy("TikTok did not answer. Please try again in a moment."),
    "privacy_missing": gettext_lazy("Choose who can see your video."),
    "privacy_not_offered": gettext_lazy(
        "Your TikTok account does not offer this privacy setting. Choose one of those listed."
    ),
    "privacy_branded_private": gettext_lazy(
        "Branded content cannot be private on TikTok, so “Only me” is not available. Choose who can see it."
    ),
    "privacy_not_rewarded": gettext_lazy(
        "Only a video everyone can see can earn this reward. Choose “Everyone”."
    ),
    "video_too_long": gettext_lazy(
        "This video is %(length)s seconds long; your TikTok account can post videos of up to %(seconds)s "
        "seconds. Please choose a shorter one."
    ),
    "video_length_unknown": gettext_lazy(
        "We could not read how long this video is. Please choose an MP4, MOV or WebM video "
        "that plays on your phone."
    ),
    "caption_fails": gettext_lazy(
        "With these words the caption would not pass the disclosure check (another brand named as "
        "sponsor, say). Please change them."
    ),
}


def failure_text(code: str) -> str:
    return str(FAILURES.get(code, DEFAULT_FAILURE))


# Which field of the posting screen a refusal is about, so the page can point at it.
REFUSAL_FIELDS = {
    "privacy_missing": "privacy",
    "privacy_not_offered": "privacy",
    "privacy_branded_private": "privacy",
    "privacy_not_rewarded": "privacy",
    "video_missing": "video",
    "video_type": "video",
    "video_too_large": "video",
    "video_too_long": "video",
    "video_length_unknown": "video",
    "caption_too_long": "caption",
    "caption_fails": "caption",
}

# How each of TikTok's privacy levels reads on the posting screen.
PRIVACY_LABELS = {
    "PUBLIC_TO_EVERYONE": gettext_lazy("Everyone"),
    "MUTUAL_FOLLOW_FRIENDS": gettext_lazy("Friends (followers you follow back)"),
    "FOLLOWER_OF_CREATOR": gettext_lazy("Followers"),
    "SELF_ONLY": gettext_lazy("Only me"),
}


class PostRefused(ClaimRefused):
    def __init__(self, code: str, **params):
        super().__init__(code)
        self.params = params

    @property
    def message(self) -> str:
        text = REFUSALS.get(self.code)
        if text is None:
            return super().message
        return str(text) % self.params if self.params else str(text)

    @property
    def field(self) -> str:
        return REFUSAL_FIELDS.get(self.code, "")


class CannotPostNow(PostRefused):
    """creator_info says this creator cannot post through an app now (TikTok's can_post errors)."""

    @property
    def message(self) -> str:
        return failure_text(self.code)


def _storage():
    return storages["video_uploads"]


def publish_token(*, identity: Identity) -> TikTokToken | None:
    """The person's live token if they let JoyBack post (video.publish granted), else None."""
    token = TikTokToken.objects.filter(identity=identity, revoked_at__isnull=True).first()
    if token is None or tiktok.PUBLISH_SCOPE not in token.scope.split(","):
        return None
    return token


def caption_compose(*, campaign, text: str, language: str, referral_code: str = "") -> str:
    """The campaign's disclosure first, then the person's own words, then their referral code
    when the campaign pays for the sales it brings (verification/referrals.py)."""
    wording = disclosure_for(campaign=campaign, language=language)["wording"]
    text = " ".join(text.split())
    caption = f"{wording} {text}".strip() if text else wording
    if referral_code:
        with translation.override(language or "en"):
            caption += " " + gettext("Code: %(code)s") % {"code": referral_code}
    return caption


def caption_referral_code(*, campaign, participant) -> str:
    """The person's referral code in the campaign, made on first use; "" when it pays none."""
    if participant is None:
        return ""
    code = referral_code_for(participant=participant, campaign=campaign)
    return code.code if code is not None else ""


def creator_info_get(*, identity: Identity) -> dict:
    """Who would post, and what their account allows, from TikTok's creator_info: asked before the
    posting screen is shown and again when the person presses Post."""
    token = publish_token(identity=identity)
    if token is None:
        raise PostRefused("publish_consent")
    try:
        with provider_routed_for(livemode=brand_livemode(identity.brand_id)):
            return tiktok.creator_info_query(access_token=_fresh_token(token).access_token)
    except tiktok.TikTokError as error:
        if error.code in tiktok.CANNOT_POST:
            raise CannotPostNow(error.code) from None
        if error.code in ("scope_not_authorized", "access_token_invalid"):
            raise PostRefused("publish_consent") from None
        raise PostRefused("creator_unavailable") from None
    except httpx.HTTPError:
        raise PostRefused("creator_unavailable") from None


def privacy_choices(*, creator: dict) -> list[dict]:
    """The privacy levels the creator's account offers, in TikTok's order, each with why it cannot
    be picked here (or "")."""
    offered = creator.get("privacy_level_options") or []
    choices = []
    for level in [level for level in tiktok.PRIVACY_LEVELS if level in offered]:
        if level == tiktok.PRIVATE:
            why = gettext_lazy("Branded content cannot be private.")
        elif level != tiktok.PUBLIC:
            why = gettext_lazy("Only a video everyone can see earns this reward.")
        else:
            why = ""
        choices.append({"value": level, "label": PRIVACY_LABELS[level], "why_not": why})
    return choices


def post_choices_check(
    *,
    creator: dict,
    privacy_level: str,
    allow_comment: bool,
    allow_duet: bool,
    allow_stitch: bool,
    your_brand: bool,
) -> dict:
    """What the person picked, checked against what their account offers. Nothing is preselected:
    no privacy is no post. An interaction the account has switched off stays off."""
    if not privacy_level:
        raise PostRefused("privacy_missing")
    if privacy_level not in (creator.get("privacy_level_options") or []):
        raise PostRefused("privacy_not_offered")
    if privacy_level == tiktok.PRIVATE:
        raise PostRefused("privacy_branded_private")
    if privacy_level != tiktok.PUBLIC:
        raise PostRefused("privacy_not_rewarded")
    return {
        "privacy_level": privacy_level,
        "allow_comment": bool(allow_comment) and not creator.get("comment_disabled", False),
        "allow_duet": bool(allow_duet) and not creator.get("duet_disabled", False),
        "allow_stitch": bool(allow_stitch) and not creator.get("stitch_disabled", False),
        "your_brand": bool(your_brand),
        "branded_content": True,  # JoyBack pays for the post: the disclosure cannot be switched off
    }


def mp4_duration(file) -> float | None:
    """An MP4 or MOV file's length in seconds, from its movie header (moov/mvhd), or None."""
    try:
        file.seek(0)
        end = None
        for _ in range(64):
            header = file.read(8)
            if len(header) < 8:
                return None
            size, kind = struct.unpack(">I4s", header)
            skip = 8
            if size == 1:
                size, skip = struct.unpack(">Q", file.read(8))[0], 16
            if kind == b"moov":
                end = file.tell() - skip + size if size else None
                break
            if size < skip:
                return None
            file.seek(size - skip, 1)
        else:
            return None
        for _ in range(64):
            if end is not None and file.tell() >= end:
                return None
            header = file.read(8)
            if len(header) < 8:
                return None
            size, kind = struct.unpack(">I4s", header)
            if kind == b"mvhd":
                version = file.read(4)[0]
                if version == 1:
                    file.read(16)
                    timescale, duration = struct.unpack(">IQ", file.read(12))
                else:
                    file.read(8)
                    timescale, duration = struct.unpack(">II", file.read(8))
                return duration / timescale if timescale else None
            if size < 8:
                return None
            file.seek(size - 8, 1)
        return None
    except (OSError, struct.error, IndexError, ValueError):
        return None
    finally:
        file.seek(0)


def video_duration(*, upload, reported: str) -> float | None:
    """How long the chosen video is: read from the file where it is an MP4 or MOV, else what the
    person's browser measured while showing the preview (WebM). None when neither is known."""
    measured = mp4_duration(upload)
    if measured is not None:
        return measured
    try:
        seconds = float(reported)
    except (TypeError, ValueError):
        return None
    return seconds if 0 < seconds < 24 * 3600 else None


def tiktok_post_start(
    *,
    rule: ActionRule,
    identity: Identity,
    upload,
    text: str,
    language: str = "en",
    licence_accepted: bool = False,
    privacy_level: str = "",
    allow_comment: bool = False,
    allow_duet: bool = False,
    allow_stitch: bool = False,
    your_brand: bool = False,
    duration_reported: str = "",
) -> TikTokPost:
    """Store the chosen file and hold the reward; a worker sends it to TikTok after the commit."""
    if publish_token(identity=identity) is None:
        raise PostRefused("publish_consent")
    purchases = purchase_gate(rule=rule, participant=identity.participant)  # a buyers-only step stays closed
    terms = licence_terms_for_share(campaign=rule.campaign, accepted=licence_accepted)
    creator = creator_info_get(identity=identity)
    chosen = post_choices_check(
        creator=creator,
        privacy_level=privacy_level,
        allow_comment=allow_comment,
        allow_duet=allow_duet,
        allow_stitch=allow_stitch,
        your_brand=your_brand,
    )
    if upload is None or not upload.size:
        raise PostRefused("video_missing")
    if upload.size > settings.TIKTOK_POST_MAX_BYTES:
        raise PostRefused("video_too_large")
    content_type = (upload.content_type or "").split(";")[0].strip().lower()
    if content_type not in VIDEO_TYPES:
        raise PostRefused("video_type")
    # Refused here, before the upload, rather than by TikTok's duration check after it.
    length = video_duration(upload=upload, reported=duration_reported)
    if length is None:
        raise PostRefused("video_length_unknown")
    longest = int(creator.get("max_video_post_duration_sec") or 0)
    if longest and length > longest:
        raise PostRefused("video_too_long", length=int(length + 0.999), seconds=longest)
    chosen["duration_sec"] = round(length, 2)
    caption = caption_compose(
        campaign=rule.campaign,
        text=text,
        language=language,
        referral_code=caption_referral_code(campaign=rule.campaign, participant=identity.participant),
    )
    if tiktok.utf16_length(caption) > tiktok.CAPTION_MAX:
        raise PostRefused("caption_too_long")
    # The label is on by construction; the caption must still pass as it will appear.
    verdict = caption_verdict(campaign=rule.campaign, caption=caption, platform="tiktok", label_on=True)
    if not verdict.passed:
        raise PostRefused("caption_fails")
    suffix = PurePath(upload.name or "").suffix.lower()[:8] or ".mp4"
    # Saved before the transaction (a big file takes a while): the lock is never held over it.
    file_name = _storage().save(f"tiktok/{uuid.uuid4().hex}{suffix}", upload)
    try:
        with transaction.atomic(durable=True):
            rule = rule_lock(rule)
            claim_allowed_check(rule=rule, identity=identity)
            if (
                TikTokPost.objects.filter(rule=rule, identity=identity)
                .exclude(status=PostStatus.FAILED)
                .exists()
            ):
                raise PostRefused("post_under_way")
            post = TikTokPost.objects.create(
                campaign=rule.campaign,
                brand_id=rule.campaign.brand_id,
                rule=rule,
                participant=identity.participant,
                identity=identity,
                caption=caption,
                file_name=file_name,
                content_type=content_type,
                video_size=upload.size,
                chosen=chosen,
                licence_terms_id=terms.pk if terms else None,
                licence_language=(language or "")[:10] if terms else "",
            )
            amount = share_reward(rule=rule, purchases=purchases)
            if rule.pays_by_reach:
                amount = reach_ceiling(rule=rule, participant=identity.participant, per_video=amount)
                if amount <= 0:
                    raise ClaimRefused("reach_cap")
            # The reward and the platform's fee on it, as a waiting claim holds them: the claim made
            # when the post is public commits the reward and frees the fee for its charge; a post
            # that fails releases both with the one hold.
            plan = fee_plan_for(brand=rule.campaign.brand, currency=rule.campaign.currency)
            try:
                hold = hold_reserve(
                    account=_budget(rule),
                    amount=amount + fee_for_reward(plan=plan, amount=amount),
                    idempotency_key=f"tiktok-post-hold:{post.pk}",
                    reference=f"tiktok-post:{post.pk}",
                )
            except InsufficientFunds:
                raise ClaimRefused("fully_claimed") from None
            TikTokPost.objects.filter(pk=post.pk).update(hold_id=hold.pk, reward_amount=amount)
            caption_check_record(
                campaign=rule.campaign,
                verdict=verdict,
                caption=caption,
                claim_id=None,
                stage="before_post",
                label_state=LABEL,
            )
            enqueue_on_commit("verification.tasks.tiktok_post_upload_task", post.pk)
    except BaseException:
        _storage().delete(file_name)
        raise
    post.refresh_from_db()
    return post


def _budget(rule: ActionRule):
    return campaign_budget_account(campaign=rule.campaign)


def _fresh_token(token: TikTokToken) -> TikTokToken:
    if token.access_expires_at <= timezone.now() + timedelta(minutes=1):
        with provider_routed_for(livemode=brand_livemode(token.identity.brand_id)):
            tokens = tiktok.token_refresh(refresh_token=token.refresh_token)
        token = tiktok_tokens_store(identity=token.identity, tokens=tokens)
    return token


def tiktok_post_upload(*, post_id: int) -> TikTokPost:
    """The worker's half: creator_info, video/init with the label on, the file in chunks."""
    # The conditional update claims the work: a second worker on the same post finds it taken.
    if not TikTokPost.objects.filter(pk=post_id, status=PostStatus.STORED).update(
        status=PostStatus.UPLOADING, updated_at=timezone.now()
    ):
        return TikTokPost.objects.get(pk=post_id)
    post = TikTokPost.objects.select_related("identity").get(pk=post_id)
    token = publish_token(identity=post.identity)
    if token is None:
        return _post_fail(post, "publish_consent")
    with provider_routed_for(livemode=brand_livemode(post.brand_id)):
        return _post_upload(post, token)


def _post_upload(post: TikTokPost, token: TikTokToken) -> TikTokPost:
    try:
        token = _fresh_token(token)
        creator = tiktok.creator_info_query(access_token=token.access_token)
        options = creator.get("privacy_level_options") or []
        if tiktok.PUBLIC not in options:
            return _post_fail(post, "private_only")
        privacy = (post.chosen or {}).get("privacy_level", tiktok.PUBLIC)
        if privacy not in options:
            return _post_fail(post, "privacy_changed")
        body = tiktok.direct_post_body(
            caption=post.caption,
            privacy_level=privacy,
            video_size=post.video_size,
            creator=creator,
            choices=post.chosen,
        )
        publish_id, upload_url = tiktok.video_init(access_token=token.access_token, body=body)
        # Kept before the file goes: TikTok's webhooks name the post by this publish_id.
        TikTokPost.objects.filter(pk=post.pk).update(publish_id=publish_id, sent=body)
        with _storage().open(post.file_name, "rb") as file:
            tiktok.video_upload(
                upload_url=upload_url,
                file=file,
                video_size=post.video_size,
                content_type=post.content_type,
                source_info=body["source_info"],
            )
    except tiktok.TikTokError as error:
        return _upload_error(post, error.code)
    except httpx.HTTPError:
        return _upload_error(post, "network")
    TikTokPost.objects.filter(pk=post.pk, status=PostStatus.UPLOADING).update(
        status=PostStatus.PROCESSING, updated_at=timezone.now()
    )
    _poll_schedule(post)
    post.refresh_from_db()
    return post


def _upload_error(post: TikTokPost, code: str) -> TikTokPost:
    if code == "unaudited_client_can_only_post_to_private_accounts":
        return _post_fail(post, "private_only")
    if code in ("scope_not_authorized", "access_token_invalid"):
        return _post_fail(post, "publish_consent")
    if code in TRANSIENT and post.attempts + 1 < UPLOAD_MAX_ATTEMPTS:
        # Tried again later from the start: an interrupted upload cannot be resumed elsewhere.
        TikTokPost.objects.filter(pk=post.pk, status=PostStatus.UPLOADING).update(
            status=PostStatus.STORED, attempts=post.attempts + 1, publish_id=None, updated_at=timezone.now()
        )
        task_schedule_once(
            name=f"tiktok-post-upload-{post.pk}-{post.attempts + 1}",
            func="verification.tasks.tiktok_post_upload_task",
            arg=post.pk,
            at=timezone.now() + RETRY_AFTER * (post.attempts + 1),
        )
        logger.info("tiktok post %s: %s, trying again", post.pk, code)
        post.refresh_from_db()
        return post
    return _post_fail(post, "upload_failed" if code in TRANSIENT else code)


def _post_fail(post: TikTokPost, code: str) -> TikTokPost:
    """The post did not go out: its hold released, its file deleted, the reason kept for the person."""
    with transaction.atomic(durable=True):
        locked = TikTokPost.objects.select_for_update().get(pk=post.pk)
        if locked.status in (PostStatus.FAILED, PostStatus.PUBLIC):
            return locked
        _post_hold_release(locked)
        locked.status, locked.failure = PostStatus.FAILED, code[:60]
        locked.save(update_fields=["status", "failure", "updated_at"])
        file_name = locked.file_name
        transaction.on_commit(lambda: _file_drop(locked.pk, file_name))
    logger.info("tiktok post %s failed: %s", post.pk, code)
    return locked


def _post_reward(post: TikTokPost) -> int:
    if post.reward_amount is not None:
        return post.reward_amount
    return Hold.objects.get(pk=post.hold_id).amount if post.hold_id else post.rule.reward_amount


def _post_hold_release(post: TikTokPost) -> None:
    if post.hold_id:
        hold = Hold.objects.get(pk=post.hold_id)
        if hold.status == "reserved":
            hold_void(hold=hold)


def _file_drop(post_id: int, file_name: str) -> None:
    if file_name:
        _storage().delete(file_name)
        TikTokPost.objects.filter(pk=post_id, file_name=file_name).update(file_name="")


def _poll_schedule(post: TikTokPost) -> None:
    task_schedule_once(
        name=f"tiktok-post-poll-{post.pk}-{int(timezone.now().timestamp())}",
        func="verification.tasks.tiktok_post_poll_task",
        arg=post.pk,
        at=timezone.now() + POLL_EVERY,
    )


def tiktok_post_status(*, publish_id: str, status: tiktok.PublishStatus) -> str:
    """TikTok's word on a post (a webhook or status/fetch): moves it on, never back."""
    post = TikTokPost.objects.filter(publish_id=publish_id).first()
    if post is None:
        return "unknown_publish_id"
    if status.status == "FAILED":
        return f"failed {_post_fail(post, status.fail_reason or 'internal').status}"
    if status.status == "NO_LONGER_PUBLIC":
        # The engagement check at the window's end finds it gone and releases the reward.
        return "no_longer_public"
    if status.status != "PUBLISH_COMPLETE":
        return "processing"
    if not status.post_id:
        TikTokPost.objects.filter(
            pk=post.pk, status__in=[PostStatus.UPLOADING, PostStatus.PROCESSING]
        ).update(status=PostStatus.PUBLISHED, updated_at=timezone.now())
        _file_drop(post.pk, post.file_name)  # TikTok has the video
        return "published"
    return tiktok_post_public(post_id=post.pk, video_id=status.post_id)


def tiktok_post_public(*, post_id: int, video_id: str) -> str:
    """The post is public: its claim, with the held reward and the record of what was sent."""
    with transaction.atomic(durable=True):
        post = (
            TikTokPost.objects.select_for_update()
            .select_related("rule__campaign", "identity")
            .get(pk=post_id)
        )
        if post.status in (PostStatus.PUBLIC, PostStatus.FAILED):
            return "already_" + post.status
        if ActionClaim.objects.filter(rule=post.rule, identity=post.identity).exists():
            # The person also submitted a link of their own meanwhile; that claim stands.
            _post_hold_release(post)
            post.status, post.failure, post.post_id = PostStatus.FAILED, "already_claimed", video_id
            post.save(update_fields=["status", "failure", "post_id", "updated_at"])
            return "already_claimed"
        rule = post.rule
        claim = ActionClaim.objects.create(
            campaign=post.campaign,
            brand_id=post.brand_id,
            rule=rule,
            participant=post.participant,
            identity=post.identity,
            status=ClaimStatus.PENDING,
            reason="awaiting_window",
            # What was held for the post without its fee: the product's reward, or a reach share's
            # most (a post held before fees were held with it: its whole hold).
            amount=_post_reward(post),
            currency=post.campaign.currency,
            hold_id=post.hold_id,
            evidence={
                "video": {"video_id": video_id, "caption": post.caption},
                "label": LABEL,
                "label_state": LABEL,
                "posted_through_joyback": {
                    "publish_id": post.publish_id,
                    "sent": post.sent,
                    "tiktok_post": post.pk,
                },
            },
            check_at=timezone.now() + timedelta(hours=rule.window_hours),
        )
        if post.licence_terms_id:
            terms = LicenceTerms.objects.get(pk=post.licence_terms_id)
            licence_grant_record(claim=claim, terms=terms, language=post.licence_language)
        post.status, post.post_id, post.claim = PostStatus.PUBLIC, video_id, claim
        post.save(update_fields=["status", "post_id", "claim", "updated_at"])
        caption_check_record(
            campaign=post.campaign,
            verdict=caption_verdict(campaign=post.campaign, caption=post.caption, label_on=True),
            caption=post.caption,
            claim_id=claim.pk,
            stage="submit",
            label_state=LABEL,
        )
        file_name = post.file_name
        transaction.on_commit(lambda: _file_drop(post.pk, file_name))
        transaction.on_commit(lambda: engagement_recheck_schedule(claim=claim))
    return "claimed"


def tiktok_post_poll(*, post_id: int) -> str:
    """status/fetch for a post TikTok's webhooks have not settled yet (they can be late or lost)."""
    post = TikTokPost.objects.select_related("identity").get(pk=post_id)
    if post.status not in (PostStatus.PROCESSING, PostStatus.PUBLISHED) or not post.publish_id:
        return post.status
    token = TikTokToken.objects.filter(identity=post.identity, revoked_at__isnull=True).first()
    if token is None:
        return "no_token"
    try:
        with provider_routed_for(livemode=brand_livemode(post.brand_id)):
            status = tiktok.publish_status_fetch(
                access_token=_fresh_token(token).access_token, publish_id=post.publish_id
            )
    except (tiktok.TikTokError, httpx.HTTPError) as error:
        logger.info("tiktok post %s: status/fetch failed: %s", post.pk, error)
        outcome = "poll_failed"
    else:
        outcome = tiktok_post_status(publish_id=post.publish_id, status=status)
    post.refresh_from_db()
    if (
        post.status in (PostStatus.PROCESSING, PostStatus.PUBLISHED)
        and timezone.now() - post.created_at < POLL_FOR
    ):
        _poll_schedule(post)
    return outcome


REFRESH_EVERY = 10  # seconds; status/fetch allows 30 a minute per token, the page asks every 3


def tiktok_post_refresh(*, post: TikTokPost) -> None:
    """While the person watches the step: TikTok's publish status (status/fetch), at most every
    REFRESH_EVERY seconds a post, moves it on without waiting for the webhooks or the poll task."""
    if post.status not in (PostStatus.PROCESSING, PostStatus.PUBLISHED) or not post.publish_id:
        return
    if not cache.add(f"tiktok-post-refresh:{post.pk}", 1, REFRESH_EVERY):
        return
    token = TikTokToken.objects.filter(identity_id=post.identity_id, revoked_at__isnull=True).first()
    if token is None:
        return
    try:
        with provider_routed_for(livemode=brand_livemode(post.brand_id)):
            status = tiktok.publish_status_fetch(
                access_token=_fresh_token(token).access_token, publish_id=post.publish_id
            )
    except (tiktok.TikTokError, httpx.HTTPError) as error:
        logger.info("tiktok post %s: status/fetch failed: %s", post.pk, error)
        return
    tiktok_post_status(publish_id=post.publish_id, status=status)


def tiktok_post_event(*, payload: dict) -> str:
    """A post.publish.* webhook, already verified and stored once."""
    parsed = tiktok.publish_event(payload)
    if parsed is None:
        return "ignored"
    publish_id, status = parsed
    return tiktok_post_status(publish_id=publish_id, status=status)


STALE_STORED = timedelta(minutes=15)  # its upload task was queued long ago: lost with a worker
STALE_UPLOADING = timedelta(hours=2)  # a 4 GB upload takes far less; its worker died mid-way


def tiktok_posts_stalled(*, now=None) -> int:
    """Safety net: posts whose task was lost or whose worker died are taken up again, and posts
    TikTok has not settled are asked about; how many were touched."""
    now = now or timezone.now()
    stored = list(
        TikTokPost.objects.filter(status=PostStatus.STORED, updated_at__lt=now - STALE_STORED).values_list(
            "pk", flat=True
        )[:100]
    )
    for post_id in stored:
        tiktok_post_upload(post_id=post_id)
    stuck = TikTokPost.objects.filter(status=PostStatus.UPLOADING, updated_at__lt=now - STALE_UPLOADING)[:100]
    for post in stuck:
        _upload_error(post, "network")
    unsettled = list(
        TikTokPost.objects.filter(
            status__in=[PostStatus.PROCESSING, PostStatus.PUBLISHED],
            updated_at__lt=now - POLL_EVERY,
            created_at__gt=now - POLL_FOR,
        ).values_list("pk", flat=True)[:100]
    )
    for post_id in unsettled:
        tiktok_post_poll(post_id=post_id)
    return len(stored) + len(stuck) + len(unsettled)
