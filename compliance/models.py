"""Disclosure policies (data, versioned), remediation cases, and the append-only decision trail."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from campaigns.models import ActionRule, Brand, Campaign


class Policy(models.Model):
    """One version of one jurisdiction's disclosure rules. A change is a new version, never an edit,
    so every past verdict can be explained by the rules it was made under."""

    code = models.SlugField(max_length=40, help_text="e.g. us-ftc, eu-de")
    version = models.PositiveIntegerField()
    name = models.CharField(max_length=200)
    countries = models.JSONField(default=list, help_text='ISO 3166 alpha-2 codes; "*" for any other country')
    data = models.JSONField(help_text="Terms, placement rules, wording and linter patterns")
    notes = models.TextField(blank=True, default="")
    is_current = models.BooleanField(default=True)
    source = models.CharField(max_length=80, default="compliance/policies/policies.toml")
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        verbose_name_plural = "policies"
        ordering = ["code", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["code", "version"], name="compliance_policy_version_once"),
            models.UniqueConstraint(
                fields=["code"], condition=Q(is_current=True), name="compliance_one_current_policy"
            ),
        ]

    def __str__(self):
        return f"{self.code} v{self.version}"


class CaseStatus(models.TextChoices):
    OPEN = "open", _("Waiting for the fix")
    REVIEW = "review", _("Needs the brand's review")
    FIXED = "fixed", _("Fixed")
    CLEARED = "cleared", _("Cleared by the brand")
    VOIDED = "voided", _("Not fixed: reward voided")


UNRESOLVED = (CaseStatus.OPEN, CaseStatus.REVIEW)


class RemediationCase(models.Model):
    """A share whose disclosure failed the check: what the person must change, and by when."""

    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+")
    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="compliance_cases")
    # The claim lives in the verification app, to the right of this one: known by id only.
    claim_id = models.BigIntegerField(unique=True)
    participant_id = models.BigIntegerField()
    platform = models.CharField(max_length=20, default="tiktok")
    status = models.CharField(max_length=10, choices=CaseStatus.choices, default=CaseStatus.OPEN)
    reasons = models.JSONField(default=list, help_text="Reason codes; worded when shown")
    caption = models.TextField(blank=True, default="", help_text="The caption when the case opened")
    wording = models.CharField(max_length=300, help_text="The disclosure the person is asked to use")
    language = models.CharField(max_length=10, default="en")
    opened_at = models.DateTimeField()
    deadline = models.DateTimeField(null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["brand", "status"], name="compliance_case_queue")]

    def __str__(self):
        return f"case #{self.pk} (claim #{self.claim_id}): {self.status}"

    @property
    def unresolved(self) -> bool:
        return self.status in UNRESOLVED


class DecisionKind(models.TextChoices):
    CAPTION_CHECK = "caption_check", _("Caption checked")
    CASE_OPENED = "case_opened", _("Remediation opened")
    CASE_FIXED = "case_fixed", _("Fixed in time")
    CASE_VOIDED = "case_voided", _("Not fixed: voided")
    BRAND_REVIEW = "brand_review", _("Brand review")
    LAUNCH_LINT = "launch_lint", _("Rules checked at launch")


class ComplianceDecision(models.Model):
    """Every compliance decision with its evidence; append-only and hash-chained per brand.

    Written in the same database transaction as the decision itself. PostgreSQL refuses UPDATE and
    DELETE (migration 0003); each row's hash covers its content and the previous row's hash, so an
    edit made around the trigger breaks the chain (selectors.audit_chain_problems finds it).
    """

    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+")
    seq = models.PositiveBigIntegerField(help_text="Position in the brand's chain, from 1")
    campaign = models.ForeignKey(Campaign, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    case = models.ForeignKey(
        RemediationCase, null=True, blank=True, on_delete=models.PROTECT, related_name="decisions"
    )
    claim_id = models.BigIntegerField(null=True, blank=True)
    kind = models.CharField(max_length=20, choices=DecisionKind.choices)
    verdict = models.CharField(max_length=20)
    reasons = models.JSONField(default=list)
    evidence = models.JSONField(default=dict, help_text="Caption snapshot, label state, platform, ...")
    policy_versions = models.JSONField(default=list)
    checker_version = models.CharField(max_length=40)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField()
    prev_hash = models.CharField(max_length=64)
    row_hash = models.CharField(max_length=64, unique=True)

    class Meta:
        ordering = ["brand_id", "seq"]
        constraints = [models.UniqueConstraint(fields=["brand", "seq"], name="compliance_decision_chain")]
        indexes = [models.Index(fields=["campaign", "created_at"], name="compliance_decision_report")]

    def __str__(self):
        return f"{self.kind} {self.verdict} (#{self.seq} of brand {self.brand_id})"


class BriefReview(ActionRule):
    """A rule whose free text waits for JoyBack's review, as staff see it in the admin."""

    class Meta:
        proxy = True
        verbose_name = _("brief waiting for review")
        verbose_name_plural = _("briefs waiting for review")
        permissions = [("review_brief", _("Approve a brand's brief or send it back"))]
