"""Play money for a brand's test data: the sandbox bank's own account for test mode.

"Add test funds" asks the sandbox bank to receive a transfer for the brand's test twin. The bank
answers as a bank does, with a camt.054 credit notification, signed with its key; the ledger books
the deposit from that message alone, to the test-mode platform bank. So even play money moves only
on the bank's word, and none of it passes through the live bank channel (its statements, drift and
reconciliation never see it).
"""

import hashlib
import hmac
import secrets

from django.utils import timezone
from django.utils.translation import gettext as _

from campaigns.models import Brand
from campaigns.services.refusals import CampaignError
from joyback.ledger.models import Transaction
from payouts.funding.deposits import brand_deposit_book
from payouts.iso20022.camt import camt_read
from payouts.iso20022.camt054 import camt054_xml
from payouts.iso20022.types import Entry, EntryDetail, Iso20022Error, SchemaError
from payouts.reconciliation.references import brand_deposit_reference, brand_for_reference

# The sandbox bank's account that test-mode money arrives on (a valid IBAN the live bank never has).
TEST_ACCOUNT_IBAN = "DE89370400440532013000"
TEST_FUNDS_MAX = 1_000_000_00  # play money still has a sensible ceiling per transfer


class SandboxFundsRefused(CampaignError):
    """Refused play money; a CampaignError, so the dashboard's top up shows its message."""


def _key() -> bytes:
    from payouts.sandbox.bank import sandbox_hmac_key

    return ("test-mode:" + sandbox_hmac_key()).encode()


def sandbox_signature(xml: bytes) -> str:
    return hmac.new(_key(), xml, hashlib.sha256).hexdigest()


def sandbox_test_transfer_notify(*, brand: Brand, amount: int) -> tuple[bytes, str]:
    """The sandbox bank receives a transfer for the brand's test twin and issues what it reports:
    the camt.054 credit notification and its signature."""
    today = timezone.localdate()
    reference = "SBXTEST" + secrets.token_hex(9).upper()
    entry = Entry(
        amount_minor=amount,
        currency=brand.default_currency,
        credit=True,
        booking_date=today,
        value_date=today,
        account_servicer_ref=reference,
        family="RCDT",
        sub_family="ESCT",
        details=(
            EntryDetail(
                end_to_end_id=reference,
                amount_minor=amount,
                remittance=f"{brand.name} {brand_deposit_reference(brand)}",
            ),
        ),
    )
    xml = camt054_xml(
        msg_id="TESTNTF" + secrets.token_hex(8).upper(),
        created_at=timezone.now(),
        account_iban=TEST_ACCOUNT_IBAN,
        account_currency=brand.default_currency,
        entries=[entry],
    )
    return xml, sandbox_signature(xml)


def sandbox_test_notification_book(*, xml: bytes, signature: str) -> list[Transaction]:
    """Book the deposits a signed sandbox-bank notification reports, to test twins only."""
    if not hmac.compare_digest(sandbox_signature(xml), signature or ""):
        raise SandboxFundsRefused(
            _("The notification is not signed by the sandbox bank; nothing was booked.")
        )
    try:
        parsed = camt_read(xml)
    except (Iso20022Error, SchemaError) as error:
        raise SandboxFundsRefused(str(error)) from None
    booked = []
    for block in parsed.statements:
        if block.account.replace(" ", "") != TEST_ACCOUNT_IBAN:
            raise SandboxFundsRefused(_("Test funds arrive only on the sandbox bank's test account."))
        for line in block.lines:
            brand = brand_for_reference(line.reference, livemode=False) if line.credit else None
            if brand is None:
                continue
            booked.append(
                brand_deposit_book(
                    brand=brand,
                    amount=line.amount,
                    currency=line.currency,
                    bank_reference=line.entry_ref or line.end_to_end_id,
                    receiving_account=TEST_ACCOUNT_IBAN,
                )
            )
    return booked


def sandbox_funds_add(*, brand: Brand, amount: int) -> Transaction:
    """The dashboard's "Add test funds": the sandbox bank receives the transfer and reports it."""
    if brand.livemode:
        raise SandboxFundsRefused(_("Test funds go to test data only; switch to test data first."))
    if not 0 < amount <= TEST_FUNDS_MAX:
        raise SandboxFundsRefused(_("Add between 0.01 and 1,000,000.00 of test funds at a time."))
    xml, signature = sandbox_test_transfer_notify(brand=brand, amount=amount)
    (posted,) = sandbox_test_notification_book(xml=xml, signature=signature)
    return posted
