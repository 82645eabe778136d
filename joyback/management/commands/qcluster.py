"""The task cluster (django-q2's `manage.py qcluster`), made to stop in order on a TERM to its group.

django-q2's sentinel and its workers die at once on SIGTERM while its main process, on the same
signal, sets the sentinel's stop event. When the signal reaches the whole process group (Ctrl-C's
TERM from `make run`, a supervisor killing the group), the sentinel dies asleep on that event and
setting it blocks the main process for ever: a multiprocessing Condition waits for every sleeper
to wake, dead or not. The pusher and the monitor die with it, so the workers' last results are lost.

Here, as django-q2 already does for SIGINT, only the main process acts on TERM: the sentinel and
what it starts ignore it, and stop in order when the main process sets the event (the pusher first,
then each worker after its current task, then the monitor). A worker past the task timeout is still
killed, with SIGKILL instead of the SIGTERM it now ignores; a TERM could not have been caught either.

django-q2 offers no setting or hook for any of this, so the command leans on four of its internals,
each marked "django-q2 internal" below with its reason; tests/test_background.py fails at once if an
upgrade moves one of them (the slow tests/test_shutdown.py proves the behaviour). Putting the cluster
in a session of its own behind a parent that forwards one TERM would need none of them, but a SIGKILL
to the command's group (deploy/cluster.py's "machine gone", a supervisor without cgroups) would then
leave the cluster running as an orphan.

Before starting, the recurring schedules are made to match the code's (joyback.schedules).
"""

import contextlib
import logging
import os
import signal

import psutil
from django import db
from django.conf import settings
from django_q import cluster
from django_q.conf import Conf
from django_q.management.commands.qcluster import Command as QclusterCommand

from joyback.heartbeats import Heartbeat
from joyback.schedules import schedules_sync

logger = logging.getLogger(__name__)

# How long the main process waits beyond the task timeout for the sentinel to stop its processes.
STOP_GRACE_SECONDS = 10


# django-q2 internal: Sentinel, subclassed. Its __init__ sets SIGTERM back to the default and then
# calls start(), the one place to change the disposition before any child process exists.
class Sentinel(cluster.Sentinel):
    def start(self):
        # Inherited by the pusher, the monitor and the workers, which are started from here.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        super().start()

    # django-q2 internal: reincarnate, self.pool and each worker's timer (spawn_process sets it). The
    # guard calls it for a dead worker and for one past the timeout (timer 0), which it would only
    # TERM: ignored here, so it is killed first.
    def reincarnate(self, process):
        if process in self.pool and process.timer.value == 0:
            process.kill()  # past the timeout: it ignores the TERM django-q2 would send
            process.join(timeout=5)
        super().reincarnate(process)


# django-q2 internal: Cluster's sentinel, stop_event, start_event and timeout. Its stop joins the
# sentinel without a limit; this one kills the processes left once the timeout and a grace are past,
# so a stop always ends (a supervisor would otherwise SIGKILL the lot, results unsaved).
class Cluster(cluster.Cluster):
    def stop(self) -> bool:
        if self.sentinel is None or not self.sentinel.is_alive():
            return False
        self.stop_event.set()
        self.sentinel.join(timeout=(self.timeout or Conf.TIMEOUT or 30) + STOP_GRACE_SECONDS)
        if self.sentinel.is_alive():
            logger.error("the task cluster did not stop in time: its processes are killed")
            _kill_tree(self.sentinel.pid)
            self.sentinel.join()
        self.start_event = None
        self.stop_event = None
        return True


def _kill_tree(pid: int) -> None:
    with contextlib.suppress(psutil.NoSuchProcess):
        parent = psutil.Process(pid)
        for process in [*parent.children(recursive=True), parent]:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()


class Command(QclusterCommand):
    def handle(self, *args, cluster_name=None, run_once=False, **options):
        settings.SECRET_KEY  # noqa: B018 - django-q2's check: the tasks are signed with it
        if cluster_name:
            os.environ["Q_CLUSTER_NAME"] = cluster_name
        schedules_sync()
        # django-q2 internal: Cluster.start spawns the module's global Sentinel, and takes no class
        # to use instead; this process runs nothing else, so replacing it here affects nothing else.
        cluster.Sentinel = Sentinel
        if not db.connection.in_atomic_block:  # (a test's transaction)
            # The cluster's processes are forked from this one: none may share its connection.
            db.connections.close_all()
        tasks = Cluster()
        tasks.start()
        if run_once:
            tasks.stop()
            return
        sentinel = getattr(tasks, "sentinel", None)
        if sentinel is None:
            return
        # This process only waits for the sentinel from here: it says the cluster is alive while the
        # sentinel is (joyback.heartbeats), and a TERM's handler stops the cluster meanwhile.
        heartbeat = Heartbeat("qcluster", alive=sentinel.is_alive)
        heartbeat.run()
        heartbeat.stop()
