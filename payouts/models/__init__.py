"""The payouts app's models, one module per concern; Django finds them here."""

from payouts.models.audience import (
    AudienceExport,
    Broadcast,
    BroadcastRecipient,
    CrmConnection,
    SandboxCrmProfile,
    WhatsAppAccount,
    WhatsAppTemplate,
)
from payouts.models.fees import FeeTransfer
from payouts.models.funding import ProviderBalanceCheck, ProviderDeposit, ProviderTransaction, VirtualAccount
from payouts.models.notifications import Notification
from payouts.models.onboarding import ProviderOnboarding
from payouts.models.payees import PayeeAccount, PayeeChange, PayeeChangeCode, PayeeSubmission, VopCheck
from payouts.models.payouts import (
    PaymentBatch,
    Payout,
    PayoutAlert,
    PayoutEvent,
    PspFeedCursor,
    TransferEvent,
    new_end_to_end_id,
)
from payouts.models.privacy import PrivacyRequest, new_confirmation_token
from payouts.models.reconciliation import (
    BrandFundingReference,
    ExceptionResolution,
    ReconciliationException,
    Statement,
    StatementImport,
    StatementLine,
)
from payouts.models.sandbox import (
    SandboxBalanceAccount,
    SandboxBankAccount,
    SandboxBankEvent,
    SandboxBankMessage,
    SandboxBankPayment,
    SandboxFundingEvent,
    SandboxFundingTransfer,
    SandboxLegalEntity,
)
from payouts.models.tax import TaxProfile
from payouts.models.tax_reports import TaxReport, TaxReportRow

__all__ = [
    "AudienceExport",
    "BrandFundingReference",
    "Broadcast",
    "BroadcastRecipient",
    "CrmConnection",
    "ExceptionResolution",
    "FeeTransfer",
    "Notification",
    "PayeeAccount",
    "PayeeChange",
    "PayeeChangeCode",
    "PayeeSubmission",
    "PaymentBatch",
    "Payout",
    "PayoutAlert",
    "PayoutEvent",
    "PrivacyRequest",
    "ProviderBalanceCheck",
    "ProviderDeposit",
    "ProviderOnboarding",
    "ProviderTransaction",
    "PspFeedCursor",
    "ReconciliationException",
    "SandboxBalanceAccount",
    "SandboxBankAccount",
    "SandboxBankEvent",
    "SandboxBankMessage",
    "SandboxBankPayment",
    "SandboxCrmProfile",
    "SandboxFundingEvent",
    "SandboxFundingTransfer",
    "SandboxLegalEntity",
    "Statement",
    "StatementImport",
    "StatementLine",
    "TaxProfile",
    "TaxReport",
    "TaxReportRow",
    "TransferEvent",
    "VirtualAccount",
    "VopCheck",
    "WhatsAppAccount",
    "WhatsAppTemplate",
    # Not models: migrations 0003 and 0011 name these defaults by their first home, payouts.models,
    # so they stay importable here for as long as those migrations exist.
    "new_confirmation_token",
    "new_end_to_end_id",
]
