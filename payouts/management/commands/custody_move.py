"""Move what the platform still holds for brands to their own balance accounts at the provider.
Two staff members: one asks for a brand's move with the amount it shows, a second confirms it and
the money moves (joyback.users.four_eyes; the same person, or someone either set up lately, is
refused).

    manage.py custody_move                                    # what would move, per brand
    manage.py custody_move --brand acme --request --staff a@joyback.example --code 123456  # asks
    manage.py custody_move --confirm 12 --staff b@joyback.example --code 654321            # confirms, moves
    manage.py custody_move --execute 12       # a confirmed move whose answer was lost, sent again

Funding by payment reference to the platform's bank account is retired: a brand with its own
balance account funds only through its virtual IBAN, and what the platform held for it before is
moved here (payouts.funding.custody). Safe to run again; a brand not yet onboarded at the provider
is skipped and said so.

Whoever runs the command is not who it names: each half takes the named staff member's current code
from their authenticator app (--code), so one person at the server cannot ask in one colleague's
name and confirm in another's.
"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from campaigns.models import Brand
from joyback.mfa import second_factor_code_valid
from joyback.money import money_format
from joyback.users.four_eyes import SecondPersonRefused
from payouts.funding.custody import (
    CustodyMove,
    CustodyMoveRefused,
    custody_move,
    custody_move_confirm,
    custody_move_plan,
    custody_move_request,
)


class Command(BaseCommand):
    help = (
        "Move what the platform holds for brands to their own balance accounts: one staff member "
        "asks (--request), a second confirms (--confirm); without either, only say what would move."
    )

    def add_arguments(self, parser):
        parser.add_argument("--brand", help="only this brand (its slug)")
        parser.add_argument("--staff", help="the staff member asking or confirming (their email)")
        parser.add_argument("--code", help="the code the staff member's authenticator app shows now")
        parser.add_argument("--request", action="store_true", help="ask for the brand's move (--brand)")
        parser.add_argument("--confirm", type=int, help="confirm the move asked for as this grant, and move")
        parser.add_argument("--execute", type=int, help="send a confirmed move again (a lost answer)")

    def handle(
        self, *args, brand=None, staff=None, code=None, request=False, confirm=None, execute=None, **options
    ):
        try:
            if request:
                found = self._brand(brand)
                grant = custody_move_request(actor=self._staff(staff, code), brand=found)
                self.stdout.write(
                    f"{found.slug}: move asked for as {grant.pk} ({grant.value}); a second staff member "
                    f"confirms it with --confirm {grant.pk}"
                )
                return
            if confirm is not None:
                self._said(custody_move_confirm(grant_id=confirm, actor=self._staff(staff, code)), moved=True)
                return
            if execute is not None:
                self._said(custody_move(grant_id=execute), moved=True)
                return
        except (CustodyMoveRefused, SecondPersonRefused) as refused:
            raise CommandError(str(getattr(refused, "message", refused))) from None
        brands = Brand.objects.filter(livemode=True).order_by("pk")
        if brand:
            brands = brands.filter(slug=brand)
        for found in brands:
            try:
                self._said(custody_move_plan(brand=found), moved=False)
            except CustodyMoveRefused as refused:
                self.stdout.write(f"{found.slug}: skipped, {refused}")

    def _brand(self, slug) -> Brand:
        found = Brand.objects.filter(livemode=True, slug=slug or "").first()
        if found is None:
            raise CommandError("--request needs --brand, the slug of a live brand")
        return found

    def _staff(self, email, code):
        user = (
            get_user_model().objects.filter(email__iexact=email or "", is_active=True, is_staff=True).first()
        )
        if user is None:
            raise CommandError("--staff must be the email of an active staff member")
        if not second_factor_code_valid(user=user, code=code):
            raise CommandError(
                "--code must be the code the staff member's authenticator app shows now: the one named "
                "asks or confirms, not whoever runs the command"
            )
        return user

    def _said(self, move: CustodyMove, *, moved: bool) -> None:
        amount = money_format(move.amount, move.currency, "en")
        slug = move.brand.slug
        if move.amount <= 0:
            self.stdout.write(f"{slug}: nothing held for it" + (f" ({move.outcome})" if move.outcome else ""))
        elif moved:
            self.stdout.write(
                f"{slug}: moved {amount} to {move.balance_account_id} "
                f"(transfer {move.transfer_id}, {move.outcome})"
            )
        else:
            self.stdout.write(f"{slug}: would move {amount} to {move.balance_account_id}")
