"""The bank, the payment provider, payouts, reconciliation, and the fraud signals and money limits.

The money limits and fraud thresholds here are the platform's defaults: in euro cents for the
amounts, each other currency's default scaled from them, and staff set a brand's or a currency's
own in the admin, effective once a second staff member approves (campaigns.limits)."""

from config.settings.base import env

# The sandbox bank's own account: the only one it ever reports money arriving on.
SANDBOX_BANK_IBAN = "DE02100100100006820101"

# The bank's own channel: Verification of Payee and the pain.001 file upload (the sandbox bank
# inside the app unless configured); single payouts go through PAYOUT_PROVIDER below.
PSP_API_BASE = env.get("PSP_API_BASE")
PSP_API_KEY = env.get("PSP_API_KEY")
PSP_TIMEOUT_SECONDS = env.get("PSP_TIMEOUT_SECONDS")
# The provider single payouts go through (payouts/providers/), and Adyen's balance platform: the
# Transfers API base, the API key, the platform's own balance account (fees arrive there; brands'
# payouts leave their own), and the webhook HMAC keys in hex, comma-separated: two while one is
# being rotated.
PAYOUT_PROVIDER = env.get("PAYOUT_PROVIDER")
ADYEN_API_BASE = env.get("ADYEN_API_BASE")
ADYEN_API_KEY = env.get("ADYEN_API_KEY")
ADYEN_BALANCE_ACCOUNT_ID = env.get("ADYEN_BALANCE_ACCOUNT_ID")
ADYEN_HMAC_KEYS = env.get("ADYEN_HMAC_KEYS")
# Funding by virtual IBAN (payouts/funding/): the Balance Platform API (configuration) base, the
# platform's account holder each brand's balance account is opened under, and the country of the
# virtual IBANs Adyen issues (DE or FR, on its NL account).
ADYEN_BALANCE_PLATFORM_API_BASE = env.get("ADYEN_BALANCE_PLATFORM_API_BASE")
ADYEN_ACCOUNT_HOLDER_ID = env.get("ADYEN_ACCOUNT_HOLDER_ID")
ADYEN_VIRTUAL_IBAN_COUNTRY = env.get("ADYEN_VIRTUAL_IBAN_COUNTRY")
# Each brand onboarded at the provider (payouts/funding/onboarding.py): the Legal Entity Management
# API base, and the theme of the hosted onboarding page (Adyen's default when empty).
ADYEN_LEGAL_ENTITY_API_BASE = env.get("ADYEN_LEGAL_ENTITY_API_BASE")
ADYEN_ONBOARDING_THEME_ID = env.get("ADYEN_ONBOARDING_THEME_ID")
# The ledger's provider balance may differ from the provider's balances by this much before
# /healthz/ and ledger_check report it (minor units; transfers still under way explain a little).
PROVIDER_DRIFT_TOLERANCE_MINOR = env.get("PROVIDER_DRIFT_TOLERANCE_MINOR")
# The key the sandbox bank signs its webhooks with (the first of ADYEN_HMAC_KEYS unless set).
SANDBOX_BANK_HMAC_KEY = env.get("SANDBOX_BANK_HMAC_KEY")
# How far back a lost answer's transfer is looked for (GET /transfers needs a window).
ADYEN_QUERY_DAYS = env.get("ADYEN_QUERY_DAYS")
# The platform's own bank account: its statements are reconciled; no brand's payouts leave it.
PAYOUT_DEBTOR_NAME = env.get("PAYOUT_DEBTOR_NAME")
PAYOUT_DEBTOR_IBAN = env.get("PAYOUT_DEBTOR_IBAN")
PAYOUT_DEBTOR_BIC = env.get("PAYOUT_DEBTOR_BIC")
# SEPA payouts go instant unless "batch": then they leave the brand's own balance account as a
# regular SEPA credit transfer (Adyen's priority "regular"), never in a file of the platform's bank.
PAYOUT_SEPA_MODE = env.get("PAYOUT_SEPA_MODE")
# Currencies without a local rail that are still paid, by SWIFT transfer.
PAYOUT_SWIFT_CURRENCIES = env.get("PAYOUT_SWIFT_CURRENCIES")

