"""Payouts: the person's payable -> in transit -> the bank. Every transition is a conditional update
from the states it may leave, so two workers (or a worker and a bank report) never both act; the
scheme a payout goes by, and the accounts it moves through."""

from django.conf import settings
from django.utils import timezone

from joyback.ledger.models import Account, AccountKind
from joyback.ledger.services import account_for, platform_bank
from joyback.modes import brand_livemode
from payouts.models import PayeeAccount, Payout, PayoutEvent
from payouts.models.payees import Rail
from payouts.models.payouts import PayoutScheme, PayoutStatus

PAYEE_DATA_CODES = frozenset(
    {"AC01", "AC02", "AC03", "AC04", "AC06", "AG01", "BE04", "MD07", "RR03", "RC01", "MS02", "NAME"}
)


# Instant-only technical refusals: the payee's bank was unreachable in time; a batch transfer works.
INSTANT_UNREACHABLE_CODES = frozenset({"AB05", "AB06", "AB07", "AB08", "AB09", "AB10", "CNOR"})


class PayoutRefused(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def payout_in_transit_account(*, brand_id: int, currency: str) -> Account:
    return account_for(
        kind=AccountKind.PAYOUT_IN_TRANSIT,
        currency=currency,
        brand_id=brand_id,
        name=f"Payouts in transit {currency}",
    )


def payout_platform_bank(*, currency: str, brand_id: int) -> Account:
    """The platform's bank in the payout's mode: a test brand's payouts leave the sandbox bank."""
    if not brand_livemode(brand_id):
        return platform_bank(currency=currency, livemode=False)
    return account_for(
        kind=AccountKind.PLATFORM_BANK, currency=currency, brand_id=None, name=f"Platform bank {currency}"
    )


def scheme_for(payee: PayeeAccount) -> str:
    if payee.rail == Rail.SEPA:
        if not brand_livemode(payee.participant.brand_id):
            # Test payouts go one by one to the sandbox provider, never into the bank's files.
            return PayoutScheme.SEPA_INSTANT
        if settings.PAYOUT_SEPA_MODE == "instant" and not _instant_unreachable(payee):
            return PayoutScheme.SEPA_INSTANT
        return PayoutScheme.SEPA
    return {Rail.UK_FPS: PayoutScheme.FPS, Rail.US_ACH: PayoutScheme.ACH, Rail.SWIFT: PayoutScheme.SWIFT}[
        payee.rail
    ]


def _instant_unreachable(payee: PayeeAccount) -> bool:
    """The payee's bank could not take the last instant transfer in time (AB05, CNOR...): the
    next one goes as a batch SEPA credit transfer, which has a day to get there, instead of the
    sweep retrying instant every minute into the same timeout."""
    last = (
        Payout.objects.filter(payee=payee)
        .order_by("-created_at")
        .values_list("status", "reason_code")
        .first()
    )
    return last is not None and last[0] == PayoutStatus.REJECTED and last[1] in INSTANT_UNREACHABLE_CODES


def payout_event_record(
    payout: Payout, *, from_status: str, reason_code: str = "", detail: str = "", actor=None
) -> None:
    PayoutEvent.objects.create(
        payout=payout,
        brand_id=payout.brand_id,
        from_status=from_status,
        to_status=payout.status,
        reason_code=reason_code,
        detail=detail[:300],
        actor=actor,
    )


def payout_transition(
    payout: Payout, *, to: str, allowed_from, reason_code="", detail="", actor=None, **fields
) -> bool:
    """Move the payout if it is still in one of `allowed_from`; False when another step got there first."""
    moved = Payout.objects.filter(pk=payout.pk, status__in=list(allowed_from)).update(
        status=to, reason_code=reason_code, updated_at=timezone.now(), **fields
    )
    if not moved:
        return False
    before = payout.status
    if any(hasattr(value, "resolve_expression") for value in fields.values()):
        payout.refresh_from_db()
    else:
        payout.status, payout.reason_code = to, reason_code
        for name, value in fields.items():
            setattr(payout, name, value)
    payout_event_record(payout, from_status=before, reason_code=reason_code, detail=detail, actor=actor)
    return True


SENT = [PayoutStatus.SUBMITTED, PayoutStatus.ACCEPTED, PayoutStatus.UNKNOWN]
