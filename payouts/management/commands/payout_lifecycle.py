from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from payouts.models.transitions import lifecycle_readme


class Command(BaseCommand):
    help = (
        "Write README.md's payout-state diagram from the declared transition table (--check: only compare)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--check", action="store_true", help="fail when README.md differs from the table")

    def handle(self, *args, check=False, **options):
        readme = Path(__file__).resolve().parents[3] / "README.md"
        text = readme.read_text()
        written = lifecycle_readme(text)
        if written == text:
            self.stdout.write("README.md's payout states match the table.")
        elif check:
            raise CommandError(
                "README.md's payout states differ from payouts/models/transitions.py: run payout_lifecycle."
            )
        else:
            readme.write_text(written)
            self.stdout.write("README.md's payout states written from the table.")
