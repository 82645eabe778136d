"""The staff page of the yearly tax reports (Django admin): make a year's reports from the ledger,
review them (totals against the ledger, people missing details), correct a person's row, mark a
report filed with the authority's reference (a second staff member confirms it), download the
file and the people's statements. Every action goes through payouts.taxreports.services, which
records it in the admin's history."""

import io
import zipfile

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path
from django.utils import timezone
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from joyback.admin import admin_money
from payouts.models import TaxReport, TaxReportRow
from payouts.models.tax_reports import TaxJurisdiction, TaxReportStatus
from payouts.taxreports.records import Address, tax_identity
from payouts.taxreports.selectors import platform_operator, seller_from_json
from payouts.taxreports.services import (
    TaxReportRefused,
    tax_report_confirm_filed,
    tax_report_generate,
    tax_report_mark_filed,
    tax_row_correct,
    tax_statement_rows,
)
from payouts.taxreports.statement import statement_pdf

# The words for what a row lacks (records.Seller.missing), as staff read them.
MISSING_LABELS = {
    "name": gettext_lazy("Name"),
    "address": gettext_lazy("Address"),
    "tin": gettext_lazy("Tax identification number"),
    "birth_date": gettext_lazy("Date of birth"),
}


def missing_words(missing: str) -> str:
    return ", ".join(str(MISSING_LABELS.get(name, name)) for name in missing.split(",") if name)


def _money(totals: dict) -> str:
    return ", ".join(admin_money(amount, currency) for currency, amount in sorted(totals.items())) or "-"


def _breakable(text: str):
    # Identifiers of 60 characters and more: on a phone they wrap instead of covering the buttons.
    return format_html('<span style="overflow-wrap: anywhere">{}</span>', text or "-")


class TaxGenerateForm(forms.Form):
    year = forms.IntegerField(label=gettext_lazy("Year"), min_value=2023, max_value=2100)
    jurisdiction = forms.ChoiceField(label=gettext_lazy("Report"), choices=TaxJurisdiction.choices)


class TaxRowCorrectForm(forms.Form):
    first_name = forms.CharField(label=gettext_lazy("First name"), max_length=200)
    last_name = forms.CharField(label=gettext_lazy("Last name"), max_length=200)
    tin = forms.CharField(label=gettext_lazy("Tax identification number"), max_length=200, required=False)
    tin_country = forms.CharField(label=gettext_lazy("Issued by (country)"), max_length=2, required=False)
    birth_date = forms.DateField(label=gettext_lazy("Date of birth"), required=False)
    street = forms.CharField(label=gettext_lazy("Street"), max_length=200, required=False)
    postcode = forms.CharField(label=gettext_lazy("Postcode"), max_length=40, required=False)
    city = forms.CharField(label=gettext_lazy("City"), max_length=200, required=False)
    region = forms.CharField(label=gettext_lazy("State or region"), max_length=40, required=False)
    country = forms.CharField(label=gettext_lazy("Country"), max_length=2)
    iban = forms.CharField(label=gettext_lazy("Bank account"), max_length=200, required=False)
    reason = forms.CharField(label=gettext_lazy("Why (recorded with your name)"), max_length=300)

    def clean_country(self):
        return self.cleaned_data["country"].upper()

    def clean_tin_country(self):
        return self.cleaned_data["tin_country"].upper()


