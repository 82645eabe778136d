"""People who claim rewards, the identities that prove who they are, and what they did."""

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from campaigns.models import ActionRule, Brand, Campaign, ConsentChannel, ConsentWording, LicenceTerms
from joyback.crypto import EncryptedTextField
from joyback.models import LeasedWork


def new_token() -> str:
    return secrets.token_urlsafe(24)


def new_token_short() -> str:
    return secrets.token_urlsafe(12)


class Participant(models.Model):
    """A person claiming rewards from one brand. Not a user: they never sign in."""

    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="participants")
    token = models.CharField(max_length=64, unique=True, default=new_token, help_text="Private status link")
    created_at = models.DateTimeField(auto_now_add=True)
    # Since when a reward posted to the person waits for the payouts to take it: the payout
    # pipeline claims the people due in batches (the partial index keeps its look cheap) and
    # clears it. A column on the person, not a queued task per reward.
    payout_due_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(
                fields=["payout_due_at"],
                condition=Q(payout_due_at__isnull=False),
                name="verification_payout_due",
            )
        ]

    def __str__(self):
        return f"participant #{self.pk}"

    @property
    def ledger_subject(self) -> str:
        return f"participant:{self.pk}"


class Provider(models.TextChoices):
    TIKTOK = "tiktok", _("TikTok")
    WHATSAPP = "whatsapp", _("WhatsApp")
    BRAND = "brand", _("Brand system")
    SHOPIFY = "shopify", _("Shopify")
    WOOCOMMERCE = "woocommerce", _("WooCommerce")
    EMAIL = "email", _("Email")


class Identity(models.Model):
    """A verified account of a participant: TikTok open_id, WhatsApp wa_id, or a brand's customer id."""

    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+")
    participant = models.ForeignKey(Participant, on_delete=models.PROTECT, related_name="identities")
    provider = models.CharField(max_length=12, choices=Provider.choices)
    subject = models.CharField(max_length=128)
    display_name = models.CharField(max_length=120, blank=True, default="")
    verified_at = models.DateTimeField()

    class Meta:
        verbose_name_plural = "identities"
        constraints = [
            models.UniqueConstraint(fields=["brand", "provider", "subject"], name="verification_one_identity")
        ]

    def __str__(self):
        return f"{self.display_name or self.subject} ({self.get_provider_display()})"


class PurchaseStatus(models.TextChoices):
    PENDING = "pending", _("In the return window")
    CONFIRMED = "confirmed", _("Confirmed")
    REFUNDED = "refunded", _("Refunded")


class Purchase(models.Model):
    """A purchase a brand's system reported; its order id names it, once per brand."""

    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+")
    order_id = models.CharField(max_length=100)
    amount = models.BigIntegerField(help_text="Minor units")
    currency = models.CharField(max_length=3)
    identity = models.ForeignKey("Identity", on_delete=models.PROTECT, related_name="purchases")
    status = models.CharField(max_length=10, choices=PurchaseStatus.choices, default=PurchaseStatus.PENDING)
    confirm_at = models.DateTimeField()
    confirmed_at = models.DateTimeField(null=True, blank=True)
    refunded_at = models.DateTimeField(null=True, blank=True)
    refund_reason = models.CharField(max_length=200, blank=True, default="")
    # What was bought, as the shop names its products (SKUs, else product ids): a share's reward
    # may depend on it.
    products = models.JSONField(default=list, blank=True, db_default=[])
    # Partial refunds the shop reported, by the shop's refund id: {refund id: minor units}. The
    # cashback is what the amount kept (amount - their sum) earns.
    refunds = models.JSONField(default=dict, blank=True, db_default={})
    # A keyed hash of the buyer's billing address (never the address): a poster's own orders
    # matched against the orders their code brings (verification/referrals.py).
    address_hash = models.CharField(max_length=64, blank=True, default="", db_default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["brand", "order_id"], name="verification_one_purchase_per_order"),
            models.CheckConstraint(condition=Q(amount__gt=0), name="verification_purchase_amount_positive"),
        ]

    def __str__(self):
        return f"order {self.order_id}"


class ClaimStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    APPROVED = "approved", _("Approved")
    REJECTED = "rejected", _("Rejected")
    NEEDS_REVIEW = "needs_review", _("Needs review")
    CLAWED_BACK = "clawed_back", _("Clawed back")


class ActionClaim(models.Model):
    """One action of one identity under one rule; rewarded at most once (the unique constraint)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="claims")
    # Its campaign's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    rule = models.ForeignKey(ActionRule, on_delete=models.PROTECT, related_name="claims")
    participant = models.ForeignKey(Participant, on_delete=models.PROTECT, related_name="claims")
    identity = models.ForeignKey(Identity, on_delete=models.PROTECT, related_name="claims")
    status = models.CharField(max_length=14, choices=ClaimStatus.choices, default=ClaimStatus.PENDING)
    reason = models.CharField(max_length=40, blank=True, default="")
    amount = models.BigIntegerField()
    currency = models.CharField(max_length=3)
    ledger_transaction_id = models.BigIntegerField(null=True, blank=True)
    hold_id = models.BigIntegerField(null=True, blank=True, help_text="Budget held while not yet decided")
    evidence = models.JSONField(
        default=dict, blank=True, help_text="What was checked, as the provider said it"
    )
    check_at = models.DateTimeField(null=True, blank=True, help_text="When the engagement window closes")
    client_ip = models.GenericIPAddressField(null=True, blank=True)
    device = models.CharField(max_length=64, blank=True, default="", help_text="Hash of the browser's traits")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    # A purchase's cashback: one claim per order, so a customer earns again on each purchase.
    purchase = models.OneToOneField(
        Purchase, null=True, blank=True, on_delete=models.PROTECT, related_name="claim"
    )
    # A share paid by reach: what its top-ups paid so far (updated under the claim's lock, with a
    # ReachTopUp row per level), and when its views are read next. `amount` is the most it can
    # still come to (paid plus held); at the end of the window, what it was paid.
    reach_paid = models.BigIntegerField(default=0, db_default=0)
    next_check_at = models.DateTimeField(null=True, blank=True)
    # A referred sale: the poster's reward for the order their code brought, one per order. It
    # follows the purchase's own lifecycle (held, confirmed, refunded) beside the buyer's cashback.
    referred_purchase = models.OneToOneField(
        Purchase, null=True, blank=True, on_delete=models.PROTECT, related_name="referral_claim"
    )
    referral_code = models.ForeignKey(
        "ReferralCode", null=True, blank=True, on_delete=models.PROTECT, related_name="claims"
    )
    # What the reward is for tax, decided when it was first booked (campaigns.tax): its class
    # (service, rebate, promotional), the country it was judged for and the table's version. A
    # report for a past year reads these, never today's table. Blank: not booked yet, or booked
    # before the columns existed (read under the first table, campaigns.tax.TABLES["2026-1"]).
    tax_class = models.CharField(max_length=12, blank=True, default="", db_default="")
    tax_country = models.CharField(max_length=2, blank=True, default="", db_default="")
    tax_table = models.CharField(max_length=10, blank=True, default="", db_default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["rule", "identity"],
                condition=Q(purchase__isnull=True, referred_purchase__isnull=True),
                name="verification_one_reward_per_identity",
            ),
            models.CheckConstraint(condition=Q(amount__gt=0), name="verification_claim_amount_positive"),
        ]
        indexes = [
            models.Index(fields=["campaign", "status"], name="verification_claim_funnel"),
            models.Index(fields=["campaign", "client_ip", "created_at"], name="verification_claim_ip"),
            # The fraud signals' counts of a campaign's recent claims (verification.sql.claim_facts):
            # by time, and by browser (claims from a browser only; the API's and webhooks' have none).
            models.Index(fields=["campaign", "created_at"], name="verification_claim_recent"),
            models.Index(
                fields=["campaign", "device", "created_at"],
                condition=~Q(device=""),
                name="verification_claim_device",
            ),
            models.Index(fields=["check_at"], condition=Q(status="pending"), name="verification_claim_due"),
            models.Index(
                fields=["next_check_at"], condition=Q(status="pending"), name="verification_reach_due"
            ),
        ]

    def __str__(self):
        return f"{self.rule} by {self.identity}: {self.status}"


class ReferralCode(models.Model):
    """A participant's personal code for one campaign: what they share, what a buyer types at the
    shop's checkout (or carries from the link), what names the poster a sale is credited to.

    Stored in capitals from an alphabet without lookalikes (no 0/O, 1/I/L); read case-insensitively."""

    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="referral_codes")
    # Its campaign's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    participant = models.ForeignKey(Participant, on_delete=models.PROTECT, related_name="referral_codes")
    identity = models.ForeignKey(Identity, on_delete=models.PROTECT, related_name="referral_codes")
    code = models.CharField(max_length=16)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "code"], name="verification_referral_code_unique"),
            models.UniqueConstraint(
                fields=["campaign", "participant"], name="verification_one_referral_code_per_person"
            ),
        ]

    def __str__(self):
        return self.code


class ReferralClick(models.Model):
    """Someone opened a referral link: the browser's device hash and address, kept so the order
    it leads to can be compared with the poster's own (a self-referral). The link carries its id
    to the shop, which carries it into the order (note attributes, meta data)."""

    code = models.ForeignKey(ReferralCode, on_delete=models.CASCADE, related_name="clicks")
    # Its code's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    public_id = models.CharField(max_length=24, unique=True, default=new_token_short)
    device = models.CharField(max_length=64, blank=True, default="")
    client_ip = models.GenericIPAddressField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"click {self.public_id} on {self.code_id}"


class ReachTopUp(models.Model):
    """One top-up of a reach share: `level` is what the claim has been paid in all once this one is
    posted. One row per (claim, level), so a level, and with it a tier, is never paid twice."""

    claim = models.ForeignKey(ActionClaim, on_delete=models.PROTECT, related_name="reach_topups")
    # Its claim's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    level = models.BigIntegerField()
    amount = models.BigIntegerField()
    views = models.BigIntegerField(help_text="The views the top-up paid for")
    ledger_transaction_id = models.BigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["claim", "level"], name="verification_reach_level_once"),
            models.CheckConstraint(condition=Q(amount__gt=0), name="verification_topup_positive"),
            models.CheckConstraint(
                condition=Q(level__gte=models.F("amount")), name="verification_topup_level"
            ),
        ]

    def __str__(self):
        return f"top-up to {self.level} on claim #{self.claim_id}"


class VideoMetric(models.Model):
    """What TikTok said about a shared video at one re-check, and what came of it."""

    claim = models.ForeignKey(ActionClaim, on_delete=models.CASCADE, related_name="metrics")
    # Its claim's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    at = models.DateTimeField()
    found = models.BooleanField(default=True)
    views = models.BigIntegerField(default=0)
    likes = models.BigIntegerField(default=0)
    comments = models.BigIntegerField(default=0)
    shares = models.BigIntegerField(default=0)
    outcome = models.CharField(max_length=40, blank=True, default="")
    paid_after = models.BigIntegerField(default=0, help_text="What the share had been paid after this check")

    class Meta:
        ordering = ["at", "pk"]
        indexes = [models.Index(fields=["claim", "at"], name="verification_metric_claim")]

    def __str__(self):
        return f"{self.views} views on claim #{self.claim_id} at {self.at:%Y-%m-%d %H:%M}"


class LicenceGrant(models.Model):
    """The licence a person granted with a share: the version they were shown, when, who. Revoked,
    it stops for the future: what the brand made with the video before stays the brand's."""

    claim = models.OneToOneField(ActionClaim, on_delete=models.PROTECT, related_name="licence")
    terms = models.ForeignKey(LicenceTerms, on_delete=models.PROTECT, related_name="grants")
    participant = models.ForeignKey(Participant, on_delete=models.PROTECT, related_name="licences")
    # Its participant's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    identity = models.ForeignKey(Identity, on_delete=models.PROTECT, related_name="+")
    language = models.CharField(max_length=10, help_text="The language the terms were shown in")
    granted_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"licence v{self.terms.version} on claim #{self.claim_id}"

    @property
    def ends_at(self):
        return self.granted_at + timezone.timedelta(days=self.terms.duration_days)

    def state(self, now=None) -> str:
        now = now or timezone.now()
        if self.revoked_at is not None:
            return "revoked"
        return "active" if now < self.ends_at else "ended"