# The controls on payouts made by hand (dashboard and API), over a rolling window: the brand's total
# and one bank account's total (across brands) are capped; past PAYOUT_WINDOW_APPROVAL_THRESHOLD in
# the window, above PAYOUT_APPROVAL_THRESHOLD, and on the first payout to an account, a second
# person approves. The amounts are defaults per brand and currency (campaigns.limits). More than
# PAYOUT_VELOCITY_ALERT_COUNT payouts of one brand within PAYOUT_VELOCITY_WINDOW_MINUTES raise an
# alert for platform staff.
PAYOUT_APPROVAL_THRESHOLD = env.get("PAYOUT_APPROVAL_THRESHOLD")
PAYOUT_LIMIT_WINDOW_HOURS = env.get("PAYOUT_LIMIT_WINDOW_HOURS")
PAYOUT_BRAND_DAILY_LIMIT = env.get("PAYOUT_BRAND_DAILY_LIMIT")
PAYOUT_ACCOUNT_DAILY_LIMIT = env.get("PAYOUT_ACCOUNT_DAILY_LIMIT")
PAYOUT_WINDOW_APPROVAL_THRESHOLD = env.get("PAYOUT_WINDOW_APPROVAL_THRESHOLD")
PAYOUT_NEW_ACCOUNT_APPROVAL = env.get("PAYOUT_NEW_ACCOUNT_APPROVAL")
PAYOUT_VELOCITY_ALERT_COUNT = env.get("PAYOUT_VELOCITY_ALERT_COUNT")
PAYOUT_VELOCITY_WINDOW_MINUTES = env.get("PAYOUT_VELOCITY_WINDOW_MINUTES")
# A submission with no answer for this long is asked about, never sent again blindly.
PAYOUT_STALE_SECONDS = env.get("PAYOUT_STALE_SECONDS")
# The payout pipeline (payouts.pipeline): people paid per batch of the standing worker, and how
# many transfers one worker has on their way to the provider at once.
PAYOUT_BATCH_SIZE = env.get("PAYOUT_BATCH_SIZE")
PAYOUT_SEND_THREADS = env.get("PAYOUT_SEND_THREADS")
# A batch is taken once the oldest person due has waited this long (or a full batch is due): at a
# moderate rate batches fill instead of paying one or two people a pass, for this much latency.
PAYOUT_GATHER_MS = env.get("PAYOUT_GATHER_MS")
SANDBOX_BANK_RETURN_AFTER_SECONDS = env.get("SANDBOX_BANK_RETURN_AFTER_SECONDS")
# Only the bank's channel books money: its feed (fetched every minute; the sandbox bank's in the
# sandbox) and the folder it drops statements in, when set. Staff uploads wait for a second person.
BANK_DROP_FOLDER = env.get("BANK_DROP_FOLDER")
# The sandbox's stand-in for a brand's bank transfer (a brand's "top up" in the sandbox).
SANDBOX_BANK_TRANSFER = "payouts.providers.test_mode_bank.brand_transfer_arrive"
# Run (queued, after commit) when staff verify a brand: its virtual account is requested.
BRAND_VERIFIED_TASK = "payouts.funding.tasks.virtual_account_request_task"
# Asked before a live brand's money moves (campaigns.services.funding.brand_money_allowed_check):
# each raises BrandNotVerified while the payment provider has not allowed the brand's capabilities,
# or its balance account drifted from its ledger account.
BRAND_MONEY_CHECKS = ["payouts.funding.onboarding.brand_custody_check"]
# Test mode's play money: the sandbox bank's test account, kept apart from the live bank channel.
SANDBOX_TEST_FUNDS = "payouts.providers.test_mode_bank.play_money_add"
# A payout submitted this many days before the newest statement line, and on none, is an exception.
RECONCILIATION_STALE_DAYS = env.get("RECONCILIATION_STALE_DAYS")
# Booking an exception's line to suspense above this many minor units needs a second staff member's
# approval (linking it to a payout always does; booking it as a brand's deposit is refused).
RECONCILIATION_SECOND_APPROVAL_MINOR = env.get("RECONCILIATION_SECOND_APPROVAL_MINOR")
# The ledger's platform bank differing from the bank's closing balance by more than this many minor
# units pauses moves from the platform's account (custody moves) until staff clear the alert;
# brands' payouts leave their own accounts and go on.
BANK_DRIFT_PAUSE_MINOR = env.get("BANK_DRIFT_PAUSE_MINOR")
# Checks of the ledger against the world outside it (dotted paths, each returning a list of
# problems): ledger_check reports the first (drift recomputed now), /healthz/ the second (alerts not
# yet cleared by staff); the ledger app itself imports no other app.
LEDGER_EXTERNAL_CHECKS = [
    "payouts.reconciliation.bank_health.bank_drift_problems",
    "payouts.funding.selectors.provider_drift_problems",
]
HEALTH_CHECKS = [
    "payouts.reconciliation.bank_health.bank_alert_problems",
    "payouts.funding.selectors.provider_drift_problems",
]

