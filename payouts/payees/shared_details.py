"""Bank details, e-mail or phone shared by several people of one brand: flagged for review, under a lock
per detail so two people saving the same details at once are both seen."""

import hashlib

from django.db.models import Q

from payouts import sql
from payouts.models import PayeeAccount
from verification.services.participants import participants_flag


def shared_details_lock(*, brand_id: int, fingerprints) -> None:
    """Two people entering the same bank account, email or phone at the same moment would each
    miss the other (neither row is committed when the other looks): they take turns per detail,
    in a fixed order so that they cannot deadlock."""
    keys = sorted(
        {int(hashlib.sha256(f"{brand_id}:{fp}".encode()).hexdigest()[:15], 16) for fp in fingerprints if fp}
    )
    sql.advisory_xact_locks(keys)


SHARED_DETAILS = [
    ("account_fingerprint", "payee_iban_shared", "the same bank account as participant #{other}"),
    ("email_fingerprint", "payee_email_shared", "the same email as participant #{other}"),
    ("phone_fingerprint", "payee_phone_shared", "the same phone number as participant #{other}"),
]


def shared_details_flag(payee: PayeeAccount) -> None:
    """One bank account, email or phone behind several identities is the classic farm: every
    participant involved goes back to review before anything is paid out."""
    matches = Q()
    for field, _code, _detail in SHARED_DETAILS:
        if getattr(payee, field):
            matches |= Q(**{field: getattr(payee, field)})
    others = (
        PayeeAccount.objects.filter(matches, participant__brand_id=payee.participant.brand_id)
        .exclude(participant=payee.participant)
        .values_list("participant_id", *(field for field, _code, _detail in SHARED_DETAILS))
    )
    flags = []
    for other, *values in others:
        for (field, code, detail), value in zip(SHARED_DETAILS, values, strict=True):
            if value and value == getattr(payee, field):
                flags.append((payee.participant_id, code, detail.format(other=other)))
                flags.append((other, code, detail.format(other=payee.participant_id)))
    if flags:
        participants_flag(flags=flags)


def referral_payee_matches(
    *, poster_id: int, buyer_id: int, email_fingerprint: str, phone_fingerprint: str
) -> list[tuple[str, str]]:
    """A referred order against the poster's payee details (verification's REFERRAL_PAYEE_MATCHES):
    the order's email or phone is the one the poster is paid under, or the buyer, who gave bank
    details for their own cashback, is paid to the poster's bank account. Keyed hashes only."""
    poster = PayeeAccount.objects.filter(participant_id=poster_id, replaced_at__isnull=True).first()
    if poster is None:
        return []
    found = []
    if email_fingerprint and email_fingerprint == poster.email_fingerprint:
        found.append(("self_referral_email", "the buyer's email is the one the poster is paid under"))
    if phone_fingerprint and phone_fingerprint == poster.phone_fingerprint:
        found.append(("self_referral_phone", "the buyer's phone is the one the poster is paid under"))
    buyer = (
        PayeeAccount.objects.filter(participant_id=buyer_id, replaced_at__isnull=True)
        .exclude(participant_id=poster_id)
        .first()
    )
    if buyer is not None:
        for field, code in (
            ("account_fingerprint", "self_referral_bank_account"),
            ("email_fingerprint", "self_referral_email"),
            ("phone_fingerprint", "self_referral_phone"),
        ):
            if getattr(buyer, field) and getattr(buyer, field) == getattr(poster, field):
                found.append((code, "the buyer's payee details are the poster's"))
    return found
