"""Payouts made from what people are owed, with the money moved from their payable to in transit:
who may be paid, and the making itself, written once for N people. The payout pipeline's batches
(payouts.pipeline) call it for dozens of people at once; payout_for_participant is the same for one.
"""

from datetime import timedelta
from functools import cache

from django.conf import settings
from django.db import transaction
from django.db.models import BooleanField, Exists, ExpressionWrapper, OuterRef, QuerySet
from django.utils import timezone

from joyback.ledger.models import AccountKind
from joyback.ledger.selectors import accounts_of_kind
from joyback.ledger.services import Posting, accounts_lock, postings_post
from joyback.queue import enqueue_on_commit
from payouts.funding.selectors import brand_balance_account_id, brands_custody_blocked
from payouts.models import PayeeAccount, Payout, PayoutEvent, VopCheck
from payouts.models.payees import Rail
from payouts.models.payouts import OPEN_STATUSES, PayoutScheme, PayoutStatus
from payouts.selectors import manual_payout_unpaid
from payouts.submission.crash import crash_point
from payouts.submission.states import payee_last_payout, payout_in_transit_account, scheme_for
from payouts.submission.submit import payout_send, payout_submit
from payouts.tax.selectors import tax_details_missing_q
from payouts.tax.services import tax_held_filter
from payouts.vop import payee_unpayable_mark
from verification.models import ActionClaim, ClaimStatus, Participant
from verification.services.participants import participant_payable_account


def payees_payable() -> QuerySet[PayeeAccount]:
    """_payees_payable's query, built once per process and copied for each use: building its
    subqueries anew was about a tenth of a payout batch's CPU."""
    return _payees_payable().all()


@cache
def _payees_payable() -> QuerySet[PayeeAccount]:
    """Who may be paid, as their current bank details: usable, no claim of theirs waiting for a
    person's decision (the decision marks them again), no payout of theirs under way in the
    currency (one at a time: its resolution marks them again for what arrived meanwhile), and no
    returned manual payout unpaid (paid again by hand, within the manual controls). Each carries
    `tax_details_missing`: a payout of theirs waits for their tax details (payouts_make holds it)."""
    in_review = ActionClaim.objects.filter(
        participant_id=OuterRef("participant_id"), status=ClaimStatus.NEEDS_REVIEW
    )
    under_way = Payout.objects.filter(
        participant_id=OuterRef("participant_id"),
        currency=OuterRef("currency"),
        manual=False,
        status__in=OPEN_STATUSES,
    )
    return (
        PayeeAccount.objects.filter(replaced_at__isnull=True, unusable_code="")
        .filter(
            ~Exists(in_review), ~Exists(under_way), ~Exists(manual_payout_unpaid(OuterRef("participant_id")))
        )
        # Read in the same statement: whether a reported reward waits for their tax details
        # (payouts.tax), so a batch costs no statement more for it.
        .annotate(
            tax_details_missing=ExpressionWrapper(
                tax_details_missing_q(OuterRef("participant_id")), output_field=BooleanField()
            )
        )
    )


def payouts_make(
    *, payees: dict[int, PayeeAccount], brand_of: dict[int, int], now, claim: bool
) -> list[Payout]:
    """The payouts of `payees` (participant id -> their payable details, the people locked by the
    caller, in the caller's transaction), made, posted as one ledger batch and recorded; with
    claim=True those whose name check is settled and whose scheme sends one by one are claimed as
    submitted here, in the same commit, for the caller to send once it has committed. People whose
    rewards only net a clawback get that posting and no payout. A failed posting raises: the
    caller's transaction is rolled back whole."""
    # Details the bank would refuse (stored before a name's Latin spelling or an international
    # transfer's address was asked for) are marked, and their person asked, instead of paid.
    payees = {key: payee for key, payee in payees.items() if not payee_unpayable_mark(payee)}
    # People owed a reported reward (a personal service) whose tax details are not given yet wait,
    # and are asked for them (payouts.tax): nothing reportable is paid without them.
    payees = tax_held_filter(payees)
    if not payees:
        return []
    accounts = _accounts_lock(payees, brand_of)
    payouts, postings, netted_of = _payouts_plan(payees, brand_of, accounts, now=now, claim=claim)
    if payouts:
        Payout.objects.bulk_create(payouts)
    for payout in payouts:
        postings.append(_payout_posting(payout, accounts, netted=netted_of[payout.participant_id]))
    # A failure rolls the whole batch back: no savepoint to fall back to.
    results = postings_post(postings=postings, savepoint=False) if postings else []
    failed = next((result.error for result in results if result.error), None)
    if failed is not None:
        raise failed
    if not payouts:
        return []
    posted = {
        result.posting.idempotency_key: result.transaction.pk
        for result in results
        if result.posting.idempotency_key
    }
    for payout in payouts:
        payout.ledger_transaction_id = posted[f"payout:{payout.pk}"]
    Payout.objects.bulk_update(payouts, ["ledger_transaction_id"])
    PayoutEvent.objects.bulk_create(
        event for payout in payouts for event in _events(payout, netted_of[payout.participant_id], now)
    )
    return payouts


