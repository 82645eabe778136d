"""The payouts app's models, one module per concern; Django finds them here."""

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

__all__ = [
    "BrandFundingReference",
    "ExceptionResolution",
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
    "SandboxFundingEvent",
    "SandboxFundingTransfer",
    "SandboxLegalEntity",
    "Statement",
    "StatementImport",
    "StatementLine",
    "TransferEvent",
    "VirtualAccount",
    "VopCheck",
    # Not models: migrations 0003 and 0011 name these defaults by their first home, payouts.models,
    # so they stay importable here for as long as those migrations exist.
    "new_confirmation_token",
    "new_end_to_end_id",
]
