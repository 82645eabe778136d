"""Issuing the platform's monthly invoices: one per live brand, month and currency of its fees.

The number is the issuer's next: its InvoiceSequence row is locked and raised in the invoice's own
transaction, so two invoices issued at once take turns and a rolled-back one gives its number back
(numbers follow without a gap), and the database refuses a number given twice (unique per issuer)
or a second invoice for the same brand, month and currency.

The VAT an invoice carries is taken in its own transaction: the brand's funds -> the VAT the
platform owes the tax office (never its revenue), once per invoice under a unique ledger key. Its
move at the provider (the brand's balance account -> the platform's) goes with the brand's next fee
transfer (payouts.fees), and is done only on the provider's word. A brand whose funds cannot cover
it still gets its invoice: the VAT is shown as due, and taken as soon as the funds can
(invoices_vat_take).
"""

from collections import defaultdict
from datetime import date, datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models.functions import TruncMonth
from django.utils import timezone

from campaigns.invoices import brand_vat, brand_vies_said, vat_vies_needed
from campaigns.models import Brand, FeeCharge, Invoice, InvoiceLine, InvoiceSequence
from campaigns.services.funding import brand_funding_account
from joyback.ledger.models import Account, AccountKind
from joyback.ledger.services import InsufficientFunds, account_for, posting_post, transfer

VAT_REASON = "invoice_vat"


def month_start(day: date) -> date:
    return day.replace(day=1)


def month_after(day: date) -> date:
    return date(day.year + (day.month == 12), day.month % 12 + 1, 1)


def _bounds(period_start: date) -> tuple[datetime, datetime]:
    """The month's start and the next month's, in the platform's time zone."""
    tz = timezone.get_default_timezone()
    start = datetime(period_start.year, period_start.month, 1, tzinfo=tz)
    end_day = month_after(period_start)
    return start, datetime(end_day.year, end_day.month, 1, tzinfo=tz)


def platform_vat_account(*, currency: str) -> Account:
    """The VAT the platform charged on its invoices and owes the tax office, once per currency."""
    return account_for(
        kind=AccountKind.VAT_PAYABLE, currency=currency, brand_id=None, name=f"VAT owed {currency}"
    )


def invoice_vat_ledger_key(invoice: Invoice) -> str:
    return f"invoice-vat:{invoice.number}"


def _vat_take(invoice: Invoice) -> bool:
    """The invoice's VAT from the brand's funds to the VAT owed, in the caller's transaction (which
    holds the invoice's row); False, and nothing booked, when the funds cannot cover it."""
    try:
        posted = posting_post(
            posting=transfer(
                source=brand_funding_account(brand=invoice.brand, currency=invoice.currency),
                destination=platform_vat_account(currency=invoice.currency),
                amount=invoice.vat,
                reason=VAT_REASON,
                idempotency_key=invoice_vat_ledger_key(invoice),
                # The authority: the invoice, reckoned from fees the provider's bookings carried.
                reference=f"invoice:{invoice.number}",
                description=f"VAT of invoice {invoice.number}",
            )
        )
    except InsufficientFunds:
        if invoice.vat_short_at is None:
            invoice.vat_short_at = timezone.now()
            invoice.save(update_fields=["vat_short_at"])
        return False
    invoice.vat_ledger_transaction_id = posted.pk
    invoice.save(update_fields=["vat_ledger_transaction_id"])
    return True


def invoices_vat_take(*, brand_id: int | None = None) -> int:
    """The VAT of invoices whose brand's funds could not cover it when they were issued, taken now
    where they can (each invoice's row locked, so two runs take it once); how many were taken."""
    short = Invoice.objects.filter(vat__gt=0, vat_ledger_transaction_id__isnull=True)
    if brand_id is not None:
        short = short.filter(brand_id=brand_id)
    taken = 0
    for invoice_id in list(short.order_by("pk").values_list("pk", flat=True)):
        with transaction.atomic(durable=True):
            invoice = (
                Invoice.objects.select_for_update(of=("self",))
                .select_related("brand")
                .filter(pk=invoice_id, vat_ledger_transaction_id__isnull=True)
                .first()
            )
            if invoice is not None and _vat_take(invoice):
                taken += 1
    return taken


def invoice_number_next(*, issuer: str) -> int:
    """The issuer's next number, in the caller's transaction (its row stays locked until then)."""
    InvoiceSequence.objects.get_or_create(issuer=issuer)
    sequence = InvoiceSequence.objects.select_for_update().get(issuer=issuer)
    sequence.last_number += 1
    sequence.save(update_fields=["last_number"])
    return sequence.last_number


