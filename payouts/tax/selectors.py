"""Reads of people's tax identities and of the rewards reported to tax authorities.

A report reads two things: what each person was credited for each reward, from the ledger (the
reward and clawback postings on their payable and receivable, referenced `claim:<id>`), and the
class each reward was booked under, from its claim (verification.ActionClaim.tax_class, tax_country,
tax_table, recorded at booking). Nothing here re-derives a past reward's class from today's table.
"""

import json
from dataclasses import dataclass
from datetime import date, datetime

from django.db.models import Exists, Q, QuerySet

from campaigns.tax import TABLES, TaxClass, campaign_tax_countries, reward_tax_judge
from joyback.ledger.models import AccountKind, Entry
from payouts.models.tax import TaxProfile
from verification.models import ActionClaim

# The class a reward booked before the tax columns existed is read under: the first table, frozen.
FIRST_TABLE = next(iter(TABLES))


@dataclass(frozen=True)
class TaxIdentity:
    """A tax profile decrypted, for a report or the person's own statement."""

    profile_id: int
    participant_id: int
    brand_id: int
    legal_name: str
    tin: str
    tin_kind: str
    tin_country: str
    birth_date: date | None
    address: dict
    residence_country: str
    us_status: str
    certified_at: datetime
    certification_version: str
    language: str


def tax_profile_current(*, participant_id: int) -> TaxProfile | None:
    return TaxProfile.objects.filter(participant_id=participant_id, replaced_at__isnull=True).first()


def tax_profile_at(*, participant_id: int, at: datetime) -> TaxProfile | None:
    """The profile that was current at `at` (a report's year end); else the first given after it,
    since details given late still describe the person the year's rewards went to."""
    profiles = TaxProfile.objects.filter(participant_id=participant_id)
    then = (
        profiles.filter(created_at__lte=at)
        .filter(Q(replaced_at__isnull=True) | Q(replaced_at__gt=at))
        .order_by("-created_at", "-pk")
        .first()
    )
    return then or profiles.filter(created_at__gt=at).order_by("created_at", "pk").first()


def tax_identity_read(*, profile: TaxProfile) -> TaxIdentity:
    """The profile's encrypted details in plain text (erased ones read as empty)."""
    try:
        born = date.fromisoformat(profile.birth_date) if profile.birth_date else None
    except ValueError:
        born = None
    try:
        address = json.loads(profile.address) if profile.address else {}
    except ValueError:
        address = {}
    return TaxIdentity(
        profile_id=profile.pk,
        participant_id=profile.participant_id,
        brand_id=profile.brand_id,
        legal_name=profile.legal_name or "",
        tin=profile.tin or "",
        tin_kind=profile.tin_kind,
        tin_country=profile.tin_country,
        birth_date=born,
        address=address,
        residence_country=profile.residence_country,
        us_status=profile.us_status,
        certified_at=profile.certified_at,
        certification_version=profile.certification_version,
        language=profile.language,
    )


def reportable_rewards(participant_ref) -> QuerySet[ActionClaim]:
    """The person's rewards booked under a reported class (participant_ref: an id or an OuterRef)."""
    return ActionClaim.objects.filter(
        participant_id=participant_ref,
        ledger_transaction_id__isnull=False,
        tax_class__in=sorted(TaxClass.REPORTABLE),
    )


def tax_details_missing_q(participant_ref) -> Q:
    """The person owes us tax details: a reported reward is booked to them, and no current profile.
    As a condition over OuterRef("participant_id") for the payouts' query of who may be paid."""
    current = TaxProfile.objects.filter(participant_id=participant_ref, replaced_at__isnull=True)
    return Q(Exists(reportable_rewards(participant_ref))) & ~Q(Exists(current))


def tax_details_needed(*, participant_id: int) -> bool:
    """Whether the person's payouts wait for their tax details."""
    return (
        reportable_rewards(participant_id).exists()
        and not TaxProfile.objects.filter(participant_id=participant_id, replaced_at__isnull=True).exists()
    )


@dataclass(frozen=True)
class RewardTaxRow:
    """One ledger posting of a reward to a person, with the class the reward was booked under.
    amount: what the person was credited in it (minor units; a clawback is negative)."""

    transaction_id: int
    posted_at: datetime
    participant_id: int
    brand_id: int
    claim_id: int
    trigger: str
    tax_class: str
    tax_country: str
    tax_table: str
    amount: int
    currency: str


def reward_tax_rows(
    *, start: datetime, end: datetime, brand_id: int | None = None, participant_id: int | None = None
) -> list[RewardTaxRow]:
    """Every reward and clawback posted to people in [start, end), with each reward's recorded class:
    the rows a year's report sums (per person, per quarter, per class). The sum of `amount` over a
    period is what the ledger credited people for rewards in it, to the cent."""
    entries = Entry.objects.filter(
        account__kind__in=[AccountKind.PARTICIPANT_PAYABLE, AccountKind.PARTICIPANT_RECEIVABLE],
        transaction__reason__in=["reward", "clawback"],
        transaction__reference__startswith="claim:",
        transaction__posted_at__gte=start,
        transaction__posted_at__lt=end,
    )
    if brand_id is not None:
        entries = entries.filter(account__brand_id=brand_id)
    if participant_id is not None:
        entries = entries.filter(account__subject=f"participant:{participant_id}")
    sums: dict[tuple, int] = {}
    for tx_id, reference, posted_at, subject, amount, currency in entries.values_list(
        "transaction_id",
        "transaction__reference",
        "transaction__posted_at",
        "account__subject",
        "amount",
        "currency",
    ).order_by("transaction__posted_at", "transaction_id"):
        key = (tx_id, int(reference.split(":", 1)[1]), posted_at, int(subject.split(":", 1)[1]), currency)
        # Entries are debit positive: a reward credits the person's payable, so what they were
        # credited is the entries' sum negated.
        sums[key] = sums.get(key, 0) - amount
    claims = {
        claim.pk: claim
        for claim in ActionClaim.objects.filter(pk__in={key[1] for key in sums}).select_related(
            "rule", "campaign"
        )
    }
    rows = []
    for (tx_id, claim_id, posted_at, person, currency), amount in sums.items():
        claim = claims[claim_id]
        tax_class, country, table = claim.tax_class, claim.tax_country, claim.tax_table
        if not tax_class:
            # Booked before the columns existed: read under the first table, for the campaign's country.
            judged = reward_tax_judge(
                trigger=claim.rule.trigger,
                countries=campaign_tax_countries(claim.campaign),
                version=FIRST_TABLE,
            )
            tax_class, country, table = judged.tax_class, judged.country, judged.version
        rows.append(
            RewardTaxRow(
                transaction_id=tx_id,
                posted_at=posted_at,
                participant_id=person,
                brand_id=claim.brand_id,
                claim_id=claim_id,
                trigger=claim.rule.trigger,
                tax_class=tax_class,
                tax_country=country,
                tax_table=table,
                amount=amount,
                currency=currency,
            )
        )
    return rows
