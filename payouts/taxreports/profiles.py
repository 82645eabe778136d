"""The one place the reports read what the claim flow collected (payouts.models.TaxProfile) and
how each reward was classified when it was booked (ActionClaim.tax_class, tax_country;
campaigns.tax): everything else in the reports takes the `Seller` and jurisdictions made here."""

import datetime
import json

from campaigns.tax import EU, TaxClass
from payouts.models import PayeeAccount, TaxProfile
from payouts.models.tax import UsStatus
from payouts.taxreports.records import Address, Jurisdiction, Seller


def person_jurisdictions(*, participant_ids) -> dict[int, frozenset]:
    """Where each person with a current tax profile is reported (docs/design.md, "Tax
    classification"): DAC7 when resident in the EU, the UK's rules when resident in the UK, the
    1099-NEC when they certified a W-9."""
    out = {}
    for participant_id, residence, us_status in TaxProfile.objects.filter(
        participant_id__in=participant_ids, replaced_at__isnull=True
    ).values_list("participant_id", "residence_country", "us_status"):
        places = set()
        if residence in EU:
            places.add(Jurisdiction.DAC7)
        elif residence == "GB":
            places.add(Jurisdiction.UK)
        if us_status == UsStatus.W9:
            places.add(Jurisdiction.US)
        out[participant_id] = frozenset(places)
    return out


def reward_jurisdictions(*, tax_class: str, tax_country: str, person: frozenset | None) -> frozenset:
    """Where a reward is reported: nowhere unless its class is; then where its person is, or,
    for a person who has not given their details, where the reward was judged (so they are
    listed as missing details in that report, never left out unseen)."""
    if tax_class not in TaxClass.REPORTABLE:
        return frozenset()
    if person is not None:
        return person
    if tax_country == "US":
        return frozenset({Jurisdiction.US})
    if tax_country == "GB":
        return frozenset({Jurisdiction.UK})
    if tax_country in EU:
        return frozenset({Jurisdiction.DAC7})
    return frozenset()


def _name(legal_name: str) -> tuple[str, str]:
    words = legal_name.split()
    if len(words) < 2:
        return legal_name.strip(), ""
    return " ".join(words[:-1]), words[-1]


def _financial_identifier(account) -> str:
    if account is None:
        return ""
    if account.iban:
        return account.iban
    return " ".join(
        part for part in (account.sort_code or account.routing_number, account.account_number) if part
    )


def sellers_for(*, participant_ids) -> dict[int, Seller]:
    """Each participant as a seller: their current tax profile (the details asked when a
    reportable reward was owed to them) and the bank account they were paid to. A participant
    without a profile is a seller whose details are all missing, never left out silently."""
    profiles = {
        profile.participant_id: profile
        for profile in TaxProfile.objects.filter(
            participant_id__in=participant_ids, replaced_at__isnull=True, erased_at__isnull=True
        )
    }
    accounts = {
        payee.participant_id: payee
        for payee in PayeeAccount.objects.filter(participant_id__in=participant_ids).order_by("created_at")
    }
    out = {}
    for participant_id in participant_ids:
        profile = profiles.get(participant_id)
        payee = accounts.get(participant_id)
        iban = _financial_identifier(payee.account if payee else None)
        email = (payee.email or "") if payee else ""
        if profile is None:
            out[participant_id] = Seller(
                key=f"P{participant_id}",
                first_name="",
                last_name="",
                address=None,
                tin="",
                tin_country="",
                birth_date=None,
                iban=iban,
                email=email,
            )
            continue
        first, last = _name(profile.legal_name)
        address = json.loads(profile.address or "{}")
        street = " ".join(part for part in (address.get("line1", ""), address.get("line2", "")) if part)
        out[participant_id] = Seller(
            key=f"P{participant_id}",
            first_name=first,
            last_name=last,
            address=Address(
                country=address.get("country", "") or profile.residence_country,
                city=address.get("city", ""),
                street=street,
                postcode=address.get("postal_code", ""),
                region=address.get("region", ""),
            ),
            tin=profile.tin,
            tin_country=profile.tin_country,
            birth_date=datetime.date.fromisoformat(profile.birth_date) if profile.birth_date else None,
            iban=iban,
            residence=profile.residence_country,
            language=profile.language,
            email=email,
        )
    return out