def invoice_issue(*, brand: Brand, currency: str, period_start: date) -> Invoice | None:
    """The brand's invoice for the month of `period_start` in `currency`: its fees not invoiced yet,
    a line per campaign. None when it has none; the invoice already issued when there is one."""
    period_start = month_start(period_start)
    if not brand.livemode:
        return None  # the free trial
    start, end = _bounds(period_start)
    issuer = settings.INVOICE_NUMBER_PREFIX
    try:
        with transaction.atomic(durable=True):
            existing = Invoice.objects.filter(
                brand=brand, currency=currency, period_start=period_start
            ).first()
            if existing is not None:
                return existing
            charges = list(
                FeeCharge.objects.select_for_update(of=("self",))
                .filter(
                    brand=brand,
                    currency=currency,
                    created_at__gte=start,
                    created_at__lt=end,
                    invoice__isnull=True,
                )
                .select_related("campaign")
                .order_by("pk")
            )
            if not charges:
                # None, or all taken by an invoice another worker issued while this one waited.
                return Invoice.objects.filter(
                    brand=brand, currency=currency, period_start=period_start
                ).first()
            lines = defaultdict(lambda: {"actions": 0, "rewards": 0, "action_fees": 0, "payout_fees": 0})
            for charge in charges:
                line = lines[charge.campaign]
                line["rewards"] += charge.reward_amount
                line["action_fees"] += charge.action_fee
                line["payout_fees"] += charge.payout_fee
                if charge.action_fee:
                    line["actions"] += 1 if charge.action_fee > 0 else -1
            net = sum(line["action_fees"] + line["payout_fees"] for line in lines.values())
            vat = brand_vat(brand)
            needed = vat_vies_needed(country=brand.country, vat_id=brand.vat_id)
            vies = brand_vies_said(brand) if needed else ""
            vat_amount = vat.on(net)
            number = invoice_number_next(issuer=issuer)
            invoice = Invoice.objects.create(
                brand=brand,
                issuer=issuer,
                sequence_number=number,
                number=f"{issuer}-{number:06d}",
                period_start=period_start,
                period_end=month_after(period_start) - timedelta(days=1),
                currency=currency,
                net=net,
                vat_rate_bps=vat.rate_bps,
                vat=vat_amount,
                total=net + vat_amount,
                vat_treatment=vat.treatment,
                customer_name=brand.legal_name or brand.name,
                customer_country=brand.country,
                customer_vat_id=brand.vat_id,
                issuer_name=settings.INVOICE_ISSUER_NAME,
                issuer_address=settings.INVOICE_ISSUER_ADDRESS,
                issuer_vat_id=settings.INVOICE_ISSUER_VAT_ID,
                issued_at=timezone.now(),
                customer_vies_status=vies,
                customer_vies_request_identifier=brand.vies_request_identifier if vies else "",
                customer_vies_request_date=brand.vies_request_date if vies else "",
            )
            InvoiceLine.objects.bulk_create(
                InvoiceLine(
                    invoice=invoice, brand=brand, campaign=campaign, campaign_name=campaign.name, **line
                )
                for campaign, line in sorted(lines.items(), key=lambda item: (item[0].name, item[0].pk))
            )
            FeeCharge.objects.filter(pk__in=[charge.pk for charge in charges]).update(invoice=invoice)
            if vat_amount > 0:
                _vat_take(invoice)
    except IntegrityError:
        # Issued meanwhile by another worker (the same brand, month and currency): that one stands.
        return Invoice.objects.filter(brand=brand, currency=currency, period_start=period_start).first()
    return invoice


def invoices_issue(*, now: datetime | None = None) -> list[Invoice]:
    """Every invoice due: each live brand's fees of the months before this one not invoiced yet.
    Safe to run again (the monthly schedule, the management command, a lost run caught later)."""
    now = now or timezone.now()
    this_month = month_start(timezone.localtime(now).date())
    start, _end = _bounds(this_month)
    due = (
        FeeCharge.objects.filter(invoice__isnull=True, created_at__lt=start, brand__livemode=True)
        .annotate(month=TruncMonth("created_at"))
        .values_list("brand_id", "currency", "month")
        .distinct()
        .order_by("month", "brand_id", "currency")
    )
    issued = []
    for brand_id, currency, month in due:
        brand = Brand.objects.get(pk=brand_id)
        invoice = invoice_issue(brand=brand, currency=currency, period_start=timezone.localtime(month).date())
        if invoice is not None:
            issued.append(invoice)
    return issued
