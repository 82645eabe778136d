from datetime import timedelta

from django.db.models import Count, Exists, Min, OuterRef, Q, Sum
from django.utils import timezone

from joyback.ledger.models import Account, AccountKind, Entry
from joyback.ledger.selectors import accounts_of_kind
from joyback.metrics import age_seconds, gauge
from payouts.models import (
    Notification,
    PayeeAccount,
    PayeeSubmission,
    Payout,
    PayoutEvent,
    TransferEvent,
    VirtualAccount,
    VopCheck,
)
from payouts.models.payouts import OPEN_STATUSES, PayoutStatus
from verification.models import ActionClaim, ClaimStatus, Participant


def payee_current(*, participant: Participant) -> PayeeAccount | None:
    return PayeeAccount.objects.filter(participant=participant, replaced_at__isnull=True).first()


def manual_payout_unpaid(participant_id):
    """A payout made by hand that the bank rejected or returned, not yet paid again: its money is
    paid again only by a person, through the manual payout's controls (payouts.manual.services.
    payout_retry), never by the automatic payouts of what a person is owed. participant_id may be
    an OuterRef."""
    return Payout.objects.filter(
        participant_id=participant_id,
        manual=True,
        status__in=[PayoutStatus.REJECTED, PayoutStatus.RETURNED],
        repaid_by__isnull=True,
    )


def payee_submissions_unfinished():
    """Bank details not made a payee account yet, however often the standing worker tried."""
    return PayeeSubmission.objects.filter(processed_at__isnull=True)


def participants_payout_due():
    """People an approval marked due whose payouts the standing worker has not made yet."""
    return Participant.objects.filter(payout_due_at__isnull=False)


def transfer_events_unfinished():
    """The payment provider's notifications not processed yet, however often the worker tried."""
    return TransferEvent.objects.filter(processed_at__isnull=True)


def virtual_accounts_requested():
    """Funding accounts brands asked for that are not opened at the provider yet."""
    return VirtualAccount.objects.filter(status="requested")


def payee_submission_waiting(*, participant: Participant) -> bool:
    """Bank details sent and not yet stored by the worker (normally for a moment)."""
    return PayeeSubmission.objects.filter(participant=participant, processed_at__isnull=True).exists()


def participant_on_hold(*, participant: Participant) -> bool:
    """A claim of theirs waits for a person's review: nothing is paid to them until it is decided
    (payouts.submission.create.payout_for_participant)."""
    return participant.claims.filter(status=ClaimStatus.NEEDS_REVIEW).exists()


def participant_owed(*, participant: Participant) -> list[Account]:
    """What the ledger owes this person, per currency (approved rewards not yet paid out)."""
    return list(
        accounts_of_kind(kind=AccountKind.PARTICIPANT_PAYABLE).filter(
            brand_id=participant.brand_id, subject=participant.ledger_subject
        )
    )


def campaign_payout_readiness(*, campaign) -> dict:
    """Approved rewards of the campaign, split by whether the person has given bank details yet."""
    approved = ActionClaim.objects.filter(campaign=campaign, status=ClaimStatus.APPROVED)
    has_payee = Exists(
        PayeeAccount.objects.filter(participant=OuterRef("participant"), replaced_at__isnull=True)
    )
    totals = {}
    for label, claims in (("ready", approved.filter(has_payee)), ("waiting", approved.exclude(has_payee))):
        found = claims.aggregate(amount=Sum("amount", default=0), people=Count("participant", distinct=True))
        totals[label], totals[f"{label}_people"] = found["amount"], found["people"]
    return {"readiness": totals, "currency": campaign.currency}


def participant_payouts(*, participant: Participant, limit: int = 5) -> list[Payout]:
    return list(
        Payout.objects.filter(participant=participant).select_related("payee").order_by("-pk")[:limit]
    )


def participant_paid_total(*, participant: Participant) -> list[dict]:
    """Everything paid to the person so far, one {"currency", "total"} per currency (a payout the
    bank gave back is not counted: it is owed again)."""
    return list(
        Payout.objects.filter(participant=participant, status="settled")
        .values("currency")
        .annotate(total=Sum("amount"))
        .order_by("currency")
    )


def participant_latest_campaign(*, participant: Participant):
    """The campaign of the person's latest claim: where their status page and payee form live."""
    claim = participant.claims.select_related("campaign").order_by("-pk").first()
    return claim.campaign if claim else None


def vop_latest(*, payee: PayeeAccount | None) -> VopCheck | None:
    if payee is None:
        return None
    return VopCheck.objects.filter(payee=payee).order_by("-checked_at", "-pk").first()


ATTENTION = [
    PayoutStatus.AWAITING_APPROVAL,
    PayoutStatus.UNKNOWN,
    PayoutStatus.REJECTED,
    PayoutStatus.RETURNED,
]


