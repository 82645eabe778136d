from django.conf import settings
from django.db import models
from django.db.models.functions import Lower
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from campaigns.brief import brief_lines as brief_render


def default_person_allowance() -> int | None:
    """New brands start with a cap on what one person earns; they raise or lower it themselves."""
    return settings.PERSON_ALLOWANCE_DEFAULT or None


class VatIdCheck(models.TextChoices):
    """What the EU's VIES said of a brand's VAT number, in the brand's words."""

    UNCHECKED = "unchecked", _("Being checked with the EU's VIES")
    VALID = "valid", _("Confirmed by the EU's VIES")
    INVALID = "invalid", _("Not known to the EU's VIES")
    UNAVAILABLE = "unavailable", _("VIES could not answer; asked again shortly")


class Brand(models.Model):
    """The tenant: every brand-scoped row hangs off one of these."""

    name = models.CharField(max_length=120)
    slug = models.SlugField(max_length=60, unique=True)
    default_currency = models.CharField(max_length=3, default="EUR")
    person_allowance = models.BigIntegerField(
        default=default_person_allowance,
        null=True,
        blank=True,
        help_text="Most one person may earn across all of the brand's campaigns, in minor units",
    )
    # A disclosure counts for this brand's campaigns only if the sponsor it names is the brand:
    # these are the other names and handles it is known by.
    disclosure_names = models.JSONField(
        default=list,
        blank=True,
        help_text='Other names and handles a disclosure may name the brand by, e.g. ["@drinkalpaca"]',
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Who the brand is in law. Funding and payouts open only once platform staff verified these
    # (campaigns.services.brands.brand_verify); until then the brand tries everything else in the
    # sandbox.
    legal_name = models.CharField(max_length=200, blank=True, default="")
    registration_number = models.CharField(
        max_length=60, blank=True, default="", help_text="Company register number (e.g. HRB 12345)"
    )
    country = models.CharField(max_length=2, blank=True, default="", help_text="ISO 3166 alpha-2")
    # The brand's VAT identification number: inside the EU (outside the platform's own country) the
    # platform's invoices are reverse-charged only to a brand that gave one (campaigns.invoices).
    vat_id = models.CharField(max_length=20, blank=True, default="", db_default="")
    # What the EU's VIES said of `vies_vat_id` (the number asked about: a changed vat_id is asked
    # about again), kept as the evidence a reverse charge rests on: VIES's consultation number
    # (requestIdentifier) and its date. Written only by campaigns.services.brands.brand_vies_record,
    # from the answer of payouts' VIES check; read by campaigns.invoices.vat_for.
    vies_status = models.CharField(
        max_length=12,
        choices=VatIdCheck.choices,
        default=VatIdCheck.UNCHECKED,
        db_default=VatIdCheck.UNCHECKED,
    )
    vies_vat_id = models.CharField(max_length=20, blank=True, default="", db_default="")
    vies_request_identifier = models.CharField(max_length=40, blank=True, default="", db_default="")
    vies_request_date = models.CharField(max_length=40, blank=True, default="", db_default="")
    vies_checked_at = models.DateTimeField(null=True, blank=True)
    vies_error = models.CharField(max_length=40, blank=True, default="", db_default="")
    vies_next_check_at = models.DateTimeField(null=True, blank=True)
    verified_at = models.DateTimeField(null=True, blank=True)
    verified_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # Test mode: a brand's test data hangs off its test twin (livemode false, live_brand its live
    # brand), made on demand by campaigns.modes.brand_test_twin. A twin has its own campaigns,
    # participants, ledger accounts, keys and webhooks, so test and live are apart wherever brands are.
    livemode = models.BooleanField(default=True, db_default=True)
    live_brand = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="test_twin"
    )

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(livemode=True, live_brand__isnull=True)
                | models.Q(livemode=False, live_brand__isnull=False),
                name="campaigns_brand_test_twin_has_live_brand",
            )
        ]

    def __str__(self):
        return self.name

    @property
    def verified(self) -> bool:
        return self.verified_at is not None

    @property
    def sponsor_names(self) -> tuple[str, ...]:
        return tuple(name for name in self.disclosure_names or [] if isinstance(name, str) and name.strip())


