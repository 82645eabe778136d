"""A property of the bank channel: whatever the bank reports (deposits for a brand or for nobody,
fees, the same booking told twice, by notification or by statement, through the feed or a staff
upload a second person approves) and whatever anyone else tries (a file through no bank channel,
a staff upload nobody approved), once staff have resolved what matched nothing, the ledger's
platform bank equals the sum of the bank's booked entries, each counted once."""

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from joyback.ledger.models import Account, AccountKind
from joyback.ledger.selectors import ledger_drift
from payouts.models import ReconciliationException
from payouts.reconciliation.exceptions import exception_resolve
from payouts.reconciliation.references import brand_deposit_reference
from payouts.reconciliation.rules import ReconciliationRefused
from payouts.reconciliation.statement_import import statement_import_approve, statement_import_create
from tests.payouts.camt_fixtures import Ntry, camt053, camt054

pytestmark = pytest.mark.django_db
SEQUENCE = itertools.count(1)

amounts = st.integers(min_value=1, max_value=200_00)
events = st.one_of(
    st.tuples(st.just("deposit"), st.sampled_from(["alpaca", "bison", None]), amounts, st.integers(0, 3)),
    st.tuples(st.just("fee"), amounts, st.integers(0, 3)),
    st.tuples(st.just("resend"), st.integers(0, 3)),
    st.tuples(st.just("no_channel"), st.sampled_from(["alpaca", "bison"]), amounts),
    st.tuples(st.just("unapproved_upload"), st.sampled_from(["alpaca", "bison"]), amounts),
)


def platform_bank() -> int:
    account = Account.objects.filter(kind=AccountKind.PLATFORM_BANK, currency="EUR").first()
    return account.balance if account else 0


def test_the_ledgers_bank_equals_the_banks_booked_entries(alpaca, bison, sam, tara, fiona):
    brands = {"alpaca": alpaca, "bison": bison}
    examples = itertools.count()
    booked: dict[str, int] = {}  # the bank's own record: entry reference -> signed amount

    @given(st.lists(events, min_size=1, max_size=8), st.booleans())
    @settings(
        max_examples=30,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    def run(steps, by_statement):
        example = next(examples)
        entries: dict[str, Ntry] = {}
        for step in steps:
            kind = step[0]
            if kind == "deposit":
                _kind, brand, amount, slot = step
                ref = f"E{example}-{slot}"
                remittance = brand_deposit_reference(brands[brand]) if brand else "no reference"
                entry = entries.setdefault(
                    ref, Ntry(amount=amount, credit=True, ref=ref, remittance=remittance)
                )
            elif kind == "fee":
                _kind, amount, slot = step
                ref = f"F{example}-{slot}"
                if ref not in entries and sum(booked.values()) < amount:
                    continue  # the bank does not pay out money the account does not hold
                entry = entries.setdefault(ref, Ntry(amount=amount, ref=ref, info="bank fee"))
            elif kind == "resend":
                if not entries:
                    continue
                entry = list(entries.values())[step[1] % len(entries)]
            elif kind == "no_channel":
                made_up = camt054(
                    [
                        Ntry(
                            amount=step[2],
                            credit=True,
                            ref=f"X{example}",
                            remittance=brand_deposit_reference(brands[step[1]]),
                        )
                    ]
                )
                with pytest.raises(ReconciliationRefused):
                    statement_import_create(data=made_up, channel="brand", uploaded_by=fiona)
                with pytest.raises(ReconciliationRefused):
                    statement_import_create(data=made_up, channel="staff", uploaded_by=fiona)
                continue
            else:
                made_up = camt054(
                    [
                        Ntry(
                            amount=step[2],
                            credit=True,
                            ref=f"U{example}",
                            remittance=brand_deposit_reference(brands[step[1]]),
                        )
                    ],
                    msg_id=f"U{example}",
                )
                statement_import_create(data=made_up, channel="staff", uploaded_by=sam)
                continue
            _report(entry, example, by_statement, booked, sam, tara)
            booked[entry.ref] = entry.amount if entry.credit else -entry.amount
        _staff_resolve_what_matched_nothing(sam, tara)

        assert platform_bank() == sum(booked.values())
        assert ledger_drift() == []

    run()


def _report(entry, example, by_statement, booked, sam, tara):
    """The bank tells of one booking: by notification through its feed, or on a statement a staff
    member uploads and a second one approves."""
    msg_id = f"M{example}-{entry.ref}-{len(booked)}"
    if not by_statement:
        statement_import_create(data=camt054([entry], msg_id=msg_id), channel="feed")
        return
    # The day's statement: what the account held before this booking, and the booking.
    opening = sum(booked.values()) - booked.get(entry.ref, 0)
    data = camt053([entry], msg_id=msg_id, opening=opening, seq=next(SEQUENCE))
    job = statement_import_create(data=data, channel="staff", uploaded_by=sam)
    statement_import_approve(import_id=job.pk, approver=tara)


def _staff_resolve_what_matched_nothing(sam, tara):
    """Money in that names no brand waits on suspense, money out nothing explains comes from it;
    a second person approves what is above the threshold."""
    open_lines = ReconciliationException.objects.filter(status="open", line__isnull=False).order_by("-amount")
    for exception in open_lines:
        for person in (sam, tara):
            exception.refresh_from_db()
            if exception.status == "open":
                exception_resolve(
                    exception=exception, action="suspense", actor=person, note="the bank could not say whose"
                )
