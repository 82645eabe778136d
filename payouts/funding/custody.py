"""Moving what the platform still holds for a brand to the brand's own balance account.

Before brands held their own money at the provider, a brand funded by a transfer to the platform's
bank account (with its payment reference) or to a virtual IBAN swept on to the platform's balance
account: the platform held that money for it, the ledger's platform bank standing against the
brand's funding, budgets and what its people are owed. Once the brand has its own balance account
(onboarded at the provider), `manage.py custody_move` moves that amount out: one internal transfer
(TransferService v4, category internal) from the platform's balance account to the brand's, booked
in the ledger from the provider's answer (or its webhook, whichever comes first; one booking per
provider transfer id) as platform bank -> the brand's balance account. The brand's funding and
budgets do not change: the money only leaves the platform's keeping.
"""

from dataclasses import dataclass

from django.conf import settings
from django.db.models import Sum

from campaigns.models import Brand
from joyback.ledger.models import Account, AccountKind
from payouts.funding.selectors import brand_balance_account_id
from payouts.funding.services import custody_move_apply
from payouts.models import VirtualAccount
from payouts.providers import adyen_funding as provider
from payouts.psp import routed_for

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
    return CustodyMove(brand, currency, custody_held(brand=brand, currency=currency), balance_account_id)


def custody_move(*, brand: Brand, currency: str | None = None) -> CustodyMove:
    """Move what the platform holds for the brand to its own balance account (see the module). Safe
    to run again: the transfer is keyed by the amount still held, so a retry after a lost answer
    replays at the provider, and once moved nothing is held."""
    plan = custody_move_plan(brand=brand, currency=currency)
    if plan.amount <= 0:
        return plan
    account = VirtualAccount.objects.get(balance_account_id=plan.balance_account_id)
    with routed_for(livemode=True):
        transfer_id, status = provider.internal_transfer(
            key=f"joyback-custody-move-{brand.pk}-{plan.currency}-{plan.amount}",
            source=settings.ADYEN_BALANCE_ACCOUNT_ID,
            destination=plan.balance_account_id,
            amount=plan.amount,
            currency=plan.currency,
            reference=f"custody-{brand.pk}",
            description=f"JoyBack: {brand.name}'s money to its own account",
        )
    outcome = custody_move_apply(
        account=account, transfer_id=transfer_id, amount=plan.amount, currency=plan.currency, status=status
    )
    return CustodyMove(brand, plan.currency, plan.amount, plan.balance_account_id, transfer_id, outcome)
