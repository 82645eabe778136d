"""The brand's invoices from the platform, for its owner and finance members: a PDF and a CSV each."""

from django.http import Http404, HttpResponse
from django.views.decorators.http import require_GET

from campaigns import roles
from campaigns.access import brand_member_required
from campaigns.invoice_documents import invoice_csv, invoice_pdf
from campaigns.invoices import invoice_get_for_brand
from joyback.tables import csv_response


def _invoice(request, invoice_id):
    invoice = invoice_get_for_brand(brand=request.brand, invoice_id=invoice_id)
    if invoice is None:
        raise Http404("No such invoice")
    return invoice


@brand_member_required(roles.FUND)
@require_GET
def invoice_pdf_download(request, invoice_id):
    invoice = _invoice(request, invoice_id)
    response = HttpResponse(invoice_pdf(invoice), content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="{invoice.number}.pdf"'
    return response


@brand_member_required(roles.FUND)
@require_GET
def invoice_csv_download(request, invoice_id):
    invoice = _invoice(request, invoice_id)
    header, rows = invoice_csv(invoice)
    return csv_response(filename=f"{invoice.number}.csv", header=header, rows=rows)
