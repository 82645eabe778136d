"""The audience's own writes: each export of contacts recorded before it is streamed."""

from django.db import transaction
from django.utils import timezone

from payouts.models import AudienceExport


def audience_export_record(*, brand, user, filters: dict, people: int) -> AudienceExport:
    """Who took the brand's contacts, when, with which filters, how many: in its own transaction,
    committed before the first row leaves."""
    kept = {key: str(value) for key, value in filters.items()}
    with transaction.atomic(durable=True):
        return AudienceExport.objects.create(
            brand=brand, user=user, filters=kept, people=people, at=timezone.now()
        )
