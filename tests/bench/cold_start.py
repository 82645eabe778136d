"""`make run`'s cold start: a fresh clone of this repository to the printed sign-ins, against 60 s.

    python -m tests.bench.cold_start [--repo PATH] [--port 8390] [--keep]

Clones the repository's committed HEAD into a temporary folder (nothing of this checkout comes along:
no .venv, no .pgdata), runs `make run` there with the embedded database, and times each phase from
what make prints: installing the dependencies, migrating, seeding the demo, starting the processes,
until the demo's sign-ins are printed. Then it stops `make run` (its whole process group, as Ctrl-C
does) and removes the clone. A script, not a test: the figure depends on the machine and on what else
runs on it, which is why its output starts with the load average.

    bench cold_start <seconds> s vs target 60 s ratio <seconds / 60>
"""

import argparse
import contextlib
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

TARGET_S = 60.0
ROOT = Path(__file__).resolve().parents[2]
# What make prints as each phase begins, in order; the first line that contains a marker ends the
# phase before it.
PHASES = (
    ("venv", "deploy/venv.py"),
    ("install", "pip install"),
    ("migrate", "manage.py migrate"),
    ("seed and start", "manage.py demo"),
    ("sign-ins", "JoyBack runs on"),
)
DONE_MARKER = "Sign in (password"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", default=str(ROOT), help="the repository to clone (this one)")
    parser.add_argument("--port", type=int, default=8390, help="the demo's port (8390)")
    parser.add_argument("--timeout", type=float, default=600, help="give up after this long (600 s)")
    parser.add_argument("--keep", action="store_true", help="keep the clone (its path is printed)")
    args = parser.parse_args(argv)
    print(f"# machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}", flush=True)
    folder = Path(tempfile.mkdtemp(prefix="joyback-cold-"))
    clone = folder / "joyback"
    subprocess.run(["git", "clone", "-q", args.repo, str(clone)], check=True)
    env = {key: value for key, value in os.environ.items() if key not in {"DATABASE_URL", "VIRTUAL_ENV"}}
    began = time.monotonic()
    make = subprocess.Popen(
        ["make", "run", f"PORT={args.port}"],
        cwd=clone,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    marks, ended = _phases(make, began=began, timeout=args.timeout)
    _stop(make)
    if not args.keep:
        subprocess.run(["rm", "-rf", str(folder)], check=False)
    else:
        print(f"# clone kept in {clone}")
    previous = 0.0
    for name, at in marks:
        print(f"# {name}: begins at {at:.1f} s (+{at - previous:.1f} s)")
        previous = at
    if ended is None:
        print("cold start failed: the sign-ins were never printed", file=sys.stderr)
        return 1
    print(f"# targets: cold start < {TARGET_S:g} s: {'met' if ended < TARGET_S else 'MISSED'}")
    print(f"bench cold_start {ended:.1f} s vs target {TARGET_S:g} s ratio {ended / TARGET_S:.3g}")
    return 0


def _phases(make, *, began: float, timeout: float):
    # A thread reads make's lines as they come: select() on a buffered pipe misses lines already read
    # into the buffer.
    lines = queue.Queue()
    threading.Thread(
        target=lambda: [lines.put(text) for text in make.stdout] + [lines.put(None)], daemon=True
    ).start()
    marks, pending, printed = [], list(PHASES), []
    while time.monotonic() - began < timeout:
        try:
            text = lines.get(timeout=1)
        except queue.Empty:
            continue
        if text is None:
            print("".join(f"# make: {seen}" for seen in printed[-40:]), end="")
            return marks, None
        printed.append(text)
        now = time.monotonic() - began
        while pending and pending[0][1] in text:
            marks.append((pending.pop(0)[0], now))
        if marks and marks[-1][0] == "sign-ins" and DONE_MARKER in text:
            return marks, now
    print("".join(f"# make: {seen}" for seen in printed[-40:]), end="")
    return marks, None


def _stop(make) -> None:
    try:
        os.killpg(make.pid, signal.SIGINT)
        make.wait(timeout=60)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(make.pid, signal.SIGKILL)


if __name__ == "__main__":
    sys.exit(main())
