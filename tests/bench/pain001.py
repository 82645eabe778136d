"""pain001_100k: one pain.001.001.09 file of 100,000 SEPA payouts, ours against sepaxml's.

Ours is payouts.iso20022.pain001_files() with everything it does in production: IBAN checksums,
transliteration, identifiers, and validation against the official schema. The reference is sepaxml
2.7 making the same payments with export(validate=False): its own validation (xmlschema) refuses
files past 1,000,000 elements and would take far longer. Each side runs in a fresh interpreter of
its own, so that neither inherits the other's caches or memory; the payments are made before the
clock starts. Peak memory is the process's ru_maxrss, with the part the timed work added.

    python -m tests.bench.pain001 ours|sepaxml COUNT   prints one JSON line
"""

import datetime
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from sepaxml import SepaTransfer

ROOT = Path(__file__).resolve().parents[2]
TARGET_RATIO = 0.5
CREATED = datetime.datetime(2026, 1, 5, 9, 30, tzinfo=datetime.UTC)
EXECUTION = datetime.date(2026, 1, 6)
DEBTOR = ("JoyBack GmbH", "DE89370400440532013000", "COBADEFFXXX")


def iban_de(account: int) -> str:
    # A valid German IBAN per payee (bank code 37040044), so no cache sees the same IBAN twice.
    bban = f"37040044{account:010d}"
    check = 98 - int(bban + "131400") % 97
    return f"DE{check:02d}{bban}"


def payments(count: int) -> list[tuple[str, int, str, str, str]]:
    """(EndToEndId, cents, name, IBAN, remittance); every tenth name needs transliteration."""
    rows = []
    for n in range(count):
        name = f"Zoë Łukasiewicz-Straße {n}" if n % 10 == 0 else f"Person Nummer {n}"
        rows.append((f"PO-{n:09d}", 150 + n % 5000, name, iban_de(1_000_000 + n), f"JoyBack reward {n}"))
    return rows


def rss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def run_ours(count: int) -> dict:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("JOYBACK_ENV", "test")
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    import django

    django.setup()
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from payouts.iso20022.pain001 import pain001_files
    from payouts.iso20022.types import CreditTransfer, Debtor
    from payouts.iso20022.validate import schema_for

    schema_for("pain.001.001.09")  # parsed once per process in production too
    transfers = [
        CreditTransfer(end_to_end_id=e2e, amount_minor=cents, currency="EUR", creditor_name=name,
                       creditor_iban=iban, remittance=remittance)
        for e2e, cents, name, iban, remittance in payments(count)
    ]  # fmt: skip
    before = rss_kib()
    began = time.perf_counter()
    files = pain001_files(
        debtor=Debtor(*DEBTOR),
        transfers=transfers,
        msg_id_prefix="JOYBACK",
        created_at=CREATED,
        execution_date=EXECUTION,
        max_per_file=count,
    )
    seconds = time.perf_counter() - began
    assert len(files) == 1 and files[0].number_of_transactions == count
    return {"seconds": seconds, "bytes": len(files[0].xml), "rss_kib": rss_kib(), "rss_before_kib": before}


def run_sepaxml(count: int) -> dict:
    config = {"name": DEBTOR[0], "IBAN": DEBTOR[1], "BIC": DEBTOR[2], "batch": True, "currency": "EUR"}
    rows = [
        {"name": name, "IBAN": iban, "amount": cents, "execution_date": EXECUTION, "description": remittance,
         "endtoend_id": e2e}
        for e2e, cents, name, iban, remittance in payments(count)
    ]  # fmt: skip
    before = rss_kib()
    began = time.perf_counter()
    transfer = SepaTransfer(config, schema="pain.001.001.09", clean=True)
    for row in rows:
        transfer.add_payment(row)
    xml = transfer.export(validate=False)
    seconds = time.perf_counter() - began
    return {"seconds": seconds, "bytes": len(xml), "rss_kib": rss_kib(), "rss_before_kib": before}


def measure_side(side: str, count: int) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "tests.bench.pain001", side, str(count)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if done.returncode != 0:
        # deferred: the bench sets Django up (its settings, per process) before importing apps
        from tests.bench.server import BenchSetupError

        raise BenchSetupError(f"the pain001 {side} run failed: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(args, note) -> dict:
    count = args.pain001_count
    note(
        f"pain001: {count} SEPA payouts in one pain.001.001.09 file, each side in its own fresh Python "
        "process; ours includes IBAN checks, transliteration and schema validation (lxml), sepaxml's "
        "export(validate=False) does no validation"
    )
    return {"count": count, "ours": measure_side("ours", count), "sepaxml": measure_side("sepaxml", count)}


def lines(results: dict, *, note, line) -> list[str]:
    ours, theirs = results["ours"], results["sepaxml"]
    label = f"{results['count'] // 1000}k" if results["count"] % 1000 == 0 else str(results["count"])

    def memory(side: dict) -> str:
        added = (side["rss_kib"] - side["rss_before_kib"]) / 1024
        return f"{side['rss_kib'] / 1024:.0f} MiB ({added:.0f} MiB added by the timed work)"

    note(f"pain001 peak memory (ru_maxrss): ours {memory(ours)}, sepaxml {memory(theirs)}")
    note(f"pain001 file size: ours {ours['bytes'] / 1e6:.1f} MB, sepaxml {theirs['bytes'] / 1e6:.1f} MB")
    ratio = ours["seconds"] / theirs["seconds"]
    note(
        f"targets: pain001 <= {TARGET_RATIO:g}x sepaxml: {'met' if ratio <= TARGET_RATIO else 'MISSED'} "
        f"({ratio:.3g}x)"
    )
    return [line(f"pain001_{label}", ours["seconds"], "s", f"sepaxml_{label}", theirs["seconds"], "s")]


if __name__ == "__main__":
    side, count = sys.argv[1], int(sys.argv[2])
    result = run_ours(count) if side == "ours" else run_sepaxml(count)
    print(json.dumps(result))
