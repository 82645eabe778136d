"""Writes of funding through the payment provider.

A brand's virtual account is requested in one short transaction and opened by the standing worker
after commit, never inside a lock. What arrives on it is booked only from the provider's signed
transfer webhooks (stored once by payouts.submission.webhooks.transfer_webhook_receive, applied here by the
standing worker): one ProviderDeposit row per provider transfer, locked while its status moves, so
a webhook delivered twice, or out of order, or by two workers at once, books once. The booking is
keyed by the provider's transfer id in the ledger too.
"""

import logging
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from campaigns.models import Brand
from campaigns.services.funding import brand_funding_account
from joyback.ledger.models import Account, Transaction
from joyback.ledger.selectors import transaction_amount_on, transaction_by_key
from joyback.ledger.services import (
    InsufficientFunds,
    LedgerError,
    accounts_lock,
    brand_balance_account,
    platform_bank,
    provider_balance,
    transaction_reverse,
    transfer_post,
)
from joyback.queue import claim_and_process, standing_work_inline
from joyback.users.models import AccessChange, AccessChangeKind, StaffGrant
from payouts.fees import fee_ledger_key
from payouts.funding.onboarding import OnboardingRefused, onboarding_ensure, onboarding_reminders_send
from payouts.funding.selectors import payouts_sent_unsettled_amount
from payouts.models import (
    FeeTransfer,
    Payout,
    ProviderBalanceCheck,
    ProviderDeposit,
    ProviderTransaction,
    ReconciliationException,
    VirtualAccount,
)
from payouts.models.funding import ProviderDepositStatus as Deposit
from payouts.models.funding import ProviderTransactionKind
from payouts.models.funding import VirtualAccountStatus as Status
from payouts.models.reconciliation import ExceptionReason
from payouts.models.transitions import DEPOSIT, RECONCILIATION_EXCEPTION, state_step
from payouts.notifications import deposit_booked_notify
from payouts.providers import adyen_funding as provider
from payouts.psp import PspError, PspUnknown, routed_for

logger = logging.getLogger(__name__)

VIRTUAL_ACCOUNT_MAX_ATTEMPTS = 10
# The provider's words for an incoming transfer that did not stay (sent back, or never credited).
GONE = frozenset({"returned", "failed", "refused", "rejected", "cancelled", "expired", "error"})
# A booked transaction the ledger does not know yet may only be waiting for its webhook.
RECONCILE_GRACE = timedelta(minutes=10)