class SparkAdsCode(models.Model):
    """A Spark Ads authorisation code the creator generated in TikTok for their shared video, with
    the period they authorised; the brand sees it until it expires (a sweep marks it then)."""

    claim = models.OneToOneField(ActionClaim, on_delete=models.PROTECT, related_name="spark_code")
    # Its claim's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    code = EncryptedTextField()
    valid_days = models.PositiveSmallIntegerField()
    authorised_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    expired_at = models.DateTimeField(null=True, blank=True)
    evidence = models.JSONField(default=dict, blank=True, help_text="TikTok's answer about the code")

    class Meta:
        indexes = [
            models.Index(
                fields=["expires_at"], condition=Q(expired_at__isnull=True), name="verification_spark_due"
            )
        ]

    def __str__(self):
        return f"Spark Ads code on claim #{self.claim_id}"


class FraudSignal(models.Model):
    """Something that makes a claim look less like one real person acting once."""

    claim = models.ForeignKey(ActionClaim, on_delete=models.CASCADE, related_name="signals")
    # Its claim's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    code = models.CharField(max_length=40)
    detail = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["claim", "code"], name="verification_signal_once")]

    def __str__(self):
        return f"{self.code} on claim #{self.claim_id}"


class ReviewDecision(models.Model):
    """A brand member's decision on a claim in the review queue; kept forever."""

    claim = models.ForeignKey(ActionClaim, on_delete=models.PROTECT, related_name="decisions")
    # Its claim's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    decision = models.CharField(max_length=10, choices=[("approve", _("Approve")), ("reject", _("Reject"))])
    reason = models.CharField(max_length=300)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"{self.decision} claim #{self.claim_id}"


