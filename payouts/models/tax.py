"""Who a person is for tax: the details a platform that pays people must report (DAC7, the UK's
platform rules, 1099-NEC), asked only once a reward that is reported is owed to them."""

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from campaigns.models import Brand
from joyback.crypto import EncryptedTextField
from verification.models import Participant


class TinKind(models.TextChoices):
    DE_IDNR = "de_idnr", _("German tax identification number (Steuer-IdNr)")
    ES_NIF = "es_nif", _("Spanish tax number (NIF / DNI)")
    ES_NIE = "es_nie", _("Spanish foreigner's number (NIE)")
    GB_UTR = "gb_utr", _("UK Unique Taxpayer Reference (UTR)")
    GB_NINO = "gb_nino", _("UK National Insurance number")
    US_SSN = "us_ssn", _("US Social Security number (SSN)")
    US_ITIN = "us_itin", _("US Individual Taxpayer Identification Number (ITIN)")
    # Another country's personal tax number, checked by its own format where one is known.
    OTHER = "other", _("Tax identification number")
    # Resident where none is issued (DAC7 lets the report say so); never for the EU, the UK or a US person.
    NONE = "none", _("None issued")


class UsStatus(models.TextChoices):
    # IRS Form W-9's certification: a US citizen or resident, TIN correct, not subject to backup withholding.
    W9 = "w9", _("US person (Form W-9)")
    # IRS Form W-8BEN's: not a US person, resident where stated.
    W8BEN = "w8ben", _("Not a US person (Form W-8BEN)")


class TaxProfile(models.Model):
    """A person's tax identity. One current per participant; a change is a new row and the old one
    is replaced, never edited, so a report filed for a year still names what it was filed with.
    Every personal detail is encrypted (joyback.crypto); countries and kinds are plain, to count by."""

    participant = models.ForeignKey(Participant, on_delete=models.PROTECT, related_name="tax_profiles")
    # Its participant's: the column it is sharded by (docs/deploy.md).
    brand = models.ForeignKey(Brand, on_delete=models.PROTECT, related_name="+", db_index=False)
    legal_name = EncryptedTextField()
    # As the person typed it, compacted to the library's form (stdnum's compact); blank with TinKind.NONE.
    tin = EncryptedTextField(blank=True, default="")
    # ISO 8601 (YYYY-MM-DD).
    birth_date = EncryptedTextField()
    # JSON: {"line1", "line2", "postal_code", "city", "region", "country"}.
    address = EncryptedTextField()
    residence_country = models.CharField(
        max_length=2, help_text="ISO 3166 alpha-2, where the person is resident"
    )
    tin_country = models.CharField(
        max_length=2, blank=True, default="", help_text="The country that issued the TIN"
    )
    tin_kind = models.CharField(max_length=8, choices=TinKind.choices)
    us_status = models.CharField(max_length=6, choices=UsStatus.choices)
    # When the person certified it (the W-9's or W-8BEN's statement under penalties of perjury) and the
    # wording they saw (payouts.tax.CERTIFICATION_VERSION).
    certified_at = models.DateTimeField()
    certification_version = models.CharField(max_length=20)
    language = models.CharField(max_length=10, default="en", help_text="Of the person's statements")
    created_at = models.DateTimeField(auto_now_add=True)
    replaced_at = models.DateTimeField(null=True, blank=True)
    # Set when the person's data is erased: the law's retention ends then (payouts.tax_retention),
    # and the retention job empties the encrypted fields after it.
    retain_until = models.DateField(null=True, blank=True)
    erased_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["participant"],
                condition=Q(replaced_at__isnull=True),
                name="payouts_one_current_tax_profile",
            ),
        ]
        indexes = [
            models.Index(
                fields=["retain_until"],
                condition=Q(retain_until__isnull=False, erased_at__isnull=True),
                name="payouts_tax_retained",
            )
        ]

    def __str__(self):
        return f"tax profile #{self.pk} of participant #{self.participant_id}"
