"""Funding references: the RF creditor reference a brand puts on its deposits, made and read back."""

import re
import secrets

from django.utils import timezone

from campaigns.models import Brand
from payouts import sql

_REFERENCE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no I, O, 0, 1: read aloud and typed safely


def _rf_check_digits(body: str) -> str:
    digits = "".join(str(int(char, 36)) for char in body + "RF00")
    return f"{98 - int(digits) % 97:02d}"


def brand_deposit_reference(brand: Brand) -> str:
    """The brand's own payment reference for transfers to the platform's account (ISO 11649 RF
    creditor reference), made on first use by the statement that reads it (payouts.sql), so a page
    that shows it asks as much on its first visit as on any other; shown in groups of four as banks
    print it."""
    found = None
    while found is None:  # again when another request made it first, or (rarely) the body exists
        body = "JB" + "".join(secrets.choice(_REFERENCE_ALPHABET) for _ in range(8))
        new = f"RF{_rf_check_digits(body)}{body}"
        found = sql.brand_funding_reference(brand_id=brand.pk, new=new, now=timezone.now())
    return " ".join(found[i : i + 4] for i in range(0, len(found), 4))


_REFERENCE = re.compile(r"RF(\d{2})(JB[A-Z0-9]{8})")


def _rf_valid(reference: str) -> bool:
    """ISO 11649: the reference with its first four characters moved to the end, letters as
    numbers (A=10 .. Z=35), leaves 1 when divided by 97."""
    rearranged = reference[4:] + reference[:4]
    return int("".join(str(int(char, 36)) for char in rearranged)) % 97 == 1


def brand_for_reference(text: str, *, livemode: bool = True) -> Brand | None:
    """The brand whose funding reference the remittance carries, spaces and case aside; a reference
    with wrong check digits (a typo) names no brand. The bank's statements are live money: a test
    twin's reference names a brand only in the sandbox bank's test notifications."""
    compact = re.sub(r"\s+", "", text or "").upper()
    for found in _REFERENCE.finditer(compact):
        reference = found.group(0)
        if not _rf_valid(reference):
            continue
        brand = Brand.objects.filter(funding_reference__reference=reference, livemode=livemode).first()
        if brand is not None:
            return brand
    return None