class TikTokToken(models.Model):
    """The connected user's tokens, kept to re-check their shared video when its window closes."""

    identity = models.OneToOneField(Identity, on_delete=models.CASCADE, related_name="tiktok_token")
    # Its identity's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    access_token = EncryptedTextField()
    refresh_token = EncryptedTextField()
    scope = models.CharField(max_length=200)
    access_expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"TikTok token of {self.identity_id}"


class ProviderEvent(LeasedWork):
    """Every inbound provider event, stored once per provider event id (deliveries are at least once)."""

    provider = models.CharField(max_length=12, choices=Provider.choices)
    event_id = models.CharField(max_length=200)
    payload = models.JSONField()
    received_at = models.DateTimeField(auto_now_add=True)
    # The webhook only stores; a standing worker claims unprocessed events (verification.services.
    # provider_events), so an event is never lost between its commit and a queued task.
    processed_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=40, blank=True, db_default="", default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["provider", "event_id"], name="verification_event_once")
        ]
        indexes = [
            models.Index(
                fields=["id"], condition=Q(processed_at__isnull=True), name="verification_event_pending"
            )
        ]

    def __str__(self):
        return f"{self.provider} {self.event_id}"


class ShopKind(models.TextChoices):
    SHOPIFY = "shopify", _("Shopify")
    WOOCOMMERCE = "woocommerce", _("WooCommerce")


def new_public_id() -> str:
    return secrets.token_urlsafe(12)


class ShopConnection(models.Model):
    """A brand's Shopify shop or WooCommerce store: its order webhooks become purchases.

    The webhook secret is the shop's (Shopify's app client secret, WooCommerce's webhook secret):
    it proves a delivery came from the shop. The claim key is ours: it signs the claim link the
    shop's order mail carries, so only the buyer's mail can claim an order's cashback."""

    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="shop_connections")
    kind = models.CharField(max_length=12, choices=ShopKind.choices)
    domain = models.CharField(max_length=80, help_text="example.myshopify.com or shop.example.com")
    public_id = models.CharField(max_length=24, unique=True, default=new_public_id)
    webhook_secret = EncryptedTextField()
    claim_key = EncryptedTextField()
    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    disconnected_at = models.DateTimeField(null=True, blank=True)
    # The shop's own proof that its owner connected it: Shopify's OAuth install of our app on that
    # shop, or a REST API key WooCommerce created in that store's admin. Without it (connections
    # made before proofs were asked) the domain can be taken over by whoever proves it.
    proven_at = models.DateTimeField(null=True, blank=True)
    proof = models.CharField(max_length=20, blank=True, default="")
    api_credentials = EncryptedTextField(blank=True, default="")
    retired_reason = models.CharField(
        max_length=20, blank=True, default="", help_text="'taken_over' when a proven owner connected the shop"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "domain"],
                condition=Q(disconnected_at__isnull=True),
                name="verification_one_connection_per_shop",
            )
        ]

    def __str__(self):
        return f"{self.get_kind_display()} {self.domain}"


