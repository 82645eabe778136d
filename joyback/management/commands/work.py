"""The standing worker: claim and process what requests stored for later, as it arrives.

Webhooks, the claim flow's bank details and the API's events only store a row and answer; this
loop claims the waiting rows of every kind joyback/background.py declares and processes each
once. Run it next to the task cluster; any number may run at once (they claim disjoint rows), and
the cluster's one-minute sweep catches up if none does.

A database or Redis that goes away (a restart, a failover, PgBouncer killed) never ends the loop:
it backs off and reconnects (joyback.queue). A heartbeat thread says the worker is alive
(joyback.heartbeats) and renews the leases of the rows it holds.
"""

import signal

from django.core.management.base import BaseCommand

from joyback.heartbeats import Heartbeat
from joyback.queue import standing_work_run


class Command(BaseCommand):
    help = "Process what requests stored for later (webhook events, bank details, API events) as it arrives."

    def add_arguments(self, parser):
        parser.add_argument("--poll", type=float, default=0.2, help="seconds to wait when idle (0.2)")
        parser.add_argument("--once", action="store_true", help="process what is waiting, then exit")

    def handle(self, *args, poll: float, once: bool, **options):
        # TERM (a supervisor) or INT (Ctrl-C): the pass under way finishes (its payouts sent and
        # settled), then the loop ends and the payout senders are closed; a second signal changes nothing.
        stopping = []
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stopping.append(True))
        heartbeat = None if once else Heartbeat("work")
        if heartbeat is not None:
            heartbeat.start()
        try:
            standing_work_run(poll=poll, once=once, stopping=lambda: bool(stopping))
        finally:
            if heartbeat is not None:
                heartbeat.stop()
