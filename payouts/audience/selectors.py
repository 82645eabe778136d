"""Reads of the brand's audience: the latest consent of each person and channel, filtered; the
counts a viewer sees; the growth, opt-out rate and purchases of the overview."""

from datetime import timedelta

from django.db.models import Count, Q, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from payouts.models import AudienceExport, Broadcast, BroadcastRecipient
from verification.models import (
    ConsentAction,
    ConsentRecord,
    Provider,
    ProviderEvent,
    Purchase,
    PurchaseStatus,
)
from verification.selectors import consents_current, consents_latest


def audience_rows(*, brand, filters: dict):
    """Each person's latest consent per channel, newest first, with the filters: campaign, channel,
    state (given or withdrawn), since, until (when the latest row was written) and q (the contact)."""
    rows = consents_latest(brand=brand).select_related("identity", "campaign")
    if filters.get("campaign"):
        rows = rows.filter(campaign_id=filters["campaign"])
    if filters.get("channel"):
        rows = rows.filter(channel=filters["channel"])
    if filters.get("state"):
        rows = rows.filter(action=filters["state"])
    if filters.get("since"):
        rows = rows.filter(at__gte=filters["since"])
    if filters.get("until"):
        rows = rows.filter(at__lt=filters["until"])
    if filters.get("q"):
        rows = rows.filter(identity__subject__icontains=filters["q"].lstrip("+"))
    return rows.order_by("-at", "-pk")


def audience_export_rows(*, brand, filters: dict):
    """What a CSV export holds: the filtered rows whose consent is in force, whatever the state
    filter says (a withdrawn or erased person is never exported)."""
    current = consents_current(brand=brand).values("pk")
    return audience_rows(brand=brand, filters={**filters, "state": ""}).filter(pk__in=current)


def audience_counts(*, brand) -> dict:
    """What every member sees, a viewer included: how many people per channel and state."""
    counts = {"given": 0, "withdrawn": 0, "whatsapp": 0, "email": 0}
    for channel, action, n in (
        consents_latest(brand=brand).values_list("channel", "action").annotate(n=Count("pk")).order_by()
    ):
        counts[action] = counts.get(action, 0) + n
        if action == ConsentAction.GIVEN:
            counts[channel] = counts.get(channel, 0) + n
    total = counts["given"] + counts["withdrawn"]
    counts["opt_out_rate"] = round(100 * counts["withdrawn"] / total, 1) if total else 0.0
    return counts


def audience_growth(*, brand, since, until) -> dict:
    """Consents given and withdrawn per day (the overview's chart)."""
    days = (
        ConsentRecord.objects.filter(brand=brand, at__gte=since, at__lt=until)
        .annotate(day=TruncDate("at"))
        .values_list("day", "action")
        .annotate(n=Count("pk"))
        .order_by()
    )
    found: dict = {}
    for day, action, n in days:
        found.setdefault(day, {"given": 0, "withdrawn": 0})[action] = n
    return found


def audience_purchases(*, brand) -> dict:
    """Purchases by people of the audience made after their consent, per currency: what the
    audience bought (for brands with a shop connector or the Cashback API)."""
    given = ConsentRecord.objects.filter(brand=brand, action=ConsentAction.GIVEN)
    first_consent = {}
    for participant_id, at in given.order_by("participant_id", "at").values_list("participant_id", "at"):
        first_consent.setdefault(participant_id, at)
    if not first_consent:
        return {}
    totals: dict = {}
    purchases = Purchase.objects.filter(
        brand=brand,
        identity__participant_id__in=list(first_consent),
        status__in=[PurchaseStatus.PENDING, PurchaseStatus.CONFIRMED],
    ).values_list("identity__participant_id", "created_at", "amount", "currency")
    for participant_id, created_at, amount, currency in purchases:
        if created_at >= first_consent[participant_id]:
            entry = totals.setdefault(currency, {"orders": 0, "amount": 0, "buyers": set()})
            entry["orders"] += 1
            entry["amount"] += amount
            entry["buyers"].add(participant_id)
    return {currency: {**t, "buyers": len(t["buyers"])} for currency, t in totals.items()}


def audience_exports_recent(*, brand, limit: int = 10):
    return AudienceExport.objects.filter(brand=brand).select_related("user").order_by("-at")[:limit]


def broadcasts_for_brand(*, brand):
    return Broadcast.objects.filter(brand=brand).order_by("-created_at")


def broadcast_get(*, brand, broadcast_id: int) -> Broadcast | None:
    return Broadcast.objects.filter(brand=brand, pk=broadcast_id).first()


def broadcast_results(*, broadcast: Broadcast) -> dict:
    """Delivered, read, replied, opted out, failed and what it cost (billable deliveries at the plan's
    rate, in USD micro-units)."""
    recipients = broadcast.recipients.all()
    counts = recipients.aggregate(
        planned=Count("pk"),
        skipped=Count("pk", filter=Q(status="skipped")),
        sent=Count("pk", filter=Q(sent_at__isnull=False)),
        delivered=Count("pk", filter=Q(delivered_at__isnull=False)),
        read=Count("pk", filter=Q(read_at__isnull=False)),
        failed=Count("pk", filter=Q(status="failed")),
        cost=Sum("cost_micros", filter=Q(billable=True)),
    )
    sent = recipients.filter(sent_at__isnull=False)
    counts["cost"] = counts["cost"] or 0
    counts["opted_out"] = (
        ConsentRecord.objects.filter(
            participant_id__in=sent.values("participant_id"),
            action=ConsentAction.WITHDRAWN,
            channel="whatsapp",
            at__gte=broadcast.send_at,
        )
        .values("participant_id")
        .distinct()
        .count()
    )
    counts["replied"] = _replied(broadcast=broadcast, sent=sent)
    counts["skips"] = dict(
        recipients.filter(status="skipped").values_list("skip_reason").annotate(n=Count("pk")).order_by()
    )
    counts["errors"] = dict(
        recipients.filter(status="failed").values_list("error_code").annotate(n=Count("pk")).order_by()
    )
    return counts


def _replied(*, broadcast, sent) -> int:
    """People who wrote back after their message: an inbound WhatsApp message answering it (its
    context names our message) or from their number within a day."""
    numbers = set(sent.values_list("identity__subject", flat=True))
    if not numbers:
        return 0
    start = broadcast.send_at
    inbound = ProviderEvent.objects.filter(
        provider=Provider.WHATSAPP,
        received_at__gte=start,
        received_at__lt=start + timedelta(days=7),
        payload__wa_id__in=list(numbers),
    ).exclude(payload__has_key="status")
    return len(set(inbound.values_list("payload__wa_id", flat=True)))


def tier_used_today(*, brand_id: int, now=None) -> int:
    """People reached with templates in the last 24 h by the brand's own number: Meta's tier limit
    is the number's."""
    now = now or timezone.now()
    return (
        BroadcastRecipient.objects.filter(brand_id=brand_id, sent_at__gte=now - timedelta(hours=24))
        .values("identity__subject")
        .distinct()
        .count()
    )
