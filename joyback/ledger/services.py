"""The ledger's one write path.

Every movement of money is a Posting: two or more legs (account, signed minor units; debit
positive) that sum to zero per currency. postings_post() is the group commit: it takes many
postings, locks every touched account once (in id order, so concurrent writers never deadlock),
refuses the ones that would overdraw a no-overdraft account, and writes the rest with one insert
of transactions, one insert of entries and one balance update per touched account.

The accounts are locked FOR NO KEY UPDATE: writers of balances still take turns, while the
foreign keys of entries being inserted elsewhere (KEY SHARE) need not wait. A batch of EARLY_FROM
postings or more writes its transactions and entries, and has the database check that each sums
to zero, before it locks (_post_early), so that the hot budget row is held only for the balances
and the commit; one posting is written in one statement (joyback.ledger.sql.posting_insert).

These functions open a plain transaction.atomic(), so they join the caller's transaction: the
service that owns the business operation opens the outermost, durable one.
"""

import hashlib
import json
from collections import defaultdict, namedtuple
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

from django.db import DEFAULT_DB_ALIAS, IntegrityError, transaction
from django.utils import timezone

from joyback.ledger import sql
from joyback.ledger.models import (
    Account,
    AccountKind,
    Hold,
    HoldStatus,
    Transaction,
    normal_sign,
)
from joyback.modes import brand_livemode
from joyback.money import MoneyError, currency_check, minor_units_check


class LedgerError(Exception):
    code = "ledger_error"


class InvalidPosting(LedgerError):
    code = "invalid_posting"


class InsufficientFunds(LedgerError):
    code = "insufficient_funds"


class IdempotencyConflict(LedgerError):
    code = "idempotency_conflict"


class HoldAlreadyResolved(LedgerError):
    code = "hold_already_resolved"


class AlreadyReversed(LedgerError):
    code = "already_reversed"


class _Replan(Exception):
    """The balances locked decided otherwise than those read before the locks: the batch is posted
    again, the usual way, from its savepoint."""


class _KeyTaken(Exception):
    """Another writer committed one of the batch's idempotency keys between the read of the keys and
    the insert: the batch is planned again from its savepoint."""


@dataclass(frozen=True)
class Posting:
    reason: str
    legs: tuple[tuple[Account, int], ...]
    idempotency_key: str | None = None
    reference: str = ""
    description: str = ""
    reverses_id: int | None = None


@dataclass
class PostingResult:
    posting: Posting
    transaction: Transaction | None = None
    error: LedgerError | None = None
    replayed: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class _Plan:
    index: int
    posting: Posting
    fingerprint: str
    deltas: dict[int, int] = field(default_factory=dict)


def transfer(
    *,
    source: Account,
    destination: Account,
    amount: int,
    reason: str,
    idempotency_key: str | None = None,
    reference: str = "",
    description: str = "",
) -> Posting:
    """Money moves from source to destination: the source is debited, the destination credited."""
    if isinstance(amount, int) and not isinstance(amount, bool) and amount < 0:
        # A negative amount would silently move money from destination to source.
        raise InvalidPosting(
            f"A transfer moves a positive amount, not {amount}; swap source and destination."
        )
    return Posting(
        reason=reason,
        legs=((source, amount), (destination, _negate(amount))),
        idempotency_key=idempotency_key,
        reference=reference,
        description=description,
    )


def _negate(amount):
    # Negating a float or a bool would hide the bad type from the check that follows.
    return -amount if isinstance(amount, int) and not isinstance(amount, bool) else amount


def posting_fingerprint(posting: Posting) -> str:
    legs = sorted((account.pk, amount) for account, amount in posting.legs)
    content = [posting.reason, posting.reference, posting.reverses_id, legs]
    return hashlib.sha256(json.dumps(content).encode()).hexdigest()