class BrandVerification(models.Model):
    """What platform staff saw and decided when they verified a brand (or took it back); never
    edited, one row per decision."""

    class Action(models.TextChoices):
        VERIFIED = "verified", _("Verified")
        REVOKED = "revoked", _("Verification withdrawn")

    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="verifications")
    action = models.CharField(max_length=10, choices=Action.choices)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    legal_name = models.CharField(max_length=200)
    registration_number = models.CharField(max_length=60)
    country = models.CharField(max_length=2)
    owner_email = models.EmailField(help_text="The owner's verified email at the time")
    note = models.CharField(max_length=500, blank=True, default="")
    at = models.DateTimeField()

    class Meta:
        ordering = ["-at", "-pk"]

    def __str__(self):
        return f"{self.brand} {self.action} by {self.actor}"


class Role(models.TextChoices):
    OWNER = "owner", _("Owner")
    FINANCE = "finance", _("Finance")
    MARKETER = "marketer", _("Marketer")
    VIEWER = "viewer", _("Viewer")


class Membership(models.Model):
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=12, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)
    # A money role (owner, finance) one owner gave another person approves payouts only from here
    # on (FOUR_EYES_COOLING_DAYS later): else an owner could invite a second address of their own
    # and approve their own payouts at once. Null: no wait (the brand's creator, roles two staff
    # members confirmed).
    approves_from = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["brand", "user"], name="campaigns_one_membership_per_brand")
        ]

    def __str__(self):
        return f"{self.user} is {self.role} of {self.brand}"


class Invitation(models.Model):
    """An owner asked someone by email to join the brand in a role. Only the token's hash is kept;
    the link goes to that address alone. Never deleted: accepted, withdrawn or expired, the row
    says who invited whom, when, and who accepted."""

    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    role = models.CharField(max_length=12, choices=Role.choices)
    token_hash = models.CharField(max_length=64, unique=True)
    invited_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                "brand",
                Lower("email"),
                condition=models.Q(accepted_at__isnull=True, revoked_at__isnull=True),
                name="campaigns_one_open_invitation_per_email",
            )
        ]

    def __str__(self):
        return f"{self.email} invited to {self.brand} as {self.role}"


class Package(models.TextChoices):
    ALL_IN_ONE = "all_in_one", _("All-in-One")
    TIKTOK_ONLY = "tiktok_only", _("TikTok-only")
    WHATSAPP_REWARD = "whatsapp_reward", _("WhatsApp-with-reward")
    CASHBACK = "cashback", _("Cashback")


class CampaignStatus(models.TextChoices):
    DRAFT = "draft", _("Draft")
    LIVE = "live", _("Live")
    PAUSED = "paused", _("Paused")
    ENDED = "ended", _("Ended")


class Campaign(models.Model):
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="campaigns")
    name = models.CharField(max_length=120)
    slug = models.SlugField(max_length=60, unique=True, help_text="The public address: /c/<slug>/")
    package = models.CharField(max_length=20, choices=Package.choices)
    currency = models.CharField(max_length=3, default="EUR")
    countries = models.JSONField(default=list, help_text="ISO 3166 alpha-2 codes of countries served")
    languages = models.JSONField(default=list)
    headline = models.CharField(max_length=160, blank=True, default="")
    description = models.TextField(max_length=2000, blank=True, default="")
    # The brand's own words in other languages: {"de": {"headline": "...", "description": "..."}}.
    # A text missing in a language falls back to headline/description above.
    texts = models.JSONField(default=dict, blank=True)
    disclosure_text = models.CharField(
        max_length=300,
        blank=True,
        default="",
        help_text="Shown to people until the compliance wording exists",
    )
    starts_at = models.DateTimeField(null=True, blank=True)
    ends_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=CampaignStatus.choices, default=CampaignStatus.DRAFT)
    low_budget_threshold = models.BigIntegerField(
        default=0, help_text="Minor units; 0 means 10 rewards' worth"
    )
    per_identity_period_cap = models.PositiveIntegerField(null=True, blank=True)
    per_identity_period_days = models.PositiveIntegerField(default=30)
    # Shares only buyers can earn: the video step opens once the same person has a confirmed
    # purchase from the brand's shop (the Cashback API or a shop connector).
    share_requires_purchase = models.BooleanField(default=False, db_default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    status_changed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(ends_at__isnull=True)
                | models.Q(starts_at__isnull=True)
                | models.Q(ends_at__gt=models.F("starts_at")),
                name="campaigns_campaign_ends_after_start",
            )
        ]

    def __str__(self):
        return self.name

    def text(self, field: str, language: str | None) -> str:
        """The headline or description in this language, as the brand wrote it, else the main one."""
        return ((self.texts or {}).get(language or "") or {}).get(field) or getattr(self, field)

    @property
    def budget_subject(self) -> str:
        return f"campaign:{self.pk}"


