"""Import every camt.053 / camt.054 file in the bank's drop folder as the platform's own statements.

The folder is the bank's channel: only the bank (its file transfer) writes to it. The scheduled
fetch reads BANK_DROP_FOLDER every minute; this command reads a folder now."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from payouts.iso20022.types import SchemaError
from payouts.reconciliation.statement_import import Channel, statement_import_create, statement_import_run


class Command(BaseCommand):
    help = "Import the bank statements (camt.053, camt.054) in a folder; a file seen before adds nothing."

    def add_arguments(self, parser):
        parser.add_argument("folder")

    def handle(self, *args, folder, **options):
        root = Path(folder)
        if not root.is_dir():
            raise CommandError(f"{folder} is not a folder")
        refused = 0
        for path in sorted(p for p in root.iterdir() if p.is_file() and p.suffix.lower() == ".xml"):
            try:
                job = statement_import_create(
                    data=path.read_bytes(), filename=path.name, channel=Channel.FOLDER
                )
            except SchemaError as error:
                self.stderr.write(f"{path.name}: {error}")
                refused += 1
                continue
            if job.status == "queued":  # a large file: run it here rather than wait for a worker
                job = statement_import_run(import_id=job.pk)
            if job.status == "failed":
                self.stderr.write(f"{path.name}: {job.error}")
                refused += 1
            else:
                self.stdout.write(
                    f"{path.name}: {job.new_lines} new lines, {job.matched} matched, "
                    f"{job.exceptions} exceptions, {job.known_lines} already imported"
                )
        if refused:
            raise CommandError(f"{refused} file(s) refused")