def _posting_check(posting: Posting) -> str:
    if not posting.reason:
        raise InvalidPosting("A posting needs a reason.")
    if len(posting.legs) < 2:
        raise InvalidPosting("A posting needs at least two legs.")
    totals: dict[str, int] = defaultdict(int)
    for account, amount in posting.legs:
        try:
            minor_units_check(amount)
        except MoneyError as error:
            raise InvalidPosting(str(error)) from None
        if amount == 0:
            raise InvalidPosting("A leg of zero moves nothing; leave it out.")
        if account.pk is None:
            raise InvalidPosting(f"Account {account} is not saved.")
        totals[account.currency] += amount
    if len({account.livemode for account, _amount in posting.legs}) > 1:
        # The database refuses it too (ledger_entry_one_mode); said here in words, before any lock.
        raise InvalidPosting(
            "A posting may not mix test and live accounts: test money never meets live money."
        )
    if len({account.brand_id for account, _amount in posting.legs} - {None}) > 1:
        # Past one primary each brand's ledger rows live on one node (docs/deploy.md): a posting
        # commits on one. Money between brands goes through the platform's accounts, in two.
        raise InvalidPosting("A posting moves one brand's money: its accounts belong to two brands.")
    unbalanced = {currency: total for currency, total in totals.items() if total != 0}
    if unbalanced:
        if len(totals) > 1:
            raise InvalidPosting(
                "Mixed currencies: legs in "
                + " and ".join(sorted(totals))
                + " do not balance per currency; move money between currencies through an FX account."
            )
        currency, total = next(iter(unbalanced.items()))
        raise InvalidPosting(f"Debits and credits differ by {total} minor units of {currency}.")
    return posting_fingerprint(posting)


def _account_models_lock(account_ids) -> dict[int, Account]:
    """Row-lock accounts in ascending id order: the one lock order every writer uses."""
    rows = sql.accounts_lock(account_ids=list(account_ids))
    accounts = (Account.from_db("default", sql.ACCOUNT_FIELDS, row) for row in rows)
    return {account.pk: account for account in accounts}


# An account's row as a posting plans against it (kind, currency, name, no_overdraft, balance,
# held): a batch reads 500 accounts twice, and a model instance of each cost more than the read.
_AccountRow = namedtuple("_AccountRow", sql.PLAN_FIELDS)


def _accounts_lock(account_ids) -> dict[int, _AccountRow]:
    """_account_models_lock's rows, not made into models: for a posting's plan only."""
    return {row[0]: _AccountRow._make(row) for row in sql.plan_lock(account_ids=list(account_ids))}


def _replay(plan: _Plan, existing: Transaction) -> PostingResult:
    if existing.fingerprint != plan.fingerprint:
        return PostingResult(
            plan.posting,
            error=IdempotencyConflict(
                f"Idempotency key {plan.posting.idempotency_key!r} was used for a different posting "
                f"(transaction #{existing.pk}); nothing was posted."
            ),
        )
    return PostingResult(plan.posting, transaction=existing, replayed=True)


def _plan_postings(plans, accounts, existing, held_deltas):
    """Decide each posting's fate against the locked balances; returns (to_write, results, deltas)."""
    results: dict[int, PostingResult] = {}
    balance_deltas: dict[int, int] = defaultdict(int)
    first_by_key: dict[str, _Plan] = {}
    to_write: list[_Plan] = []
    reverses = [p.posting.reverses_id for p in plans if p.posting.reverses_id]
    reversed_ids = (
        set(Transaction.objects.filter(reverses_id__in=reverses).values_list("reverses_id", flat=True))
        if reverses
        else set()
    )
    for plan in plans:
        key = plan.posting.idempotency_key
        if key and key in existing:
            results[plan.index] = _replay(plan, existing[key])
            continue
        if key and key in first_by_key:
            continue  # resolved against the first posting with this key once it is written
        if plan.posting.reverses_id in reversed_ids:
            results[plan.index] = PostingResult(
                plan.posting,
                error=AlreadyReversed(f"Transaction #{plan.posting.reverses_id} is already reversed."),
            )
            continue
        plan.deltas = defaultdict(int)
        for account, amount in plan.posting.legs:
            plan.deltas[account.pk] += amount * normal_sign(accounts[account.pk].kind)
        short = _overdrawn(plan.deltas, accounts, balance_deltas, held_deltas)
        if short:
            results[plan.index] = PostingResult(plan.posting, error=short)
            continue
        for account_id, delta in plan.deltas.items():
            balance_deltas[account_id] += delta
        if plan.posting.reverses_id:
            reversed_ids.add(plan.posting.reverses_id)
        if key:
            first_by_key[key] = plan
        to_write.append(plan)
    return to_write, results, balance_deltas, first_by_key


