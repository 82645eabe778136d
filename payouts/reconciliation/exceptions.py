"""Resolving reconciliation exceptions: platform staff only; money given to a brand or a person
(link, deposit) needs a second person, booking to suspense only above
RECONCILIATION_SECOND_APPROVAL_MINOR; each resolution keeps who, who approved and why."""

from django.core.cache import cache
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from campaigns.limits import limit_value
from campaigns.models import Brand, LimitKind
from joyback.ledger.models import AccountKind
from joyback.ledger.services import InsufficientFunds, account_get_or_create, platform_bank, transfer_post
from joyback.users.four_eyes import second_person_refusal
from payouts.models import ExceptionResolution as Resolution
from payouts.models import Payout, ReconciliationException, StatementLine
from payouts.models.payouts import PayoutStatus
from payouts.models.reconciliation import ExceptionReason as Reason
from payouts.models.reconciliation import ExceptionStatus as ExcStatus
from payouts.models.reconciliation import LineKind as Kind
from payouts.models.reconciliation import LineState as State
from payouts.models.reconciliation import ResolutionAction as Action
from payouts.models.transitions import RECONCILIATION_EXCEPTION, state_step
from payouts.reconciliation.rules import SENT, ReconciliationRefused, staff_permission_check
from payouts.reconciliation.selectors import numbers_key
from payouts.submission.outcomes import payout_return, payout_settle

# Alerts about a whole statement or the account: cleared by staff, never booked.
ALERTS = (Reason.SEQUENCE_GAP, Reason.OPENING_MISMATCH, Reason.BANK_DRIFT)


# Linking settles or returns a payout (money reaches a person, or goes back to a brand): staff
# decide whose money it is, so a second staff member confirms it whatever the amount. Suspense only
# parks the bank's own line where no one can spend it: the bank's message is the authority for that
# booking, so one person does it, and a second is asked only above
# RECONCILIATION_SECOND_APPROVAL_MINOR.
TO_SOMEONE = (Action.LINK,)


def exception_resolution_record(
    exception: ReconciliationException, *, action: str, actor, note="", payout=None, tx=None, approved_by=None
):
    closed = state_step(
        RECONCILIATION_EXCEPTION,
        ReconciliationException.objects.filter(pk=exception.pk),
        "resolve",
        resolved_at=timezone.now(),
    )
    if not closed:
        raise ReconciliationRefused(_("This exception has already been resolved."))
    Resolution.objects.create(
        exception=exception,
        brand_id=exception.brand_id,
        action=action,
        actor=actor,
        approved_by=approved_by,
        note=note[:500],
        payout=payout,
        ledger_transaction_id=tx,
    )
    exception.refresh_from_db()
    return exception


def numbers_forget(brand_ids) -> None:
    cache.delete_many([numbers_key(brand_id) for brand_id in brand_ids])


def exception_resolve(
    *,
    exception: ReconciliationException,
    action: str,
    actor,
    payout: Payout | None = None,
    brand: Brand | None = None,
    note: str = "",
) -> ReconciliationException:
    """Link the line to a payout, book it to suspense, mark the payout re-paid, or clear an alert.
    Booking money on the platform's account as a brand's deposit is refused: the platform keeps no
    brand's money (staff send it back; the brand funds its own virtual IBAN at the provider).

    Platform staff only, and always with a reason. Linking and booking to
    suspense above the second-approval amount are first proposed, then done when another staff
    member approves the same thing; until then the exception stays open (its proposal shows who
    asked for what)."""
    staff_permission_check(
        actor, "payouts.exception_resolve", _("Only platform staff resolve reconciliation exceptions.")
    )
    note = (note or "").strip()
    if not note:
        raise ReconciliationRefused(_("Say why: the reason is kept with the resolution."))
    if exception.status != ExcStatus.OPEN:
        raise ReconciliationRefused(_("This exception has already been resolved."))
    if (action == Action.CLEAR) != (exception.reason in ALERTS):
        raise ReconciliationRefused(
            _("An alert is cleared once checked; a statement line is linked, booked to suspense or re-paid.")
        )
    # What can be refused now is refused before anyone proposes it to a second person.
    if action == Action.DEPOSIT and brand is None:
        raise ReconciliationRefused(_("Choose the brand whose money it is."))
    if action == Action.LINK and payout is None:
        raise ReconciliationRefused(_("Choose a payout of this brand to link the line to."))
    if action == Action.DEPOSIT:
        _deposit_refuse(line=exception.line, brand=brand)
    if action == Action.LINK:
        _link_refuse(exception, line=exception.line, payout=payout)
    if exception.proposed_by_id and action != exception.proposed_action:
        raise ReconciliationRefused(
            _("The second person approves what was proposed (%(action)s); nothing else.")
            % {"action": Action(exception.proposed_action).label}
        )
    try:
        large = abs(exception.amount) > limit_value(
            kind=LimitKind.RECONCILIATION_SECOND_APPROVAL_MINOR, currency=exception.currency
        )
        if action in TO_SOMEONE or (action == Action.SUSPENSE and large):
            return _second_person(
                exception, action=action, actor=actor, payout=payout, brand=brand, note=note
            )
        return _exception_resolve(
            exception, action=action, actor=actor, payout=payout, brand=brand, note=note
        )
    finally:
        # After the writes (each in its own durable transaction), so no reader caches the old numbers.
        numbers_forget([exception.brand_id, payout.brand_id if payout else None, brand.pk if brand else None])


