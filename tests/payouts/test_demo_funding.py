"""make run's demo: the demo brand's money reaches the ledger through its virtual IBAN and the
provider's signed webhooks, as a real transfer would, and the bank's drop folder is read by the
statements_import command."""

from io import StringIO

import pytest
from django.core.management import call_command

from campaigns.management.commands.demo_seed import ADMIN_EMAIL, STAFF_EMAIL, demo_logins
from campaigns.models import Brand, Campaign, FeePlan, Invoice
from joyback.ledger.models import Account, AccountKind
from payouts.models import (
    FeeTransfer,
    ProviderDeposit,
    ProviderOnboarding,
    ReconciliationException,
    SandboxBalanceAccount,
    StatementImport,
    TransferEvent,
    VirtualAccount,
)
from payouts.reconciliation.references import brand_deposit_reference
from payouts.sandbox.bank import sandbox_balance
from tests.payouts.camt_fixtures import Ntry, camt054

pytestmark = pytest.mark.django_db


def test_the_demo_brand_is_funded_through_its_virtual_iban_by_the_providers_webhooks():
    call_command("demo_seed")
    assert not Account.objects.filter(kind=AccountKind.PLATFORM_BANK).exists()

    call_command("demo_funding")
    call_command("demo_funding")  # again: nothing more arrives or books

    brand = Brand.objects.get(slug="demo")
    deposit = ProviderDeposit.objects.get()
    assert (deposit.brand, deposit.amount, deposit.status) == (brand, 10_000_00, "booked")
    assert VirtualAccount.objects.get(brand=brand).iban.startswith("DE")
    assert {"kept received", "deposit_booked", "onboarding_verified"} <= set(
        TransferEvent.objects.values_list("outcome", flat=True)
    )
    # Onboarded at the provider as its own legal entity and account holder, verified there, and
    # its money stays on its own balance account: nothing on the platform's.
    assert ProviderOnboarding.objects.get(brand=brand).allowed
    assert Account.objects.get(kind=AccountKind.BRAND_BALANCE, brand_id=brand.pk).balance == 10_000_00
    platform = [AccountKind.PLATFORM_BANK, AccountKind.PROVIDER_BALANCE]
    assert not Account.objects.filter(kind__in=platform).exists()
    assert set(Campaign.objects.filter(brand=brand).values_list("status", flat=True)) == {"live"}
    call_command("ledger_check")


def test_statements_import_reads_the_banks_folder(alpaca, tmp_path):
    reference = brand_deposit_reference(alpaca)
    (tmp_path / "day-1.xml").write_bytes(
        camt054([Ntry(amount=55_00, credit=True, ref="F1", remittance=reference)])
    )

    call_command("statements_import", str(tmp_path))
    call_command("statements_import", str(tmp_path))

    assert list(StatementImport.objects.order_by("pk").values_list("source", "new_lines")) == [
        ("folder", 1),
        ("folder", 0),
    ]
    # Alpaca's reference on the platform's account: one exception for staff, never its funding.
    assert ReconciliationException.objects.filter(line__entry_ref="F1").count() == 1
    assert not Account.objects.filter(
        kind=AccountKind.BRAND_FUNDING, brand_id=alpaca.pk, balance__gt=0
    ).exists()


def test_the_demo_brand_pays_the_platforms_fee_from_its_own_account_and_has_its_invoice():
    for step in ("demo_seed", "demo_funding", "demo_payouts", "demo_fees", "demo_seed", "demo_fees"):
        call_command(step, stdout=StringIO())

    brand = Brand.objects.get(slug="demo")
    plan = FeePlan.objects.get(brand=brand)
    # Asked for by the admin, confirmed by the second staff member: never the same person.
    assert (plan.changed_by.email, plan.approved_by.email) == (ADMIN_EMAIL, STAFF_EMAIL)
    assert STAFF_EMAIL in demo_logins()
    (fee_transfer,) = FeeTransfer.objects.filter(brand=brand)
    assert fee_transfer.status == "booked" and fee_transfer.amount > 0
    invoice = Invoice.objects.get(brand=brand)
    # The fees and the invoice's VAT leave the brand's account in the one transfer, both paid.
    assert invoice.net + invoice.vat == fee_transfer.amount and invoice.vat > 0
    account = VirtualAccount.objects.get(brand=brand)
    at_provider = sandbox_balance(SandboxBalanceAccount.objects.get(account_id=account.balance_account_id))
    assert Account.objects.get(kind=AccountKind.BRAND_BALANCE, brand_id=brand.pk).balance == at_provider
    call_command("ledger_check")