def _overdrawn(deltas, accounts, balance_deltas, held_deltas) -> InsufficientFunds | None:
    for account_id, delta in deltas.items():
        account = accounts[account_id]
        if not account.no_overdraft or delta >= 0:
            continue
        available = (
            account.balance + balance_deltas[account_id] - account.held - held_deltas.get(account_id, 0)
        )
        if available + delta < 0:
            return InsufficientFunds(
                f"{account.name} has {available} {account.currency} minor units available; "
                f"this posting needs {-delta}."
            )
    return None


def _write(
    to_write: list[_Plan], accounts, balance_deltas, held_deltas, alone=False, after=()
) -> dict[int, Transaction]:
    """Insert the planned transactions and their entries and add the balance changes; returns plan
    index -> transaction. _KeyTaken when another writer committed one of the keys meanwhile (nothing
    of the batch's entries or balances is then written)."""
    # Keys are inserted in sorted order so that two batches racing on the same keys wait on each
    # other in the same order instead of deadlocking.
    ordered = sorted(to_write, key=lambda plan: plan.posting.idempotency_key or "")
    rows = [
        (
            plan.posting.reason,
            plan.posting.description,
            plan.posting.reference,
            plan.posting.idempotency_key,
            plan.fingerprint,
            plan.posting.reverses_id,
            _posting_brand(plan.posting),
        )
        for plan in ordered
    ]
    created = _insert_rows(
        ordered, rows, accounts, _balance_changes(balance_deltas, held_deltas), alone=alone, after=after
    )
    return {plan.index: row for plan, row in zip(ordered, created, strict=True)}


def _posting_brand(posting: Posting) -> int | None:
    """The one brand among the legs' accounts (_posting_check refuses two); None when every leg is
    the platform's."""
    for account, _amount in posting.legs:
        if account.brand_id is not None:
            return account.brand_id
    return None


# Transaction's columns in the order of its fields: a row written here becomes its model instance
# by position (Model.from_db), as the ORM makes the rows it reads, at a fraction of the cost of
# keyword arguments, which look up every field's default.
_TRANSACTION_FIELDS = [field.attname for field in Transaction._meta.concrete_fields]


def _transaction_made(row_id: int, row: tuple, now) -> Transaction:
    return Transaction.from_db(DEFAULT_DB_ALIAS, _TRANSACTION_FIELDS, (row_id, *row[:6], now, row[6]))


def _insert_rows(
    ordered: list[_Plan], rows: list[tuple], accounts, changes, alone=False, after=()
) -> list[Transaction]:
    """Two statements (joyback.ledger.sql), column arrays unnested by PostgreSQL: the transactions
    (rows of reason, description, reference, idempotency_key, fingerprint, reverses_id, brand_id),
    then their entries with the balance changes. alone: a posting made alone (a reward with its new
    key) is one statement; a batch keeps its two however many postings it holds."""
    now = timezone.now()
    if alone and len(rows) == 1:
        (plan,), (row,) = ordered, rows
        legs = [(account.pk, amount, accounts[account.pk].currency) for account, amount in plan.posting.legs]
        inserted = sql.posting_insert(now=now, row=list(row), legs=legs, changes=changes, after=after)
        if not inserted:
            raise _KeyTaken
        return [_transaction_made(inserted[0][0], row, now)]
    inserted = sql.transactions_insert(now=now, columns=[list(column) for column in zip(*rows, strict=True)])
    if len(inserted) != len(rows):
        raise _KeyTaken
    ids = [row_id for row_id, _key in inserted]
    entries = [
        (transaction_id, account.pk, amount, accounts[account.pk].currency, row[6])
        for plan, row, transaction_id in zip(ordered, rows, ids, strict=True)
        for account, amount in plan.posting.legs
    ]
    sql.entries_insert(entries=entries, changes=changes)
    return [_transaction_made(row_id, row, now) for row, row_id in zip(rows, ids, strict=True)]


