"""Payouts: the person's payable -> in transit -> the bank. Every transition is a conditional update
from the states it may leave, so two workers (or a worker and a bank report) never both act; the
scheme a payout goes by, and the accounts it moves through."""

from django.conf import settings
from django.utils import timezone

from joyback.ledger.models import Account, AccountKind
from joyback.ledger.services import account_for, brand_balance_account, platform_bank
from joyback.modes import brand_livemode
from payouts.funding.selectors import brand_balance_account_id
from payouts.models import PayeeAccount, Payout, PayoutEvent
from payouts.models.payees import Rail
from payouts.models.payouts import PayoutScheme, PayoutStatus
from payouts.models.transitions import PAYOUT, state_step
from payouts.models.transitions import SENT as TRANSITIONS_SENT

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


def payout_source_account(*, currency: str, brand_id: int) -> Account:
    """Where a payout's money leaves from, in the ledger: the brand's own balance account at the
    payment provider (its custody: the provider pays from it, TransferService's balanceAccountId).
    A test brand's payouts leave the sandbox bank's play money; a live brand with no account of its
    own (from before brands held their own, until custody_move) the platform's bank."""
    if not brand_livemode(brand_id):
        return platform_bank(currency=currency, livemode=False)
    if brand_balance_account_id(brand=brand_id, currency=currency):
        return brand_balance_account(brand_id=brand_id, currency=currency)
    return account_for(
        kind=AccountKind.PLATFORM_BANK, currency=currency, brand_id=None, name=f"Platform bank {currency}"
    )


_UNREAD = object()


def scheme_for(payee: PayeeAccount, *, last=_UNREAD) -> str:
    """The scheme a payout to `payee` goes by. `last`: the (status, reason code) of the payee's
    latest payout, or None, when the caller read it already (a batch reads it for all its payees
    at once); else it is read here, for SEPA payees only."""
    if payee.rail == Rail.SEPA:
        if not brand_livemode(payee.brand_id):
            # Test payouts go one by one to the sandbox provider, never into the bank's files.
            return PayoutScheme.SEPA_INSTANT
        if last is _UNREAD:
            last = payee_last_payout(payee_ids=[payee.pk]).get(payee.pk)
        if settings.PAYOUT_SEPA_MODE == "instant" and not _instant_unreachable(last):
            return PayoutScheme.SEPA_INSTANT
        return PayoutScheme.SEPA
    return {Rail.UK_FPS: PayoutScheme.FPS, Rail.US_ACH: PayoutScheme.ACH, Rail.SWIFT: PayoutScheme.SWIFT}[
        payee.rail
    ]


def payee_last_payout(*, payee_ids) -> dict[int, tuple[str, str]]:
    """payee id -> (status, reason code) of its latest payout, in one query for many payees."""
    return {
        payee_id: (status, code)
        for payee_id, status, code in Payout.objects.filter(payee_id__in=list(payee_ids))
        .order_by("payee_id", "-created_at")
        .distinct("payee_id")
        .values_list("payee_id", "status", "reason_code")
    }


def _instant_unreachable(last) -> bool:
    """The payee's bank could not take the last instant transfer in time (AB05, CNOR...): the
    next one goes as a batch SEPA credit transfer, which has a day to get there, instead of the
    sweep retrying instant every minute into the same timeout."""
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


def payout_transition(payout: Payout, step: str, *, reason_code="", detail="", actor=None, **fields) -> bool:
    """Take the declared `step` (payouts.models.transitions.PAYOUT) if the payout is still in one
    of the states it leaves; False when another step got there first."""
    moved = state_step(
        PAYOUT,
        Payout.objects.filter(pk=payout.pk),
        step,
        reason_code=reason_code,
        updated_at=timezone.now(),
        **fields,
    )
    if not moved:
        return False
    before = payout.status
    if any(hasattr(value, "resolve_expression") for value in fields.values()):
        payout.refresh_from_db()
    else:
        payout.status, payout.reason_code = PAYOUT.step(step).target, reason_code
        for name, value in fields.items():
            setattr(payout, name, value)
    payout_event_record(payout, from_status=before, reason_code=reason_code, detail=detail, actor=actor)
    return True


SENT = list(TRANSITIONS_SENT)