def payouts_needing_attention(*, brand, limit: int = 100) -> list[Payout]:
    """What a finance member acts on: approvals, unknown outcomes, and failures not yet repaid."""
    return list(
        Payout.objects.filter(brand=brand, status__in=ATTENTION, repaid_by__isnull=True)
        .select_related("payee", "created_by")
        .order_by("-pk")[:limit]
    )


def payouts_recent(*, brand, limit: int = 25) -> list[Payout]:
    return list(Payout.objects.filter(brand=brand).select_related("payee").order_by("-pk")[:limit])


def payout_get_for_brand(*, brand, payout_id: int) -> Payout | None:
    return (
        Payout.objects.filter(brand=brand, pk=payout_id)
        .select_related("payee", "participant", "created_by", "approved_by", "repays", "batch")
        .first()
    )


def payout_history(*, payout: Payout) -> list[PayoutEvent]:
    return list(payout.events.select_related("actor").order_by("at", "pk"))


# What the payout controls count (payouts.manual.controls.payout_controls_check).

NOT_PAID = [PayoutStatus.CANCELLED, PayoutStatus.REJECTED]


def brand_confirmed_funds(*, brand_id: int, currency: str) -> int:
    """What the bank has confirmed the brand sent: its deposits on the ledger (each booked from a
    statement line or the bank's feed), less any deposit taken back by a reversal."""
    deposits = Q(transaction__reason="deposit") | Q(transaction__reverses__reason="deposit")
    credited = Entry.objects.filter(
        deposits,
        account__kind=AccountKind.BRAND_FUNDING,
        account__brand_id=brand_id,
        account__currency=currency,
    ).aggregate(total=Sum("amount", default=0))["total"]
    return -credited  # funding is owed to the brand: a deposit credits it (a negative entry)


def brand_paid_out(*, brand_id: int, currency: str) -> int:
    """Everything the brand's payouts took or are taking out of the bank: every payout, reward or
    manual, that was not cancelled or rejected and did not come back."""
    return (
        Payout.objects.filter(brand_id=brand_id, currency=currency)
        .exclude(status__in=[*NOT_PAID, PayoutStatus.RETURNED])
        .aggregate(total=Sum("amount", default=0))["total"]
    )


def manual_payouts_in_window(*, since, currency: str, brand_id=None, account_fingerprint="") -> int:
    """Manual payouts made since `since` (those waiting for approval included: they hold their
    place), of a brand or to one bank account (by any brand)."""
    payouts = Payout.objects.filter(manual=True, currency=currency, created_at__gte=since).exclude(
        status__in=NOT_PAID
    )
    if brand_id is not None:
        payouts = payouts.filter(brand_id=brand_id)
    if account_fingerprint:
        payouts = payouts.filter(payee__account_fingerprint=account_fingerprint)
    return payouts.aggregate(total=Sum("amount", default=0))["total"]


def brand_paid_account_before(*, brand_id: int, account_fingerprint: str) -> bool:
    """The brand has paid this bank account before: a payout to it got past approval."""
    return (
        Payout.objects.filter(brand_id=brand_id, payee__account_fingerprint=account_fingerprint)
        .exclude(status__in=[*NOT_PAID, PayoutStatus.AWAITING_APPROVAL])
        .exists()
    )


def manual_payouts_count_since(*, brand_id: int, since) -> int:
    return Payout.objects.filter(brand_id=brand_id, manual=True, created_at__gte=since).count()


def payout_metrics(*, now=None):
    """For GET /metrics: payouts still moving by status and the age of the oldest in each, what
    ended in the last day, and messages to people that did not go out."""
    now = now or timezone.now()
    live = Payout.objects.filter(brand__livemode=True)  # test data never shows in live reports
    moving = list(
        live.filter(status__in=OPEN_STATUSES)
        .values_list("status")
        .annotate(n=Count("pk"), oldest=Min("created_at"))
        .order_by()
    )
    yield gauge(
        "joyback_payouts_open",
        "Payouts not settled, rejected or returned yet",
        ["status"],
        [(status, n) for status, n, _oldest in moving],
    )
    yield gauge(
        "joyback_payouts_open_oldest_seconds",
        "Age of the oldest payout in each open status",
        ["status"],
        [(status, age_seconds(oldest, now)) for status, _n, oldest in moving],
    )
    ended = (
        live.filter(created_at__gte=now - timedelta(days=1))
        .exclude(status__in=OPEN_STATUSES)
        .values_list("status")
        .annotate(n=Count("pk"))
        .order_by()
    )
    yield gauge(
        "joyback_payouts_ended_24h", "Payouts made in the last day that ended, by status", ["status"], ended
    )
    # The sender marks a message sent before it goes and unmarks it when sending fails; the sweep
    # tries again after a minute, so one still unsent after five has failed at least once.
    unsent = Notification.objects.filter(sent_at__isnull=True, created_at__lte=now - timedelta(minutes=5))
    yield gauge(
        "joyback_notifications_failed",
        "Messages to people about their payout not sent after 5 minutes",
        ["channel"],
        unsent.values_list("channel").annotate(n=Count("pk")).order_by(),
    )