def _balance_changes(
    balance_deltas: dict[int, int], held_deltas: dict[int, int]
) -> list[tuple[int, int, int]]:
    changes = [
        (account_id, balance_deltas.get(account_id, 0), held_deltas.get(account_id, 0))
        for account_id in sorted(set(balance_deltas) | set(held_deltas))
    ]
    return [change for change in changes if change[1] or change[2]]


def _balances_save(balance_deltas: dict[int, int], held_deltas: dict[int, int]) -> None:
    changes = _balance_changes(balance_deltas, held_deltas)
    if changes:
        sql.balances_add(changes=changes)


def _post_locked(
    plans: list[_Plan], accounts, held_deltas=None, known=None, fresh=False, after=()
) -> dict[int, PostingResult]:
    """known: the keys' transactions already read (by postings_post, before the locks). Reading
    them again would change nothing: a key committed since then by a writer on other accounts is
    left out by the insert (_KeyTaken), and the next attempt reads afresh. fresh: the keys are new
    (postings_post), so none is looked up.

    _KeyTaken leaves the transactions of the batch inserted so far in place: the caller rolls back
    to its savepoint (postings_post), or its transaction fails whole."""
    held_deltas = held_deltas or {}
    keys = [p.posting.idempotency_key for p in plans if p.posting.idempotency_key]
    if known is not None:
        existing = known
    elif keys and not fresh:
        existing = {t.idempotency_key: t for t in Transaction.objects.filter(idempotency_key__in=keys)}
    else:
        existing = {}
    to_write, results, balance_deltas, first_by_key = _plan_postings(plans, accounts, existing, held_deltas)
    if to_write:
        alone = fresh and len(plans) == 1
        written = _write(to_write, accounts, balance_deltas, held_deltas, alone=alone, after=after)
    else:
        written = {}
        _balances_save({}, held_deltas)
    for plan in to_write:
        results[plan.index] = PostingResult(plan.posting, transaction=written[plan.index])
    for plan in plans:
        if plan.index in results:
            continue
        first = first_by_key[plan.posting.idempotency_key]
        results[plan.index] = _replay(plan, written[first.index])
    return results


# From this many postings a batch writes its transactions and entries before it locks the accounts
# (_post_early): the hot budget row is then held only for the balances and the commit.
EARLY_FROM = 20


def _post_early(plans: list[_Plan], known) -> dict[int, PostingResult]:
    """A batch planned against the balances as read without locks, its transactions and entries
    written and checked (every transaction sums to zero: checked by the insert's own statement
    trigger, and what waits for COMMIT run now, SET CONSTRAINTS ... IMMEDIATE), all before the
    accounts' locks; then the accounts locked, the batch planned again against the locked balances
    (or known to be decided alike, _decided_alike) and, when that decides every posting the same
    way, the balances added. The row locks are FOR NO KEY UPDATE, so the entries' foreign keys (KEY
    SHARE) need not wait for another batch's locks. _Replan when the decisions differ: the caller
    rolls back to its savepoint."""
    ids = sorted({account.pk for p in plans for account, _ in p.posting.legs})
    read = _account_rows_read(ids)
    keys = [p.posting.idempotency_key for p in plans if p.posting.idempotency_key]
    if known is not None:
        existing = known
    elif keys:
        existing = {t.idempotency_key: t for t in Transaction.objects.filter(idempotency_key__in=keys)}
    else:
        existing = {}
    to_write, results, balance_deltas, first_by_key = _plan_postings(plans, read, existing, {})
    written = _write(to_write, read, {}, {}) if to_write else {}
    sql.balance_checks_now()
    locked = _accounts_lock(ids)
    if not _decided_alike(plans, to_write, results, read, locked):
        again, results, balance_deltas, first_by_key = _plan_postings(plans, locked, existing, {})
        if [plan.index for plan in again] != [plan.index for plan in to_write]:
            raise _Replan
    _balances_save(balance_deltas, {})
    for plan in to_write:
        results[plan.index] = PostingResult(plan.posting, transaction=written[plan.index])
    for plan in plans:
        if plan.index not in results:
            results[plan.index] = _replay(plan, written[first_by_key[plan.posting.idempotency_key].index])
    return results


