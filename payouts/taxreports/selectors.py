"""The reports' reads: the platform operator from settings, each person's rewards and payouts from
the ledger, and the details the law asks for from their tax profile and bank details."""

import datetime
import json
from collections import defaultdict
from dataclasses import dataclass

from django.conf import settings

from joyback.ledger.models import Transaction
from payouts.models import PayeeAccount, Payout
from payouts.tax.selectors import reward_tax_rows
from payouts.taxreports.amounts import RETURNED, SETTLED, PayoutMove, Reward, paid_pieces, year_totals
from payouts.taxreports.profiles import person_jurisdictions, reward_jurisdictions, sellers_for
from payouts.taxreports.records import Address, PlatformOperator, Seller

EPOCH = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
PAYOUT_REASONS = {"payout_settled": SETTLED, "payout_returned": RETURNED}


def _parts(value: str, count: int) -> list[str]:
    parts = [part.strip() for part in (value or "").split(";")]
    return (parts + [""] * count)[:count]


def platform_operator() -> PlatformOperator:
    street, city, state, postcode = _parts(settings.TAX_US_ADDRESS, 4)
    contact_name, contact_phone, contact_email = _parts(settings.TAX_CONTACT, 3)
    return PlatformOperator(
        name=settings.INVOICE_ISSUER_NAME,
        country=settings.PLATFORM_COUNTRY,
        tin=settings.TAX_OPERATOR_TIN,
        address=Address(
            country=settings.PLATFORM_COUNTRY,
            city="",
            street=settings.TAX_OPERATOR_ADDRESS or settings.INVOICE_ISSUER_ADDRESS,
        ),
        business_name="JoyBack",
        hmrc_operator_id=settings.TAX_HMRC_OPERATOR_ID,
        irs_tcc=settings.TAX_US_TCC,
        contact_name=contact_name,
        contact_phone=contact_phone,
        contact_email=contact_email,
        us_ein=settings.TAX_US_EIN,
        us_address=Address(country="US", city=city, street=street, postcode=postcode, region=state)
        if city
        else None,
    )


def operator_missing(operator: PlatformOperator, *, jurisdiction: str) -> list[str]:
    """The settings a file for this jurisdiction cannot be made without."""
    missing = []
    if jurisdiction in ("dac7", "uk") and not operator.tin:
        missing.append("TAX_OPERATOR_TIN")
    if jurisdiction in ("dac7", "uk") and not operator.address.street:
        missing.append("TAX_OPERATOR_ADDRESS")
    if jurisdiction == "uk" and not operator.hmrc_operator_id:
        missing.append("TAX_HMRC_OPERATOR_ID")
    if jurisdiction == "us":
        for name, value in (("TAX_US_EIN", operator.us_ein), ("TAX_US_TCC", operator.irs_tcc)):
            if not value:
                missing.append(name)
        if operator.us_address is None:
            missing.append("TAX_US_ADDRESS")
    return missing


def rewards_until(*, end: datetime.datetime) -> list[Reward]:
    """Every reward booked to a person before `end`, net of what was taken back, from the ledger
    (payouts.tax.selectors.reward_tax_rows), each with where it is reported: a reward of a
    reportable class is reported where its person is (`reward_jurisdictions`)."""
    amounts: dict[int, int] = defaultdict(int)
    first: dict[int, tuple] = {}
    for posting in reward_tax_rows(start=EPOCH, end=end):
        amounts[posting.claim_id] += posting.amount
        first.setdefault(posting.claim_id, posting)
    people = person_jurisdictions(participant_ids={posting.participant_id for posting in first.values()})
    out = []
    for claim_id, amount in amounts.items():
        if amount <= 0:
            continue
        posting = first[claim_id]
        out.append(
            Reward(
                person=str(posting.participant_id),
                id=claim_id,
                amount=amount,
                currency=posting.currency,
                at=posting.posted_at,
                reportable=reward_jurisdictions(
                    tax_class=posting.tax_class,
                    tax_country=posting.tax_country,
                    person=people.get(posting.participant_id),
                ),
            )
        )
    return out


