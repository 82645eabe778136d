"""The state machines of the money rows, declared once: which named step moves a row from which
states to which. Every writer names a step (payouts.models.transitions.state_step, and the services
built on it) and never its own list of states it may leave; the database holds the same table in a
trigger per table (payouts/migrations/0024_state_transitions.py), so even a raw UPDATE cannot make
a move the table does not declare; README.md's diagram is written from it (payouts_lifecycle)."""

from dataclasses import dataclass

from django.db import models

from payouts.models.funding import ProviderDeposit, ProviderDepositStatus
from payouts.models.payouts import Payout, PayoutStatus
from payouts.models.reconciliation import (
    ExceptionStatus,
    ReconciliationException,
    StatementImport,
    StatementImportStatus,
)

NEW = ""  # the state a row has before it is inserted


@dataclass(frozen=True)
class Step:
    name: str
    sources: tuple[str, ...]
    target: str


@dataclass(frozen=True)
class Machine:
    model: type[models.Model]
    steps: tuple[Step, ...]

    @property
    def table(self) -> str:
        return self.model._meta.db_table

    def step(self, name: str) -> Step:
        for step in self.steps:
            if step.name == name:
                return step
        raise KeyError(f"{self.model.__name__} has no step {name!r}")

    def pairs(self) -> set[tuple[str, str]]:
        """Every (from, to) the table allows; from "" is an insert."""
        return {(source, step.target) for step in self.steps for source in step.sources}

    def states(self) -> list[str]:
        return [value for value, _label in self.model._meta.get_field("status").choices]


P = PayoutStatus
SENT = (P.SUBMITTED, P.ACCEPTED, P.UNKNOWN)

PAYOUT = Machine(
    Payout,
    (
        Step("make", (NEW,), P.CREATED),
        Step("make_held", (NEW,), P.AWAITING_APPROVAL),
        # Made by a worker that has the payee's settled name check and may send at once: the
        # steps through payee_verified are recorded as events in the same transaction.
        Step("make_claimed", (NEW,), P.SUBMITTED),
        Step("approve", (P.AWAITING_APPROVAL,), P.CREATED),
        Step("verify_payee", (P.CREATED,), P.PAYEE_VERIFIED),
        Step("submit", (P.PAYEE_VERIFIED,), P.SUBMITTED),
        Step("answer_lost", (P.SUBMITTED,), P.UNKNOWN),
        Step("accept", (P.SUBMITTED, P.UNKNOWN), P.ACCEPTED),
        # The bank never received it: verified again, to be sent with the same Idempotency-Key.
        Step("resend", (P.SUBMITTED, P.UNKNOWN), P.PAYEE_VERIFIED),
        Step("settle", SENT, P.SETTLED),
        Step("reject", SENT, P.REJECTED),
        Step("return", (P.SETTLED,), P.RETURNED),
        Step("cancel", (P.AWAITING_APPROVAL, P.CREATED, P.PAYEE_VERIFIED), P.CANCELLED),
    ),
)

D = ProviderDepositStatus
DEPOSIT = Machine(
    ProviderDeposit,
    (
        Step("receive", (NEW,), D.RECEIVED),
        Step("book", (D.RECEIVED,), D.BOOKED),
        Step("return", (D.RECEIVED, D.BOOKED), D.RETURNED),
    ),
)

S = StatementImportStatus
STATEMENT_IMPORT = Machine(
    StatementImport,
    (
        Step("hand_in", (NEW,), S.QUEUED),
        Step("hand_in_held", (NEW,), S.AWAITING),
        Step("refuse_unread", (NEW,), S.FAILED),
        Step("approve", (S.AWAITING,), S.QUEUED),
        Step("decline", (S.AWAITING,), S.FAILED),
        Step("run", (S.QUEUED,), S.RUNNING),
        Step("finish", (S.RUNNING,), S.DONE),
        Step("fail", (S.RUNNING,), S.FAILED),
    ),
)

E = ExceptionStatus
RECONCILIATION_EXCEPTION = Machine(
    ReconciliationException,
    (
        Step("raise", (NEW,), E.OPEN),
        Step("resolve", (E.OPEN,), E.RESOLVED),
    ),
)

MACHINES = (PAYOUT, DEPOSIT, STATEMENT_IMPORT, RECONCILIATION_EXCEPTION)


def state_step(machine: Machine, rows: models.QuerySet, step: str, **fields) -> int:
    """The rows of `rows` that are in one of the step's sources moved to its target, with `fields`,
    in one conditional UPDATE (so of two writers racing, one moves and the other finds 0 rows):
    how many moved."""
    declared = machine.step(step)
    return rows.filter(status__in=list(declared.sources)).update(status=declared.target, **fields)


def transition_trigger_sql(machine: Machine) -> str:
    """The trigger that holds `machine` in the database, for the migration that changes the table:
    its allowed moves are the trigger's arguments ("from>to", from empty on an insert), so one
    function (payouts_state_transition, payouts/migrations/0024_state_transitions.py) serves
    every table."""
    allowed = ", ".join(f"'{source}>{target}'" for source, target in sorted(machine.pairs()))
    return (
        f"CREATE TRIGGER {machine.table}_transition BEFORE INSERT OR UPDATE OF status ON {machine.table} "
        f"FOR EACH ROW EXECUTE FUNCTION payouts_state_transition({allowed});"
    )


def lifecycle_mermaid(machine: Machine = PAYOUT) -> str:
    """The machine as a Mermaid state diagram: each move labelled with its steps."""
    lines = ["stateDiagram-v2"]
    edges: dict[tuple[str, str], list[str]] = {}
    for step in machine.steps:
        for source in step.sources:
            edges.setdefault((source, step.target), []).append(step.name)
    order = {state: number for number, state in enumerate([NEW, *machine.states()])}
    for (source, target), names in sorted(edges.items(), key=lambda e: (order[e[0][0]], order[e[0][1]])):
        lines.append(f"    {source or '[*]'} --> {target}: {', '.join(names)}")
    finals = [s for s in machine.states() if not any(source == s for source, _ in machine.pairs())]
    lines += [f"    {state} --> [*]" for state in finals]
    return "\n".join(lines)


README_START = (
    "<!-- payout-states: written by `manage.py payout_lifecycle` from payouts/models/transitions.py -->"
)
README_END = "<!-- /payout-states -->"


def lifecycle_readme_block() -> str:
    """What README.md holds between its markers: the payout's machine as a diagram, and the other
    money rows' moves in a line each."""
    others = []
    for machine in MACHINES[1:]:
        moves = "; ".join(
            f"{step.name}: {' | '.join(s or '(new)' for s in step.sources)} -> {step.target}"
            for step in machine.steps
        )
        others.append(f"- `{machine.model.__name__}`: {moves}")
    return "\n".join(
        [README_START, "", "```mermaid", lifecycle_mermaid(PAYOUT), "```", "", *others, "", README_END]
    )


def lifecycle_readme(text: str) -> str:
    """`text` (README.md) with the block between the markers written from the table."""
    start, end = text.index(README_START), text.index(README_END) + len(README_END)
    return text[:start] + lifecycle_readme_block() + text[end:]