def _decided_alike(plans, to_write, results, read, locked) -> bool:
    """Whether a plan against the locked rows would decide every posting as the plan against the
    rows read before did, known without planning again (a batch's largest cost in Python): that
    plan refused nothing and reversed nothing (a reversal's check reads the table), the accounts'
    terms are the same, and every no-overdraft account can still pay all of the batch's debits on
    it, so each posting passes in any order, whatever other writers spent meanwhile."""
    if any(result.error for result in results.values()) or any(p.posting.reverses_id for p in plans):
        return False
    debits: dict[int, int] = defaultdict(int)
    for plan in to_write:
        for account_id, delta in plan.deltas.items():
            if delta < 0:
                debits[account_id] += delta
    for account_id, row in locked.items():
        before = read[account_id]
        if (row.kind, row.no_overdraft) != (before.kind, before.no_overdraft):
            return False
        if row.no_overdraft and row.balance - row.held + debits[account_id] < 0:
            return False
    return True


def _post_locked_from_savepoint(plans: list[_Plan], accounts, known) -> dict[int, PostingResult]:
    """_post_locked inside a savepoint of its own, planned again (the keys read afresh) when another
    writer committed one of the keys meanwhile: for a caller without a savepoint (postings_post)."""
    for _attempt in range(3):
        try:
            with transaction.atomic():
                return _post_locked(plans, accounts, known=known)
        except _KeyTaken:
            known = None
    raise LedgerError("Could not post: idempotency keys kept colliding with concurrent writers.")


def _account_rows_read(account_ids) -> dict[int, _AccountRow]:
    return {row[0]: _AccountRow._make(row) for row in sql.plan_read(account_ids=account_ids)}


def postings_post(
    *,
    postings: Sequence[Posting],
    savepoint: bool = True,
    fresh_keys: bool = False,
    locked: dict[int, Account] | None = None,
    after: Sequence[tuple[str, object]] = (),
) -> list[PostingResult]:
    """Post many postings in one database transaction; one result per posting, in order.

    A posting that would overdraw, repeats a key with other content, or reverses a reversed
    transaction gets an error in its result; the others are posted.

    savepoint=False inside a caller's transaction that is rolled back whole if anything here
    raises (a batch, a reward): the savepoint it would fall back to costs two statements a call.
    A key another writer commits while the batch is being written is then planned again from a
    savepoint taken after the locks (_post_locked_from_savepoint).

    locked: every leg's account as this transaction locked and read it (accounts_lock_after), with
    nothing posted on them since: the posting plans against these rows instead of locking and
    reading them again. Only without a savepoint (a caller whose transaction fails whole).

    after: the caller's own prepared (statement, params), sent in the same round trip right after
    the statement that writes the posting (joyback.postgresql.prepared.prepared_pipeline), so that
    they see it (a row naming the posting by its idempotency key); their rows are not returned.
    Only for one posting with a fresh key and no savepoint, which is written in one statement. A
    posting refused (an error in its result) is not written, and they are not sent.

    fresh_keys: every key names a row the caller's transaction has just made (a claim's own id), so
    no earlier posting can hold one: none is looked up, and the writes need no savepoint. Were one
    taken after all, the insert leaves it out and the posting fails (LedgerError; without a
    savepoint, the caller's transaction with it), never posting twice.
    """
    if after and not (fresh_keys and not savepoint and len(postings) == 1):
        raise ValueError("after: for one posting with a fresh key and no savepoint only")
    results: list[PostingResult | None] = [None] * len(postings)
    plans = []
    for index, posting in enumerate(postings):
        try:
            plans.append(_Plan(index=index, posting=posting, fingerprint=_posting_check(posting)))
        except LedgerError as error:
            results[index] = PostingResult(posting, error=error)
    if not plans:
        return results
    for _attempt in range(3):
        keys = [p.posting.idempotency_key for p in plans if p.posting.idempotency_key]
        known = None
        if keys and len(keys) == len(plans) and not fresh_keys:
            # Replays need no locks: answer them from what is committed.
            known = sql.transactions_by_key(keys=keys)
            if len(known) == len(set(keys)):
                for plan in plans:
                    results[plan.index] = _replay(plan, known[plan.posting.idempotency_key])
                return results
        try:
            if savepoint and len(plans) >= EARLY_FROM:
                try:
                    with transaction.atomic():
                        for index, result in _post_early(plans, known).items():
                            results[index] = result
                    return results
                except _Replan:
                    pass  # rolled back: the usual way below
            with transaction.atomic(savepoint=savepoint):
                ids = {account.pk for p in plans for account, _ in p.posting.legs}
                if locked is not None and not savepoint and ids <= locked.keys():
                    accounts, locked = locked, None  # a retry reads them afresh
                else:
                    accounts = _accounts_lock(ids)
                if savepoint or fresh_keys:
                    posted = _post_locked(plans, accounts, known=known, fresh=fresh_keys, after=after)
                else:
                    posted = _post_locked_from_savepoint(plans, accounts, known=known)
                for index, result in posted.items():
                    results[index] = result
        except _KeyTaken:
            if fresh_keys:
                raise LedgerError(
                    "Could not post: an idempotency key was taken by a concurrent writer; nothing was posted."
                ) from None
            # Rolled back to the savepoint: that posting now shows up among the known keys.
            continue
        return results
    raise LedgerError("Could not post: idempotency keys kept colliding with concurrent writers.")


