from django.db import models


class LeasedWork(models.Model):
    """A row a request stored for the standing worker (joyback.queue.lease_claim): the worker's
    lease on it while it processes it, and how many times one tried."""

    claimed_until = models.DateTimeField(null=True, blank=True, help_text="A worker's lease on it")
    attempts = models.PositiveSmallIntegerField(db_default=0, default=0)

    class Meta:
        abstract = True


class WorkerHeartbeat(models.Model):
    """One running worker process (`manage.py work`, `manage.py qcluster`), written every
    WORKER_HEARTBEAT_SECONDS while it runs (joyback.heartbeats): /healthz/work/ knows within
    WORKER_STALE_SECONDS that a worker died or froze, and which one."""

    name = models.CharField(max_length=200, unique=True, help_text="kind@host:pid")
    kind = models.CharField(max_length=20)
    started_at = models.DateTimeField()
    beat_at = models.DateTimeField()
    holding = models.PositiveIntegerField(default=0, help_text="Rows it held leased at its last beat")
    stopped_at = models.DateTimeField(null=True, blank=True, help_text="Set when it stopped cleanly")

    class Meta:
        indexes = [models.Index(fields=["kind", "beat_at"], name="joyback_heartbeat_kind_beat")]

    def __str__(self):
        return self.name
