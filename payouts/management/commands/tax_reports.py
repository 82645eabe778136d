"""A year's tax reports from the ledger: the DAC7 file, the UK's, the 1099-NEC, and each person's
statement.

    manage.py tax_reports --year 2026                     # make (or make again) the year's drafts
    manage.py tax_reports --year 2026 --out tmp/tax       # and write the files and statements there
    manage.py tax_reports --year 2026 --jurisdiction uk

Each report is checked before it is stored (the DPI files against the OECD schema, the 1099 file
against Publication 1220's layout) and reconciled with the ledger; the command fails when a report
does not reconcile. A filed report is never made again (correct it on the staff page).
"""

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from joyback.money import money_format
from payouts.taxreports.records import Jurisdiction
from payouts.taxreports.selectors import platform_operator
from payouts.taxreports.services import TaxReportRefused, tax_report_generate, tax_statement_rows
from payouts.taxreports.statement import statement_pdf


def _money(totals: dict) -> str:
    return (
        ", ".join(money_format(amount, currency, "en") for currency, amount in sorted(totals.items())) or "0"
    )


class Command(BaseCommand):
    help = "Make a year's tax reports from the ledger, check and reconcile them."

    def add_arguments(self, parser):
        parser.add_argument("--year", type=int, required=True)
        parser.add_argument("--jurisdiction", choices=Jurisdiction.ALL, help="only this report")
        parser.add_argument("--out", help="a folder to write the files and the statements to")
        parser.add_argument("--by", help="the staff member's email the reports are made by (recorded)")

    def handle(self, *args, year, jurisdiction=None, out=None, by=None, **options):
        actor = get_user_model().objects.get(email=by) if by else None
        folder = Path(out) if out else None
        unreconciled = []
        for place in [jurisdiction] if jurisdiction else Jurisdiction.ALL:
            try:
                report = tax_report_generate(jurisdiction=place, year=year, actor=actor)
            except TaxReportRefused as refused:
                self.stdout.write(f"{place} {year}: not made, {refused.message}")
                continue
            rows = list(report.rows.all())
            missing = [row for row in rows if row.missing]
            reconciled = report.totals == report.ledger_totals
            self.stdout.write(
                f"{place} {year}: in the file {len(rows) - len(missing)}, "
                f"missing details {len(missing)}; "
                f"report {_money(report.totals)}, ledger {_money(report.ledger_totals)}: "
                + ("reconciled" if reconciled else "DIFFERENT")
            )
            if not reconciled:
                unreconciled.append(place)
            if folder is None:
                continue
            folder.mkdir(parents=True, exist_ok=True)
            (folder / report.file_name).write_text(report.file, encoding="utf-8")
            operator = platform_operator()
            for row in tax_statement_rows(report):
                pdf = statement_pdf(row=row, operator=operator, jurisdiction=place, year=year)
                (folder / f"statement-{place}-{year}-{row.seller.key}.pdf").write_bytes(pdf)
        if unreconciled:
            raise CommandError(f"not reconciled with the ledger: {', '.join(unreconciled)}")
