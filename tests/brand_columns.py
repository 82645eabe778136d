"""The tables that name their brand after a parent (tests/test_sharding.py): which parent, and the
rows whose brand_id is not their parent's. Every test that used the database ends with this check
(tests/conftest.py), so every flow the suite runs proves that its services write the column."""

from collections import defaultdict

from django.apps import apps
from django.db.models import F, Max, TextField, Value
from django.db.models.functions import Cast, Coalesce

# Each table and the path (Django lookups) to the row whose brand it carries. A transaction's is
# the one brand among its entries' accounts (the platform's accounts name none); its entries carry
# the transaction's, so a posting's rows live together.
SCOPED_THROUGH = {
    "ledger.Transaction": "entries__account",
    "ledger.Entry": "transaction",
    "ledger.Hold": "account",
    "api.WebhookDelivery": "endpoint",
    "api.WebhookAttempt": "delivery",
    "campaigns.ActionRule": "campaign",
    "campaigns.LicenceTerms": "campaign",
    "campaigns.ConsentWording": "campaign",
    "verification.ConsentRecord": "participant",
    "payouts.BroadcastRecipient": "broadcast",
    "campaigns.LandingVisitDay": "campaign",
    "verification.ActionClaim": "campaign",
    "verification.FraudSignal": "claim",
    "verification.ReviewDecision": "claim",
    "verification.TikTokToken": "identity",
    "verification.OptinCode": "campaign",
    "verification.TikTokPost": "campaign",
    "verification.ReachTopUp": "claim",
    "verification.VideoMetric": "claim",
    "verification.LicenceGrant": "participant",
    "verification.SparkAdsCode": "claim",
    "verification.ReferralCode": "campaign",
    "verification.ReferralClick": "code",
    "payouts.PayeeAccount": "participant",
    "payouts.PayeeSubmission": "participant",
    "payouts.PayeeChangeCode": "participant",
    "payouts.PayeeChange": "participant",
    "payouts.VopCheck": "payee",
    "payouts.PayoutEvent": "payout",
    "payouts.Notification": "payee",
    "payouts.ExceptionResolution": "exception",
    "payouts.PrivacyRequest": "participant",
}
# Many rows behind the path: their one brand (the ledger refuses a posting of two).
_MANY = {"ledger.Transaction"}
# Rows with no parent on the path carry their brand alone (a message to a brand's member).
_PARENT_OPTIONAL = {"payouts.Notification"}
NONE = Value(-1)


def brand_columns_wrong() -> list[str]:
    """'label: ids' of the rows whose brand_id is missing or another than their parent's. One query
    for all the tables (UNION ALL): it runs after every database test."""
    checks = []
    for label, path in SCOPED_THROUGH.items():
        parent_brand = F(f"{path}__brand_id")
        if label in _MANY:
            parent_brand = Max(parent_brand)
        rows = apps.get_model(label).objects
        if label in _PARENT_OPTIONAL:
            rows = rows.exclude(**{f"{path}__isnull": True})
        checks.append(
            rows.alias(mine=Coalesce("brand_id", NONE), theirs=Coalesce(parent_brand, NONE))
            .exclude(mine=F("theirs"))
            .annotate(table=Value(label), row=Cast("pk", output_field=TextField()))
            .values_list("table", "row")
            .order_by()[:5]
        )
    wrong = defaultdict(list)
    for label, pk in checks[0].union(*checks[1:], all=True):
        wrong[label].append(pk)
    return [f"{label}: [{', '.join(ids)}]" for label, ids in wrong.items()]
