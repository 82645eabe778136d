"""Writes of people's tax identities: given through the status page's form, held payouts released
when they are, the person asked once when a payout waits for them, and their retention after an
erasure (docs/design.md, "Tax classification" and "Retention of tax records").

Why JoyBack holds instead of withholding: US backup withholding (26 U.S.C. 3406, 24 %) is the
payer's duty when a US person paid reportable amounts gives no TIN. Withholding would mean
depositing the tax with the IRS and filing Form 945 for every brand that pays, and the person gets
it back only by filing a return. Holding the reward until the W-9 is given pays nothing reportable
without a TIN, so nothing is owed to withhold, and the person is paid in full the moment they give it.
"""

import json
from dataclasses import dataclass
from datetime import date, datetime

from django.db import transaction
from django.db.models import OuterRef
from django.utils import timezone

from campaigns.tax import EU
from payouts.models import PayeeAccount
from payouts.models.tax import TaxProfile
from payouts.notifications import person_notify
from payouts.tax.selectors import reportable_rewards, tax_details_missing_q
from verification.models import Participant
from verification.services.rewards import participant_payout_due

# The wording of the certification the form shows (W-9 part II, W-8BEN part IV, and the DAC7
# statement that the details are true); a change of wording is a new version.
CERTIFICATION_VERSION = "2026-12"
# 1099-NEC: from payments made in 2026, $2,000 in a calendar year (One Big Beautiful Bill Act,
# s. 70433; $600 before). In USD cents; the report sums a US person's service rewards against it.
US_NEC_THRESHOLD = {"USD": 200_000}

# How long tax records are kept after the end of the calendar year of the person's last
# reported reward, by their country of residence (docs/design.md, "Retention of tax records").
RETENTION_YEARS = {"DE": 10, "ES": 6, "GB": 6, "US": 7}
# The rest of the EU: DAC7 (art. 25(3) of Directive 2011/16 as amended) lets a member state ask
# between 5 and 10 years; the longest is kept, so no member state's is cut short.
RETENTION_YEARS_EU = 10
RETENTION_YEARS_ELSEWHERE = 10
ERASED = "erased"


@dataclass(frozen=True)
class TaxDetails:
    """What the person gave, checked (payouts.tax.forms.TaxDetailsForm)."""

    legal_name: str
    birth_date: date
    address: dict
    residence_country: str
    tin: str
    tin_kind: str
    tin_country: str
    us_status: str
    language: str


def tax_profile_save(
    *, participant: Participant, details: TaxDetails, now: datetime | None = None
) -> TaxProfile:
    """The person's tax details, replacing any current ones; their held payouts are released once
    it commits (the pipeline takes them as due)."""
    now = now or timezone.now()
    with transaction.atomic(durable=True):
        # The person's row lock, as payee details take it: one current profile, whatever races.
        Participant.objects.select_for_update().filter(pk=participant.pk).first()
        TaxProfile.objects.filter(participant=participant, replaced_at__isnull=True).update(replaced_at=now)
        profile = TaxProfile.objects.create(
            participant=participant,
            brand_id=participant.brand_id,
            legal_name=details.legal_name,
            tin=details.tin,
            birth_date=details.birth_date.isoformat(),
            address=json.dumps(details.address, ensure_ascii=False, sort_keys=True),
            residence_country=details.residence_country,
            tin_country=details.tin_country,
            tin_kind=details.tin_kind,
            us_status=details.us_status,
            certified_at=now,
            certification_version=CERTIFICATION_VERSION,
            language=details.language,
        )
        transaction.on_commit(lambda: participant_payout_due(participant_id=participant.pk))
    return profile


def tax_held_filter(payees: dict[int, PayeeAccount]) -> dict[int, PayeeAccount]:
    """The payees whose payouts may be made: those who owe their tax details are left out and asked
    for them (once per person), in the caller's transaction, as payouts.vop does for bank details
    the bank would refuse. No statement more when the payees were read by payees_payable."""
    if not payees:
        return payees
    if all(hasattr(payee, "tax_details_missing") for payee in payees.values()):
        # Read with the payees (payouts.submission.create.payees_payable): no statement more.
        held = {pk for pk, payee in payees.items() if payee.tax_details_missing}
    else:
        held = set(
            Participant.objects.filter(pk__in=list(payees))
            .filter(tax_details_missing_q(OuterRef("pk")))
            .values_list("pk", flat=True)
        )
    for participant_id in sorted(held):
        tax_details_request(payee=payees[participant_id])
    return {pk: payee for pk, payee in payees.items() if pk not in held}


def tax_details_request(*, payee: PayeeAccount) -> list[int]:
    """The message that the person's payout waits for their tax details: once per person, by the
    one notification path (email, else WhatsApp), after commit."""
    return person_notify(payee=payee, kind="tax_details", key=f"tax_details:{payee.participant_id}")


def tax_retention_years(*, residence_country: str) -> int:
    country = (residence_country or "").upper()
    if country in RETENTION_YEARS:
        return RETENTION_YEARS[country]
    return RETENTION_YEARS_EU if country in EU else RETENTION_YEARS_ELSEWHERE


def tax_profiles_retain(*, participant: Participant, now: datetime) -> int:
    """At an erasure, in its transaction: a person with reported rewards keeps their tax profiles
    until the end of the retention years after the year of the last one (the law's duty outweighs
    the erasure, GDPR art. 17(3)(b)); without any, nothing requires them, and they go now. How
    many profiles are kept."""
    last = (
        reportable_rewards(participant.pk)
        .order_by("-created_at")
        .values_list("created_at", flat=True)
        .first()
    )
    profiles = list(TaxProfile.objects.filter(participant=participant, erased_at__isnull=True))
    if last is None:
        for profile in profiles:
            tax_profile_erase(profile=profile, now=now)
        return 0
    for profile in profiles:
        # Counted from the end of the last year a reward of theirs was reported for.
        until = date(last.year + tax_retention_years(residence_country=profile.residence_country), 12, 31)
        TaxProfile.objects.filter(pk=profile.pk).update(
            retain_until=until, replaced_at=profile.replaced_at or now
        )
    return len(profiles)


def tax_profile_erase(*, profile: TaxProfile, now: datetime) -> None:
    """The profile's personal details emptied; its countries and kinds stay (no one is named by them)."""
    profile.legal_name = ERASED
    profile.tin = ""
    profile.birth_date = ""
    profile.address = ""
    profile.erased_at = now
    profile.replaced_at = profile.replaced_at or now
    profile.save(update_fields=["legal_name", "tin", "birth_date", "address", "erased_at", "replaced_at"])


def tax_profiles_retention_enforce(*, now: datetime | None = None, batch: int = 200) -> int:
    """Daily, with the privacy retention job: kept tax profiles whose retention ended are erased."""
    now = now or timezone.now()
    due = TaxProfile.objects.filter(retain_until__lt=now.date(), erased_at__isnull=True).order_by("pk")[
        :batch
    ]
    done = 0
    for profile in due:
        with transaction.atomic():
            tax_profile_erase(profile=profile, now=now)
        done += 1
    return done
