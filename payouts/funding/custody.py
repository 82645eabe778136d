"""Moving what the platform still holds for a brand to the brand's own balance account.

Before brands held their own money at the provider, a brand funded by a transfer to the platform's
bank account (with its payment reference) or to a virtual IBAN swept on to the platform's balance
account: the platform held that money for it, the ledger's platform bank standing against the
brand's funding, budgets and what its people are owed. Once the brand has its own balance account
(onboarded at the provider), `manage.py custody_move` moves that amount out: one internal transfer
(TransferService v4, category internal) from the platform's balance account to the brand's, asked
for by one staff member and confirmed by a second (the four-eyes grant, see below), booked
in the ledger from the provider's answer (or its webhook, whichever comes first; one booking per
provider transfer id) as platform bank -> the brand's balance account. The brand's funding and
budgets do not change: the money only leaves the platform's keeping.
"""

from dataclasses import dataclass

from django.conf import settings
from django.db.models import F, Sum

from campaigns.models import Brand
from joyback.ledger.models import Account, AccountKind
from joyback.users.four_eyes import SecondPersonRefused, staff_grant_confirm, staff_grant_request
from joyback.users.models import AccessChangeKind, StaffGrant
from payouts.funding.selectors import brand_balance_account_id
from payouts.funding.services import (
    custody_grant_booked,
    custody_grant_parse,
    custody_move_apply,
    custody_move_reference,
)
from payouts.models import Payout, VirtualAccount
from payouts.models.transitions import SENT
from payouts.providers import adyen_funding as provider
from payouts.psp import routed_for
from payouts.reconciliation.bank_health import platform_moves_paused

# The brand's accounts that say what it is owed or holds in the ledger (liabilities) and what it
# holds itself (its balance account, what people owe it back).
ASSETS = frozenset({AccountKind.BRAND_BALANCE, AccountKind.PARTICIPANT_RECEIVABLE})


class CustodyMoveRefused(Exception):
    pass


@dataclass(frozen=True)
class CustodyMove:
    brand: Brand
    currency: str
    amount: int  # minor units the platform holds for the brand; 0: nothing to move
    balance_account_id: str
    transfer_id: str = ""
    outcome: str = ""


def custody_held(*, brand: Brand, currency: str) -> int:
    """What the platform holds for the brand in `currency`: everything the ledger says the brand is
    owed or has set aside (its funding, budgets, its people's payables and payouts in transit),
    less what is already on its own balance account and what its people owe it back."""
    total = 0
    accounts = Account.objects.filter(brand_id=brand.pk, currency=currency, livemode=True)
    for kind, balance in (
        accounts.values_list("kind").annotate(total=Sum("balance")).values_list("kind", "total")
    ):
        total += -balance if kind in ASSETS else balance
    return max(total, 0)


def custody_move_plan(*, brand: Brand, currency: str | None = None) -> CustodyMove:
    currency = currency or brand.default_currency
    if not brand.livemode:
        raise CustodyMoveRefused("test data is play money at the sandbox bank; nothing to move")
    balance_account_id = brand_balance_account_id(brand=brand, currency=currency)
    if not balance_account_id:
        raise CustodyMoveRefused(f"{brand.slug} has no balance account of its own at the provider yet")
    if Payout.objects.filter(brand_id=brand.pk, currency=currency, status__in=SENT).exists():
        # A payout on its way left the platform's pool: what it takes is in transit in the ledger,
        # and would be moved to the brand's account as if still held. Moved once it settled or
        # came back (no new one leaves meanwhile: the brand moves no money until it holds its own).
        raise CustodyMoveRefused(
            f"{brand.slug} has payouts on their way; move once they settled or came back"
        )
    return CustodyMove(brand, currency, custody_held(brand=brand, currency=currency), balance_account_id)


# Two people: one staff member asks for the move with the amount they saw, a second confirms it
# (joyback.users.four_eyes, a StaffGrant of kind "custody_move", as for a limit or a fee plan); only
# then does the money move, and its booking records both in the same transaction.


def _grant_value(*, brand_id: int, currency: str, amount: int) -> str:
    return f"{brand_id}:{currency}:{amount}"


