"""Verification of payee: the payee's name checked with their bank before money goes, and the person's
choice when the bank answers with a close match."""

import json

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from joyback.modes import brand_livemode
from joyback.queue import enqueue_on_commit
from payouts import psp
from payouts.iso20022.text import name_text
from payouts.models import PayeeAccount, Payout, VopCheck
from payouts.models.payees import Rail, VopChoice, VopResult
from payouts.models.payouts import PayoutStatus
from payouts.providers import adyen
from payouts.selectors import vop_latest
from payouts.submission.states import PayoutRefused, payout_transition


def payee_vop_check(*, payee: PayeeAccount) -> VopCheck | None:
    """Ask the payee's bank whether the name holds the account (SEPA only: the scheme is European)."""
    if payee.rail != Rail.SEPA:
        return None
    payee.__dict__.pop("_vop_current", None)
    if known := _vop_known(payee):
        return known
    answer = psp.payee_verify(
        iban=payee.account.iban, name=payee.holder_name, livemode=brand_livemode(payee.participant.brand_id)
    )
    return VopCheck.objects.create(
        payee=payee,
        brand_id=payee.brand_id,
        result=answer.result,
        bank_name_returned=answer.name or None,
        checked_at=timezone.now(),
    )


def _vop_known(payee: PayeeAccount) -> VopCheck | None:
    """The bank's match for the same name on the same account, given when the person entered these
    details before: kept for the details entered again (a copy, dated when the bank answered),
    instead of asking the bank once more. Only a full match: anything else the person answers."""
    same_account = (
        VopCheck.objects.filter(
            payee__participant_id=payee.participant_id,
            payee__account_fingerprint=payee.account_fingerprint,
            result=VopResult.MATCH,
        )
        .exclude(payee=payee)
        .select_related("payee")
        .order_by("-checked_at")
    )
    # The name is stored encrypted: compared here, on the few earlier details of this person.
    earlier = next((c for c in same_account[:5] if c.payee.holder_name == payee.holder_name), None)
    if earlier is None:
        return None
    return VopCheck.objects.create(
        payee=payee,
        brand_id=payee.brand_id,
        result=earlier.result,
        bank_name_returned=earlier.bank_name_returned,
        checked_at=earlier.checked_at,
    )


def vop_current(*, payee: PayeeAccount) -> VopCheck | None:
    # Asked twice while one payout is verified and sent; a person's later answer is read by the
    # next task, which loads the payee afresh.
    if "_vop_current" not in payee.__dict__:
        payee._vop_current = vop_latest(payee=payee)
    return payee._vop_current


def vop_choose(*, check: VopCheck, choice: str) -> VopCheck:
    """The person's answer to a close match or no match, recorded; a waiting payout then goes."""
    if choice not in VopChoice.values:
        raise PayoutRefused(_("Choose one of the options."))
    if check.result not in (VopResult.CLOSE_MATCH, VopResult.NO_MATCH):
        raise PayoutRefused(_("Your bank confirmed the name; there is nothing to choose."))
    if choice == VopChoice.BANK_NAME and not check.bank_name_returned:
        raise PayoutRefused(_("Your bank did not tell us a name to use."))
    with transaction.atomic(durable=True):
        updated = VopCheck.objects.filter(pk=check.pk, choice="").update(
            choice=choice, chosen_at=timezone.now()
        )
        if not updated:
            raise PayoutRefused(_("You have already answered."))
        for payout_id in Payout.objects.filter(payee=check.payee, status=PayoutStatus.CREATED).values_list(
            "pk", flat=True
        ):
            enqueue_on_commit("payouts.tasks.payout_submit_task", payout_id)
    check.refresh_from_db()
    return check


def payee_details_missing(*, name: str, name_latin: str, rail: str, address: str | dict | None) -> str:
    """What the bank would need and the details lack, as the payee's unusable code (no payout is
    made for them until the person gives it, and their status page says what): the Latin spelling
    of a name in another script ("NAME"; we never guess one), or an international transfer's
    address ("BE04", the ISO code for a missing creditor address); "" when nothing is missing."""
    if not name_text(name_latin or name, 140):
        return "NAME"
    if isinstance(address, str):
        address = json.loads(address) if address else None
    if rail == Rail.SWIFT and not adyen.address_complete(adyen.counterparty_address(address or {})):
        return "BE04"
    return ""


def payee_unpayable_mark(payee: PayeeAccount) -> str:
    """Details stored before these were asked for: marked with what is missing, in the caller's
    transaction, so no payout is made for them and the person is asked. The code, or ""."""
    code = payee_details_missing(
        name=payee.holder_name, name_latin=payee.holder_name_latin, rail=payee.rail, address=payee.address
    )
    if code:
        PayeeAccount.objects.filter(pk=payee.pk, unusable_code="").update(unusable_code=code)
        payee.unusable_code = code
    return code


def payout_creditor_name(payout: Payout, check: VopCheck | None) -> str:
    if check and check.choice == VopChoice.BANK_NAME and check.bank_name_returned:
        return check.bank_name_returned
    # A name in another script goes as the Latin spelling the person's bank holds, when given.
    return payout.payee.holder_name_latin or payout.payee.holder_name


def payout_payee_verify(payout: Payout) -> bool:
    """created -> payee_verified once VoP has an answer the payout may go on (or is not needed)."""
    payee = payout.payee
    check = vop_current(payee=payee)
    if payee.rail == Rail.SEPA and check is None:
        check = payee_vop_check(payee=payee)
    if check is not None and not check.settled:
        # Waiting for the person's answer on the status page; their choice wakes the payout.
        Payout.objects.filter(pk=payout.pk).update(reason_code="VOP", next_check_at=None)
        return False
    detail = (
        f"VoP {check.result}{' / ' + check.choice if check.choice else ''}" if check else "VoP not applicable"
    )
    with transaction.atomic(durable=True):
        return payout_transition(payout, "verify_payee", detail=detail)