class ShopInstall(models.Model):
    """A connection on its way: the owner asked to connect a shop and was sent to it to install our
    app (Shopify) or approve a key (WooCommerce); the state names this row in the shop's answer."""

    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=12, choices=ShopKind.choices)
    domain = models.CharField(max_length=80)
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    webhook_secret = EncryptedTextField()
    state = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    connection = models.ForeignKey(
        ShopConnection, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    outcome = models.CharField(max_length=40, blank=True, default="")

    def __str__(self):
        return f"{self.kind} {self.domain} for {self.brand_id}"


class OptinCode(models.Model):
    """The code a person sends on WhatsApp; it ties the inbound message to their claim."""

    code = models.CharField(max_length=16, unique=True)
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    # Its campaign's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="optin_codes")
    created_at = models.DateTimeField(auto_now_add=True)
    used_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(
        max_length=20, blank=True, default="", help_text="'rewarded' or a refusal code; worded when shown"
    )
    # The consent the person was shown beside the code, exactly (the brand's wording or the standard
    # one), in the language shown: sending the code is agreeing to it, and it is recorded as such.
    consent_text = models.CharField(max_length=600, blank=True, default="", db_default="")
    consent_language = models.CharField(max_length=10, blank=True, default="", db_default="")
    consent_wording = models.ForeignKey(
        ConsentWording, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "participant"], name="verification_one_code_per_claim"
            )
        ]

    def __str__(self):
        return f"JOY {self.code}"


class PostStatus(models.TextChoices):
    STORED = "stored", _("Waiting to upload")
    UPLOADING = "uploading", _("Uploading")
    PROCESSING = "processing", _("TikTok is processing it")
    PUBLISHED = "published", _("Posted, waiting to be public")
    PUBLIC = "public", _("Public")
    FAILED = "failed", _("Failed")