# Per address: plenty for a person, little for a script.
PAYEE_SUBMISSIONS_PER_MINUTE = env.get("PAYEE_SUBMISSIONS_PER_MINUTE")
# Fraud signals: past these, a claim goes to the brand's review queue instead of being paid at once.
FRAUD_CLAIMS_PER_ADDRESS_PER_HOUR = env.get("FRAUD_CLAIMS_PER_ADDRESS_PER_HOUR")
FRAUD_PEOPLE_PER_DEVICE = env.get("FRAUD_PEOPLE_PER_DEVICE")
# A browser given its device cookie less than this long ago is new: its claim goes to review when
# someone else claimed the campaign from the same address within a day.
FRAUD_NEW_DEVICE_MINUTES = env.get("FRAUD_NEW_DEVICE_MINUTES")
FRAUD_CAMPAIGN_CLAIMS_PER_MINUTE = env.get("FRAUD_CAMPAIGN_CLAIMS_PER_MINUTE")
FRAUD_MAX_LIKES_PER_THOUSAND_VIEWS = env.get("FRAUD_MAX_LIKES_PER_THOUSAND_VIEWS")
FRAUD_MAX_COMMENTS_PER_THOUSAND_VIEWS = env.get("FRAUD_MAX_COMMENTS_PER_THOUSAND_VIEWS")
FRAUD_MAX_VIEWS_PER_FOLLOWER = env.get("FRAUD_MAX_VIEWS_PER_FOLLOWER")
# Views gained per hour between two re-checks of a reach share beyond which it waits for a person.
FRAUD_MAX_VIEWS_PER_HOUR = env.get("FRAUD_MAX_VIEWS_PER_HOUR")
# What one person may earn across a brand's campaigns, in minor units, for a new brand (0: no cap).
PERSON_ALLOWANCE_DEFAULT = env.get("PERSON_ALLOWANCE_DEFAULT")
# Referred sales (verification/referrals.py): the payee details the payouts app compares with the
# order (a plug-in point: verification asks, payouts answers), and when a referral goes to review.
REFERRAL_PAYEE_MATCHES = ["payouts.payees.shared_details.referral_payee_matches"]
FRAUD_REFERRAL_ORDERS_PER_SOURCE_PER_HOUR = env.get("FRAUD_REFERRAL_ORDERS_PER_SOURCE_PER_HOUR")
FRAUD_REFERRAL_REFUND_MIN_ORDERS = env.get("FRAUD_REFERRAL_REFUND_MIN_ORDERS")
FRAUD_REFERRAL_REFUND_PERCENT = env.get("FRAUD_REFERRAL_REFUND_PERCENT")

# The platform's fee (defaults for brands and currencies without a plan; campaigns.fees) and its
# monthly invoices (campaigns.invoices): the issuer, its country and VAT rate, the number's prefix.
FEE_PER_ACTION_MINOR = env.get("FEE_PER_ACTION_MINOR")
FEE_PAYOUT_BPS = env.get("FEE_PAYOUT_BPS")
INVOICE_ISSUER_NAME = env.get("INVOICE_ISSUER_NAME")
INVOICE_ISSUER_ADDRESS = env.get("INVOICE_ISSUER_ADDRESS")
INVOICE_ISSUER_VAT_ID = env.get("INVOICE_ISSUER_VAT_ID")
PLATFORM_COUNTRY = env.get("PLATFORM_COUNTRY")
PLATFORM_VAT_RATE_BPS = env.get("PLATFORM_VAT_RATE_BPS")
INVOICE_NUMBER_PREFIX = env.get("INVOICE_NUMBER_PREFIX")
# The tax reports' platform operator (payouts.taxreports.selectors.platform_operator).
TAX_OPERATOR_TIN = env.get("TAX_OPERATOR_TIN")
TAX_OPERATOR_ADDRESS = env.get("TAX_OPERATOR_ADDRESS")
TAX_HMRC_OPERATOR_ID = env.get("TAX_HMRC_OPERATOR_ID")
TAX_US_EIN = env.get("TAX_US_EIN")
TAX_US_TCC = env.get("TAX_US_TCC")
TAX_US_ADDRESS = env.get("TAX_US_ADDRESS")
TAX_CONTACT = env.get("TAX_CONTACT")