def payout_for_participant(*, participant_id: int, currency: str, send_now: bool = False) -> Payout | None:
    """Pay out what the ledger owes the person, less what they owe back, in one payout: the batch's
    making for one person.

    Nothing happens without current, usable bank details, or while another payout of theirs is
    still on its way (its resolution calls this again for whatever arrived meanwhile).

    send_now (a task worker, where waiting for the PSP is fine): the payout is sent by this call
    once it has committed, not by a queued task, which saves a trip through the queue between an
    approval and the bank; a crash in between leaves it to the sweep (next_check_at).
    """
    participant = Participant.objects.select_related("brand").get(pk=participant_id)
    if participant.brand.verified_at is None or brands_custody_blocked(brand_ids=[participant.brand_id]):
        # Staff withdrew the brand's verification, or its own balance account at the provider may
        # not pay (not allowed, none of its own yet, drifted): what people are owed stays owed (the
        # sweep pays it once that clears), nothing leaves meanwhile.
        return None
    participant_payable_account(participant=participant, currency=currency)
    with transaction.atomic(durable=True):
        # The same lock payee_account_save takes: details cannot change under a payout being made.
        Participant.objects.select_for_update().filter(pk=participant.pk).first()
        crash_point("payout_locked")
        payee = payees_payable().filter(participant_id=participant.pk, currency=currency).first()
        if payee is None:
            return None
        made = payouts_make(
            payees={participant.pk: payee},
            brand_of={participant.pk: participant.brand_id},
            now=timezone.now(),
            claim=send_now,
        )
        crash_point("payout_posted")
        if not made:
            return None
        payout = made[0]
        if not send_now:
            enqueue_on_commit("payouts.tasks.payout_submit_task", payout.pk)
    if payout.status == PayoutStatus.SUBMITTED:
        return payout_send(payout)
    return payout_submit(payout_id=payout.pk) if send_now else payout


def _accounts_lock(payees: dict, brand_of: dict) -> dict:
    """The people's payable and receivable accounts and their brands' in-transit accounts, locked
    together in id order (the ledger's lock order) and read fresh: (kind, subject, currency,
    brand id) -> account."""
    in_transit = {
        payout_in_transit_account(brand_id=brand_id, currency=currency).pk
        for brand_id, currency in {(brand_of[pk], payee.currency) for pk, payee in payees.items()}
    }
    subjects = [f"participant:{pk}" for pk in payees]
    brands = set(brand_of.values())
    owed = accounts_of_kind(kind=AccountKind.PARTICIPANT_PAYABLE) | accounts_of_kind(
        kind=AccountKind.PARTICIPANT_RECEIVABLE
    )
    owed = owed.filter(subject__in=subjects, brand_id__in=brands).values_list("pk", flat=True)
    locked = accounts_lock(account_ids=[*in_transit, *owed]).values()
    return {(a.kind, a.subject, a.currency, a.brand_id): a for a in locked}


