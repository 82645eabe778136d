"""Move what the platform still holds for brands to their own balance accounts at the provider.

    manage.py custody_move              # what would move, per brand (nothing moves)
    manage.py custody_move --execute    # move it: one internal transfer per brand and currency
    manage.py custody_move --brand acme --execute

Funding by payment reference to the platform's bank account is retired: a brand with its own
balance account funds only through its virtual IBAN, and what the platform held for it before is
moved here (payouts.funding.custody). Safe to run again; a brand not yet onboarded at the provider
is skipped and said so.
"""

from django.core.management.base import BaseCommand

from campaigns.models import Brand
from joyback.money import money_format
from payouts.funding.custody import CustodyMoveRefused, custody_move, custody_move_plan


class Command(BaseCommand):
    help = "Move what the platform holds for brands to their own balance accounts (dry run unless --execute)."

    def add_arguments(self, parser):
        parser.add_argument("--brand", help="only this brand (its slug)")
        parser.add_argument("--execute", action="store_true", help="move the money (else: only say what)")

    def handle(self, *args, brand=None, execute=False, **options):
        brands = Brand.objects.filter(livemode=True).order_by("pk")
        if brand:
            brands = brands.filter(slug=brand)
        for found in brands:
            try:
                move = custody_move(brand=found) if execute else custody_move_plan(brand=found)
            except CustodyMoveRefused as refused:
                self.stdout.write(f"{found.slug}: skipped, {refused}")
                continue
            amount = money_format(move.amount, move.currency, "en")
            if move.amount <= 0:
                self.stdout.write(f"{found.slug}: nothing held for it")
            elif execute:
                self.stdout.write(
                    f"{found.slug}: moved {amount} to {move.balance_account_id} "
                    f"(transfer {move.transfer_id}, {move.outcome})"
                )
            else:
                self.stdout.write(f"{found.slug}: would move {amount} to {move.balance_account_id}")
