"""`manage.py migrate`, one machine at a time: every container runs it on start, and the first to
take the database's advisory lock migrates while the others wait, then find nothing left to do.

The lock is a session lock on a connection of its own to the primary (DATABASE_URL must name
the primary itself, not a transaction-mode pooler, where a session lock would not hold)."""

import time

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from joyback import sql

# Any fixed number: the same for every machine of an installation, used for nothing else.
MIGRATE_LOCK = 0x4A6F794261636B  # "JoyBack"


class Command(BaseCommand):
    help = "Apply the migrations, one machine at a time (a PostgreSQL advisory lock)."

    def add_arguments(self, parser):
        parser.add_argument("--no-input", "--noinput", action="store_false", dest="interactive")
        parser.add_argument(
            "--wait", type=float, default=600, help="seconds to wait for another machine's migrations (600)"
        )

    def handle(self, *args, interactive=False, wait=600, **options):
        deadline = time.monotonic() + wait
        while not sql.advisory_lock_try(MIGRATE_LOCK):
            if time.monotonic() > deadline:
                raise CommandError(f"another machine held the migration lock for more than {wait:g} s")
            self.stdout.write("another machine is migrating; waiting")
            time.sleep(1)
        try:
            call_command("migrate", interactive=False, verbosity=options["verbosity"])
        finally:
            sql.advisory_unlock(MIGRATE_LOCK)