class Trigger(models.TextChoices):
    TIKTOK_LOGIN = "tiktok_login", _("TikTok login")
    WHATSAPP_OPTIN = "whatsapp_optin", _("WhatsApp opt-in")
    UGC_SHARE = "ugc_share", _("UGC share")
    LIKE = "like", _("Like")
    COMMENT = "comment", _("Comment")
    VIEW_THRESHOLD = "view_threshold", _("View threshold")
    PURCHASE = "purchase", _("Purchase")
    CUSTOM = "custom", _("Custom action (reported by the brand's system)")
    # Not a step a person does: a poster's personal code brought a sale (verification/referrals.py).
    REFERRAL = "referral", _("Referred sale")


# The steps where the person publishes something, and so must disclose the paid promotion.
POSTING_TRIGGERS = (Trigger.UGC_SHARE, Trigger.VIEW_THRESHOLD)


class VerificationMode(models.TextChoices):
    INSTANT = "instant", _("Instant")
    ENGAGEMENT = "engagement", _("After an engagement window")


class ActionRule(models.Model):
    """One rewarded action of a campaign: "you set the rule"."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="rules")
    # Its campaign's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    trigger = models.CharField(max_length=20, choices=Trigger.choices)
    reward_amount = models.BigIntegerField(help_text="Minor units of the campaign's currency")
    verification_mode = models.CharField(
        max_length=12, choices=VerificationMode.choices, default=VerificationMode.INSTANT
    )
    window_hours = models.PositiveIntegerField(default=0)
    min_views = models.PositiveIntegerField(default=0)
    min_likes = models.PositiveIntegerField(default=0)
    min_comments = models.PositiveIntegerField(default=0)
    prerequisite = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="dependants"
    )
    total_cap = models.PositiveIntegerField(null=True, blank=True, help_text="At most this many rewards")
    position = models.PositiveSmallIntegerField(default=0)
    instructions = models.TextField(
        max_length=1000,
        blank=True,
        default="",
        help_text="What the rule asks of people, in the brand's words; checked before launch",
    )
    # Cashback (purchase rules): a share of the purchase in basis points, or reward_amount as a
    # fixed sum; either way reward_amount is the most one purchase earns.
    cashback_basis_points = models.PositiveIntegerField(
        null=True, blank=True, help_text="Cashback as a share of the purchase: 250 = 2.5 %; empty = fixed"
    )
    return_window_days = models.PositiveSmallIntegerField(
        default=0, help_text="Days a purchase may be returned before its cashback is confirmed"
    )
    # Rewards by reach (shares): paid in view tiers, [[views, minor units], ...] ascending, and/or per
    # thousand views; reward_amount is then the most one video earns. Re-checked over the window,
    # each re-check topping up what was paid before (campaigns.reach computes the value).
    reach_tiers = models.JSONField(default=list, blank=True, db_default=[])
    reach_per_thousand = models.BigIntegerField(
        null=True, blank=True, help_text="Minor units per 1,000 views; empty: tiers only"
    )
    reach_person_cap = models.BigIntegerField(
        null=True, blank=True, help_text="Most one person earns by reach in this campaign, minor units"
    )
    reach_campaign_cap = models.BigIntegerField(
        null=True, blank=True, help_text="Most all videos together earn by reach on this rule, minor units"
    )
    recheck_hours = models.PositiveIntegerField(
        default=0,
        db_default=0,
        help_text="Hours between re-checks of a reach share; 0: a quarter of the window",
    )
    # What a share earns by the product the person bought, {"SKU": minor units}; a product not listed
    # earns reward_amount (only with the campaign's purchase gate).
    product_rewards = models.JSONField(default=dict, blank=True, db_default={})
    # Referred sales (the referral rule): reward_amount is the fixed sum, or with cashback_basis_points
    # the most one order earns; these caps, in minor units, are the most one poster and the whole
    # campaign earn by referrals; a first order only, and a smallest order.
    referral_person_cap = models.BigIntegerField(
        null=True, blank=True, help_text="Most one poster earns by referred sales, minor units"
    )
    referral_campaign_cap = models.BigIntegerField(
        null=True, blank=True, help_text="Most all referred sales of the campaign earn, minor units"
    )
    referral_first_order_only = models.BooleanField(
        default=False, db_default=False, help_text="Only a buyer's first order with the brand earns"
    )
    referral_min_order = models.BigIntegerField(
        null=True, blank=True, help_text="Smallest order that earns a referral, minor units"
    )
    # What the brief asks as fields (campaigns.brief: show the product, tag, hashtags, post within
    # hours, keep public, the label, language, length, the flavour, the price may be said), rendered
    # to the creator in their language; only `instructions` beside them is free text to lint.
    brief = models.JSONField(default=dict, blank=True, db_default={})

    class Meta:
        ordering = ["position", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(reward_amount__gt=0), name="campaigns_rule_reward_positive"
            ),
            models.UniqueConstraint(fields=["campaign", "trigger"], name="campaigns_one_rule_per_trigger"),
            models.CheckConstraint(
                condition=models.Q(cashback_basis_points__isnull=True)
                | models.Q(cashback_basis_points__gt=0, cashback_basis_points__lte=10000),
                name="campaigns_rule_cashback_share",
            ),
            models.CheckConstraint(
                condition=models.Q(verification_mode="instant") | models.Q(window_hours__gt=0),
                name="campaigns_rule_engagement_has_window",
            ),
        ]

    def __str__(self):
        return f"{self.get_trigger_display()} on {self.campaign}"

    @property
    def pays_by_reach(self) -> bool:
        return bool(self.reach_tiers) or bool(self.reach_per_thousand)

    @property
    def step_title(self) -> str:
        """The step as the person doing it reads it ("Post a video"), not the rule's name ("UGC share")."""
        return str(STEP_TITLES.get(self.trigger, self.get_trigger_display()))

    @property
    def brief_lines(self) -> list[str]:
        """The brief's fields as the person reads them, in the active language."""
        return brief_render(self.brief or {})