class TikTokPost(models.Model):
    """A video JoyBack publishes on the person's TikTok with the paid-partnership label on.

    What was sent (caption and post_info) is the evidence of the disclosure: TikTok cannot report
    the label back. The reward is held on the budget from the start; the claim is made once TikTok
    says the post is public (its post_id is what the engagement check reads).
    """

    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="+")
    # Its campaign's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    rule = models.ForeignKey(ActionRule, on_delete=models.PROTECT, related_name="+")
    participant = models.ForeignKey(Participant, on_delete=models.PROTECT, related_name="tiktok_posts")
    identity = models.ForeignKey(Identity, on_delete=models.PROTECT, related_name="tiktok_posts")
    status = models.CharField(max_length=12, choices=PostStatus.choices, default=PostStatus.STORED)
    failure = models.CharField(
        max_length=60, blank=True, default="", help_text="TikTok's code; worded when shown"
    )
    caption = models.CharField(max_length=2200, help_text="Exactly as sent: the disclosure first")
    sent = models.JSONField(default=dict, blank=True, help_text="The video/init body as sent")
    chosen = models.JSONField(
        default=dict, blank=True, help_text="The privacy and interaction settings the person picked"
    )
    file_name = models.CharField(max_length=200, blank=True, default="", help_text="Until TikTok has it")
    content_type = models.CharField(max_length=40, default="video/mp4")
    video_size = models.BigIntegerField()
    publish_id = models.CharField(max_length=100, null=True, blank=True, unique=True)
    post_id = models.CharField(max_length=32, blank=True, default="")
    hold_id = models.BigIntegerField(null=True, blank=True, help_text="Budget held while it is posted")
    # The reward its claim will be worth; the hold is more by the platform's fee on it.
    reward_amount = models.BigIntegerField(null=True, blank=True)
    claim = models.OneToOneField(
        ActionClaim, null=True, blank=True, on_delete=models.PROTECT, related_name="tiktok_post"
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    # The licence the person agreed to when they chose the video (campaigns.LicenceTerms id and the
    # language it was shown in): recorded with the claim once the post is public.
    licence_terms_id = models.BigIntegerField(null=True, blank=True)
    licence_language = models.CharField(max_length=10, blank=True, default="", db_default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            # One video on its way per person and action; a failed one can be tried again.
            models.UniqueConstraint(
                fields=["rule", "identity"],
                condition=~Q(status="failed"),
                name="verification_one_post_under_way",
            ),
            models.CheckConstraint(condition=Q(video_size__gt=0), name="verification_post_size_positive"),
        ]

    def __str__(self):
        return f"TikTok post #{self.pk} ({self.status})"


# The sandbox TikTok keeps its own accounts, codes and tokens, as TikTok would on its side.


class SandboxTikTokUser(models.Model):
    open_id = models.CharField(max_length=64, unique=True)
    union_id = models.CharField(max_length=64)
    display_name = models.CharField(max_length=120, unique=True)
    follower_count = models.PositiveIntegerField(default=240)
    video_count = models.PositiveIntegerField(default=12)

    def __str__(self):
        return self.display_name


class SandboxTikTokGrant(models.Model):
    """An authorization code and, once exchanged, the tokens it produced."""

    user = models.ForeignKey(SandboxTikTokUser, on_delete=models.CASCADE)
    code = models.CharField(max_length=80, unique=True)
    redirect_uri = models.CharField(max_length=512)
    scope = models.CharField(max_length=200)
    code_expires_at = models.DateTimeField()
    code_used_at = models.DateTimeField(null=True, blank=True)
    access_token = models.CharField(max_length=80, null=True, blank=True, unique=True)
    refresh_token = models.CharField(max_length=80, null=True, blank=True, unique=True)
    access_expires_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"grant for {self.user_id}"


class SandboxTikTokVideo(models.Model):
    """A video on the sandbox TikTok; a tester sets its counts, or deletes it."""

    user = models.ForeignKey(SandboxTikTokUser, on_delete=models.CASCADE, related_name="videos")
    video_id = models.CharField(max_length=32, unique=True)
    caption = models.CharField(max_length=2200)
    create_time = models.DateTimeField(auto_now_add=True)
    view_count = models.PositiveBigIntegerField(default=0)
    like_count = models.PositiveBigIntegerField(default=0)
    comment_count = models.PositiveBigIntegerField(default=0)
    share_count = models.PositiveBigIntegerField(default=0)
    deleted = models.BooleanField(default=False)
    # Reach that grows: views_per_hour more views every hour since it was posted, reported
    # report_lag_minutes late (TikTok's counts trail), and every dip_every-th read a recount a
    # twentieth lower (TikTok takes invalid views back).
    views_per_hour = models.PositiveBigIntegerField(default=0, db_default=0)
    report_lag_minutes = models.PositiveIntegerField(default=0, db_default=0)
    dip_every = models.PositiveIntegerField(default=0, db_default=0)
    reads = models.PositiveIntegerField(default=0, db_default=0)
    # The "Paid partnership" label the creator switched on in the app (on unless a tester turns it
    # off): what the Commercial Content API lists as branded content.
    paid_partnership_label = models.BooleanField(default=True, db_default=True)

    def __str__(self):
        return self.video_id


class SandboxTikTokAdCode(models.Model):
    """A Spark Ads authorisation code a sandbox creator generated for one of their videos."""

    video = models.ForeignKey(SandboxTikTokVideo, on_delete=models.CASCADE, related_name="ad_codes")
    code = models.CharField(max_length=80, unique=True)
    days = models.PositiveSmallIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    revoked = models.BooleanField(default=False)

    def __str__(self):
        return self.code


class SandboxTikTokPublish(models.Model):
    """A Direct Post on the sandbox TikTok: what the app sent (disclosure toggles included, never
    shown by any read endpoint, as on TikTok) and how far the upload and publishing got."""

    grant = models.ForeignKey(SandboxTikTokGrant, on_delete=models.CASCADE, related_name="+")
    publish_id = models.CharField(max_length=64, unique=True)
    upload_token = models.CharField(max_length=64, unique=True)
    upload_expires_at = models.DateTimeField()
    post_info = models.JSONField()
    video_size = models.BigIntegerField()
    chunk_size = models.BigIntegerField()
    total_chunk_count = models.PositiveIntegerField()
    uploaded_bytes = models.BigIntegerField(default=0)
    looks_like_video = models.BooleanField(default=False)
    status = models.CharField(max_length=24, default="PROCESSING_UPLOAD")
    fail_reason = models.CharField(max_length=40, blank=True, default="")
    video = models.ForeignKey(SandboxTikTokVideo, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "sandbox TikTok publish"
        verbose_name_plural = "sandbox TikTok publishes"

    def __str__(self):
        return self.publish_id


class ConsentAction(models.TextChoices):
    GIVEN = "given", _("Agreed")
    WITHDRAWN = "withdrawn", _("Withdrawn")


class ConsentSource(models.TextChoices):
    WHATSAPP_MESSAGE = "whatsapp_message", _("WhatsApp message with the opt-in code")
    FORM = "form", _("Form on the campaign page")
    WHATSAPP_STOP = "whatsapp_stop", _("A stop word sent on WhatsApp")
    WHATSAPP_BUTTON = "whatsapp_button", _("WhatsApp's stop button")
    WHATSAPP_PREFERENCE = "whatsapp_preference", _("WhatsApp's marketing preference")
    EMAIL_UNSUBSCRIBE = "email_unsubscribe", _("Unsubscribe link in an email")
    STATUS_PAGE = "status_page", _("The person's reward page")
    CRM = "crm", _("Unsubscribed in the brand's CRM")
    ERASURE = "erasure", _("The person's data was erased")


class ConsentRecord(models.Model):
    """One consent given or withdrawn: append-only (the database refuses UPDATE and DELETE), with
    the exact words shown, the brand they named, the channel, the time and the proof. A person's
    current consent on a channel is their latest row; a withdrawal never takes a reward back."""

    # The person's brand: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    participant = models.ForeignKey(Participant, on_delete=models.PROTECT, related_name="consents")
    # The contact the consent is for (the WhatsApp number, the email address): erasure makes it a
    # pseudonym, and the record of what was agreed stays.
    identity = models.ForeignKey(Identity, on_delete=models.PROTECT, related_name="consents")
    channel = models.CharField(max_length=10, choices=ConsentChannel.choices)
    action = models.CharField(max_length=10, choices=ConsentAction.choices)
    # Where it was given (a withdrawal keeps the campaign of the consent it ends).
    campaign = models.ForeignKey(Campaign, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    wording = models.ForeignKey(
        ConsentWording, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    wording_version = models.PositiveIntegerField(default=0, help_text="0: the standard wording")
    text = models.CharField(max_length=600, blank=True, default="", help_text="Exactly as shown")
    language = models.CharField(max_length=10, blank=True, default="")
    brand_name = models.CharField(max_length=120, help_text="The brand as the wording named it")
    source = models.CharField(max_length=20, choices=ConsentSource.choices)
    proof = models.CharField(
        max_length=200, help_text="The inbound WhatsApp message id, the form submission's id, the link's id"
    )
    at = models.DateTimeField()

    class Meta:
        constraints = [
            # A provider's redelivery or a second click records once.
            models.UniqueConstraint(
                fields=["participant", "channel", "action", "source", "proof"],
                name="verification_consent_proof_once",
            )
        ]
        indexes = [
            models.Index(fields=["participant", "channel", "at"], name="verification_consent_latest"),
            models.Index(fields=["brand", "at"], name="verification_consent_brand"),
        ]

    def __str__(self):
        return f"{self.channel} consent {self.action} by participant #{self.participant_id}"


class SandboxWhatsAppMessage(models.Model):
    """A template the sandbox WhatsApp accepted: the sandbox phone shows it to its number, and its
    statuses come back to our webhook as Meta's would."""

    wamid = models.CharField(max_length=100, unique=True)
    wa_id = models.CharField(max_length=20, db_index=True)
    template = models.CharField(max_length=120)
    language = models.CharField(max_length=12)
    body = models.TextField()
    callback = models.CharField(max_length=200, blank=True, default="")
    failed_code = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return self.wamid