def custody_move_request(*, actor, brand: Brand, currency: str | None = None) -> StaffGrant:
    """A staff member asks to move what the platform holds for the brand, the amount as planned
    now: nothing moves until a second staff member confirms (custody_move_confirm)."""
    if actor is None or not (actor.is_active and actor.is_staff):
        raise CustodyMoveRefused("only an active staff member may ask for a custody move")
    plan = custody_move_plan(brand=brand, currency=currency)
    if plan.amount <= 0:
        raise CustodyMoveRefused(f"{brand.slug}: nothing held for it, nothing to ask")
    return staff_grant_request(
        actor=actor,
        subject=actor,
        kind=AccessChangeKind.CUSTODY_MOVE,
        value=_grant_value(brand_id=brand.pk, currency=plan.currency, amount=plan.amount),
    )


def custody_move_grant_apply(*, subject, value: str, actor) -> None:
    """The second staff member's confirmation (in staff_grant_confirm's transaction): refused when
    what the platform holds for the brand is no longer the amount the first one asked to move."""
    brand_id, currency, amount = custody_grant_parse(value)
    plan = custody_move_plan(brand=Brand.objects.get(pk=brand_id), currency=currency)
    if plan.amount != amount:
        # The confirmation itself is refused (the admin's confirm action shows it as such).
        raise SecondPersonRefused(
            f"the platform now holds {plan.amount} (minor units) for the brand, not the {amount} asked "
            "for: ask again"
        )


def custody_move_confirm(*, grant_id: int, actor) -> CustodyMove:
    """The second staff member confirms the move (never the one who asked, nor someone either set
    up lately: SecondPersonRefused), and the money moves at once."""
    if not StaffGrant.objects.filter(pk=grant_id, kind=AccessChangeKind.CUSTODY_MOVE).exists():
        raise CustodyMoveRefused(f"no custody move was asked for as {grant_id}")
    staff_grant_confirm(grant_id=grant_id, actor=actor)
    return custody_move(grant_id=grant_id)


def custody_move(*, grant_id: int) -> CustodyMove:
    """Move what the platform holds for the brand to its own balance account (see the module), as a
    confirmed custody-move grant says. Safe to run again: the transfer is keyed by the grant, so a
    retry after a lost answer replays at the provider, and once booked the grant moves nothing."""
    grant = (
        StaffGrant.objects.filter(pk=grant_id, kind=AccessChangeKind.CUSTODY_MOVE, confirmed_at__isnull=False)
        .exclude(confirmed_by=F("requested_by"))
        .first()
    )
    if grant is None:
        raise CustodyMoveRefused(f"custody move {grant_id} is not confirmed by a second staff member")
    if platform_moves_paused():
        # The money leaves the platform's own account, whose ledger and bank disagree: nobody knows
        # how much of it is there to move. The grant stays confirmed; run it again once cleared.
        raise CustodyMoveRefused(
            "moves from the platform's account are paused until staff clear the bank drift alert"
        )
    brand_id, currency, amount = custody_grant_parse(grant.value)
    brand = Brand.objects.get(pk=brand_id)
    plan = custody_move_plan(brand=brand, currency=currency)
    if custody_grant_booked(grant_id=grant.pk):
        return CustodyMove(brand, currency, 0, plan.balance_account_id, outcome="booked already")
    if plan.amount != amount:
        raise CustodyMoveRefused(
            f"the platform now holds {plan.amount} (minor units) for {brand.slug}, not the {amount} "
            "confirmed: ask again"
        )
    account = VirtualAccount.objects.get(balance_account_id=plan.balance_account_id)
    with routed_for(livemode=True):
        transfer_id, status = provider.internal_transfer(
            key=f"joyback-custody-move-{grant.pk}",
            source=settings.ADYEN_BALANCE_ACCOUNT_ID,
            destination=plan.balance_account_id,
            amount=amount,
            currency=currency,
            reference=custody_move_reference(grant_id=grant.pk),
            description=f"JoyBack: {brand.name}'s money to its own account",
        )
    outcome = custody_move_apply(
        account=account,
        transfer_id=transfer_id,
        amount=amount,
        currency=currency,
        status=status,
        reference=custody_move_reference(grant_id=grant.pk),
    )
    return CustodyMove(brand, currency, amount, plan.balance_account_id, transfer_id, outcome)