def posting_post(
    *, posting: Posting, savepoint: bool = True, fresh_key: bool = False, locked=None, after=()
) -> Transaction:
    """One posting; raises the LedgerError that refused it. savepoint, fresh_key, locked, after:
    postings_post's."""
    (result,) = postings_post(
        postings=[posting], savepoint=savepoint, fresh_keys=fresh_key, locked=locked, after=after
    )
    if result.error:
        raise result.error
    return result.transaction


def transfer_post(
    *, savepoint: bool = True, fresh_key: bool = False, locked=None, after=(), **kwargs
) -> Transaction:
    """One transfer; raises the LedgerError that refused it. savepoint, fresh_key, locked, after:
    postings_post's."""
    return posting_post(
        posting=transfer(**kwargs), savepoint=savepoint, fresh_key=fresh_key, locked=locked, after=after
    )


def transaction_reverse(
    *,
    original: Transaction,
    reason: str = "reversal",
    idempotency_key: str | None = None,
    description: str = "",
) -> Transaction:
    """A new transaction with every leg of the original negated, linked to it; once per original."""
    legs = tuple((entry.account, -entry.amount) for entry in original.entries.select_related("account"))
    return posting_post(
        posting=Posting(
            reason=reason,
            legs=legs,
            idempotency_key=idempotency_key,
            reference=original.reference,
            description=description or f"Reversal of #{original.pk}",
            reverses_id=original.pk,
        )
    )


def account_get_or_create(
    *,
    kind: str,
    currency: str,
    brand_id: int | None = None,
    subject: str = "",
    name: str = "",
    livemode: bool = True,
) -> Account:
    """A brand's account takes the brand's mode; a platform account (no brand) is made per mode."""
    currency_check(currency)
    if brand_id is not None:
        livemode = brand_livemode(brand_id)
    lookup = {"kind": kind, "currency": currency, "brand_id": brand_id, "subject": subject}
    if brand_id is None:
        lookup["livemode"] = livemode
    found = Account.objects.filter(**lookup).first()
    if found is not None:
        return found
    if brand_id is not None:
        return account_open(kind=kind, currency=currency, brand_id=brand_id, subject=subject, name=name)
    account, _ = Account.objects.get_or_create(
        **lookup, defaults=_account_defaults(kind, subject, name, livemode)
    )
    return account


