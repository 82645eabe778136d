"""Each person's own statement of what was reported about them (DAC7 asks the operator to give it
to them by 31 January), in their language: a PDF written with the invoices' writer
(campaigns.invoice_pdf), a pure function from a `SellerRow` to bytes."""

from django.utils import translation
from django.utils.translation import gettext as _

from campaigns.invoice_pdf import A4, Page, pdf_document
from joyback.money import money_format
from payouts.taxreports.records import Jurisdiction, PlatformOperator, SellerRow

MARGIN = 50
LINE = 16


def _authority(jurisdiction: str) -> str:
    return {
        Jurisdiction.DAC7: _("the tax authority of the EU Member State where we are registered (DAC7)"),
        Jurisdiction.UK: _("HM Revenue & Customs (the UK's reporting rules for digital platforms)"),
        Jurisdiction.US: _("the US Internal Revenue Service (Form 1099-NEC)"),
    }[jurisdiction]


def statement_pdf(*, row: SellerRow, operator: PlatformOperator, jurisdiction: str, year: int) -> bytes:
    seller = row.seller
    locale = (seller.language or "en").replace("-", "_").replace("zh_hans", "zh_Hans")
    with translation.override(seller.language or "en"):
        page = Page()
        width, height = A4
        right = width - MARGIN
        y = height - MARGIN
        title = _("Your payments in %(year)s, as reported for tax") % {"year": year}
        page.text(MARGIN, y, title, size=16, bold=True)
        y -= 2 * LINE
        page.text(MARGIN, y, operator.name, bold=True)
        y -= LINE
        page.text(MARGIN, y, operator.address.street or operator.address.one_line())
        y -= 2 * LINE
        page.text(
            MARGIN,
            y,
            _("We have reported the following to %(authority)s.") % {"authority": _authority(jurisdiction)},
        )
        y -= 2 * LINE
        details = [
            (_("Name"), f"{seller.first_name} {seller.last_name}"),
            (_("Address"), seller.address.one_line() if seller.address else ""),
            (_("Tax identification number"), f"{seller.tin} ({seller.tin_country})" if seller.tin else ""),
            (_("Date of birth"), seller.birth_date.isoformat() if seller.birth_date else ""),
            (_("Bank account"), seller.iban),
        ]
        for label, value in details:
            page.text(MARGIN, y, label, bold=True)
            page.text(MARGIN + 170, y, value or "-")
            y -= LINE
        y -= LINE
        columns = [_("Quarter"), _("Paid to you"), _("Fees"), _("Tasks")]
        xs = [MARGIN, MARGIN + 250, MARGIN + 370, right]
        for x, label in zip(xs, columns, strict=True):
            page.text(x, y, label, bold=True, right=x != MARGIN)
        y -= 4
        page.rule(MARGIN, y, right)
        y -= LINE
        for quarter in range(4):
            cells = [
                _("Q%(number)s") % {"number": quarter + 1},
                money_format(row.consideration[quarter], row.currency, locale),
                money_format(row.fees[quarter], row.currency, locale),
                str(row.activities[quarter]),
            ]
            for x, text in zip(xs, cells, strict=True):
                page.text(x, y, text, right=x != MARGIN)
            y -= LINE
        page.rule(MARGIN, y + LINE - 4, right)
        total = [
            _("Total"),
            money_format(sum(row.consideration), row.currency, locale),
            money_format(sum(row.fees), row.currency, locale),
            str(sum(row.activities)),
        ]
        for x, text in zip(xs, total, strict=True):
            page.text(x, y, text, bold=True, right=x != MARGIN)
        y -= 2 * LINE
        for line in (
            _("Amounts are what reached your bank account for the tasks you did, in the quarter the bank"),
            _("confirmed each payment. If anything here is wrong, reply to this message: we correct"),
            _("the report with the tax authority and send you a new statement."),
        ):
            page.text(MARGIN, y, line, size=9)
            y -= LINE - 3
        page.text(MARGIN, y - LINE, _("Reference: %(reference)s") % {"reference": row.doc_ref_id}, size=8)
        return pdf_document(pages=[page], title=title)