def payout_moves_until(*, end: datetime.datetime) -> list[PayoutMove]:
    """Each reward payout the bank confirmed or returned, when its booking was posted."""
    postings = Transaction.objects.filter(
        reason__in=list(PAYOUT_REASONS), reference__startswith="payout:", posted_at__lt=end
    ).values_list("reason", "reference", "posted_at")
    by_e2e = defaultdict(list)
    for reason, reference, posted_at in postings.iterator():
        by_e2e[reference.removeprefix("payout:")].append((PAYOUT_REASONS[reason], posted_at))
    payouts = Payout.objects.filter(end_to_end_id__in=list(by_e2e), manual=False).values_list(
        "pk", "end_to_end_id", "participant_id", "amount", "currency"
    )
    return [
        PayoutMove(str(participant_id), pk, amount, currency, at, kind)
        for pk, e2e, participant_id, amount, currency in payouts.iterator()
        for kind, at in by_e2e[e2e]
    ]


@dataclass
class PersonRow:
    participant_id: int
    brand_id: int
    currency: str
    consideration: list
    fees: list
    activities: list
    reward_ids: set
    seller: Seller
    missing: list

    @property
    def total(self) -> int:
        return sum(self.consideration)


def year_end(year: int) -> datetime.datetime:
    return datetime.datetime(year + 1, 1, 1, tzinfo=datetime.UTC)


def tax_year_rows(*, year: int, jurisdiction: str) -> list[PersonRow]:
    """Each person paid for rewards reportable in the jurisdiction, per currency, with what the
    law asks about them and what of it is missing."""
    end = year_end(year)
    pieces = paid_pieces(rewards=rewards_until(end=end), moves=payout_moves_until(end=end))
    totals = year_totals(pieces=pieces, year=year, jurisdiction=jurisdiction)
    participant_ids = sorted({int(person) for person, _currency in totals})
    sellers = sellers_for(participant_ids=participant_ids)
    brands = dict(
        PayeeAccount.objects.filter(participant_id__in=participant_ids).values_list(
            "participant_id", "brand_id"
        )
    ) | dict(
        Payout.objects.filter(participant_id__in=participant_ids).values_list("participant_id", "brand_id")
    )
    rows = []
    for (person, currency), year_row in sorted(
        totals.items(), key=lambda item: (int(item[0][0]), item[0][1])
    ):
        if year_row.total == 0 and not any(year_row.consideration):
            continue
        participant_id = int(person)
        seller = sellers[participant_id]
        rows.append(
            PersonRow(
                participant_id=participant_id,
                brand_id=brands[participant_id],
                currency=currency,
                consideration=year_row.consideration,
                fees=year_row.fees,
                activities=year_row.activities,
                reward_ids=year_row.reward_ids,
                seller=seller,
                missing=seller.missing(jurisdiction=jurisdiction),
            )
        )
    return rows


def ledger_paid_totals(*, year: int) -> dict[int, int]:
    """What the ledger booked to people for each reward until the year's end, net of clawbacks:
    the reconciliation's other side."""
    out: dict[int, int] = defaultdict(int)
    for posting in reward_tax_rows(start=EPOCH, end=year_end(year)):
        out[posting.claim_id] += posting.amount
    return out


def seller_json(seller: Seller) -> str:
    data = {
        "key": seller.key,
        "first_name": seller.first_name,
        "last_name": seller.last_name,
        "address": None if seller.address is None else seller.address.__dict__,
        "tin": seller.tin,
        "tin_country": seller.tin_country,
        "birth_date": seller.birth_date.isoformat() if seller.birth_date else None,
        "iban": seller.iban,
        "residence": seller.residence,
        "language": seller.language,
        "email": seller.email,
    }
    return json.dumps(data, ensure_ascii=False, sort_keys=True)


def seller_from_json(text: str) -> Seller:
    data = json.loads(text)
    address = data.pop("address")
    born = data.pop("birth_date")
    return Seller(
        **data,
        address=None if address is None else Address(**address),
        birth_date=datetime.date.fromisoformat(born) if born else None,
    )
