"""make run's demo: the demo brand's money reaches the ledger through its virtual IBAN and the
provider's signed webhooks, as a real transfer would, and the bank's drop folder is read by the
statements_import command."""

import pytest
from django.core.management import call_command

from campaigns.models import Brand, Campaign
from joyback.ledger.models import Account, AccountKind
from payouts.models import ProviderDeposit, ProviderOnboarding, StatementImport, TransferEvent, VirtualAccount
from payouts.reconciliation.references import brand_deposit_reference
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
    assert Account.objects.get(kind=AccountKind.BRAND_FUNDING, brand_id=alpaca.pk).balance == 55_00
