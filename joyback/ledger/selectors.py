from dataclasses import dataclass

from django.db.models import F, Q, Subquery, Sum

from joyback.ledger.models import Account, Entry, Hold, HoldStatus, Transaction, normal_sign


def accounts_for_brand(*, brand_id: int, kinds=None):
    accounts = Account.objects.filter(brand_id=brand_id)
    if kinds is not None:
        accounts = accounts.filter(kind__in=kinds)
    return accounts.order_by("kind", "subject", "currency")


def account_available_subquery(*, kind: str, brand_id, subject, currency) -> Subquery:
    """One account's available amount (its balance less its holds) as a subquery, for a query over
    the account's owners: the arguments may be OuterRef expressions."""
    accounts = Account.objects.filter(kind=kind, brand_id=brand_id, subject=subject, currency=currency)
    return Subquery(accounts.annotate(available=F("balance") - F("held")).values("available")[:1])


def account_get_for_brand(*, brand_id: int, account_id: int) -> Account | None:
    return Account.objects.filter(brand_id=brand_id, pk=account_id).first()


def account_find(
    *, kind: str, currency: str, brand_id: int | None = None, subject: str = ""
) -> Account | None:
    """The one account of this kind, currency, brand and subject, if it exists yet."""
    return Account.objects.filter(kind=kind, currency=currency, brand_id=brand_id, subject=subject).first()


def accounts_of_kind(*, kind: str):
    """Accounts of one kind, for the caller to narrow (by brand and subject, or in a subquery)."""
    return Account.objects.filter(kind=kind)


def transaction_by_key(*, idempotency_key: str) -> Transaction | None:
    """The transaction posted under this idempotency key, if any."""
    return Transaction.objects.filter(idempotency_key=idempotency_key).first()


def transaction_amount_on(*, transaction_id: int, account: Account) -> int:
    """What the transaction moved on the account (debit positive, as entries are)."""
    total = Entry.objects.filter(transaction_id=transaction_id, account=account).aggregate(
        total=Sum("amount")
    )
    return total["total"] or 0


def account_entries(*, account: Account, limit: int = 100):
    return (
        Entry.objects.filter(account=account)
        .select_related("transaction")
        .order_by("-transaction_id", "-id")[:limit]
    )


def transactions_for_brand(*, brand_id: int, limit: int = 20):
    return (
        Transaction.objects.filter(entries__account__brand_id=brand_id)
        .distinct()
        .order_by("-id")
        .prefetch_related("entries__account")[:limit]
    )


@dataclass(frozen=True)
class Drift:
    what: str
    object_id: int
    stored: int
    computed: int

    def __str__(self):
        return f"{self.what} #{self.object_id}: stored {self.stored}, entries say {self.computed}"


def ledger_drift() -> list[Drift]:
    """Everything where stored state disagrees with the entries it must equal."""
    drift = []
    sums = dict(Entry.objects.values_list("account_id").annotate(total=Sum("amount")).order_by())
    held = dict(
        Hold.objects.filter(status=HoldStatus.RESERVED)
        .values_list("account_id")
        .annotate(total=Sum("amount"))
        .order_by()
    )
    for account in Account.objects.order_by("pk").iterator(chunk_size=2000):
        computed = normal_sign(account.kind) * sums.get(account.pk, 0)
        if account.balance != computed:
            drift.append(Drift("balance of account", account.pk, account.balance, computed))
        if account.held != held.get(account.pk, 0):
            drift.append(Drift("held on account", account.pk, account.held, held.get(account.pk, 0)))
    unbalanced = (
        Entry.objects.values_list("transaction_id", "currency")
        .annotate(total=Sum("amount"))
        .filter(~Q(total=0))
        .order_by()
    )
    for transaction_id, _currency, total in unbalanced:
        drift.append(Drift("sum of transaction", transaction_id, total, 0))
    return drift
