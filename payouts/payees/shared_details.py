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