class LicenceTerms(models.Model):
    """What a participant lets the brand do with the video they share; a change is a new version, so
    a grant always names the words the person saw."""

    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="licence_versions")
    # Its campaign's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    version = models.PositiveIntegerField()
    organic_reuse = models.BooleanField(help_text="Repost on the brand's own channels")
    paid_ads = models.BooleanField(help_text="Use in paid ads (Spark Ads on TikTok)")
    duration_days = models.PositiveIntegerField()
    territories = models.JSONField(default=list, help_text="ISO 3166 alpha-2 codes; empty: worldwide")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-version"]
        verbose_name = "licence terms"
        verbose_name_plural = "licence terms"
        constraints = [
            models.UniqueConstraint(fields=["campaign", "version"], name="campaigns_one_licence_version"),
            models.CheckConstraint(
                condition=models.Q(duration_days__gt=0), name="campaigns_licence_duration_positive"
            ),
        ]

    def __str__(self):
        return f"licence v{self.version} of {self.campaign}"


STEP_TITLES = {
    Trigger.TIKTOK_LOGIN: _("Connect your TikTok account"),
    Trigger.WHATSAPP_OPTIN: _("Get our news on WhatsApp"),
    Trigger.UGC_SHARE: _("Post a video about it on TikTok"),
    Trigger.LIKE: _("Like the brand's post"),
    Trigger.COMMENT: _("Comment on the brand's post"),
    Trigger.VIEW_THRESHOLD: _("Get views on your video"),
    Trigger.PURCHASE: _("Buy from the brand"),
    Trigger.CUSTOM: _("Complete the brand's action"),
    Trigger.REFERRAL: _("Share your code: earn on each sale it brings"),
}


