from django.db import transaction
from django.utils.text import slugify

from campaigns.models import Brand, Membership, Role
from joyback.ledger.models import Account, AccountKind, Transaction
from joyback.ledger.services import account_get_or_create, platform_bank, transfer_post
from joyback.money import currency_check


def brand_funding_account(*, brand: Brand, currency: str) -> Account:
    return account_get_or_create(
        kind=AccountKind.BRAND_FUNDING,
        currency=currency,
        brand_id=brand.pk,
        name=f"{brand.name} funding",
    )


RESERVED_SLUGS = frozenset({"new"})  # taken by /brands/new/


def _free_slug(name: str) -> str:
    base = slugify(name)[:50] or "brand"
    slug, n = base, 1
    while slug in RESERVED_SLUGS or Brand.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    return slug


def brand_create(*, name: str, owner, slug: str = "", currency: str = "EUR") -> Brand:
    currency_check(currency)
    with transaction.atomic(durable=True):
        brand = Brand.objects.create(name=name, slug=slug or _free_slug(name), default_currency=currency)
        Membership.objects.create(brand=brand, user=owner, role=Role.OWNER)
        brand_funding_account(brand=brand, currency=currency)
    return brand


def member_add(*, brand: Brand, user, role: str) -> Membership:
    membership, _ = Membership.objects.update_or_create(brand=brand, user=user, defaults={"role": Role(role)})
    return membership


def brand_deposit_record(*, brand: Brand, amount: int, currency: str, bank_reference: str) -> Transaction:
    """Money the brand sent to the platform's bank account becomes the brand's funding balance.

    The bank's reference is the idempotency key, so the same statement line booked twice counts once.
    """
    with transaction.atomic(durable=True):
        return transfer_post(
            source=platform_bank(currency=currency),
            destination=brand_funding_account(brand=brand, currency=currency),
            amount=amount,
            reason="deposit",
            idempotency_key=f"deposit:{currency}:{bank_reference}",
            reference=f"brand:{brand.pk}",
            description=f"Bank deposit {bank_reference}",
        )
