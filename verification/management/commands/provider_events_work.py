"""The standing worker behind the provider webhooks: process stored events as they arrive.

The webhooks only store each event (one statement, one commit) and answer; this loop claims the
unprocessed ones and processes each once. Run it next to the task cluster; any number may run at
once (they claim disjoint events), and the cluster's one-minute sweep catches up if none does.
"""

import logging
import signal
import time

from django.core.management.base import BaseCommand
from django.db import DatabaseError, close_old_connections, connection

from verification.services import provider_events_process

logger = logging.getLogger(__name__)


class Command(BaseCommand):
    help = "Process stored provider webhook events as they arrive (a standing worker)."

    def add_arguments(self, parser):
        parser.add_argument("--poll", type=float, default=0.2, help="seconds to wait when idle (0.2)")
        parser.add_argument("--once", action="store_true", help="process what is waiting, then exit")

    def handle(self, *args, poll: float, once: bool, **options):
        stopping = []
        signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
        while not stopping:
            if not connection.in_atomic_block:  # (a test's transaction)
                close_old_connections()  # honours CONN_MAX_AGE and drops a broken connection
            try:
                claimed = provider_events_process()
            except DatabaseError:
                logger.exception("provider events: the database failed; trying again")
                claimed = 0
            if once and not claimed:
                return
            if not claimed:
                time.sleep(poll)
