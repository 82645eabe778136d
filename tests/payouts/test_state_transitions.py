"""The money rows' state machines: declared once (payouts.models.transitions), taken by every writer,
held by the database (a raw UPDATE making an undeclared move raises) and drawn in README.md."""

import itertools
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from payouts.models import Payout, PayoutEvent, ProviderDeposit, ReconciliationException, StatementImport
from payouts.models.funding import VirtualAccount
from payouts.models.transitions import (
    DEPOSIT,
    MACHINES,
    NEW,
    PAYOUT,
    RECONCILIATION_EXCEPTION,
    STATEMENT_IMPORT,
    lifecycle_readme,
)
from payouts.submission.states import payout_transition
from tests.payouts.test_payout_batches import ready_person

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def rows(make_live_campaign):
    """One row of each machine's model, in its first state: machine -> a function making another."""
    campaign = make_live_campaign(slug="states-club", budget=10_00)
    person, _identity = ready_person(campaign)
    payee = person.payee_accounts.get()
    account = VirtualAccount.objects.get(brand=campaign.brand, currency="EUR")  # its own, funded
    numbers = itertools.count(1)
    return {
        PAYOUT: lambda: Payout.objects.create(
            brand=campaign.brand,
            participant=person,
            payee=payee,
            amount=1_00,
            currency="EUR",
            scheme="sepa_instant",
            manual=True,  # several at once: only a reward's payouts are one at a time
        ),
        DEPOSIT: lambda: ProviderDeposit.objects.create(
            provider="adyen",
            transfer_id=f"T{next(numbers)}",
            virtual_account=account,
            brand=campaign.brand,
            amount=5_00,
            currency="EUR",
        ),
        STATEMENT_IMPORT: lambda: StatementImport.objects.create(data=b"", sha256="0" * 64),
        RECONCILIATION_EXCEPTION: lambda: ReconciliationException.objects.create(reason="bank_drift"),
    }


def _raw(sql: str, params) -> None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def _put(machine, pk: int, state: str) -> None:
    """The row put in `state` as a restore would, past the trigger (replica mode skips it)."""
    _raw("SET LOCAL session_replication_role = replica", [])
    _raw(f"UPDATE {machine.table} SET status = %s WHERE id = %s", [state, pk])
    _raw("SET LOCAL session_replication_role = origin", [])


def _moves(machine, pk: int, state: str) -> bool:
    """A raw UPDATE to `state`: whether the database let it through."""
    try:
        with transaction.atomic():
            _raw(f"UPDATE {machine.table} SET status = %s WHERE id = %s", [state, pk])
    except IntegrityError as refused:
        assert "is not a declared transition" in str(refused)
        return False
    return True


@pytest.mark.postgres
@pytest.mark.parametrize("machine", MACHINES, ids=lambda m: m.model.__name__)
def test_the_database_refuses_every_move_the_table_does_not_declare_and_takes_every_one_it_does(
    machine, rows
):
    row = rows[machine]()
    allowed = machine.pairs()
    states = machine.states()
    for source, target in itertools.permutations(states, 2):
        _put(machine, row.pk, source)
        assert _moves(machine, row.pk, target) == ((source, target) in allowed), (source, target)
    for state in states:  # writing the state a row is in is no move
        _put(machine, row.pk, state)
        assert _moves(machine, row.pk, state)


@pytest.mark.postgres
@pytest.mark.parametrize("machine", MACHINES, ids=lambda m: m.model.__name__)
def test_a_row_is_inserted_only_in_a_state_the_table_starts_it_in(machine, rows):
    row = rows[machine]()
    columns = [f.column for f in machine.model._meta.concrete_fields if f.column not in ("id", "status")]
    for state in machine.states():
        try:
            with transaction.atomic():
                _raw(
                    f"INSERT INTO {machine.table} ({', '.join(columns)}, status) "
                    f"SELECT {', '.join(columns)}, %s FROM {machine.table} WHERE id = %s",
                    [state, row.pk],
                )
        except IntegrityError as refused:
            inserted = "is not a declared transition" not in str(refused)  # a unique column, say
            assert (NEW, state) not in machine.pairs() or inserted, state
        else:
            assert (NEW, state) in machine.pairs(), state


@pytest.mark.postgres
def test_the_triggers_hold_exactly_the_declared_table():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, t.tgargs FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "WHERE t.tgname LIKE %s",
            ["%_transition"],
        )
        held = {
            table: {tuple(arg.split(">")) for arg in bytes(args).decode().split("\x00") if arg}
            for table, args in cursor.fetchall()
        }
    assert held == {machine.table: machine.pairs() for machine in MACHINES}


def test_the_readme_draws_the_payout_states_from_the_table():
    text = (ROOT / "README.md").read_text()
    assert lifecycle_readme(text) == text, "README.md differs from the table: run manage.py payout_lifecycle"
    call_command("payout_lifecycle", check=True)


def test_every_state_is_reachable_and_every_step_is_named_once():
    for machine in MACHINES:
        names = [step.name for step in machine.steps]
        assert len(names) == len(set(names))
        reached, frontier = set(), {NEW}
        while frontier:
            reached |= frontier
            frontier = {target for source, target in machine.pairs() if source in frontier} - reached
        assert reached - {NEW} == set(machine.states()), machine.model.__name__


def test_no_writer_passes_its_own_states_to_leave():
    """The table decides: no payouts code names the states a payout may leave."""
    sources = [p for p in (ROOT / "payouts").rglob("*.py") if "migrations" not in p.parts]
    assert not [str(p) for p in sources if "allowed_from" in p.read_text()]


@pytest.mark.postgres
def test_any_sequence_of_steps_moves_a_payout_as_the_table_says_and_records_each_move(rows):
    make = rows[PAYOUT]
    names = [step.name for step in PAYOUT.steps if NEW not in step.sources]

    @given(st.lists(st.sampled_from(names), max_size=8))
    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    def walk(steps):
        payout = make()
        expected, moves = "created", [("", "created")]
        PayoutEvent.objects.create(payout=payout, brand_id=payout.brand_id, to_status="created")
        for name in steps:
            step = PAYOUT.step(name)
            moved = payout_transition(payout, name)
            assert moved == (expected in step.sources), (expected, name)
            if moved:
                moves.append((expected, step.target))
                expected = step.target
            payout.refresh_from_db()
            assert payout.status == expected
        assert list(payout.events.values_list("from_status", "to_status")) == moves

    walk()
