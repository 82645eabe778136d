"""Reconciliation at size: a camt.053 of 100,000 entries imported and matched (against 10,000, for
linear growth), and the brand's reconciliation page over 1,000,000 ledger entries and 200,000
payouts (p95, and the number of queries at that size against the same brand with one payout).

Data is made by SQL (generate_series), not the ORM one row at a time. The statement's entries are
debits for payouts the PSP already reported settled (the usual case: the statement confirms),
plus 1% lines nothing explains, which become exceptions one by one.
"""

import time

from tests.bench.server import percentile

PAYOUTS = 200_000
LEDGER_TRANSACTIONS = 500_000  # two entries each
PAGE_REQUESTS = 60
P95_TARGET_MS = 150.0
TIME_TARGET_S = 10.0
RATIO_TARGET = 12.0


def _payouts_insert(*, brand_id: int, participant_id: int, payee_id: int, first: int, count: int) -> None:
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.db import connection, transaction

    with transaction.atomic(durable=True), connection.cursor() as cursor:
        # Rows made settled at once, as a restore would: past the transition rule, which lets a payout
        # start only as made (payouts.models.transitions).
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute(
            "INSERT INTO payouts_payout (brand_id, participant_id, payee_id, amount, currency, scheme, "
            "status, reason_code, end_to_end_id, psp_reference, manual, hold_reasons, submissions, "
            "created_at, updated_at, submitted_at, settled_at) "
            "SELECT %s, %s, %s, 100 + g %% 900, 'EUR', 'sepa_instant', 'settled', '', "
            "'JBBENCH' || lpad(g::text, 10, '0'), '', false, '', 1, "
            "now() - (g || ' seconds')::interval, now(), "
            "now() - (g || ' seconds')::interval, now() FROM generate_series(%s, %s) AS g",
            [brand_id, participant_id, payee_id, first, first + count - 1],
        )
        cursor.execute("ANALYZE payouts_payout")


def _statement(first: int, count: int) -> bytes:
    """camt.053.001.08 of `count` entries: payouts first..first+count-1, every 100th one unknown."""
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from tests.payouts.camt_fixtures import Ntry, Tx, camt053

    entries = []
    for number in range(first, first + count):
        amount = 100 + number % 900
        e2e = f"JBBENCH{number:010d}" if number % 100 else f"JBUNKNOWN{number:010d}"
        entries.append(Ntry(amount=amount, ref=f"B{number}", txs=[Tx(e2e, amount)]))
    return camt053(entries, msg_id=f"BENCH-{first}-{count}", opening=10**12)


def _import_seconds(data: bytes, brand, cpu: dict | None = None) -> tuple[float, object]:
    """Wall seconds of one import; cpu, when given, gets the CPU seconds it cost this process
    ("python") and its PostgreSQL backend ("postgres"): the machine may be shared, and the wall
    clock then counts other people's work too."""
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.db import connection

    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from payouts.models import StatementImport
    from payouts.reconciliation.statement_import import statement_import_create, statement_import_run
    from tests.bench.reward import backend_seconds

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = str(cursor.fetchone()[0])
    process, server = time.process_time(), backend_seconds(backend)
    began = time.perf_counter()
    job = statement_import_create(data=data, filename="bench.xml", channel="folder")
    if job.status == "queued":
        job = statement_import_run(import_id=job.pk)
    seconds = time.perf_counter() - began
    if cpu is not None:
        cpu["python"] = time.process_time() - process
        cpu["postgres"] = backend_seconds(backend) - server
    job = StatementImport.objects.get(pk=job.pk)
    if job.status != "done":
        # deferred: the bench sets Django up (its settings, per process) before importing apps
        from tests.bench.server import BenchSetupError

        raise BenchSetupError(f"recon import {job.status}: {job.error}")
    return seconds, job


def _page(client, url) -> tuple[list[float], int]:
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.core.cache import cache
    from django.db import connection

    executed = []

    def count(execute, sql, params, many, context):
        executed.append(sql)
        return execute(sql, params, many, context)

    cache.clear()  # the first request computes everything: the count is of the uncached page
    with connection.execute_wrapper(count):
        response = client.get(url)
    assert response.status_code == 200, response.status_code
    timings = []
    for _ in range(PAGE_REQUESTS):
        began = time.perf_counter()
        client.get(url)
        timings.append((time.perf_counter() - began) * 1000)
    return timings, len(executed)


def _scaled(size: int, args) -> int:
    return max(100, round(size * args.recon_scale))