def _payouts_plan(payees: dict, brand_of: dict, accounts: dict, *, now, claim: bool):
    """The unsaved payouts (and the postings of people whose rewards only net a clawback)."""
    vops = _vop_latest(payees.values())
    last = payee_last_payout(payee_ids=[p.pk for p in payees.values()])
    repays = {
        (participant_id, currency): pk
        for participant_id, currency, pk in Payout.objects.filter(
            participant_id__in=payees,
            status__in=[PayoutStatus.REJECTED, PayoutStatus.RETURNED],
            repaid_by__isnull=True,
        )
        .order_by("participant_id", "currency", "-pk")
        .distinct("participant_id", "currency")
        .values_list("participant_id", "currency", "pk")
    }
    stale = now + timedelta(seconds=settings.PAYOUT_STALE_SECONDS)
    payouts, postings, netted_of = [], [], {}
    for pk, payee in sorted(payees.items()):
        subject, brand_id = f"participant:{pk}", brand_of[pk]
        payable = accounts.get((AccountKind.PARTICIPANT_PAYABLE, subject, payee.currency, brand_id))
        receivable = accounts.get((AccountKind.PARTICIPANT_RECEIVABLE, subject, payee.currency, brand_id))
        gross = payable.balance if payable else 0
        if gross <= 0:
            continue
        netted = min(gross, receivable.balance if receivable else 0)
        amount = gross - netted
        if amount <= 0:
            postings.append(
                Posting(
                    reason="clawback_netted",
                    legs=((payable, netted), (receivable, -netted)),
                    reference=subject,
                    description="Rewards netted against a clawback",
                )
            )
            continue
        payee._vop_current = vops.get(payee.pk)
        scheme = scheme_for(payee, last=last.get(payee.pk))
        check = payee._vop_current
        settled_check = payee.rail != Rail.SEPA or (check is not None and check.settled)
        # Batch transfers wait for the next file, unless the brand pays them from its own balance
        # account at the provider (priority "regular"), as it does every other payout.
        at_once = (
            claim
            and (
                scheme != PayoutScheme.SEPA
                or bool(brand_balance_account_id(brand=brand_id, currency=payee.currency))
            )
            and settled_check
        )
        netted_of[pk] = netted
        payouts.append(
            Payout(
                brand_id=brand_id,
                participant_id=pk,
                payee=payee,
                amount=amount,
                currency=payee.currency,
                scheme=scheme,
                repays_id=repays.get((pk, payee.currency)),
                status=PayoutStatus.SUBMITTED if at_once else PayoutStatus.CREATED,
                submissions=1 if at_once else 0,
                submitted_at=now if at_once else None,
                next_check_at=stale,
            )
        )
    return payouts, postings, netted_of


def _vop_latest(payees) -> dict:
    """payee id -> its latest name check (payouts.selectors.vop_latest for many payees)."""
    return {
        check.payee_id: check
        for check in VopCheck.objects.filter(payee_id__in=[p.pk for p in payees if p.rail == Rail.SEPA])
        .order_by("payee_id", "-checked_at", "-pk")
        .distinct("payee_id")
    }


def _payout_posting(payout: Payout, accounts: dict, *, netted: int) -> Posting:
    subject = f"participant:{payout.participant_id}"
    key = (subject, payout.currency, payout.brand_id)
    payable = accounts[(AccountKind.PARTICIPANT_PAYABLE, *key)]
    in_transit = accounts.get((AccountKind.PAYOUT_IN_TRANSIT, "", payout.currency, payout.brand_id))
    in_transit = in_transit or payout_in_transit_account(brand_id=payout.brand_id, currency=payout.currency)
    legs = [(payable, payout.amount + netted), (in_transit, -payout.amount)]
    if netted:
        legs.append((accounts[(AccountKind.PARTICIPANT_RECEIVABLE, *key)], -netted))
    return Posting(
        reason="payout",
        legs=tuple(legs),
        idempotency_key=f"payout:{payout.pk}",
        reference=f"payout:{payout.end_to_end_id}",
        description=f"Payout {payout.end_to_end_id}"
        + (f", {netted} netted against clawbacks" if netted else ""),
    )


def _events(payout: Payout, netted: int, now) -> list[PayoutEvent]:
    """Every step recorded, a payout claimed at creation through payee_verified to submitted,
    with one insert for the batch."""
    detail = f"netted {netted}" if netted else ""
    steps = [("", PayoutStatus.CREATED, detail)]
    if payout.status == PayoutStatus.SUBMITTED:
        check = payout.payee._vop_current
        vop = (
            f"VoP {check.result}{' / ' + check.choice if check.choice else ''}"
            if check
            else "VoP not applicable"
        )
        steps += [
            (PayoutStatus.CREATED, PayoutStatus.PAYEE_VERIFIED, vop),
            (PayoutStatus.PAYEE_VERIFIED, PayoutStatus.SUBMITTED, ""),
        ]
    return [
        PayoutEvent(
            payout=payout, brand_id=payout.brand_id, from_status=before, to_status=after, detail=text, at=now
        )
        for before, after, text in steps
    ]