def _second_person(exception, *, action, actor, payout, brand, note) -> ReconciliationException:
    """The first person's resolution is kept as a proposal; a second person's same resolution does it."""
    with transaction.atomic(durable=True):
        row = ReconciliationException.objects.select_for_update().get(pk=exception.pk)
        if row.status != ExcStatus.OPEN:
            raise ReconciliationRefused(_("This exception has already been resolved."))
        if row.proposed_by_id is None:
            row.proposed_action = action
            row.proposed_payout = payout
            row.proposed_brand = brand
            row.proposed_note = note[:500]
            row.proposed_by = actor
            row.proposed_at = timezone.now()
            row.save(
                update_fields=[
                    "proposed_action",
                    "proposed_payout",
                    "proposed_brand",
                    "proposed_note",
                    "proposed_by",
                    "proposed_at",
                ]
            )
            return row
        if row.proposed_by_id == actor.pk:
            raise ReconciliationRefused(_("A second person must approve a resolution you proposed."))
        refusal = second_person_refusal(first=row.proposed_by, second=actor)
        if refusal:
            raise ReconciliationRefused(refusal)
        asked = (action, payout.pk if payout else None, brand.pk if brand else None)
        if (row.proposed_action, row.proposed_payout_id, row.proposed_brand_id) != asked:
            raise ReconciliationRefused(
                _("The second person approves what was proposed (%(action)s); nothing else.")
                % {"action": Action(row.proposed_action).label}
            )
    return _exception_resolve(
        row,
        action=row.proposed_action,
        actor=row.proposed_by,
        payout=row.proposed_payout,
        brand=row.proposed_brand,
        note=f"{row.proposed_note} | {note}"[:500],
        approved_by=actor,
    )


def _exception_resolve(
    exception, *, action, actor, payout, note, brand=None, approved_by=None
) -> ReconciliationException:
    line = exception.line
    if action == Action.LINK:
        return _resolve_link(
            exception, line=line, payout=payout, actor=actor, note=note, approved_by=approved_by
        )
    if action == Action.SUSPENSE:
        if line is None:
            raise ReconciliationRefused(_("Only a statement line can be booked to suspense."))
        suspense = account_get_or_create(
            kind=AccountKind.SUSPENSE,
            currency=line.currency,
            brand_id=exception.brand_id,
            name=f"Suspense {line.currency}",
        )
        bank = platform_bank(currency=line.currency)
        # Money in that nothing explains waits on suspense; money out that nothing explains is
        # taken from it, so the bank account in the ledger agrees with the bank's.
        source, destination = (bank, suspense) if line.credit else (suspense, bank)
        try:
            with transaction.atomic(durable=True):
                return _suspense_book(
                    exception, line, source, destination, actor=actor, note=note, approved_by=approved_by
                )
        except InsufficientFunds:
            raise ReconciliationRefused(
                _("The ledger's bank account does not hold this much; book the deposits first.")
            ) from None
    if action == Action.REPAID:
        if payout is not None and exception.brand_id and payout.brand_id != exception.brand_id:
            raise ReconciliationRefused(_("Choose a payout of this brand."))
        with transaction.atomic(durable=True):
            return exception_resolution_record(
                exception, action=action, actor=actor, note=note, payout=payout
            )
    if action == Action.CLEAR:
        with transaction.atomic(durable=True):
            return exception_resolution_record(exception, action=action, actor=actor, note=note)
    raise ReconciliationRefused(_("Choose how to resolve the exception."))


