"""The test-mode bank, as the rest of the app reaches it.

In production the sandbox bank (payouts.sandbox) is the bank of every brand's test data: a test
brand's payouts, deposits and play money go to it in-process, never to a real bank. This module is
the one door into it from production code (an import contract in pyproject.toml holds that): the
provider port (payouts.psp) routes a test brand's requests to its transport, the URLconf mounts its
views, and everything else asks this module.
"""

from payouts.funding.onboarding import brand_custody_check
from payouts.funding.selectors import brand_balance_account_id, virtual_account_for_brand
from payouts.sandbox.bank import payment_return
from payouts.sandbox.bank import webhooks_deliver as payment_webhooks_deliver
from payouts.sandbox.funding import (
    TEST_ACCOUNT_IBAN,
    PlayMoneyRefused,
    deposit_simulate,
    funding_webhooks_deliver,
    play_money_add,
)
from payouts.sandbox.onboarding import documents_give, legal_entity_decide

__all__ = [
    "TEST_ACCOUNT_IBAN",
    "PlayMoneyRefused",
    "brand_transfer_arrive",
    "deposit_simulate",
    "documents_give",
    "funding_webhooks_deliver",
    "legal_entity_decide",
    "payment_return",
    "play_money_add",
    "webhooks_deliver",
]


def brand_transfer_arrive(*, brand, amount: int) -> None:
    """The sandbox's top up (SANDBOX_BANK_TRANSFER): the brand's bank sends the money to the brand's
    own virtual IBAN, and the provider's signed webhooks report it (the standing worker's pass, done
    at once here). A brand without its own account there has no top up: its money moves nowhere
    (brand_money_allowed_check refused it before this)."""
    from payouts.submission.webhooks import (
        transfer_events_process,
    )  # deferred: the lifecycle imports this door

    if not brand_balance_account_id(brand=brand):
        brand_custody_check(brand=brand)  # says why the brand's money may not move yet
    account = virtual_account_for_brand(brand=brand, currency=brand.default_currency)
    deposit_simulate(iban=account.iban, amount=amount, payer_name=brand.legal_name or brand.name)
    funding_webhooks_deliver()
    transfer_events_process()


def webhooks_deliver() -> int:
    """Every webhook the test-mode bank owes, as its provider would send them: what arrived on the
    brands' virtual accounts (and their sweeps) first, then the payouts' transfer statuses."""
    funding_webhooks_deliver()
    return payment_webhooks_deliver()
