from django.db import models


class LeasedWork(models.Model):
    """A row a request stored for the standing worker (joyback.queue.lease_claim): the worker's
    lease on it while it processes it, and how many times one tried."""

    claimed_until = models.DateTimeField(null=True, blank=True, help_text="A worker's lease on it")
    attempts = models.PositiveSmallIntegerField(db_default=0, default=0)

    class Meta:
        abstract = True