def _account_defaults(kind: str, subject: str, name: str, livemode: bool) -> dict:
    return {
        "name": name or f"{AccountKind(kind).label} {subject}".strip(),
        # The provider debits a return after the money was swept on: its balance, and so this
        # account's, may go below zero (the drift check compares the two). A brand's balance account
        # mirrors what the provider booked, which the ledger may not refuse either.
        "no_overdraft": kind
        not in (AccountKind.SUSPENSE, AccountKind.PROVIDER_BALANCE, AccountKind.BRAND_BALANCE),
        "livemode": livemode,
    }


def account_open(*, kind: str, currency: str, brand_id: int, subject: str, name: str = "") -> Account:
    """A brand's account that is most likely new (a person's first reward opens their payable): made
    in one statement, or the one already there. account_get_or_create's for every other case."""
    currency_check(currency)
    defaults = _account_defaults(kind, subject, name, brand_livemode(brand_id))
    row = sql.account_open(
        kind=kind,
        currency=currency,
        brand_id=brand_id,
        subject=subject,
        name=str(defaults["name"]),
        no_overdraft=defaults["no_overdraft"],
        livemode=defaults["livemode"],
        now=timezone.now(),
    )
    if row is None:  # made by a concurrent transaction while this statement ran: now committed
        return Account.objects.get(kind=kind, currency=currency, brand_id=brand_id, subject=subject)
    return Account.from_db("default", sql.ACCOUNT_FIELDS, row)


_shared_accounts: dict[tuple, Account] = {}


def account_for(*, kind: str, currency: str, brand_id: int | None, name: str, subject: str = "") -> Account:
    """An account that never goes away (a brand's payouts in transit, the platform's bank, a
    campaign's budget): looked up once per process. Remembered only once committed, so one made in
    a transaction that rolls back is not. Its terms (id, kind, currency, brand, mode) are what the
    caller may use; its balance is as it was read then: a posting locks and reads it afresh."""
    key = (kind, currency, brand_id, subject)
    if key not in _shared_accounts:
        account = account_get_or_create(
            kind=kind, currency=currency, brand_id=brand_id, subject=subject, name=name
        )
        transaction.on_commit(partial(_shared_accounts.setdefault, key, account))
        return account
    return _shared_accounts[key]


def accounts_lock(*, account_ids) -> dict[int, Account]:
    """Lock accounts whose balances a service reads before it posts (the posting locks them again,
    in the same id order): the one way code outside the ledger locks ledger rows."""
    return _account_models_lock(account_ids)


def accounts_lock_after(*statements, account_ids) -> tuple[list[list[tuple]], dict[int, Account]]:
    """accounts_lock, sent in one round trip after the caller's own prepared (statement, params),
    which run first and in order (joyback.postgresql.prepared.prepared_pipeline): their rows, and
    the accounts as read under the lock, for posting_post's `locked`."""
    rows, locked = sql.accounts_lock_after(*statements, account_ids=list(account_ids))
    accounts = (Account.from_db("default", sql.ACCOUNT_FIELDS, row) for row in locked)
    return rows, {account.pk: account for account in accounts}


def platform_bank(*, currency: str, livemode: bool = True) -> Account:
    """The platform's bank account in the ledger; the test one is the sandbox bank's play money."""
    return account_get_or_create(
        kind=AccountKind.PLATFORM_BANK,
        currency=currency,
        name=f"Platform bank {currency}" if livemode else f"Sandbox bank {currency} (test)",
        livemode=livemode,
    )


def provider_balance(*, provider: str, currency: str) -> Account:
    """The platform's money at a payment provider that has not reached the platform's bank yet."""
    return account_get_or_create(
        kind=AccountKind.PROVIDER_BALANCE,
        currency=currency,
        subject=provider,
        name=f"Provider balance {provider} {currency}",
    )


def brand_balance_account(*, brand_id: int, currency: str) -> Account:
    """A brand's own balance account at the payment provider, in the ledger: an asset of the brand
    (its money, in its name at the provider), one per brand and currency."""
    return account_for(
        kind=AccountKind.BRAND_BALANCE,
        currency=currency,
        brand_id=brand_id,
        name=f"Balance account at the provider {currency}",
    )