class FundingRefused(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def _deposit_key(transfer_id: str) -> str:
    return f"provider-deposit:{provider.NAME}:{transfer_id}"


def _return_key(transfer_id: str) -> str:
    return f"provider-deposit-returned:{provider.NAME}:{transfer_id}"


def _sweep_key(transfer_id: str) -> str:
    return f"provider-sweep:{provider.NAME}:{transfer_id}"


# Virtual accounts.


def virtual_account_request(*, brand: Brand, currency: str) -> VirtualAccount:
    """The brand's virtual account in `currency`: found, or requested once (a second request, a
    retry, a race all find the one row); the provider is asked after commit, the brand onboarded
    there first (its own legal entity and account holder). Only a live brand staff verified has
    one: a test twin's play money comes from the test-mode bank, and a twin's own verification
    (play money needs none) never stands for the live brand's. The provider's own verification
    comes after, on the account holder: money moves once it allows the capabilities."""
    if not brand.livemode:
        raise FundingRefused(
            _(
                "Test data has no account at the payment provider: add test funds instead, they come "
                "from the test-mode bank."
            )
        )
    if not Brand.objects.filter(pk=brand.pk, verified_at__isnull=False).exists():
        raise FundingRefused(
            _(
                "Funding and payouts open once JoyBack's staff have verified the brand: its legal name, "
                "registration number, country and the owner's confirmed email. See the dashboard for "
                "what is still missing."
            )
        )
    with transaction.atomic(durable=True):
        VirtualAccount.objects.bulk_create(
            [VirtualAccount(brand=brand, currency=currency, provider=provider.NAME)], ignore_conflicts=True
        )
        # An account from before brands held their own (under the platform's account holder,
        # swept into its pool) is opened again under the brand's own: its old balance account and
        # IBAN are kept aside, recognised if money still arrives there, never used again.
        VirtualAccount.objects.filter(
            brand=brand, currency=currency, status=Status.OPEN, account_holder_id=""
        ).update(
            status=Status.REQUESTED,
            legacy_balance_account_id=F("balance_account_id"),
            balance_account_id="",
            payment_instrument_id="",
            sweep_id="",
            iban="",
            bic="",
            attempts=0,
            error="",
            requested_at=timezone.now(),
        )
        account = VirtualAccount.objects.get(brand=brand, currency=currency)
        if account.status == Status.REQUESTED:
            standing_work_inline(virtual_accounts_open, ids=[account.pk])
    return account


def virtual_account_request_task(brand_id: int, currency: str) -> None:
    """Enqueued when staff verify a brand (campaigns enqueues it by name)."""
    brand = Brand.objects.get(pk=brand_id)
    try:
        virtual_account_request(brand=brand, currency=currency)
    except FundingRefused:
        logger.info("brand %s is no longer verified; no virtual account", brand_id)


def legacy_brands_onboard(*, limit: int = 50) -> int:
    """Brands staff verified before brands held their own money, onboarded now (the periodic task;
    staff verifying a brand does the same at once): each without an onboarding at the provider, or
    with an account under the platform's account holder, gets its own legal entity, account holder
    and balance account requested. Their money stays still meanwhile (brands_custody_blocked); what
    the platform holds for them moves with custody_move once the provider allows them."""
    brands = (
        Brand.objects.filter(livemode=True, verified_at__isnull=False)
        .filter(
            Q(provider_onboarding__isnull=True)
            | Q(virtual_accounts__status=Status.OPEN, virtual_accounts__account_holder_id="")
        )
        .distinct()
        .order_by("pk")[:limit]
    )
    done = 0
    for brand in brands:
        try:
            virtual_account_request(brand=brand, currency=brand.default_currency)
        except FundingRefused:
            continue
        done += 1
    return done


def virtual_accounts_open(*, limit: int = 50, ids: list[int] | None = None) -> int:
    return claim_and_process(
        VirtualAccount.objects.filter(status=Status.REQUESTED, attempts__lt=VIRTUAL_ACCOUNT_MAX_ATTEMPTS),
        process=_virtual_account_open,
        limit=limit,
        order_by="pk",
        ids=ids,
    )


def _virtual_account_open(account_id: int) -> None:
    account = VirtualAccount.objects.select_related("brand").get(pk=account_id)
    if account.status != Status.REQUESTED:
        return
    if not (account.brand.livemode and account.brand.verified):
        # Asked for a test twin before twins were refused: never opened at the provider.
        VirtualAccount.objects.filter(pk=account_id, status=Status.REQUESTED).update(
            status=Status.FAILED, error="not a live brand staff verified", claimed_until=None
        )
        return
    try:
        # The brand's own legal entity and account holder first: its balance account is opened
        # under it, in its name, never under the platform's.
        onboarding = onboarding_ensure(brand=account.brand)
        with routed_for(livemode=account.brand.livemode):
            opened = provider.account_open(
                # Opened again under the brand's own holder: new keys, never the old account replayed.
                key=f"joyback-virtual-account-{account.pk}"
                + ("-own" if account.legacy_balance_account_id else ""),
                account_holder_id=onboarding.account_holder_id,
                currency=account.currency,
                reference=f"brand-{account.brand_id}-{account.currency}",
                description=f"{account.brand.name} funding {account.currency}",
                opened=provider.OpenedAccount(
                    account.balance_account_id,
                    account.payment_instrument_id,
                    account.sweep_id,
                    account.iban,
                    account.bic,
                ),
            )
    except PspUnknown:
        raise  # the lease ends, another pass asks again with the same keys: a replay at the provider
    except OnboardingRefused as refused:
        VirtualAccount.objects.filter(pk=account_id, status=Status.REQUESTED).update(
            status=Status.FAILED, error=refused.message[:300], claimed_until=None
        )
        return
    except PspError as refused:
        failed = account.attempts >= VIRTUAL_ACCOUNT_MAX_ATTEMPTS  # the claim counted this one
        VirtualAccount.objects.filter(pk=account_id, status=Status.REQUESTED).update(
            error=str(refused)[:300], status=Status.FAILED if failed else Status.REQUESTED
        )
        raise
    VirtualAccount.objects.filter(pk=account_id, status=Status.REQUESTED).update(
        status=Status.OPEN,
        balance_account_id=opened.balance_account_id,
        payment_instrument_id=opened.payment_instrument_id,
        sweep_id=opened.sweep_id,
        account_holder_id=onboarding.account_holder_id,
        iban=opened.iban.replace(" ", "").upper(),
        bic=opened.bic,
        # The brand's own account: in its name at the provider.
        holder_name=(account.brand.legal_name or account.brand.name)[:140],
        error="",
        opened_at=timezone.now(),
        claimed_until=None,
    )


# Incoming transfers, from the provider's webhooks.


def provider_transfer_apply(payload: dict) -> str | None:
    """A stored transfer webhook about a brand's virtual account, applied by what the money did;
    what it did, or None when it is not about one (the payouts' own transfers)."""
    found = provider.webhook_incoming(payload)
    if found is None:
        return None
    account = (
        VirtualAccount.objects.filter(provider=provider.NAME, balance_account_id=found.balance_account_id)
        .select_related("brand")
        .first()
    )
    if account is None:
        legacy = (
            VirtualAccount.objects.filter(
                provider=provider.NAME, legacy_balance_account_id=found.balance_account_id
            )
            .select_related("brand")
            .first()
        )
        if legacy is None:
            return None
        # Money on the brand's old account under the platform's holder (an old IBAN a payer kept):
        # not the brand's funding; staff send it back, or move it with custody_move.
        if found.status == "booked" and found.amount > 0:
            return _transfer_park(legacy, found)
        return f"{found.kind} {found.status} on an account from before brands held their own"
    if not account.brand.livemode:
        # Money on an account a test brand holds at the provider (opened before twins were refused
        # one): the ledger keeps modes apart, so staff decide; nothing is booked either way.
        if found.status == "booked" and found.amount > 0:
            return _transfer_park(account, found)
        return f"{found.kind} {found.status} of test data"
    if found.kind == "payout" and account.account_holder_id and _payout_of(account, found):
        return None  # one of the brand's own payouts, leaving its own account: the payouts' to apply
    if found.kind == "sweep" and account.account_holder_id:
        # Only the platform's own API key moves money between its balance accounts: out of a
        # brand's own account to the platform's, that is the platform's fee, the fee's to book.
        return None
    if found.kind == "custody_move" and account.account_holder_id:
        return custody_move_apply(
            account=account,
            transfer_id=found.transfer_id,
            amount=found.amount,
            currency=found.currency,
            status=found.status,
            reference=found.reference,
        )
    if not account.account_holder_id:
        # An account from before brands held their own, under the platform's account holder: what
        # lands on it (or its sweep moves into the platform's pool) is never booked as the brand's
        # money; staff return it, or move it once the brand holds its own account (custody_move).
        if found.status == "booked" and found.amount > 0:
            return _transfer_park(account, found)
        return f"{found.kind} {found.status} on an account from before brands held their own"
    if found.kind != "deposit":
        # On a brand's own account nothing is swept anywhere, and a transfer out that is not one
        # of its payouts is never booked as one: staff explain it.
        return _movement_report(account, found)
    return _deposit_apply(account, found)


def _payout_of(account: VirtualAccount, found: provider.IncomingTransfer) -> bool:
    """The transfer out is a payout of this brand, by its reference (the payout's EndToEndId)."""
    return Payout.objects.filter(brand_id=account.brand_id, end_to_end_id=found.reference).exists()


def brand_balance_ledger_account(account: VirtualAccount, currency: str):
    """Where the ledger mirrors what is on the virtual account: the brand's own balance account
    (its asset), or, for an account from before brands held their own, the platform's provider
    balance it was swept from."""
    if account.account_holder_id:
        return brand_balance_account(brand_id=account.brand_id, currency=currency)
    return provider_balance(provider=provider.NAME, currency=currency)


def _transfer_park(account: VirtualAccount, found: provider.IncomingTransfer) -> str:
    """A booked transfer the ledger cannot book (a test brand's account, modes that do not mix)
    becomes one exception for staff, never a retry: retrying cannot change what it is."""
    with transaction.atomic(durable=True):
        _exception_raise(account, found)
    return f"{found.kind}_parked"


def _exception_raise(account: VirtualAccount, found: provider.IncomingTransfer) -> None:
    detail = _(
        "The provider booked %(kind)s %(id)s on this account, and the ledger cannot book it here: "
        "nothing was booked; staff decide."
    ) % {"kind": _kind_words(found), "id": found.transfer_id}
    _transfer_exception(account, found, reason=ExceptionReason.PROVIDER_UNMATCHED, detail=detail)


def _kind_words(found: provider.IncomingTransfer) -> str:
    if found.kind in ProviderTransactionKind.values:
        return str(ProviderTransactionKind(found.kind).label).lower()
    return found.type or _("a transfer")


def _transfer_exception(account: VirtualAccount, found: provider.IncomingTransfer, *, reason, detail) -> bool:
    """The one exception for staff of a provider transfer nothing booked, in the caller's
    transaction: the unique provider transfer id makes deliveries of one transfer (twice, or at
    once by two workers) raise it once. Whether this call raised it."""
    if found.movement is not None:
        signed = found.movement
    elif found.kind == "deposit" or (found.direction == "incoming" and "DirectDebit" not in found.type):
        signed = found.amount
    else:
        signed = -found.amount
    try:
        with transaction.atomic():
            ReconciliationException.objects.create(
                brand_id=account.brand_id,
                reason=reason,
                provider_transfer_id=found.transfer_id,
                detail=detail[:300],
                amount=signed,
                currency=found.currency,
            )
    except IntegrityError:  # the transfer's question is already open (or answered)
        return False
    return True


def _movement_report(account: VirtualAccount, found: provider.IncomingTransfer) -> str:
    """Money moved on a brand's virtual account that is neither a deposit nor its sweep (a direct
    debit, a transfer out, a credit whose balances went down): never booked as money in; one
    exception per transfer for staff, whatever its webhooks say later."""
    detail = _(
        "The provider reports %(type)s %(id)s (%(category)s, %(direction)s, %(status)s) on the brand's "
        "virtual account. It is not a deposit and was not booked."
    ) % {
        "type": found.type or _("a transfer"),
        "id": found.transfer_id,
        "category": found.category or "?",
        "direction": found.direction or "?",
        "status": found.status or "?",
    }
    with transaction.atomic(durable=True):
        raised = _transfer_exception(account, found, reason=ExceptionReason.PROVIDER_MOVEMENT, detail=detail)
    return "movement_exception" if raised else "movement_known"


def _deposit_apply(account: VirtualAccount, found: provider.IncomingTransfer) -> str:
    with transaction.atomic(durable=True):
        ProviderDeposit.objects.bulk_create(
            [
                ProviderDeposit(
                    provider=provider.NAME,
                    transfer_id=found.transfer_id,
                    virtual_account=account,
                    brand_id=account.brand_id,
                    amount=found.amount,
                    currency=found.currency,
                    payer_name=found.payer_name,
                )
            ],
            ignore_conflicts=True,
        )
        # One transfer's webhooks wait for each other here; other transfers do not.
        deposit = ProviderDeposit.objects.select_for_update().get(
            provider=provider.NAME, transfer_id=found.transfer_id
        )
        if found.status == "booked" and deposit.status == Deposit.RECEIVED:
            try:
                with transaction.atomic():
                    posted = transfer_post(
                        source=brand_balance_ledger_account(account, deposit.currency),
                        destination=brand_funding_account(brand=account.brand, currency=deposit.currency),
                        amount=deposit.amount,
                        reason="deposit",
                        idempotency_key=_deposit_key(deposit.transfer_id),
                        reference=f"brand:{deposit.brand_id}",
                        description=f"Deposit {deposit.transfer_id} to the virtual account",
                    )
            except LedgerError:
                _exception_raise(account, found)
                return "deposit_parked"
            _deposit_step(deposit, "book", ledger_transaction_id=posted.pk)
            deposit_booked_notify(transaction_id=posted.pk, reference=deposit.transfer_id)
            return "deposit_booked"
        if found.status in GONE and deposit.status != Deposit.RETURNED:
            was_booked = deposit.status == Deposit.BOOKED
            returned = _deposit_reverse(deposit) if was_booked else None
            _deposit_step(
                deposit,
                "return",
                return_transaction_id=returned.pk if returned else None,
                reason=found.reason,
            )
            return "return_unbooked" if was_booked and returned is None else "deposit_returned"
        return f"kept {deposit.status}"


def _deposit_step(deposit: ProviderDeposit, step: str, **values) -> None:
    state_step(
        DEPOSIT, ProviderDeposit.objects.filter(pk=deposit.pk), step, updated_at=timezone.now(), **values
    )
    deposit.status = DEPOSIT.step(step).target
    for name, value in values.items():
        setattr(deposit, name, value)


def _deposit_reverse(deposit: ProviderDeposit) -> Transaction | None:
    """The deposit back out of the brand's funding; when the brand has spent it meanwhile, staff
    decide (an exception), and the funding is left as it is."""
    try:
        with transaction.atomic():
            return transaction_reverse(
                original=Transaction.objects.get(pk=deposit.ledger_transaction_id),
                reason="deposit_returned",
                idempotency_key=_return_key(deposit.transfer_id),
            )
    except InsufficientFunds:
        ReconciliationException.objects.create(
            brand_id=deposit.brand_id,
            reason=ExceptionReason.PROVIDER_UNMATCHED,
            detail=_("The provider returned deposit %(id)s, but the brand had already spent it.")
            % {"id": deposit.transfer_id},
            amount=-deposit.amount,
            currency=deposit.currency,
        )
        return None


# What the platform held for a brand before brands held their own, moved to the brand's own account.


def custody_move_key(transfer_id: str) -> str:
    return f"custody-move:{provider.NAME}:{transfer_id}"


CUSTODY_REFERENCE = "custody-grant-"


def custody_move_reference(*, grant_id: int) -> str:
    """The transfer's reference at the provider: the confirmed grant it moves under, so its webhook
    finds the two staff members who stand behind it."""
    return f"{CUSTODY_REFERENCE}{grant_id}"


def _custody_grant(reference: str) -> StaffGrant | None:
    if not reference.startswith(CUSTODY_REFERENCE) or not reference[len(CUSTODY_REFERENCE) :].isdigit():
        return None
    return (
        StaffGrant.objects.filter(
            pk=int(reference[len(CUSTODY_REFERENCE) :]),
            kind=AccessChangeKind.CUSTODY_MOVE,
            confirmed_at__isnull=False,
        )
        .exclude(confirmed_by=F("requested_by"))
        .select_related("requested_by", "confirmed_by")
        .first()
    )


def _custody_audit_detail(grant_id: int) -> str:
    return f"custody move grant {grant_id} booked"


def custody_grant_booked(*, grant_id: int) -> bool:
    return AccessChange.objects.filter(
        kind=AccessChangeKind.CUSTODY_MOVE, detail__startswith=_custody_audit_detail(grant_id) + ":"
    ).exists()


def custody_move_apply(
    *, account: VirtualAccount, transfer_id: str, amount: int, currency: str, status: str, reference: str
) -> str:
    """The provider booked an internal transfer from the platform's balance account to the brand's
    own (payouts.funding.custody): the ledger moves the same amount from the platform's bank to
    the brand's balance account, keyed by the provider's transfer id (the command's answer and
    the webhook book it once). Its authority is the provider's booking AND a custody-move grant
    two staff members made (one asked, another confirmed) for this brand, currency and amount,
    named by the transfer's reference; both are recorded in an audit row in the booking's own
    transaction. A transfer without such a grant is not booked: staff explain it. The brand's
    liabilities do not change: its money only changes hands, from the platform's keeping to its own
    account."""
    if status != "booked" or amount <= 0:
        return f"custody_move {status}"
    grant = _custody_grant(reference)
    granted = custody_grant_parse(grant.value) if grant is not None else None
    booked_elsewhere = False
    if granted == (account.brand_id, currency, amount):
        with transaction.atomic(durable=True):
            # One grant, one transfer: a second transfer naming a grant already booked (someone with
            # the platform's API key reusing its reference) is not its authority.
            StaffGrant.objects.select_for_update().filter(pk=grant.pk).first()
            booked_elsewhere = (
                custody_grant_booked(grant_id=grant.pk)
                and transaction_by_key(idempotency_key=custody_move_key(transfer_id)) is None
            )
            if not booked_elsewhere:
                posted = transfer_post(
                    source=brand_balance_account(brand_id=account.brand_id, currency=currency),
                    destination=platform_bank(currency=currency),
                    amount=amount,
                    reason="custody_move",
                    idempotency_key=custody_move_key(transfer_id),
                    reference=f"brand:{account.brand_id}",
                    description=f"Moved to the brand's own balance account {account.balance_account_id}",
                )
                if not custody_grant_booked(grant_id=grant.pk):
                    AccessChange.objects.create(
                        actor=grant.confirmed_by,
                        subject=grant.requested_by,
                        kind=AccessChangeKind.CUSTODY_MOVE,
                        detail=(
                            f"{_custody_audit_detail(grant.pk)}: ledger {posted.pk}, transfer {transfer_id}, "
                            f"{amount} {currency}, asked by {grant.requested_by.get_username()}"
                        )[:200],
                        brand_id=account.brand_id,
                    )
        if not booked_elsewhere:
            return "custody_move_booked"
    found = provider.IncomingTransfer(
        transfer_id=transfer_id,
        balance_account_id=account.balance_account_id,
        kind="custody_move",
        status=status,
        amount=amount,
        currency=currency,
        sequence=0,
        reference=reference,
        type="internalTransfer",
        category="internal",
        direction="incoming",
    )
    return _movement_report(account, found)


def custody_grant_parse(value: str) -> tuple[int, str, int]:
    brand_id, currency, amount = value.split(":")
    return int(brand_id), currency, int(amount)


# Reconciliation of the provider's transaction list with the ledger.


def provider_transactions_reconcile(*, now=None, days: int = 7, grace: timedelta = RECONCILE_GRACE) -> dict:
    """Every booked transaction on the brands' virtual accounts matched to its ledger transaction
    (by the provider's transfer id), an exception for one the ledger lacks or books another amount
    of, and the provider's balances compared with the ledger's provider balance."""
    now = now or timezone.now()
    done = {"matched": 0, "exceptions": 0, "waiting": 0}
    accounts = list(
        VirtualAccount.objects.filter(status=Status.OPEN, provider=provider.NAME, brand__livemode=True)
    )
    for account in accounts:
        # The live brands' accounts only: the provider balance and its drift are live money.
        with routed_for(livemode=True):
            booked_list = provider.transactions_list(
                balance_account_id=account.balance_account_id,
                since=now - timedelta(days=days),
                # Adyen takes whole seconds; a moment ahead keeps this second's bookings in.
                until=now + timedelta(minutes=1),
            )
        for booked in booked_list:
            done[_transaction_reconcile(account, booked, now=now, grace=grace)] += 1
    provider_balances_check(accounts=accounts, now=now)
    return done


def _transaction_kind(account: VirtualAccount, booked: provider.BookedTransaction) -> tuple[str, str]:
    """What a booked transaction on the account is, and the idempotency key of its ledger booking."""
    if account.account_holder_id:
        if transaction_by_key(idempotency_key=custody_move_key(booked.transfer_id)) is not None:
            return ProviderTransactionKind.OTHER, custody_move_key(booked.transfer_id)
        fee = FeeTransfer.objects.filter(brand_id=account.brand_id, provider_transfer_id=booked.transfer_id)
        if booked.amount < 0 and (reference := fee.values_list("reference", flat=True).first()):
            return ProviderTransactionKind.OTHER, fee_ledger_key(reference)  # the platform's fee
        payout = Payout.objects.filter(brand_id=account.brand_id, psp_reference=booked.transfer_id).first()
        if payout is not None:
            key = f"payout-settled:{payout.pk}" if booked.amount < 0 else f"payout-returned:{payout.pk}"
            return ProviderTransactionKind.PAYOUT, key
    if booked.amount > 0:
        return ProviderTransactionKind.DEPOSIT, _deposit_key(booked.transfer_id)
    if ProviderDeposit.objects.filter(provider=provider.NAME, transfer_id=booked.transfer_id).exists():
        return ProviderTransactionKind.RETURN, _return_key(booked.transfer_id)
    if account.account_holder_id:
        return ProviderTransactionKind.OTHER, ""  # nothing leaves a brand's own account unbooked
    return ProviderTransactionKind.SWEEP, _sweep_key(booked.transfer_id)


def _transaction_reconcile(account, booked, *, now, grace) -> str:
    known = ProviderTransaction.objects.filter(
        provider=provider.NAME, transaction_id=booked.transaction_id
    ).first()
    if known is not None and known.matched:
        return "matched"
    kind, key = _transaction_kind(account, booked)
    ledger = transaction_by_key(idempotency_key=key) if key else None
    booked_amount = None
    if ledger is not None:
        booked_amount = transaction_amount_on(
            transaction_id=ledger.pk, account=brand_balance_ledger_account(account, booked.currency)
        )
    if ledger is not None and booked_amount == booked.amount:
        with transaction.atomic(durable=True):
            _transaction_record(account, booked, kind, matched=True, ledger_id=ledger.pk)
            if known is not None and known.exception_id:
                state_step(
                    RECONCILIATION_EXCEPTION,
                    ReconciliationException.objects.filter(pk=known.exception_id),
                    "resolve",
                    resolved_at=now,
                )
        return "matched"
    if ledger is None and booked.booked_at is not None and booked.booked_at > now - grace:
        return "waiting"  # its webhook may still be on its way
    if known is not None:
        return "exceptions"  # raised already
    if ledger is None:
        reason = ExceptionReason.PROVIDER_UNMATCHED
        detail = _("The provider booked %(kind)s %(id)s; the ledger has no booking of it.")
    else:
        reason = ExceptionReason.PROVIDER_AMOUNT
        detail = _("The provider booked %(kind)s %(id)s with another amount than the ledger.")
    with transaction.atomic(durable=True):
        exception = ReconciliationException.objects.create(
            brand_id=account.brand_id,
            reason=reason,
            detail=(detail % {"kind": ProviderTransactionKind(kind).label.lower(), "id": booked.transfer_id})[
                :300
            ],
            amount=booked.amount,
            currency=booked.currency,
        )
        _transaction_record(
            account, booked, kind, matched=False, ledger_id=ledger.pk if ledger else None, exception=exception
        )
    return "exceptions"


def _transaction_record(account, booked, kind, *, matched, ledger_id, exception=None) -> None:
    ProviderTransaction.objects.update_or_create(
        provider=provider.NAME,
        transaction_id=booked.transaction_id,
        defaults={
            "transfer_id": booked.transfer_id,
            "balance_account_id": booked.balance_account_id,
            "brand_id": account.brand_id,
            "kind": kind,
            "amount": booked.amount,
            "currency": booked.currency,
            "booked_at": booked.booked_at,
            "matched": matched,
            "ledger_transaction_id": ledger_id,
            **({"exception": exception} if exception is not None else {}),
        },
    )


def provider_balances_check(*, accounts=None, now=None) -> list[ProviderBalanceCheck]:
    """Each brand's balance account at the provider against its own ledger account (a drift pauses
    that brand only: payouts.funding.selectors.brands_custody_blocked); the accounts from before
    brands held their own, summed per currency, against the ledger's provider balance. What
    /healthz/ and the metrics report as drift."""
    now = now or timezone.now()
    if accounts is None:
        accounts = list(
            VirtualAccount.objects.filter(status=Status.OPEN, provider=provider.NAME, brand__livemode=True)
        )
    totals: dict[str, int] = {}
    for account in accounts:
        ledger_before = None
        if account.account_holder_id:
            ledger = brand_balance_account(brand_id=account.brand_id, currency=account.currency)
            ledger_before = Account.objects.values_list("balance", flat=True).get(pk=ledger.pk)
        with routed_for(livemode=True):
            balance = provider.balance_get(
                balance_account_id=account.balance_account_id, currency=account.currency
            )
        # Once the answer is in: a payout sent while the provider was answering may be in it.
        read_at = timezone.now()
        if ledger_before is not None:
            brand_balance_check(
                account=account,
                provider_amount=balance,
                ledger_before=ledger_before,
                read_at=read_at,
                now=now,
            )
            continue
        totals[account.currency] = totals.get(account.currency, 0) + balance
    checks = []
    for currency, total in sorted(totals.items()):
        ledger = provider_balance(provider=provider.NAME, currency=currency)
        ledger.refresh_from_db(fields=["balance"])
        check, _created = ProviderBalanceCheck.objects.update_or_create(
            provider=provider.NAME,
            currency=currency,
            defaults={"provider_balance": total, "ledger_balance": ledger.balance, "checked_at": now},
        )
        checks.append(check)
    onboarding_reminders_send(now=now)
    return checks


def brand_balance_check(
    *, account: VirtualAccount, provider_amount: int, ledger_before: int | None = None, read_at=None, now=None
) -> VirtualAccount:
    """One brand's balance account: the provider's balance (its answer in by `read_at`) against the
    brand's ledger account, read under the account's lock so no posting is half in; kept on the
    virtual account, whose unexplained drift (VirtualAccount.drift_unexplained) pauses this brand's
    money alone.

    The provider moves first (it pays, it receives) and the ledger follows on its word, and the two
    are never read at one instant. What explains a difference is kept beside them: payouts sent by
    the time the provider was read and not settled under the lock explain a provider balance that
    is lower (a worker killed after the provider paid leaves one until the sweep asks); how the
    ledger moved between `ledger_before` (read before the provider) and the lock explains the
    provider standing where the ledger stood before that booking caught up."""
    now = now or timezone.now()
    read_at = read_at or now
    with transaction.atomic(durable=True):
        ledger = brand_balance_account(brand_id=account.brand_id, currency=account.currency)
        locked = accounts_lock(account_ids=[ledger.pk])[ledger.pk]
        # Under the lock: no settlement of this brand's lands between it and the balance.
        sent = payouts_sent_unsettled_amount(
            brand_id=account.brand_id, currency=account.currency, read_at=read_at
        )
        fields = {
            "provider_balance": provider_amount,
            "ledger_balance": locked.balance,
            "payouts_open_amount": sent,
            "ledger_moved_while_read": 0 if ledger_before is None else ledger_before - locked.balance,
            "balance_checked_at": now,
        }
        VirtualAccount.objects.filter(pk=account.pk).update(**fields)
    for name, value in fields.items():
        setattr(account, name, value)
    if abs(account.drift_unexplained) > settings.PROVIDER_DRIFT_TOLERANCE_MINOR:
        logger.warning(
            "brand %s balance account %s drifted: ledger %s, provider %s, payouts sent and not settled %s; "
            "its payouts are paused",
            account.brand_id,
            account.balance_account_id,
            account.ledger_balance,
            provider_amount,
            account.payouts_open_amount,
        )
    return account