@admin.register(TaxReport)
class TaxReportAdmin(admin.ModelAdmin):
    list_display = [
        "__str__",
        "status",
        "people",
        "missing_details",
        "totals_display",
        "reconciled",
        "filing_reference",
    ]
    list_filter = ["jurisdiction", "year", "status"]
    fields = [
        "jurisdiction",
        "year",
        "corrects",
        "status",
        "message_ref_id_display",
        "file_name",
        "file_sha256_display",
        "totals_display",
        "ledger_display",
        "reconciled",
        "generated_by",
        "generated_at",
        "filing_reference",
        "filed_by",
        "filed_at",
        "filing_confirmed_by",
        "filing_confirmed_at",
    ]
    readonly_fields = fields
    change_form_template = "admin/payouts/taxreport/change_form.html"
    change_list_template = "admin/payouts/taxreport/change_list.html"

    def get_queryset(self, request):
        return super().get_queryset(request).defer("file")

    def has_add_permission(self, request):
        return False  # made from the ledger: "Make a year's reports"

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="MessageRefId")
    def message_ref_id_display(self, report):
        return _breakable(report.message_ref_id)

    @admin.display(description="SHA-256")
    def file_sha256_display(self, report):
        return _breakable(report.file_sha256)

    @admin.display(description=gettext_lazy("People in the file"))
    def people(self, report):
        return report.rows.filter(missing="").count()

    @admin.display(description=gettext_lazy("Missing details"))
    def missing_details(self, report):
        return report.rows.exclude(missing="").count()

    @admin.display(description=gettext_lazy("Total"))
    def totals_display(self, report):
        return _money(report.totals)

    @admin.display(description=gettext_lazy("Ledger"))
    def ledger_display(self, report):
        return _money(report.ledger_totals)

    @admin.display(description=gettext_lazy("Reconciled with the ledger"), boolean=True)
    def reconciled(self, report):
        if report.corrects_id:
            return None
        return report.totals == report.ledger_totals

    def get_urls(self):
        def view(name, function, route):
            return path(route, self.admin_site.admin_view(function), name=f"payouts_taxreport_{name}")

        return [
            view("generate", self.generate_view, "generate/"),
            view("file", self.file_view, "<int:report_id>/file/"),
            view("statements", self.statements_view, "<int:report_id>/statements/"),
            view("filing", require_POST(self.filing_view), "<int:report_id>/filing/"),
            view("correct", self.correct_view, "rows/<int:row_id>/correct/"),
            *super().get_urls(),
        ]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        report = TaxReport.objects.filter(pk=object_id).first()
        rows = []
        if report is not None:
            # Rows of one person paid through several brands are filed as one seller
            # (records.sellers_merged): each row says which rows it is summed with.
            together: dict[tuple, list[str]] = {}
            sellers = []
            for row in report.rows.select_related("corrects").order_by("id"):
                seller = seller_from_json(row.seller)
                identity = tax_identity(seller)
                sellers.append((row, seller, identity))
                if identity and not row.missing:
                    together.setdefault((identity, row.currency, row.doc_type), []).append(row.doc_ref_id)
            for row, seller, identity in sellers:
                group = together.get((identity, row.currency, row.doc_type), []) if identity else []
                rows.append(
                    {
                        "row": row,
                        "name": f"{seller.first_name} {seller.last_name}".strip() or "-",
                        "country": seller.residence or (seller.address.country if seller.address else ""),
                        "quarters": [admin_money(amount, row.currency) for amount in row.consideration],
                        "total": admin_money(row.total, row.currency),
                        "activities": sum(row.activities),
                        "missing": missing_words(row.missing),
                        "together": [ref for ref in group if ref != row.doc_ref_id] if len(group) > 1 else [],
                    }
                )
        context = {
            **(extra_context or {}),
            "tax_rows": rows,
            "can_file": request.user.has_perm("payouts.file_taxreport"),
        }
        return super().change_view(request, object_id, form_url, context)

    def _must(self, request, codename: str):
        if not request.user.has_perm(f"payouts.{codename}"):
            raise PermissionDenied

    def generate_view(self, request):
        self._must(request, "file_taxreport")
        form = TaxGenerateForm(request.POST or None, initial={"year": timezone.now().year - 1})
        if request.method == "POST" and form.is_valid():
            try:
                report = tax_report_generate(
                    jurisdiction=form.cleaned_data["jurisdiction"],
                    year=form.cleaned_data["year"],
                    actor=request.user,
                )
            except TaxReportRefused as refused:
                messages.error(request, refused.message)
            else:
                messages.success(request, _("The report was made from the ledger and its file checked."))
                return redirect("admin:payouts_taxreport_change", report.pk)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "form": form,
            "title": _("Make a year's tax report"),
        }
        return TemplateResponse(request, "admin/payouts/taxreport/form.html", context)

    def file_view(self, request, report_id: int):
        self._must(request, "view_taxreport")
        report = get_object_or_404(TaxReport, pk=report_id)
        if not report.file:
            raise PermissionDenied
        kind = "application/xml" if report.file_name.endswith(".xml") else "text/plain"
        response = HttpResponse(report.file.encode(), content_type=f"{kind}; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{report.file_name}"'
        return response

    def statements_view(self, request, report_id: int):
        self._must(request, "view_taxreport")
        report = get_object_or_404(TaxReport, pk=report_id)
        operator = platform_operator()
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for row in tax_statement_rows(report):
                pdf = statement_pdf(
                    row=row, operator=operator, jurisdiction=report.jurisdiction, year=report.year
                )
                archive.writestr(f"statement-{report.year}-{row.seller.key}.pdf", pdf)
        response = HttpResponse(buffer.getvalue(), content_type="application/zip")
        response["Content-Disposition"] = (
            f'attachment; filename="statements-{report.jurisdiction}-{report.year}.zip"'
        )
        return response

    def filing_view(self, request, report_id: int):
        self._must(request, "file_taxreport")
        report = get_object_or_404(TaxReport.objects.defer("file"), pk=report_id)
        try:
            if request.POST.get("step") == "confirm":
                tax_report_confirm_filed(report=report, actor=request.user)
                messages.success(request, _("The filing is confirmed."))
            else:
                tax_report_mark_filed(
                    report=report, reference=request.POST.get("reference", ""), actor=request.user
                )
                messages.success(request, _("Marked filed: a second staff member confirms it."))
        except TaxReportRefused as refused:
            messages.error(request, refused.message)
        return redirect("admin:payouts_taxreport_change", report.pk)

    def correct_view(self, request, row_id: int):
        self._must(request, "file_taxreport")
        row = get_object_or_404(TaxReportRow.objects.select_related("report"), pk=row_id)
        seller = seller_from_json(row.seller)
        address = seller.address or Address(country=seller.residence, city="")
        initial = {
            "first_name": seller.first_name,
            "last_name": seller.last_name,
            "tin": seller.tin,
            "tin_country": seller.tin_country,
            "birth_date": seller.birth_date,
            "street": address.street,
            "postcode": address.postcode,
            "city": address.city,
            "region": address.region,
            "country": address.country,
            "iban": seller.iban,
        }
        form = TaxRowCorrectForm(request.POST or None, initial=initial)
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            changes = {
                "first_name": data["first_name"],
                "last_name": data["last_name"],
                "tin": data["tin"],
                "tin_country": data["tin_country"],
                "birth_date": data["birth_date"],
                "iban": data["iban"],
                "residence": data["country"],
                "address": Address(
                    country=data["country"],
                    city=data["city"],
                    street=data["street"],
                    postcode=data["postcode"],
                    region=data["region"],
                ),
            }
            try:
                new = tax_row_correct(row=row, changes=changes, reason=data["reason"], actor=request.user)
            except TaxReportRefused as refused:
                messages.error(request, refused.message)
            else:
                messages.success(request, _("The row is corrected."))
                return redirect("admin:payouts_taxreport_change", new.report_id)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "form": form,
            "title": _("Correct %(reference)s") % {"reference": row.doc_ref_id},
        }
        return TemplateResponse(request, "admin/payouts/taxreport/form.html", context)


__all__ = ["TaxReportAdmin", "TaxReportStatus"]