def _suspense_book(exception, line, source, destination, *, actor, note, approved_by=None):
    posted = transfer_post(
        source=source,
        destination=destination,
        amount=line.amount,
        reason="reconciliation_suspense",
        idempotency_key=f"reconciliation-suspense:{exception.pk}",
        reference=f"statement-line:{line.pk}",
        description=f"Unexplained statement line {line.entry_ref or line.pk}",
    )
    StatementLine.objects.filter(pk=line.pk).update(ledger_transaction_id=posted.pk)
    return exception_resolution_record(
        exception, action=Action.SUSPENSE, actor=actor, note=note, tx=posted.pk, approved_by=approved_by
    )


def _link_refuse(exception, *, line, payout) -> None:
    if line is None:
        raise ReconciliationRefused(_("There is no statement line to link."))
    # A line on the platform's statement names no brand until staff link it to a payout.
    if payout is None or (exception.brand_id and payout.brand_id != exception.brand_id):
        raise ReconciliationRefused(_("Choose a payout of this brand to link the line to."))
    if payout.currency != line.currency:
        raise ReconciliationRefused(
            _("The line is in %(line)s and the payout in %(payout)s: they cannot be the same money.")
            % {"line": line.currency, "payout": payout.currency}
        )
    _link_refuse_if_matched(line=line, payout=payout)


def _resolve_link(exception, *, line, payout, actor, note, approved_by=None):
    _link_refuse(exception, line=line, payout=payout)
    if line.credit and payout.status in (*SENT, PayoutStatus.SETTLED):
        payout = payout_return(
            payout=payout, reason_code=line.return_reason or "MS03", detail="linked by platform staff"
        )
    elif not line.credit and payout.status in SENT:
        payout = payout_settle(payout=payout, bank_reference=line.entry_ref)
    with transaction.atomic(durable=True):
        Payout.objects.select_for_update().filter(pk=payout.pk).first()  # two members linking at once
        _link_refuse_if_matched(line=line, payout=payout)
        StatementLine.objects.filter(pk=line.pk).update(
            state=State.MATCHED, payout=payout, brand_id=payout.brand_id
        )
        ReconciliationException.objects.filter(pk=exception.pk).update(brand_id=payout.brand_id)
        exception.brand_id = payout.brand_id  # the resolution names it too
        return exception_resolution_record(
            exception, action=Action.LINK, actor=actor, note=note, payout=payout, approved_by=approved_by
        )


def _deposit_refuse(*, line, brand) -> None:
    if line is None or not line.credit or line.kind != Kind.DEPOSIT:
        raise ReconciliationRefused(_("Only money that came in can be booked as a brand's deposit."))
    if brand is None:
        raise ReconciliationRefused(_("Choose the brand whose money it is."))
    if not brand.livemode:
        raise ReconciliationRefused(_("The bank's money is live: book it to the brand, not its test data."))
    # Booked as the brand's, it would be the brand's money kept in the platform's account: a pool.
    raise ReconciliationRefused(
        _(
            "JoyBack's account keeps no brand's money: send it back to the sender. The brand funds "
            "through its own virtual IBAN at our payment provider."
        )
    )


def _link_refuse_if_matched(*, line, payout) -> None:
    """A payout leaves the bank once and comes back at most once: one debit line, one credit line."""
    other = (
        StatementLine.objects.filter(payout=payout, state=State.MATCHED, credit=line.credit)
        .exclude(pk=line.pk)
        .first()
    )
    if other is not None:
        raise ReconciliationRefused(
            _("This payout is already matched to the statement line %(reference)s.")
            % {"reference": other.entry_ref or f"#{other.pk}"}
        )
