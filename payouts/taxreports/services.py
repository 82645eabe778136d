"""The reports' writes: make a year's report from the ledger, correct a person's row, mark a report
filed and have a second staff member confirm it. Each write is one transaction with its record in
the admin's history (LogEntry), and a file is stored only once the schema (or the record layout)
accepted it.

A report is one file per jurisdiction and year. While it is a draft it is made again from the
ledger on demand; once filed it never changes: a correction is a new report naming it
(`corrects`), whose rows replace the filed ones by DocRefId (OECD2) or add a person who was
missing (OECD1), and which is filed the same way.
"""

import hashlib
import uuid

from django.contrib.admin.models import CHANGE, LogEntry
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from joyback.users.four_eyes import second_person_refusal
from payouts.models import TaxReport, TaxReportRow
from payouts.models.tax_reports import TaxReportStatus
from payouts.taxreports.dpi import DpiInvalid, dpi_xml
from payouts.taxreports.fire import FireInvalid, fire_file
from payouts.taxreports.records import Jurisdiction, ReportMessage, SellerRow, sellers_merged, tax_identity
from payouts.taxreports.selectors import (
    ledger_paid_totals,
    operator_missing,
    platform_operator,
    seller_from_json,
    seller_json,
    tax_year_rows,
)


class TaxReportRefused(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def _record(*, actor, report, message: str) -> None:
    if actor is None:  # made by the scheduled command: the report's own columns say when
        return
    LogEntry.objects.log_actions(
        user_id=actor.pk,
        queryset=[report],
        action_flag=CHANGE,
        change_message=message,
        single_object=True,
    )


def _message_ref_id(*, jurisdiction: str, year: int, operator) -> str:
    unique = uuid.uuid4().hex
    if jurisdiction == Jurisdiction.UK:
        # HMRC's own service names messages GB<year>GB-<platform operator ID>-<unique>.
        return f"GB{year}GB-{operator.hmrc_operator_id}-{unique}"
    country = operator.country
    return f"{country}{year}{country}-JOYBACK-{jurisdiction.upper()}-{unique}"


def _row_record(row: TaxReportRow) -> SellerRow:
    corrected = row.corrects
    return SellerRow(
        seller=seller_from_json(row.seller),
        currency=row.currency,
        consideration=tuple(row.consideration),
        fees=tuple(row.fees),
        activities=tuple(row.activities),
        doc_ref_id=row.doc_ref_id,
        doc_type=row.doc_type,
        corr_doc_ref_id=corrected.doc_ref_id if corrected else "",
        corr_message_ref_id=corrected.report.message_ref_id if corrected else "",
    )


def tax_statement_rows(report: TaxReport) -> list[SellerRow]:
    """Each person's row as their statement shows it (people with missing details included), one
    statement per person however many brands paid them."""
    return sellers_merged(
        [_row_record(row) for row in report.rows.select_related("corrects__report").order_by("id")]
    )


def tax_report_message(report: TaxReport) -> ReportMessage:
    """The report as the writers take it: only rows with everything the law asks for."""
    rows = report.rows.select_related("corrects__report").filter(missing="").order_by("id")
    return ReportMessage(
        jurisdiction=report.jurisdiction,
        year=report.year,
        operator=platform_operator(),
        message_ref_id=report.message_ref_id,
        timestamp=timezone.now(),
        operator_doc_ref_id=report.operator_doc_ref_id,
        rows=tuple(sellers_merged([_row_record(row) for row in rows])),
        correction=report.corrects_id is not None,
    )


def _file_write(report: TaxReport) -> None:
    """Writes the report's file, or refuses with the schema's reasons (nothing is stored then)."""
    operator = platform_operator()
    missing = operator_missing(operator, jurisdiction=report.jurisdiction)
    if missing:
        raise TaxReportRefused(
            _("The platform's own details are missing for this report: %(names)s.")
            % {"names": ", ".join(missing)}
        )
    message = tax_report_message(report)
    try:
        if report.jurisdiction == Jurisdiction.US:
            content = fire_file(message=message).decode("ascii")
            name = f"IRS-1099NEC-{report.year}-{report.pk}.txt"
        else:
            content = dpi_xml(message=message).decode("utf-8")
            name = f"{report.message_ref_id}.xml"
    except (DpiInvalid, FireInvalid) as error:
        raise TaxReportRefused(
            _("The file would not be accepted, so none was made: %(reason)s") % {"reason": str(error)[:500]}
        ) from error
    report.file = content
    report.file_name = name
    report.file_sha256 = hashlib.sha256(content.encode()).hexdigest()
    report.totals = _totals(report.rows.filter(missing=""))
    report.save(update_fields=["file", "file_name", "file_sha256", "totals"])


def _totals(rows) -> dict:
    totals: dict[str, int] = {}
    for currency, total in rows.values_list("currency", "total"):
        totals[currency] = totals.get(currency, 0) + total
    return totals


def tax_report_generate(*, jurisdiction: str, year: int, actor) -> TaxReport:
    """The year's report for a jurisdiction, made from the ledger (again, while it is a draft)."""
    if jurisdiction not in Jurisdiction.ALL:
        raise TaxReportRefused(_("There is no report for %(name)s.") % {"name": jurisdiction})
    with transaction.atomic(durable=True):
        report = (
            TaxReport.objects.select_for_update()
            .filter(jurisdiction=jurisdiction, year=year, corrects__isnull=True)
            .first()
        )
        if report is not None and report.status != TaxReportStatus.DRAFT:
            raise TaxReportRefused(
                _("The %(year)s report was filed: it is not made again. Correct a person's row instead.")
                % {"year": year}
            )
        operator = platform_operator()
        if report is None:
            message_ref_id = _message_ref_id(jurisdiction=jurisdiction, year=year, operator=operator)
            try:
                with transaction.atomic():
                    report = TaxReport.objects.create(
                        jurisdiction=jurisdiction,
                        year=year,
                        message_ref_id=message_ref_id,
                        operator_doc_ref_id=f"{message_ref_id}_PO",
                    )
            except IntegrityError:
                # Another staff member's first run of the same year committed first (the unique
                # constraint is the arbiter): theirs stands, this one changes nothing.
                raise TaxReportRefused(
                    _("This report is being made by someone else right now: open it in a moment.")
                ) from None
        else:
            report.rows.all().delete()
        people = tax_year_rows(year=year, jurisdiction=jurisdiction)
        ledger: dict[str, int] = {}
        booked = ledger_paid_totals(year=year)
        for number, person in enumerate(people, start=1):
            TaxReportRow.objects.create(
                report=report,
                participant_id=person.participant_id,
                brand_id=person.brand_id,
                currency=person.currency,
                consideration=person.consideration,
                fees=person.fees,
                activities=person.activities,
                total=person.total,
                seller=seller_json(person.seller),
                missing=",".join(person.missing),
                doc_ref_id=f"{report.message_ref_id}_{number:06d}",
            )
            if not person.missing:  # a row left out of the file is reconciled when it is filed
                ledger[person.currency] = ledger.get(person.currency, 0) + sum(
                    booked[reward_id] for reward_id in person.reward_ids
                )
        report.generated_by = actor
        report.generated_at = timezone.now()
        report.ledger_totals = ledger
        report.save(update_fields=["generated_by", "generated_at", "ledger_totals"])
        _file_write(report)
        _record(
            actor=actor,
            report=report,
            message=f"Made from the ledger: {len(people)} people, totals {report.totals}, ledger {ledger}.",
        )
    return report


def tax_row_correct(*, row: TaxReportRow, changes: dict, reason: str, actor) -> TaxReportRow:
    """A person's details corrected by staff. In a draft the row changes; in a filed report a
    correction report gets a row that replaces it (OECD2, naming the filed row's DocRefId), or,
    for a person who was left out for missing details, a new row (OECD1)."""
    reason = (reason or "").strip()[:300]
    if not reason:
        raise TaxReportRefused(_("Say why the row is corrected: it is recorded with your name."))
    allowed = {"first_name", "last_name", "tin", "tin_country", "birth_date", "iban", "residence", "address"}
    unknown = set(changes) - allowed
    if unknown:
        raise TaxReportRefused(
            _("These cannot be corrected here: %(names)s.") % {"names": ", ".join(sorted(unknown))}
        )
    with transaction.atomic(durable=True):
        row = TaxReportRow.objects.select_for_update().select_related("report").get(pk=row.pk)
        seller = seller_from_json(row.seller)
        corrected = seller.__class__(**{**seller.__dict__, **changes})
        missing = ",".join(corrected.missing(jurisdiction=row.report.jurisdiction))
        original = row.report
        if original.status == TaxReportStatus.DRAFT:
            row.seller = seller_json(corrected)
            row.missing = missing
            row.corrected_by = actor
            row.correction_reason = reason
            row.save(update_fields=["seller", "missing", "corrected_by", "correction_reason"])
            _file_write(original)
            _record(actor=actor, report=original, message=f"Row {row.doc_ref_id} corrected. Reason: {reason}")
            return row
        if original.status != TaxReportStatus.FILED:
            raise TaxReportRefused(_("Wait until the filing is confirmed, then correct the row."))
        root = original.corrects or original
        correction = TaxReport.objects.filter(corrects=root).exclude(status=TaxReportStatus.FILED).first()
        if correction is None:
            operator = platform_operator()
            message_ref_id = _message_ref_id(
                jurisdiction=root.jurisdiction, year=root.year, operator=operator
            )
            correction = TaxReport.objects.create(
                jurisdiction=root.jurisdiction,
                year=root.year,
                corrects=root,
                message_ref_id=message_ref_id,
                operator_doc_ref_id=root.operator_doc_ref_id,
                generated_by=actor,
                generated_at=timezone.now(),
            )
        elif correction.status != TaxReportStatus.DRAFT:
            raise TaxReportRefused(
                _("The open correction is being filed; correct the row after it is confirmed.")
            )
        was_filed = not row.missing  # a row left out was never sent: it goes as new data
        members = [row]
        if was_filed and tax_identity(seller) is not None:
            # The person was filed as one seller summed over the brands that paid them: the
            # correction replaces that seller whole, so every row it was summed from is corrected.
            members = [
                other
                for other in original.rows.filter(currency=row.currency, missing="").order_by("id")
                if tax_identity(seller_from_json(other.seller)) == tax_identity(seller)
            ]
        own = {key: value for key, value in changes.items() if key != "iban"}
        new = None
        for member in members:
            member_seller = seller_from_json(member.seller)
            fixed = (
                corrected
                if member.pk == row.pk
                else member_seller.__class__(**{**member_seller.__dict__, **own})
            )
            values = {
                "seller": seller_json(fixed),
                "missing": ",".join(fixed.missing(jurisdiction=original.jurisdiction)),
                "corrected_by": actor,
                "correction_reason": reason,
            }
            existing = TaxReportRow.objects.filter(
                report=correction, participant_id=member.participant_id, currency=member.currency
            ).first()
            if existing is not None:  # corrected again before the correction is filed
                for name, value in values.items():
                    setattr(existing, name, value)
                existing.save(update_fields=list(values))
                made = existing
            else:
                number = TaxReportRow.objects.filter(report=correction).count() + 1
                made = TaxReportRow.objects.create(
                    report=correction,
                    participant_id=member.participant_id,
                    brand_id=member.brand_id,
                    currency=member.currency,
                    consideration=member.consideration,
                    fees=member.fees,
                    activities=member.activities,
                    total=member.total,
                    doc_ref_id=f"{correction.message_ref_id}_{number:06d}",
                    doc_type="OECD2" if was_filed else "OECD1",
                    corrects=member if was_filed else None,
                    **values,
                )
            if member.pk == row.pk:
                new = made
        _file_write(correction)
        _record(
            actor=actor,
            report=correction,
            message=f"Row {row.doc_ref_id} of report #{original.pk} corrected as {new.doc_ref_id} "
            f"({new.doc_type}). Reason: {reason}",
        )
        return new


def tax_report_mark_filed(*, report: TaxReport, reference: str, actor) -> TaxReport:
    """One staff member says the file was filed, with the authority's reference."""
    reference = (reference or "").strip()[:100]
    if not reference:
        raise TaxReportRefused(_("Give the reference the tax authority gave the filing."))
    with transaction.atomic(durable=True):
        report = TaxReport.objects.select_for_update().get(pk=report.pk)
        if report.status != TaxReportStatus.DRAFT:
            raise TaxReportRefused(_("This report is already marked filed."))
        if not report.file:
            raise TaxReportRefused(_("There is no valid file to file yet."))
        if report.totals != report.ledger_totals and report.corrects_id is None:
            raise TaxReportRefused(_("The report's totals differ from the ledger's: it cannot be filed."))
        report.status = TaxReportStatus.FILING
        report.filing_reference = reference
        report.filed_by = actor
        report.filed_at = timezone.now()
        report.save(update_fields=["status", "filing_reference", "filed_by", "filed_at"])
        _record(actor=actor, report=report, message=f"Marked filed, reference {reference}.")
    return report


def tax_report_confirm_filed(*, report: TaxReport, actor) -> TaxReport:
    """A second staff member confirms the filing; until then the report is not filed."""
    with transaction.atomic(durable=True):
        report = (
            TaxReport.objects.select_for_update(of=("self",)).select_related("filed_by").get(pk=report.pk)
        )
        if report.status != TaxReportStatus.FILING:
            raise TaxReportRefused(_("Only a report marked filed can be confirmed."))
        refusal = second_person_refusal(first=report.filed_by, second=actor)
        if refusal:
            raise TaxReportRefused(refusal)
        report.status = TaxReportStatus.FILED
        report.filing_confirmed_by = actor
        report.filing_confirmed_at = timezone.now()
        report.save(update_fields=["status", "filing_confirmed_by", "filing_confirmed_at"])
        _record(actor=actor, report=report, message=f"Filing {report.filing_reference} confirmed.")
    return report