class LandingVisitDay(models.Model):
    """How many people opened a campaign's landing page on a day (UTC): a counter, nothing about
    who. A visitor's repeat visits that day count once (campaigns.visits); bots and prefetches
    never count."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    # Its campaign's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    day = models.DateField()
    visits = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "day"], name="campaigns_one_visit_counter_per_day")
        ]

    def __str__(self):
        return f"{self.campaign_id} {self.day}: {self.visits}"


class LimitKind(models.TextChoices):
    """The limits staff set per brand and currency; each value is its platform default's setting name
    in lower case (config.variables)."""

    PAYOUT_APPROVAL_THRESHOLD = (
        "payout_approval_threshold",
        _("manual payout needing a second approver above"),
    )
    PAYOUT_BRAND_DAILY_LIMIT = "payout_brand_daily_limit", _("a brand's manual payouts in the window")
    PAYOUT_ACCOUNT_DAILY_LIMIT = (
        "payout_account_daily_limit",
        _("one bank account's manual payouts in the window"),
    )
    PAYOUT_WINDOW_APPROVAL_THRESHOLD = (
        "payout_window_approval_threshold",
        _("a brand's manual payouts in the window before each needs a second approver"),
    )
    RECONCILIATION_SECOND_APPROVAL_MINOR = (
        "reconciliation_second_approval_minor",
        _("a statement line booked to suspense needing a second approver above"),
    )
    FRAUD_CLAIMS_PER_ADDRESS_PER_HOUR = (
        "fraud_claims_per_address_per_hour",
        _("claims from one address in an hour before review"),
    )
    FRAUD_PEOPLE_PER_DEVICE = "fraud_people_per_device", _("people claiming from one browser before review")
    FRAUD_CAMPAIGN_CLAIMS_PER_MINUTE = (
        "fraud_campaign_claims_per_minute",
        _("claims of one campaign in a minute before review"),
    )
    FRAUD_MAX_LIKES_PER_THOUSAND_VIEWS = (
        "fraud_max_likes_per_thousand_views",
        _("likes per 1,000 views of a share before review"),
    )
    FRAUD_MAX_COMMENTS_PER_THOUSAND_VIEWS = (
        "fraud_max_comments_per_thousand_views",
        _("comments per 1,000 views of a share before review"),
    )
    FRAUD_MAX_VIEWS_PER_FOLLOWER = (
        "fraud_max_views_per_follower",
        _("views per follower of a share's creator (plus 10,000) before review"),
    )
    FRAUD_MAX_VIEWS_PER_HOUR = "fraud_max_views_per_hour", _("views a share gains in an hour before review")
    FRAUD_REFERRAL_ORDERS_PER_SOURCE_PER_HOUR = (
        "fraud_referral_orders_per_source_per_hour",
        _("orders with one referral code from one other site in an hour before review"),
    )
    FRAUD_REFERRAL_REFUND_MIN_ORDERS = (
        "fraud_referral_refund_min_orders",
        _("a poster's referred orders before the share refunded is judged"),
    )
    FRAUD_REFERRAL_REFUND_PERCENT = (
        "fraud_referral_refund_percent",
        _("percent of a poster's referred orders refunded before review"),
    )


# Amounts of money, in minor units of the row's currency; the others are counts, whatever the currency.
MONEY_LIMITS = frozenset(
    {
        LimitKind.PAYOUT_APPROVAL_THRESHOLD,
        LimitKind.PAYOUT_BRAND_DAILY_LIMIT,
        LimitKind.PAYOUT_ACCOUNT_DAILY_LIMIT,
        LimitKind.PAYOUT_WINDOW_APPROVAL_THRESHOLD,
        LimitKind.RECONCILIATION_SECOND_APPROVAL_MINOR,
    }
)


class Limit(models.Model):
    """A money limit (per currency) or fraud threshold in force: a brand's own, or the platform's
    (no brand) for every brand without one. Without a row the setting's default applies, scaled to
    the currency (campaigns.limits). Written only when a second staff member confirms the change
    one asked for (joyback.users.four_eyes: a StaffGrant of kind "limit")."""

    kind = models.CharField(max_length=48, choices=LimitKind.choices)
    brand = models.ForeignKey(Brand, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    currency = models.CharField(max_length=3, blank=True, default="", help_text=_("empty for a count"))
    value = models.BigIntegerField(help_text=_("minor units of the currency for an amount"))
    changed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    approved_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    changed_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "brand", "currency"],
                condition=models.Q(brand__isnull=False),
                name="campaigns_limit_one_per_brand",
            ),
            models.UniqueConstraint(
                fields=["kind", "currency"],
                condition=models.Q(brand__isnull=True),
                name="campaigns_limit_one_per_platform",
            ),
            models.CheckConstraint(condition=models.Q(value__gte=0), name="campaigns_limit_not_negative"),
            models.CheckConstraint(
                condition=~models.Q(approved_by=models.F("changed_by")), name="campaigns_limit_two_people"
            ),
        ]

    def __str__(self):
        return f"{self.get_kind_display()} {self.currency or ''} {self.brand or 'platform'}: {self.value}"


class ConsentChannel(models.TextChoices):
    """Where a person agreed to hear from a brand again."""

    WHATSAPP = "whatsapp", _("WhatsApp")
    EMAIL = "email", _("Email")


class ConsentWording(models.Model):
    """What a campaign asks a person to agree to, in one language, for one channel: a change is a new
    version, so a consent always names the exact words the person was shown."""

    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="consent_wordings")
    # Its campaign's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    channel = models.CharField(max_length=10, choices=ConsentChannel.choices)
    language = models.CharField(max_length=10)
    version = models.PositiveIntegerField()
    text = models.CharField(max_length=600)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "channel", "language", "version"], name="campaigns_one_consent_version"
            )
        ]

    def __str__(self):
        return f"{self.channel} consent v{self.version} ({self.language}) of {self.campaign}"


class FeePlan(models.Model):
    """What JoyBack charges a brand (or, without a brand, every brand without a plan of its own) in
    one currency: a fee per verified action and a share of each reward paid, in basis points.
    Without a row the settings' defaults apply (campaigns.fees). Written only once a second staff
    member confirms the change one asked for (a StaffGrant of kind "fee_plan"). Test data is free."""

    brand = models.ForeignKey(Brand, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    currency = models.CharField(max_length=3)
    per_action = models.BigIntegerField(help_text=_("minor units of the currency per verified action"))
    payout_bps = models.PositiveIntegerField(help_text=_("share of each reward, in basis points (100 = 1%)"))
    changed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    approved_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    changed_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["brand", "currency"],
                condition=models.Q(brand__isnull=False),
                name="campaigns_feeplan_one_per_brand",
            ),
            models.UniqueConstraint(
                fields=["currency"],
                condition=models.Q(brand__isnull=True),
                name="campaigns_feeplan_one_per_platform",
            ),
            models.CheckConstraint(
                condition=models.Q(per_action__gte=0, payout_bps__lte=10000),
                name="campaigns_feeplan_in_range",
            ),
            models.CheckConstraint(
                condition=~models.Q(approved_by=models.F("changed_by")), name="campaigns_feeplan_two_people"
            ),
        ]

    def __str__(self):
        return f"{self.brand or 'platform'} {self.currency}: {self.per_action} + {self.payout_bps} bps"


class FeeCharge(models.Model):
    """The platform's fee on one reward posting (or its refund, negative, when a reward is clawed
    back), booked in the same transaction as the reward: the brand's campaign budget -> the
    platform's fees account. Its provider movement (the brand's balance account -> the platform's)
    goes later, many charges at once (`transfer_reference`, set by payouts.fees); its invoice
    once a month (`invoice`)."""

    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+")
    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="+")
    # The verification app's claim, by id (this app is to its left).
    claim_id = models.BigIntegerField(db_index=True)
    currency = models.CharField(max_length=3)
    # Signed: a reward posted is positive, a reward taken back negative; the fees likewise.
    reward_amount = models.BigIntegerField()
    action_fee = models.BigIntegerField(default=0)
    payout_fee = models.BigIntegerField(default=0)
    # fee:<reward transaction> for a charge, fee-refund:<the take-back's key> for a refund: a reward
    # posted or taken back again (a replay) finds its row instead of counting twice.
    key = models.CharField(max_length=160, unique=True)
    # None when the fee came to nothing (a share rounded down): the reward still counts for the
    # proportions of later take-backs.
    ledger_transaction = models.OneToOneField(
        "ledger.Transaction", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    transfer_reference = models.CharField(max_length=40, blank=True, default="", db_index=True)
    invoice = models.ForeignKey(
        "campaigns.Invoice", null=True, blank=True, on_delete=models.PROTECT, related_name="charges"
    )

    class Meta:
        indexes = [
            models.Index(
                fields=["brand", "currency"],
                condition=models.Q(transfer_reference=""),
                name="campaigns_fee_untransferred",
            )
        ]

    def __str__(self):
        return f"fee {self.fee} {self.currency} on claim {self.claim_id}"

    @property
    def fee(self) -> int:
        return self.action_fee + self.payout_fee


class InvoiceSequence(models.Model):
    """The last number the issuer gave an invoice: raised in the transaction that issues the next,
    under its row's lock, so numbers follow without a gap (a rolled-back invoice gives its number
    back with it)."""

    issuer = models.CharField(max_length=40, unique=True)
    last_number = models.PositiveIntegerField(default=0)

    def __str__(self):
        return f"{self.issuer}: {self.last_number}"


class VatTreatment(models.TextChoices):
    DOMESTIC = "domestic", _("VAT charged")
    REVERSE_CHARGE = "reverse_charge", _("Reverse charge")
    OUTSIDE_EU = "outside_eu", _("Not subject to EU VAT")


class Invoice(models.Model):
    """The platform's monthly invoice to a live brand for one currency's fees: its lines per
    campaign, the VAT the brand's country calls for, and a number of the issuer's sequence.
    Never edited once issued (but for how its VAT was collected): what the brand was told is what
    it keeps."""

    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="invoices")
    issuer = models.CharField(max_length=40)
    sequence_number = models.PositiveIntegerField()
    number = models.CharField(max_length=40, unique=True)
    period_start = models.DateField()
    period_end = models.DateField(help_text=_("the last day of the period"))
    currency = models.CharField(max_length=3)
    net = models.BigIntegerField()
    vat_rate_bps = models.PositiveIntegerField(default=0)
    vat = models.BigIntegerField(default=0)
    total = models.BigIntegerField()
    vat_treatment = models.CharField(max_length=20, choices=VatTreatment.choices)
    # Who was invoiced and by whom, as they were on the day.
    customer_name = models.CharField(max_length=200)
    customer_country = models.CharField(max_length=2, blank=True, default="")
    customer_vat_id = models.CharField(max_length=20, blank=True, default="")
    issuer_name = models.CharField(max_length=200)
    issuer_address = models.CharField(max_length=300, blank=True, default="")
    issuer_vat_id = models.CharField(max_length=20, blank=True, default="")
    issued_at = models.DateTimeField()
    # What VIES said of the customer's VAT number when the invoice was issued: the consultation
    # number and date a reverse charge rests on, or why VAT was charged to an EU business abroad.
    customer_vies_status = models.CharField(
        max_length=12, choices=VatIdCheck.choices, blank=True, default="", db_default=""
    )
    customer_vies_request_identifier = models.CharField(max_length=40, blank=True, default="", db_default="")
    customer_vies_request_date = models.CharField(max_length=40, blank=True, default="", db_default="")
    # The VAT is taken from the brand's funds when the invoice is issued (booked to the VAT the
    # platform owes the tax office), then moved from the brand's balance account at the provider
    # with its next fee transfer (payouts.fees, `vat_transfer_reference`), done on the provider's
    # word that it is booked (`vat_moved_at`). `vat_short_at`: when the brand's funds could not
    # cover it; it is taken as soon as they can.
    # The ledger's transaction, by id: its unique key (invoice-vat:<number>) books it once.
    vat_ledger_transaction_id = models.BigIntegerField(null=True, blank=True)
    vat_short_at = models.DateTimeField(null=True, blank=True)
    vat_transfer_reference = models.CharField(max_length=40, blank=True, default="")
    vat_moved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-period_start", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["issuer", "sequence_number"], name="campaigns_invoice_number_once"
            ),
            models.UniqueConstraint(
                fields=["brand", "period_start", "currency"], name="campaigns_invoice_once_a_month"
            ),
            models.CheckConstraint(
                condition=models.Q(total=models.F("net") + models.F("vat")), name="campaigns_invoice_adds_up"
            ),
        ]

    def __str__(self):
        return self.number

    @property
    def vat_state(self) -> str:
        """none (no VAT to collect), short (the brand's funds could not cover it yet), due (taken,
        not yet moved at the provider), paid (the provider booked its move)."""
        if self.vat <= 0:
            return "none"
        if self.vat_moved_at is not None:
            return "paid"
        return "due" if self.vat_ledger_transaction_id else "short"


class InvoiceLine(models.Model):
    invoice = models.ForeignKey(Invoice, on_delete=models.PROTECT, related_name="lines")
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+")
    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="+")
    campaign_name = models.CharField(max_length=120)
    actions = models.IntegerField(help_text=_("verified actions charged, less those taken back"))
    rewards = models.BigIntegerField()
    action_fees = models.BigIntegerField()
    payout_fees = models.BigIntegerField()

    class Meta:
        ordering = ["campaign_name", "pk"]

    def __str__(self):
        return f"{self.invoice_id} {self.campaign_name}"

    @property
    def net(self) -> int:
        return self.action_fees + self.payout_fees
