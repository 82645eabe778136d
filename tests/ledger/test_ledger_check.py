"""`manage.py ledger_check` proves every stored balance against its entries."""

import pytest
from django.core.management import CommandError, call_command

from joyback.ledger.models import Account
from joyback.ledger.services import transfer_post

pytestmark = pytest.mark.django_db


def test_a_consistent_ledger_passes(capsys, bank, funding):
    transfer_post(source=bank, destination=funding, amount=50_00, reason="deposit")

    call_command("ledger_check")

    assert "no drift" in capsys.readouterr().out


def test_a_tampered_balance_is_reported_and_fails(capsys, bank, funding):
    transfer_post(source=bank, destination=funding, amount=50_00, reason="deposit")
    Account.objects.filter(pk=funding.pk).update(balance=60_00)

    with pytest.raises(CommandError, match="1 drift"):
        call_command("ledger_check")

    assert f"balance of account #{funding.pk}: stored 6000, entries say 5000" in capsys.readouterr().err
