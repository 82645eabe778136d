"""An issued invoice as the brand downloads it: a PDF and a CSV, in the reader's language."""

from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from campaigns.invoice_pdf import A4, Page, pdf_document
from campaigns.models import Invoice, VatTreatment
from joyback.money import money_format
from joyback.tables import csv_amount

MARGIN = 50
LINE = 15
LINES_PER_PAGE = 28


def _locale() -> str:
    return (get_language() or "en").replace("-", "_").replace("zh_hans", "zh_Hans")


def _money(amount: int, currency: str) -> str:
    return money_format(amount, currency, locale=_locale())


def _percent(bps: int) -> str:
    return f"{bps / 100:g}%"


def invoice_vat_note(invoice: Invoice) -> str:
    """What the invoice says of its VAT, as the law asks it said."""
    if invoice.vat_treatment == VatTreatment.REVERSE_CHARGE:
        return _("Reverse charge: VAT is due from the customer (Article 196, Council Directive 2006/112/EC).")
    if invoice.vat_treatment == VatTreatment.OUTSIDE_EU:
        return _("Not subject to EU VAT: the customer is established outside the European Union.")
    return _("VAT %(rate)s of the net amount.") % {"rate": _percent(invoice.vat_rate_bps)}


def _day(moment) -> str:
    return date_format(timezone.localtime(moment).date(), "SHORT_DATE_FORMAT")


def invoice_payment_notes(invoice: Invoice) -> list[str]:
    """What was taken from the brand's balance account for this invoice, and when: the fees with
    each reward, the VAT when the invoice was issued (due until the provider booked its move)."""
    notes = [_("The fees were taken from your balance account with each reward.")]
    state = invoice.vat_state
    amount = _money(invoice.vat, invoice.currency)
    if state == "paid":
        notes.append(
            _("The VAT (%(amount)s) was taken from your balance account on %(date)s; nothing is left to pay.")
            % {"amount": amount, "date": _day(invoice.vat_moved_at)}
        )
    elif state == "due":
        notes.append(
            _(
                "VAT due: %(amount)s, taken from your funds when this invoice was issued; it leaves "
                "your balance account with the next transfer of fees."
            )
            % {"amount": amount}
        )
    elif state == "short":
        notes.append(
            _(
                "VAT due: %(amount)s. Your funds did not cover it when this invoice was issued; it "
                "is taken from your balance account as soon as they do."
            )
            % {"amount": amount}
        )
    else:
        notes.append(_("Nothing is left to pay."))
    return notes


def invoice_vat_paid(invoice: Invoice) -> str:
    """The VAT's payment as the CSV says it: the day it was moved, "VAT due", or nothing."""
    if invoice.vat_state == "paid":
        return f"{timezone.localtime(invoice.vat_moved_at).date():%Y-%m-%d}"
    if invoice.vat_state in ("due", "short"):
        return _("VAT due")
    return ""


def invoice_title(invoice: Invoice) -> str:
    return _("Invoice %(number)s") % {"number": invoice.number}


