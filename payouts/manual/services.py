"""What finance members and admins do with payouts: cancel, retry, approve, and payouts made by hand."""

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from campaigns import roles
from campaigns.models import Membership
from campaigns.modes import live_brand_of
from campaigns.selectors import member_approver_refusal
from joyback.ledger.models import AccountKind
from joyback.ledger.services import (
    InsufficientFunds,
    Posting,
    account_get_or_create,
    posting_post,
)
from joyback.queue import enqueue_on_commit
from joyback.users.four_eyes import second_person_refusal
from payouts.bank_accounts import BankAccount
from payouts.fingerprints import payee_fingerprints
from payouts.manual.controls import (
    brand_verified_check,
    payout_controls_check,
    payout_limits_lock,
    payout_velocity_watch,
)
from payouts.models import PayeeAccount, Payout
from payouts.models.payouts import PayoutStatus
from payouts.models.transitions import PAYOUT
from payouts.payees.services import payee_account_save
from payouts.submission.create import payout_for_participant
from payouts.submission.outcomes import payout_cancel_locked
from payouts.submission.states import (
    PayoutRefused,
    payout_event_record,
    payout_in_transit_account,
    payout_transition,
    scheme_for,
)
from verification.services.participants import participant_create, participant_payable_account


def payout_cancel(*, payout: Payout, actor, note: str = "") -> Payout:
    """Stop a payout that has not left: the money stays owed to the person (or, for a manual
    payout, goes back to the brand's funding)."""
    with transaction.atomic(durable=True):
        if not payout_cancel_locked(payout, detail=note or "cancelled", actor=actor):
            raise PayoutRefused(
                _("This payout has already been sent to the bank; it can no longer be cancelled.")
            )
    return payout


def payout_retry(*, payout: Payout, actor) -> Payout:
    """Pay again what a rejected or returned payout failed to pay, once the cause is fixed."""
    if payout.status not in (PayoutStatus.REJECTED, PayoutStatus.RETURNED):
        raise PayoutRefused(_("Only a rejected or returned payout can be paid again."))
    if payout.repaid_by.exists():
        raise PayoutRefused(_("This payout has already been paid again."))
    # Paid again from the brand's own balance account only, as any payout: refused with the reason
    # while the provider does not allow the brand's account (or it has none of its own yet).
    brand_verified_check(payout.brand)
    payee = PayeeAccount.objects.filter(participant=payout.participant, replaced_at__isnull=True).first()
    if payee is None or payee.unusable_code:
        raise PayoutRefused(
            _("The person has not corrected their bank details yet; it goes out once they do.")
        )
    if payout.manual:
        return payout_manual_create(
            brand=payout.brand,
            payee=payee,
            amount=payout.amount,
            created_by=actor,
            repays=payout,
            funded=True,
        )
    again = payout_for_participant(participant_id=payout.participant_id, currency=payout.currency)
    if again is None:
        raise PayoutRefused(
            _("Nothing to pay: another payout of this person is under way, or nothing is owed.")
        )
    payout_event_record(again, from_status="", detail=f"retry of {payout.end_to_end_id}", actor=actor)
    return again


def payout_manual_create(
    *,
    brand,
    payee: PayeeAccount,
    amount: int,
    created_by,
    repays: Payout | None = None,
    funded: bool = False,
    api_key=None,
) -> Payout:
    """A payout a person makes by hand, from the brand's funding, within the brand's payout limits;
    above the threshold, past the window's approval threshold, or to a bank account the brand never
    paid, it waits for a second person's approval (maker-checker)."""
    if amount <= 0:
        raise PayoutRefused(_("Enter an amount above zero."))
    currency = payee.currency
    payable = participant_payable_account(participant=payee.participant, currency=currency)
    funding = account_get_or_create(kind=AccountKind.BRAND_FUNDING, currency=currency, brand_id=brand.pk)
    with transaction.atomic(durable=True):
        payout_limits_lock(brand_id=brand.pk, account_fingerprint=payee.account_fingerprint)
        hold_reasons = payout_controls_check(
            brand=brand,
            currency=currency,
            account_fingerprint=payee.account_fingerprint,
            account_masked=payee.account_masked,
            amount=amount,
            from_funding=not funded,
        )
        needs_approval = bool(hold_reasons)
        payout = Payout.objects.create(
            brand=brand,
            participant=payee.participant,
            payee=payee,
            amount=amount,
            currency=currency,
            scheme=scheme_for(payee),
            manual=True,
            created_by=created_by,
            api_key=api_key,
            repays=repays,
            hold_reasons=",".join(hold_reasons),
            status=PAYOUT.step("make_held" if needs_approval else "make").target,
            next_check_at=None
            if needs_approval
            else timezone.now() + timedelta(seconds=settings.PAYOUT_STALE_SECONDS),
        )
        legs = [(payout_in_transit_account(brand_id=brand.pk, currency=currency), -amount)]
        # A repayment is already owed to the person (the return put it back); a new one is funded now.
        legs.append((payable, amount) if funded else (funding, amount))
        try:
            posted = posting_post(
                posting=Posting(
                    reason="payout_manual",
                    legs=tuple(legs),
                    idempotency_key=f"payout:{payout.pk}",
                    reference=f"payout:{payout.end_to_end_id}",
                    description=f"Manual payout {payout.end_to_end_id}",
                )
            )
        except InsufficientFunds:
            raise PayoutRefused(
                _("The brand's funding account does not hold enough for this payout.")
            ) from None
        Payout.objects.filter(pk=payout.pk).update(ledger_transaction_id=posted.pk)
        payout.ledger_transaction_id = posted.pk
        payout_event_record(payout, from_status="", actor=created_by, detail="manual payout")
        payout_velocity_watch(brand=brand)
        if not needs_approval:
            enqueue_on_commit("payouts.tasks.payout_submit_task", payout.pk)
    return payout


