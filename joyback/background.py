"""Every piece of recurring background work, declared in one place: the schedules the task cluster
(`manage.py qcluster`) runs, and the kinds of standing work the standing worker (`manage.py work`)
claims. docs/design.md's "What runs where" is rendered from these lists (`background_work_table`,
checked by tests/test_background.py).

What is named here is named by dotted path: this module is on the ground floor and imports none of
the apps to its right; a path is imported when the work first runs, and a test imports every one.

One-off work (a retry at a time, a re-check at a deadline, a task enqueued after a commit) is the
running code's: it is not declared here and the schedule sync never touches it.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Recurring:
    """A recurring django-q2 schedule: `func` every `minutes`, or once a day when `daily`, or once
    a month when `monthly`."""

    name: str
    func: str
    purpose: str
    minutes: int | None = None
    daily: bool = False
    monthly: bool = False

    def __post_init__(self):
        if (self.minutes is not None) + self.daily + self.monthly != 1:
            raise ValueError(f"schedule {self.name}: give one of minutes, daily or monthly")

    @property
    def cadence(self) -> str:
        if self.monthly:
            return "monthly"
        if self.daily:
            return "daily"
        return "every minute" if self.minutes == 1 else f"every {self.minutes} minutes"


SCHEDULES: tuple[Recurring, ...] = (
    Recurring(
        name="standing-work",
        func="joyback.queue.standing_work_sweep",
        minutes=1,
        purpose="The standing worker's safety net: every kind of standing work is processed for up to "
        "50 s, so stored rows wait about a minute even while no `manage.py work` runs.",
    ),
    Recurring(
        name="payouts-sweep",
        func="payouts.tasks.payouts_sweep_task",
        minutes=1,
        purpose="What a crash or a lost task left is finished: overdue payouts asked about, the "
        "sandbox bank's webhooks delivered, people owed paid, unsent notices sent.",
    ),
    Recurring(
        name="payouts-bank-statements-fetch",
        func="payouts.reconciliation.tasks.bank_statements_fetch_task",
        minutes=1,
        purpose="The bank's statement feed (the sandbox bank's in the sandbox) and the drop folder are "
        "fetched and imported.",
    ),
    Recurring(
        name="verification-recheck-due",
        func="verification.tasks.recheck_due",
        minutes=5,
        purpose="Shares whose window closed, purchases past their return window and stalled TikTok "
        "posts are decided even when their one-off schedule was lost.",
    ),
    Recurring(
        name="verification-spark-codes-expire",
        func="verification.tasks.spark_codes_expire",
        minutes=5,
        purpose="Spark Ads codes past their validity are marked expired, so brands stop seeing them "
        "as usable.",
    ),
    Recurring(
        name="api-webhook-sweep",
        func="joyback.api.tasks.webhook_sweep",
        minutes=10,
        purpose="Webhook retries whose one-off schedule never ran are queued again; expired "
        "idempotency keys are forgotten.",
    ),
    Recurring(
        name="payouts-legacy-brands-onboard",
        func="payouts.funding.tasks.legacy_brands_onboard_task",
        minutes=60,
        purpose="Brands staff verified before brands held their own money are onboarded at the payment "
        "provider and get a balance account of their own.",
    ),
    Recurring(
        name="payouts-provider-reconcile",
        func="payouts.funding.tasks.provider_reconcile_task",
        minutes=15,
        purpose="The payment provider's transactions and balances are reconciled against the ledger.",
    ),
    Recurring(
        name="audience-sends",
        func="payouts.audience.tasks.broadcasts_send_task",
        minutes=1,
        purpose="Brands' WhatsApp template sends that are due go out at the messaging tier's pace, each "
        "person's consent read again as it goes.",
    ),
    Recurring(
        name="audience-crm-sync",
        func="payouts.audience.tasks.crm_sync_task",
        minutes=5,
        purpose="Brands' consented audiences are pushed to their CRMs and unsubscribes pulled back; "
        "a failed sync is retried on its backoff.",
    ),
    Recurring(
        name="payouts-fee-transfers",
        func="payouts.tasks.fee_transfers_send_task",
        minutes=1,
        purpose="The platform's fees booked with rewards move at the payment provider, many at once per "
        "brand: an internal transfer from the brand's balance account to the platform's.",
    ),
    Recurring(
        name="payouts-fee-transfers-poll",
        func="payouts.tasks.fee_transfers_poll_task",
        minutes=10,
        purpose="A fee transfer the provider took over an hour ago and has not booked or failed is asked "
        "about (GET /transfers/{id}) and its answer applied as its webhook would be; one still open "
        "after a day is an exception for staff.",
    ),
    Recurring(
        name="payouts-vies-checks",
        func="payouts.tasks.vat_ids_check_task",
        minutes=15,
        purpose="Brands' EU VAT numbers are confirmed with the EU's VIES before their invoices are "
        "reverse-charged: new or changed numbers, those VIES could not answer for (asked again on a "
        "backoff), and old confirmations.",
    ),
    Recurring(
        name="privacy-retention",
        func="payouts.tasks.privacy_retention_task",
        daily=True,
        purpose="What erased people left for the retention period is pseudonymised once it has passed.",
    ),
    Recurring(
        name="campaigns-invoices",
        func="campaigns.tasks.invoices_issue_task",
        monthly=True,
        purpose="Each live brand's invoice for the platform's fees of the month before (and of any month "
        "a lost run left), numbered without a gap; `manage.py invoices_issue` does the same by hand.",
    ),
)


@dataclass(frozen=True)
class StandingKind:
    """A kind of standing work: rows a request stored for later, claimed by `process` (which takes a
    batch, processes it and returns how many it claimed, so any number of workers can run).

    unfinished: a function returning the rows not processed yet, however often they were tried.
    max_attempts: the constant after which a row waits for a person (`standing_work_retry`); None for
    rows that count no attempts (a mark that is itself the work, retried until done).
    arrived_field: when a row was stored.
    gather: a function returning (seconds, count): rows cheaper to process many at once wait until
    the oldest has waited that long or that many wait (read at each look: settings may change).
    stop: what the worker releases on its way out, once, after its last pass.
    """

    name: str
    process: str
    unfinished: str
    max_attempts: str | None
    arrived_field: str
    purpose: str
    gather: str | None = None
    stop: str | None = None


STANDING_WORK: tuple[StandingKind, ...] = (
    StandingKind(
        name="provider webhook events",
        process="verification.services.provider_events.provider_events_process",
        unfinished="verification.selectors.provider_events_unfinished",
        max_attempts="verification.services.provider_events.EVENT_MAX_ATTEMPTS",
        arrived_field="received_at",
        purpose="TikTok and WhatsApp webhooks, stored by the intake in one statement.",
    ),
    StandingKind(
        name="API events",
        process="verification.inbox.inbound_events_process",
        unfinished="joyback.api.selectors.inbound_events_unfinished",
        max_attempts="verification.services.provider_events.EVENT_MAX_ATTEMPTS",
        arrived_field="created_at",
        purpose="Events brands report through `POST /api/v1/events`.",
    ),
    StandingKind(
        name="bank details",
        process="payouts.payees.services.payee_submissions_process",
        unfinished="payouts.selectors.payee_submissions_unfinished",
        max_attempts="payouts.payees.services.SUBMISSION_MAX_ATTEMPTS",
        arrived_field="created_at",
        purpose="Bank details a person entered, made a payee account.",
    ),
    StandingKind(
        name="payouts due",  # verification.services.rewards.PAYOUTS_DUE
        process="payouts.pipeline.payouts_due_process",
        unfinished="payouts.selectors.participants_payout_due",
        max_attempts=None,
        arrived_field="payout_due_at",
        gather="payouts.pipeline.payouts_gather",
        stop="payouts.pipeline.payouts_senders_stop",
        purpose="People an approval marked due: their payouts made in batches and sent to the "
        "provider over kept connections.",
    ),
    StandingKind(
        name="payment provider webhooks",
        process="payouts.submission.webhooks.transfer_events_process",
        unfinished="payouts.selectors.transfer_events_unfinished",
        max_attempts="payouts.submission.webhooks.TRANSFER_EVENT_MAX_ATTEMPTS",
        arrived_field="received_at",
        purpose="The payment provider's transfer notifications.",
    ),
    StandingKind(
        name="virtual accounts",
        process="payouts.funding.services.virtual_accounts_open",
        unfinished="payouts.selectors.virtual_accounts_requested",
        max_attempts="payouts.funding.services.VIRTUAL_ACCOUNT_MAX_ATTEMPTS",
        arrived_field="requested_at",
        purpose="Funding accounts brands asked for, opened at the provider.",
    ),
)


def background_work_table() -> str:
    """The tables of docs/design.md's "What runs where", from the declarations above."""
    lines = ["| Schedule | Cadence | Runs | Why |", "| --- | --- | --- | --- |"]
    for schedule in SCHEDULES:
        lines.append(f"| `{schedule.name}` | {schedule.cadence} | `{schedule.func}` | {schedule.purpose} |")
    lines += ["", "| Standing work | Claimed by | What |", "| --- | --- | --- |"]
    for kind in STANDING_WORK:
        lines.append(f"| {kind.name} | `{kind.process}` | {kind.purpose} |")
    return "\n".join(lines) + "\n"