def invoice_pdf(invoice: Invoice) -> bytes:
    currency = invoice.currency
    pages = [Page()]
    page = pages[0]
    width, height = A4
    right = width - MARGIN
    y = height - MARGIN
    page.text(MARGIN, y, invoice_title(invoice), size=18, bold=True)
    y -= 2 * LINE
    for line in (invoice.issuer_name, invoice.issuer_address):
        page.text(MARGIN, y, line)
        y -= LINE
    if invoice.issuer_vat_id:
        page.text(MARGIN, y, _("VAT number: %(vat_id)s") % {"vat_id": invoice.issuer_vat_id})
        y -= LINE
    y -= LINE
    page.text(MARGIN, y, _("Bill to"), bold=True)
    y -= LINE
    page.text(MARGIN, y, invoice.customer_name)
    y -= LINE
    if invoice.customer_country:
        page.text(MARGIN, y, invoice.customer_country)
        y -= LINE
    if invoice.customer_vat_id:
        page.text(MARGIN, y, _("VAT number: %(vat_id)s") % {"vat_id": invoice.customer_vat_id})
        y -= LINE
    if invoice.vat_treatment == "reverse_charge" and invoice.customer_vies_request_identifier:
        # The evidence the reverse charge rests on: VIES's consultation of the customer's number.
        page.text(
            MARGIN,
            y,
            _("Confirmed by VIES on %(date)s, consultation number %(number)s")
            % {
                "date": invoice.customer_vies_request_date[:10],
                "number": invoice.customer_vies_request_identifier,
            },
        )
        y -= LINE
    y -= LINE
    page.text(
        MARGIN,
        y,
        _("Issued %(date)s · Period %(start)s to %(end)s")
        % {
            "date": date_format(timezone.localtime(invoice.issued_at).date(), "SHORT_DATE_FORMAT"),
            "start": date_format(invoice.period_start, "SHORT_DATE_FORMAT"),
            "end": date_format(invoice.period_end, "SHORT_DATE_FORMAT"),
        },
    )
    y -= 2 * LINE
    columns = [(_("Campaign"), MARGIN, False), (_("Actions"), 300, True), (_("Fees"), 390, True)]
    columns += [(_("Share of rewards"), 480, True), (_("Net"), right, True)]

    def header(page: Page, y: float) -> float:
        for title, x, flush_right in columns:
            page.text(x, y, title, bold=True, right=flush_right)
        page.rule(MARGIN, y - 4, right)
        return y - LINE - 4

    y = header(page, y)
    for number, line in enumerate(invoice.lines.all(), start=1):
        if number % LINES_PER_PAGE == 0:
            page = Page()
            pages.append(page)
            y = header(page, height - MARGIN)
        page.text(MARGIN, y, line.campaign_name[:40])
        page.text(300, y, str(line.actions), right=True)
        page.text(390, y, _money(line.action_fees, currency), right=True)
        page.text(480, y, _money(line.payout_fees, currency), right=True)
        page.text(right, y, _money(line.net, currency), right=True)
        y -= LINE
    page.rule(MARGIN, y + 10, right)
    y -= 4
    totals = [
        (_("Net"), invoice.net),
        (_("VAT %(rate)s") % {"rate": _percent(invoice.vat_rate_bps)}, invoice.vat),
        (_("Total"), invoice.total),
    ]
    for label, amount in totals:
        page.text(390, y, label, bold=label == totals[-1][0])
        page.text(right, y, _money(amount, currency), right=True, bold=label == totals[-1][0])
        y -= LINE
    if invoice.vat_state in ("due", "short"):
        page.text(390, y, _("VAT due"), bold=True)
        page.text(right, y, _money(invoice.vat, currency), right=True, bold=True)
        y -= LINE
    y -= LINE
    page.text(MARGIN, y, invoice_vat_note(invoice), size=9)
    y -= LINE
    for note in invoice_payment_notes(invoice):
        page.text(MARGIN, y, note, size=9)
        y -= LINE
    return pdf_document(pages=pages, title=invoice_title(invoice))


def invoice_csv(invoice: Invoice) -> tuple[list, list]:
    """(header, rows): a row per campaign, then the totals, amounts as numbers in the reader's format."""
    currency = invoice.currency
    header = [
        _("Invoice"),
        _("Period"),
        _("Campaign"),
        _("Actions"),
        _("Rewards"),
        _("Fees"),
        _("Share of rewards"),
        _("Net"),
        _("VAT"),
        _("Total"),
        _("Currency"),
        _("VAT treatment"),
        _("VAT paid"),
    ]
    period = f"{invoice.period_start:%Y-%m}"
    rows = [
        [
            invoice.number,
            period,
            line.campaign_name,
            line.actions,
            csv_amount(line.rewards, currency),
            csv_amount(line.action_fees, currency),
            csv_amount(line.payout_fees, currency),
            csv_amount(line.net, currency),
            "",
            "",
            currency,
            "",
            "",
        ]
        for line in invoice.lines.all()
    ]
    rows.append(
        [
            invoice.number,
            period,
            _("Total"),
            "",
            "",
            "",
            "",
            csv_amount(invoice.net, currency),
            csv_amount(invoice.vat, currency),
            csv_amount(invoice.total, currency),
            currency,
            invoice.get_vat_treatment_display(),
            invoice_vat_paid(invoice),
        ]
    )
    return header, rows