def measure(server, bench_db: str, args, note) -> dict:
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from tests.bench import web

    web.database_prepare(server, bench_db)
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.utils import timezone

    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from campaigns.models import Brand, Membership
    from payouts.models import PayeeAccount
    from payouts.rails import iban_check
    from tests.bench import ledger
    from verification.models import Participant

    settings.STATEMENT_SYNC_BYTES = 10**10  # time the import itself, not a queue
    brand = Brand.objects.create(name="Bench brand", slug="bench")
    user = get_user_model().objects.create_user(email="finance@bench.localhost", password="x")
    Membership.objects.create(brand=brand, user=user, role="finance")
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    client = Client()
    client.force_login(user)
    url = f"/brands/{brand.slug}/reconciliation/"

    began = time.monotonic()
    participant = Participant.objects.create(brand=brand)
    payee = PayeeAccount.objects.create(
        participant=participant,
        brand=brand,
        holder_name="Bench Person",
        rail="sepa",
        currency="EUR",
        country="DE",
        account=iban_check("DE89370400440532013000"),
        account_masked="•••• 3000",
        account_fingerprint="bench",
        consent_at=timezone.now(),
        consent_version="bench",
    )
    # The reference page is the same brand with one payout: a table with no rows skips its row query,
    # so an empty brand would count one query fewer for a reason that has nothing to do with size.
    owner = {"brand_id": brand.pk, "participant_id": participant.pk, "payee_id": payee.pk}
    _payouts_insert(**owner, first=0, count=1)
    small_timings, small_queries = _page(client, url)
    payouts, transactions = _scaled(PAYOUTS, args), _scaled(LEDGER_TRANSACTIONS, args)
    small, large = _scaled(10_000, args), _scaled(100_000, args)
    _payouts_insert(**owner, first=1, count=payouts)
    ledger.accounts_setup(participants=min(1000, transactions), history=transactions)  # brand 1: this brand
    note(
        f"recon setup: {payouts} settled payouts and {2 * transactions} ledger entries by SQL, "
        f"{time.monotonic() - began:.1f} s"
    )
    small_file, large_file = _statement(1, small), _statement(small + 1, large)
    small_seconds, small_job = _import_seconds(small_file, brand)
    large_cpu: dict = {}
    large_seconds, large_job = _import_seconds(large_file, brand, large_cpu)
    note(
        f"recon import: 10k file {len(small_file) / 1e6:.1f} MB: {small_job.matched} matched, "
        f"{small_job.exceptions} exceptions; 100k file {len(large_file) / 1e6:.1f} MB: {large_job.matched} "
        f"matched, {large_job.exceptions} exceptions"
    )
    note(
        f"recon import: the 100k file's CPU: {large_cpu['python']:.2f} s in this process, "
        f"{large_cpu['postgres']:.2f} s in its PostgreSQL backend, in {large_seconds:.2f} s of wall clock"
    )
    again_seconds, again = _import_seconds(small_file, brand)
    note(f"recon import: the 10k file again: {again.new_lines} new lines, {again_seconds:.2f} s")
    timings, queries = _page(client, url)
    return {
        "small_seconds": small_seconds,
        "large_seconds": large_seconds,
        "p95": percentile(timings, 0.95),
        "p50": percentile(timings, 0.5),
        "small_p95": percentile(small_timings, 0.95),
        "queries": queries,
        "small_queries": small_queries,
        "payouts": payouts,
        "ledger_entries": 2 * transactions,
    }


def lines(results: dict, *, note, line) -> list[str]:
    ratio = results["large_seconds"] / results["small_seconds"]
    note(
        f"targets: recon 100k import < {TIME_TARGET_S:g} s: "
        f"{'met' if results['large_seconds'] < TIME_TARGET_S else 'MISSED'}; 100k/10k <= {RATIO_TARGET:g}x: "
        f"{'met' if ratio <= RATIO_TARGET else 'MISSED'} ({ratio:.3g}x); page p95 < {P95_TARGET_MS:g} ms: "
        f"{'met' if results['p95'] < P95_TARGET_MS else 'MISSED'}; queries constant: "
        f"{'met' if results['queries'] == results['small_queries'] else 'MISSED'}"
    )
    note(
        f"recon page: p50 {results['p50']:.1f} ms, p95 {results['p95']:.1f} ms over {PAGE_REQUESTS} requests "
        f"with {results['payouts']} payouts and {results['ledger_entries']} ledger entries (one payout: p95 "
        f"{results['small_p95']:.1f} ms)"
    )
    return [
        line(
            "recon_import_100k",
            results["large_seconds"],
            "s",
            "recon_import_10k",
            results["small_seconds"],
            "s",
        ),
        line("recon_page_p95", results["p95"], "ms", "target", P95_TARGET_MS, "ms"),
        line(
            "recon_page_queries",
            results["queries"],
            "queries",
            "one_payout_brand",
            results["small_queries"],
            "queries",
        ),
    ]