def payout_approver_check(*, payout: Payout, actor) -> None:
    """The checker is a second person: never who made the payout (by hand or with an API key they
    made), nor someone they set up or who set them up lately (joyback.users.four_eyes); and one
    whose place lets them approve money: the brand's owner or finance member, or staff holding the
    payouts' change permission (a money permission two staff members grant)."""
    member = Membership.objects.filter(
        brand=live_brand_of(payout.brand), user_id=actor.pk, role__in=roles.FUND
    ).first()
    if member is not None and (waits := member_approver_refusal(membership=member)):
        raise PayoutRefused(waits)
    if member is None and not (
        actor.is_active and actor.is_staff and actor.has_perm("payouts.change_payout")
    ):
        raise PayoutRefused(
            _(
                "Only the brand's owner or finance members, or staff allowed to change payouts, "
                "approve a payout."
            )
        )
    if payout.created_by_id is not None and payout.created_by_id == actor.pk:
        raise PayoutRefused(_("A second person must approve a payout you made yourself."))
    if payout.api_key_id is not None and payout.created_by_id is None:
        raise PayoutRefused(
            _(
                "This payout was made with an API key made before JoyBack kept who made each key, so "
                "nobody can be its second person. Cancel it, rotate the key, and make the payout again."
            )
        )
    refusal = second_person_refusal(first=payout.created_by, second=actor)
    if refusal:
        raise PayoutRefused(refusal)


def payout_approve(*, payout: Payout, actor) -> Payout:
    """The checker's half of maker-checker."""
    payout_approver_check(payout=payout, actor=actor)
    brand_verified_check(payout.brand)
    with transaction.atomic(durable=True):
        if not payout_transition(
            payout,
            "approve",
            actor=actor,
            detail="approved",
            approved_by=actor,
            next_check_at=timezone.now() + timedelta(seconds=settings.PAYOUT_STALE_SECONDS),
        ):
            raise PayoutRefused(_("This payout is not waiting for approval."))
        enqueue_on_commit("payouts.tasks.payout_submit_task", payout.pk)
    return payout


def payout_manual_enter(
    *,
    brand,
    name: str,
    email: str,
    phone: str,
    bank_account: BankAccount,
    currency: str,
    amount: int,
    created_by,
    api_key=None,
    name_latin: str = "",
    address: dict | None = None,
) -> Payout:
    """A finance member pays someone by hand, or a brand's API key does (made by its key's maker):
    a payee of the brand's own, then the payout."""
    if amount <= 0:
        raise PayoutRefused(_("Enter an amount above zero."))
    # Checked before the payee is stored, so a refused payout leaves nothing behind; checked again
    # under the limits' lock when the payout is made.
    payout_controls_check(
        brand=brand,
        currency=currency,
        account_fingerprint=payee_fingerprints(account=bank_account, email=None, phone=None)[
            "account_fingerprint"
        ],
        account_masked=bank_account.masked,
        amount=amount,
    )
    participant = participant_create(brand=brand)
    payee = payee_account_save(
        participant=participant,
        name=name,
        email=email,
        phone=phone,
        bank_account=bank_account,
        currency=currency,
        consent_version="manual",
        onboard=False,
        name_latin=name_latin,
        address=address,
    )
    return payout_manual_create(
        brand=brand, payee=payee, amount=amount, created_by=created_by, api_key=api_key
    )