def hold_reserve(
    *, account: Account, amount: int, idempotency_key: str | None = None, reference: str = ""
) -> Hold:
    try:
        minor_units_check(amount)
    except MoneyError as error:
        raise InvalidPosting(str(error)) from None
    if amount <= 0:
        raise InvalidPosting("A hold must reserve a positive amount.")
    if account.brand_id is None:
        raise InvalidPosting("A hold sets aside a brand's money; the platform's accounts have none to hold.")
    with transaction.atomic():
        locked = _account_models_lock([account.pk])[account.pk]
        if idempotency_key:
            existing = Hold.objects.filter(idempotency_key=idempotency_key).first()
            if existing:
                return _hold_replay(existing, account=locked, amount=amount)
        if locked.no_overdraft and locked.available < amount:
            raise InsufficientFunds(
                f"{locked.name} has {locked.available} {locked.currency} minor units available; "
                f"the hold needs {amount}."
            )
        try:
            with transaction.atomic():
                hold = Hold.objects.create(
                    account=locked,
                    brand_id=locked.brand_id,
                    amount=amount,
                    idempotency_key=idempotency_key,
                    reference=reference,
                )
        except IntegrityError:
            existing = Hold.objects.get(idempotency_key=idempotency_key)
            return _hold_replay(existing, account=locked, amount=amount)
        _balances_save({}, {locked.pk: amount})
        return hold


def _hold_replay(existing: Hold, *, account: Account, amount: int) -> Hold:
    if existing.account_id != account.pk or existing.amount != amount:
        raise IdempotencyConflict(
            f"Idempotency key {existing.idempotency_key!r} was used for a different hold (#{existing.pk})."
        )
    return existing


def _hold_claim(hold: Hold, *, status: str, committed_amount: int = 0, commit_transaction=None) -> None:
    claimed = Hold.objects.filter(pk=hold.pk, status=HoldStatus.RESERVED).update(
        status=status,
        committed_amount=committed_amount,
        commit_transaction=commit_transaction,
        resolved_at=timezone.now(),
    )
    if not claimed:
        raise HoldAlreadyResolved(f"Hold #{hold.pk} is already {Hold.objects.get(pk=hold.pk).status}.")


def hold_commit(
    *,
    hold: Hold,
    destination: Account,
    amount: int | None = None,
    reason: str = "hold_commit",
    reference: str = "",
    description: str = "",
) -> Transaction:
    """Move all or part of the held money to destination; the rest becomes available again."""
    amount = hold.amount if amount is None else amount
    try:
        minor_units_check(amount)
    except MoneyError as error:
        raise InvalidPosting(str(error)) from None
    if not 0 < amount <= hold.amount:
        raise InvalidPosting(f"A commit must be between 1 and the held {hold.amount} minor units.")
    with transaction.atomic():
        accounts = _account_models_lock([hold.account_id, destination.pk])
        # Every resolution of a hold locks its account first, so this read cannot go stale.
        current = Hold.objects.get(pk=hold.pk)
        if current.status != HoldStatus.RESERVED:
            raise HoldAlreadyResolved(f"Hold #{hold.pk} is already {current.status}.")
        posting = transfer(
            source=accounts[hold.account_id],
            destination=accounts[destination.pk],
            amount=amount,
            reason=reason,
            reference=reference or current.reference,
            description=description,
        )
        plan = _Plan(index=0, posting=posting, fingerprint=_posting_check(posting))
        result = _post_locked([plan], accounts, held_deltas={hold.account_id: -current.amount})[0]
        if result.error:
            raise result.error
        _hold_claim(
            current,
            status=HoldStatus.COMMITTED,
            committed_amount=amount,
            commit_transaction=result.transaction,
        )
        return result.transaction


def hold_void(*, hold: Hold) -> None:
    with transaction.atomic():
        _account_models_lock([hold.account_id])
        current = Hold.objects.get(pk=hold.pk)
        _hold_claim(current, status=HoldStatus.VOIDED)
        _balances_save({}, {hold.account_id: -current.amount})
