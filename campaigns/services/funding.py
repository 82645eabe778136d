"""Money for brands and campaigns: their ledger accounts, the check that a brand may move money,
bank deposits, the sandbox's top up and funding a campaign's budget."""

from django.conf import settings
from django.db import transaction
from django.utils.module_loading import import_string
from django.utils.translation import gettext

from campaigns.models import (
    Brand,
    Campaign,
    CampaignStatus,
)
from campaigns.services.landing import landing_cache_clear
from campaigns.services.refusals import CampaignError
from joyback.ledger.models import Account, AccountKind, Transaction
from joyback.ledger.services import (
    InsufficientFunds,
    account_for,
    account_get_or_create,
    platform_bank,
    transfer_post,
)
from joyback.safety import sandbox_bank_live_refusal


def brand_funding_account(*, brand: Brand, currency: str) -> Account:
    return account_get_or_create(
        kind=AccountKind.BRAND_FUNDING,
        currency=currency,
        brand_id=brand.pk,
        name=f"{brand.name} funding",
    )


class BrandNotVerified(Exception):
    """Money may not move for a brand platform staff have not verified yet."""


def brand_money_allowed_check(*, brand: Brand) -> None:
    """Funding and payouts open only once staff verified who the brand is and, for live money, the
    payment provider allows what the brand's own account there needs (BRAND_MONEY_CHECKS, filled
    by payouts: each raises BrandNotVerified); the rest (campaigns, the landing page, the sandbox
    flows, API keys) works before. Test data moves play money only, never at the provider."""
    if not Brand.objects.filter(pk=brand.pk, verified_at__isnull=False).exists():
        raise BrandNotVerified(
            gettext(
                "Funding and payouts open once JoyBack's staff have verified the brand: its legal name, "
                "registration number, country and the owner's confirmed email. See the dashboard for "
                "what is still missing."
            )
        )
    if brand.livemode:
        for check in settings.BRAND_MONEY_CHECKS:
            import_string(check)(brand=brand)


def brand_deposit_record(
    *, brand: Brand, amount: int, currency: str, bank_reference: str, receiving_account: str = ""
) -> Transaction:
    """Money the brand sent to the platform's bank account becomes the brand's funding balance.

    The booking is keyed by the account it arrived on and the bank's reference for it, and not by
    the brand: the same statement line booked twice counts once, whoever it is booked for, and a
    reference on one account never blocks the same reference on another.
    """
    account = (receiving_account or settings.PAYOUT_DEBTOR_IBAN or "platform").replace(" ", "").upper()
    with transaction.atomic(durable=True):
        return transfer_post(
            source=platform_bank(currency=currency, livemode=brand.livemode),
            destination=brand_funding_account(brand=brand, currency=currency),
            amount=amount,
            reason="deposit",
            idempotency_key=f"deposit:{account}:{currency}:{bank_reference}",
            reference=f"brand:{brand.pk}",
            description=f"Bank deposit {bank_reference}",
        )


def campaign_budget_account(*, campaign: Campaign) -> Account:
    return account_get_or_create(
        kind=AccountKind.CAMPAIGN_BUDGET,
        currency=campaign.currency,
        brand_id=campaign.brand_id,
        subject=campaign.budget_subject,
        name=f"{campaign.name} budget",
    )


def campaign_budget_leg(*, campaign: Campaign) -> Account:
    """The campaign's budget account as a posting's or a hold's leg: its id and terms, looked up
    once per process (ledger.account_for), since every reward and hold of the campaign names it.
    Its balance is as it was first read: the ledger locks and reads the row afresh to post."""
    return account_for(
        kind=AccountKind.CAMPAIGN_BUDGET,
        currency=campaign.currency,
        brand_id=campaign.brand_id,
        subject=campaign.budget_subject,
        name=f"{campaign.name} budget",
    )


def brand_topup_sandbox(*, brand: Brand, amount: int, currency: str) -> None:
    """In the sandbox, a top up is the brand's transfer arriving at the sandbox bank: the bank
    reports it and its feed books it, as a real transfer would be (SANDBOX_BANK_TRANSFER, a dotted
    path into the payouts app, which campaigns may not import). A test twin's top up is the sandbox
    bank's test account receiving play money, on any deployment (SANDBOX_TEST_FUNDS)."""
    if not brand.livemode:
        import_string(settings.SANDBOX_TEST_FUNDS)(brand=brand, amount=amount)
        return
    if not settings.SANDBOX or sandbox_bank_live_refusal():
        raise CampaignError(
            gettext("Top ups are simulated only in the sandbox; send a bank transfer instead.")
        )
    if amount <= 0:
        raise CampaignError(gettext("A top up must be more than zero."))
    try:
        brand_money_allowed_check(brand=brand)
    except BrandNotVerified as refused:
        raise CampaignError(str(refused)) from None
    if currency != "EUR":
        raise CampaignError(gettext("The sandbox bank keeps a euro account only."))
    import_string(settings.SANDBOX_BANK_TRANSFER)(brand=brand, amount=amount)


def campaign_fund(*, campaign: Campaign, amount: int, idempotency_key: str | None = None) -> Transaction:
    """Move money from the brand's funding balance into the campaign's budget."""
    if campaign.status == CampaignStatus.ENDED:
        raise CampaignError(gettext("An ended campaign cannot be funded."))
    if amount <= 0:
        raise CampaignError(gettext("The amount must be more than zero."))
    try:
        brand_money_allowed_check(brand=campaign.brand)
    except BrandNotVerified as refused:
        raise CampaignError(str(refused)) from None
    with transaction.atomic(durable=True):
        transaction.on_commit(lambda: landing_cache_clear(campaign=campaign))
        try:
            return transfer_post(
                source=brand_funding_account(brand=campaign.brand, currency=campaign.currency),
                destination=campaign_budget_account(campaign=campaign),
                amount=amount,
                reason="campaign_funding",
                idempotency_key=idempotency_key,
                reference=campaign.budget_subject,
                description=f"Funding for {campaign.name}",
            )
        except InsufficientFunds:
            raise CampaignError(
                gettext(
                    "The brand's funding balance is too low for this amount; "
                    "top up or send a bank transfer first."
                )
            ) from None
