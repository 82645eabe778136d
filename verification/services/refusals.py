"""Why an action earned nothing: the refusal codes, their words and the exception that carries them."""

from django.utils.translation import gettext_lazy

from verification.models import (
    ActionClaim,
    Identity,
)

# What a person is told about an action that earned nothing, by refusal code. Codes are stored
# (an opt-in's outcome), the words are chosen when shown, in the reader's language.
REFUSALS = {
    "already_claimed": gettext_lazy("This account has already claimed this reward."),
    "one_per_person": gettext_lazy(
        "You have already earned this reward with another account. Each person earns it once."
    ),
    "number_taken": gettext_lazy("This WhatsApp number already belongs to another claim."),
    "fully_claimed": gettext_lazy(
        "This campaign is fully claimed: every reward has found its person. Thank you!"
    ),
    "rule_cap": gettext_lazy("All rewards for this action have been claimed."),
    "period_cap": gettext_lazy("You have reached this campaign's limit for now."),
    "allowance": gettext_lazy("You have reached the most this brand rewards one person."),
    "prerequisite": gettext_lazy("Do the step before this one first."),
    "prerequisite_in_review": gettext_lazy(
        "Your earlier step is being checked by the brand. You can go on once it is confirmed."
    ),
    "paused": gettext_lazy("This campaign is paused for the moment. Please come back later."),
    "ended": gettext_lazy("This campaign has ended. Thank you for your interest!"),
    "draft": gettext_lazy("This campaign has not started yet."),
    "not_started": gettext_lazy("This campaign has not started yet."),
    "video_link": gettext_lazy(
        "Paste the link of your TikTok video, like https://www.tiktok.com/@you/video/123… or "
        "https://vm.tiktok.com/… (in TikTok: Share, then Copy link)."
    ),
    "short_link_dead": gettext_lazy(
        "This TikTok link leads to no video. In TikTok, open your video, tap Share, then Copy link, "
        "and paste it here."
    ),
    "tiktok_reconnect": gettext_lazy("Please connect TikTok again, then share your video."),
    "video_not_found": gettext_lazy("We could not find this video on your TikTok account. Is it public?"),
    "disclosure_missing": gettext_lazy("Your caption must start with the disclosure shown above."),
    "post_under_way": gettext_lazy(
        "Your video is on its way to TikTok through JoyBack; it counts for this step once it is public."
    ),
    "review_decision": gettext_lazy("Choose approve or reject."),
    "review_reason": gettext_lazy("Give a reason for the decision."),
    "review_done": gettext_lazy("This claim has already been decided."),
    "licence_required": gettext_lazy("Read the licence above and agree to it to share your video."),
    "spark_code": gettext_lazy(
        "This Spark Ads code does not work for this video. Generate it in TikTok for the video you "
        "shared and paste it exactly as shown."
    ),
    "spark_days": gettext_lazy("Choose how long the Spark Ads code is valid, as you chose it in TikTok."),
    "purchase_required": gettext_lazy(
        "Only buyers can earn this reward: buy from the brand's shop first. This step opens once "
        "your purchase is confirmed."
    ),
    "purchase_pending": gettext_lazy(
        "Your purchase is still in its return window. This step opens once it is confirmed."
    ),
    "reach_cap": gettext_lazy("The reach rewards of this campaign are used up for you. Thank you!"),
    "licence_revoked": gettext_lazy("This licence was already taken back."),
}


def refusal_text(code: str) -> str:
    return str(REFUSALS.get(code, ""))


class ClaimRefused(Exception):
    """An action that earns nothing; `message` is for the person, in their language."""

    def __init__(self, code: str):
        super().__init__(code)
        self.code = code

    @property
    def message(self) -> str:
        return refusal_text(self.code)


class SecondAccount(ClaimRefused):
    """The same person came back with another account of the same provider: one person earns an
    action once, so it earns nothing, and their earlier claims go to review with the reason."""

    def __init__(self, *, first: ActionClaim, identity: Identity):
        super().__init__("one_per_person")
        self.participant_id = identity.participant_id
        self.detail = (
            f'second {identity.get_provider_display()} account {identity} for "{first.rule}", '
            f"already claimed by {first.identity} (claim #{first.pk})"
        )[:200]
