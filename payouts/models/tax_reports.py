"""The yearly tax reports the platform files (payouts/taxreports/): one per jurisdiction and year,
the corrections that follow it, and a row per person."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from campaigns.models import Brand
from joyback.crypto import EncryptedTextField
from verification.models import Participant


class TaxJurisdiction(models.TextChoices):
    DAC7 = "dac7", _("EU (DAC7)")
    UK = "uk", _("United Kingdom (HMRC)")
    US = "us", _("United States (1099-NEC)")


class TaxReportStatus(models.TextChoices):
    DRAFT = "draft", _("Draft")
    # Marked filed by one staff member, with the authority's reference; a second confirms it.
    FILING = "filing", _("Filed, awaiting a second person")
    FILED = "filed", _("Filed")


class TaxReport(models.Model):
    """One file for one authority and year: the original (corrects empty) or a correction of it."""

    jurisdiction = models.CharField(max_length=4, choices=TaxJurisdiction.choices)
    year = models.PositiveSmallIntegerField()
    corrects = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="corrections"
    )
    status = models.CharField(max_length=8, choices=TaxReportStatus.choices, default=TaxReportStatus.DRAFT)
    message_ref_id = models.CharField(max_length=170, unique=True)
    operator_doc_ref_id = models.CharField(max_length=200)
    # The file as generated and validated (it names people and their tax numbers: encrypted).
    file = EncryptedTextField(blank=True, default="")
    file_name = models.CharField(max_length=120, blank=True, default="")
    file_sha256 = models.CharField(max_length=64, blank=True, default="")
    # Minor units per currency: what the rows add up to, and what the ledger said for the same
    # rewards when the report was made; the page shows both, a difference is never filed.
    totals = models.JSONField(default=dict, blank=True)
    ledger_totals = models.JSONField(default=dict, blank=True)
    generated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    generated_at = models.DateTimeField(null=True, blank=True)
    filing_reference = models.CharField(max_length=100, blank=True, default="")
    filed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    filed_at = models.DateTimeField(null=True, blank=True)
    filing_confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    filing_confirmed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-year", "jurisdiction", "id"]
        permissions = [("file_taxreport", "Can mark a tax report filed or confirm its filing")]
        constraints = [
            models.UniqueConstraint(
                fields=["jurisdiction", "year"],
                condition=Q(corrects__isnull=True),
                name="payouts_one_tax_report_per_year",
            ),
            # One open correction at a time: the next correction waits until this one is filed.
            models.UniqueConstraint(
                fields=["corrects"],
                condition=Q(corrects__isnull=False) & ~Q(status="filed"),
                name="payouts_one_open_tax_correction",
            ),
        ]

    def __str__(self):
        kind = _("correction") if self.corrects_id else _("report")
        return f"{self.get_jurisdiction_display()} {self.year} {kind} #{self.pk}"


class TaxReportRow(models.Model):
    """A person's year in one report: amounts per quarter in minor units of one currency, and the
    details the law asks for, as they were when the row was made (encrypted JSON)."""

    report = models.ForeignKey(TaxReport, on_delete=models.PROTECT, related_name="rows")
    participant = models.ForeignKey(Participant, on_delete=models.PROTECT, related_name="+")
    # The participant's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    currency = models.CharField(max_length=3)
    consideration = models.JSONField(default=list)
    fees = models.JSONField(default=list)
    activities = models.JSONField(default=list)
    total = models.BigIntegerField(help_text="Minor units")
    seller = EncryptedTextField()
    # What the law asks for that is not known (comma-separated): the row is left out of the file.
    missing = models.CharField(max_length=100, blank=True, default="")
    doc_ref_id = models.CharField(max_length=200, unique=True)
    doc_type = models.CharField(max_length=6, default="OECD1")
    corrects = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="corrections"
    )
    corrected_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    correction_reason = models.CharField(max_length=300, blank=True, default="")

    class Meta:
        ordering = ["report", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["report", "participant", "currency"], name="payouts_tax_row_once_per_report"
            ),
        ]

    def __str__(self):
        return f"{self.doc_ref_id}"
