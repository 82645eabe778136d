"""One settings file, driven by the environment.

JOYBACK_ENV is "development" (make run), "test" (make test) or "production" (the default, so that
a forgotten variable fails safe: no debug, secure cookies, a SECRET_KEY that must be given).
"""

import base64
import hashlib
import os
from pathlib import Path

import dj_database_url
from csp.constants import NONCE, NONE, SELF
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

from joyback import embedded_db

BASE_DIR = Path(__file__).resolve().parent.parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


JOYBACK_ENV = os.environ.get("JOYBACK_ENV", "production")
if JOYBACK_ENV not in {"development", "test", "production"}:
    raise ImproperlyConfigured(f"JOYBACK_ENV must be development, test or production, not {JOYBACK_ENV!r}")
IS_PRODUCTION = JOYBACK_ENV == "production"

DEBUG = env_bool("DEBUG", JOYBACK_ENV == "development")

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if IS_PRODUCTION:
        raise ImproperlyConfigured("SECRET_KEY must be set when JOYBACK_ENV is production")
    SECRET_KEY = f"insecure-{JOYBACK_ENV}-key-never-use-in-production"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "" if IS_PRODUCTION else "localhost,127.0.0.1,[::1]")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")
# The sandbox providers and bank stand in for TikTok, WhatsApp and the banks: on by default outside
# production, and never on in production unless said so.
SANDBOX = env_bool("SANDBOX", not IS_PRODUCTION)
# The address people reach the site at (links in messages, provider redirects); production must say it.
SITE_URL = os.environ.get("SITE_URL", "" if IS_PRODUCTION else "http://localhost:8000")

# The sandbox's own secrets, published in this file: the defaults outside production, and a startup
# error in production (joyback.safety), whether left to default or copied into the environment.
SANDBOX_SECRETS = {
    "TIKTOK_CLIENT_SECRET": "sbx-tiktok-secret",
    "TIKTOK_ADS_ACCESS_TOKEN": "sbx-ads-token",
    "WHATSAPP_APP_SECRET": "sbx-meta-app-secret",
    "WHATSAPP_VERIFY_TOKEN": "sbx-verify-token",
    "WHATSAPP_ACCESS_TOKEN": "sbx-whatsapp-token",
    "PSP_API_KEY": "sbx-psp-key",
    "ADYEN_API_KEY": "sbx-adyen-api-key",
    "ADYEN_HMAC_KEYS": "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056",
}


def _secret(name: str) -> str:
    return os.environ.get(name, SANDBOX_SECRETS[name] if SANDBOX else "")


# The sandbox bank's own account: the only one it ever reports money arriving on.
SANDBOX_BANK_IBAN = "DE02100100100006820101"

# The public landing page is the same for every visitor: its body is cached this long.
LANDING_CACHE_SECONDS = int(os.environ.get("LANDING_CACHE_SECONDS", "10"))
# With Redis, how long each web process keeps a landing page it fetched (0: never; see campaigns.views).
LANDING_LOCAL_SECONDS = float(os.environ.get("LANDING_LOCAL_SECONDS", "1"))

# Run when a campaign or its rules are saved and before it goes live; each returns problems, and a
# blocking one refuses the launch. Dotted paths: campaigns may not import the apps to its right.
CAMPAIGN_LAUNCH_CHECKS = ["compliance.services.campaign_lint"]

# The proxies in front of the app (load balancer, ingress): the client's address is read from the
# X-Forwarded-For they append, and only from them. Either their networks (safest: a request that
# did not come through them is judged by its own address) or how many of them a request passes.
TRUSTED_PROXIES = env_list("TRUSTED_PROXIES")
TRUSTED_PROXY_HOPS = int(os.environ.get("TRUSTED_PROXY_HOPS", "0"))

# Per address: plenty for a person, little for a script.
PAYEE_SUBMISSIONS_PER_MINUTE = int(os.environ.get("PAYEE_SUBMISSIONS_PER_MINUTE", "10"))

# Fraud signals: past these, a claim goes to the brand's review queue instead of being paid at once.
FRAUD_CLAIMS_PER_ADDRESS_PER_HOUR = int(os.environ.get("FRAUD_CLAIMS_PER_ADDRESS_PER_HOUR", "10"))
FRAUD_PEOPLE_PER_DEVICE = int(os.environ.get("FRAUD_PEOPLE_PER_DEVICE", "3"))
# A browser given its device cookie less than this long ago is new: its claim goes to review when
# someone else claimed the campaign from the same address within a day.
FRAUD_NEW_DEVICE_MINUTES = int(os.environ.get("FRAUD_NEW_DEVICE_MINUTES", "60"))
FRAUD_CAMPAIGN_CLAIMS_PER_MINUTE = int(os.environ.get("FRAUD_CAMPAIGN_CLAIMS_PER_MINUTE", "1000"))
FRAUD_MAX_LIKES_PER_VIEW = float(os.environ.get("FRAUD_MAX_LIKES_PER_VIEW", "0.4"))
FRAUD_MAX_COMMENTS_PER_VIEW = float(os.environ.get("FRAUD_MAX_COMMENTS_PER_VIEW", "0.1"))
FRAUD_MAX_VIEWS_PER_FOLLOWER = int(os.environ.get("FRAUD_MAX_VIEWS_PER_FOLLOWER", "200"))
# Views gained per hour between two re-checks of a reach share beyond which it waits for a person.
FRAUD_MAX_VIEWS_PER_HOUR = int(os.environ.get("FRAUD_MAX_VIEWS_PER_HOUR", "50000"))
# What one person may earn across a brand's campaigns, in minor units, for a new brand (0: no cap).
PERSON_ALLOWANCE_DEFAULT = int(os.environ.get("PERSON_ALLOWANCE_DEFAULT", "10000"))
# How long an erased person's payout, ledger and compliance records keep their personal data before
# the retention job pseudonymises them (German bookkeeping law: 10 years; set what applies).
PRIVACY_RETENTION_DAYS = int(os.environ.get("PRIVACY_RETENTION_DAYS", "3653"))
TIKTOK_WEBHOOK_TOLERANCE = int(os.environ.get("TIKTOK_WEBHOOK_TOLERANCE", "300"))

PAYEE_ENCRYPTION_KEYS = env_list("PAYEE_ENCRYPTION_KEYS")
if not PAYEE_ENCRYPTION_KEYS:
    if IS_PRODUCTION:
        raise ImproperlyConfigured(
            "PAYEE_ENCRYPTION_KEYS must be set in production (Fernet keys, newest first)"
        )
    _digest = hashlib.sha256(f"payee-data:{SECRET_KEY}".encode()).digest()
    PAYEE_ENCRYPTION_KEYS = [base64.urlsafe_b64encode(_digest).decode()]
# The key of the duplicate-detection fingerprints (same bank account, email or phone), apart from
# the encryption keys so that those rotate without changing a fingerprint. An installation from
# before this setting keeps its fingerprints by setting it to its oldest PAYEE_ENCRYPTION_KEYS key;
# a new key needs `manage.py payee_fingerprints_recompute` once.
PAYEE_FINGERPRINT_KEY = os.environ.get("PAYEE_FINGERPRINT_KEY", "")
if not PAYEE_FINGERPRINT_KEY:
    if IS_PRODUCTION:
        raise ImproperlyConfigured(
            "PAYEE_FINGERPRINT_KEY must be set in production (to keep the existing fingerprints, "
            "the oldest key of PAYEE_ENCRYPTION_KEYS; see the README on rotating keys)"
        )
    PAYEE_FINGERPRINT_KEY = hashlib.sha256(f"payee-fingerprints:{SECRET_KEY}".encode()).hexdigest()

# Providers. In the sandbox the adapters reach the app's own sandbox endpoints (same wire format).
TIKTOK_CLIENT_KEY = os.environ.get("TIKTOK_CLIENT_KEY", "sbx-joyback" if SANDBOX else "")
TIKTOK_CLIENT_SECRET = _secret("TIKTOK_CLIENT_SECRET")
TIKTOK_AUTHORIZE_URL = os.environ.get(
    "TIKTOK_AUTHORIZE_URL",
    "/sandbox/tiktok/v2/auth/authorize/" if SANDBOX else "https://www.tiktok.com/v2/auth/authorize/",
)
TIKTOK_API_BASE = os.environ.get(
    "TIKTOK_API_BASE", "/sandbox/tiktok" if SANDBOX else "https://open.tiktokapis.com"
)
# TikTok's oEmbed (the content library's embeds) and the Business API (Spark Ads authorisation
# codes, read with the platform's advertiser token).
TIKTOK_OEMBED_URL = os.environ.get(
    "TIKTOK_OEMBED_URL", "/sandbox/tiktok/oembed" if SANDBOX else "https://www.tiktok.com/oembed"
)
TIKTOK_BUSINESS_API_BASE = os.environ.get(
    "TIKTOK_BUSINESS_API_BASE",
    "/sandbox/tiktok/business" if SANDBOX else "https://business-api.tiktok.com",
)
# Read the "Paid partnership" label back through TikTok's Commercial Content API (a research product:
# on only with an approved client) for shares whose campaign's audience is in the EEA.
TIKTOK_COMMERCIAL_CONTENT = env_bool("TIKTOK_COMMERCIAL_CONTENT", SANDBOX)
TIKTOK_ADS_ACCESS_TOKEN = _secret("TIKTOK_ADS_ACCESS_TOKEN")
TIKTOK_ADVERTISER_ID = os.environ.get("TIKTOK_ADVERTISER_ID", "7000000000000000001" if SANDBOX else "")
# Shops: JoyBack's Shopify app (its OAuth install proves a shop is the brand's), and where a shop's
# own endpoints are: the shop itself, or in the sandbox the sandbox shops answering for any domain.
SHOPIFY_API_KEY = os.environ.get("SHOPIFY_API_KEY", "sbx-joyback-shopify" if SANDBOX else "")
SHOPIFY_API_SECRET = os.environ.get("SHOPIFY_API_SECRET", "sbx-shopify-secret" if SANDBOX else "")
SHOP_HOST_BASE = os.environ.get(
    "SHOP_HOST_BASE", "/sandbox/shop-hosts/{domain}" if SANDBOX else "https://{domain}"
)
# Posting through JoyBack (TikTok Direct Post): TikTok takes videos up to 4 GB. A chosen file is
# stored here (streamed to disk, never held in memory) until a worker has sent it to TikTok.
TIKTOK_POST_MAX_BYTES = int(os.environ.get("TIKTOK_POST_MAX_BYTES", str(4 * 1024**3)))
VIDEO_UPLOAD_ROOT = os.environ.get("VIDEO_UPLOAD_ROOT", str(BASE_DIR / "var" / "video-uploads"))
# The sandbox TikTok as an app TikTok has not audited yet: it lets it post only privately.
SANDBOX_TIKTOK_UNAUDITED = env_bool("SANDBOX_TIKTOK_UNAUDITED", False)
# Posts a creator may publish through apps in a day before TikTok answers spam_risk_too_many_posts.
SANDBOX_TIKTOK_POSTS_PER_DAY = int(os.environ.get("SANDBOX_TIKTOK_POSTS_PER_DAY", "15"))
# What the sandbox TikTok's creator_info says of every creator: "" (each as their display name
# says: one with "limited" in it has comments and duets off and 15-second posts, "banned" cannot
# post, "capped" meets the app's daily user cap), or "limited", "banned", "capped" for all of them.
SANDBOX_TIKTOK_CREATOR = os.environ.get("SANDBOX_TIKTOK_CREATOR", "")
# Posts through the API wait in the studio until a tester passes moderation (else public at once).
SANDBOX_TIKTOK_HOLD_MODERATION = env_bool("SANDBOX_TIKTOK_HOLD_MODERATION", False)
WHATSAPP_APP_SECRET = _secret("WHATSAPP_APP_SECRET")
WHATSAPP_VERIFY_TOKEN = _secret("WHATSAPP_VERIFY_TOKEN")
WHATSAPP_BUSINESS_NUMBER = os.environ.get("WHATSAPP_BUSINESS_NUMBER", "15550783881")
WHATSAPP_API_BASE = os.environ.get(
    "WHATSAPP_API_BASE", "/sandbox/whatsapp/graph" if SANDBOX else "https://graph.facebook.com"
)
WHATSAPP_PHONE_NUMBER_ID = os.environ.get("WHATSAPP_PHONE_NUMBER_ID", "106540352242922" if SANDBOX else "")
WHATSAPP_ACCESS_TOKEN = _secret("WHATSAPP_ACCESS_TOKEN")

# The bank's own channel: Verification of Payee and the pain.001 file upload (the sandbox bank
# inside the app unless configured); single payouts go through PAYOUT_PROVIDER below.
PSP_API_BASE = os.environ.get("PSP_API_BASE", "http://sandbox.localhost/sandbox/bank" if SANDBOX else "")
PSP_API_KEY = _secret("PSP_API_KEY")
PSP_TIMEOUT_SECONDS = float(os.environ.get("PSP_TIMEOUT_SECONDS", "7"))
# The provider single payouts go through (payouts/providers/), and Adyen's balance platform: the
# Transfers API base, the API key, the platform's balance account the payouts leave from, and the
# webhook HMAC keys in hex, comma-separated: two while one is being rotated.
PAYOUT_PROVIDER = os.environ.get("PAYOUT_PROVIDER", "adyen")
ADYEN_API_BASE = os.environ.get(
    "ADYEN_API_BASE",
    "http://sandbox.localhost/sandbox/bank/btl/v4"
    if SANDBOX
    else "https://balanceplatform-api-live.adyen.com/btl/v4",
)
ADYEN_API_KEY = _secret("ADYEN_API_KEY")
ADYEN_BALANCE_ACCOUNT_ID = os.environ.get(
    "ADYEN_BALANCE_ACCOUNT_ID", "BA00000000000000000JOYBACK" if SANDBOX else ""
)
ADYEN_HMAC_KEYS = env_list("ADYEN_HMAC_KEYS") or ([SANDBOX_SECRETS["ADYEN_HMAC_KEYS"]] if SANDBOX else [])
# Funding by virtual IBAN (payouts/funding/): the Balance Platform API (configuration) base, the
# platform's account holder each brand's balance account is opened under, and the country of the
# virtual IBANs Adyen issues (DE or FR, on its NL account).
ADYEN_BALANCE_PLATFORM_API_BASE = os.environ.get(
    "ADYEN_BALANCE_PLATFORM_API_BASE",
    "http://sandbox.localhost/sandbox/bank/bcl/v2"
    if SANDBOX
    else "https://balanceplatform-api-live.adyen.com/bcl/v2",
)
ADYEN_ACCOUNT_HOLDER_ID = os.environ.get(
    "ADYEN_ACCOUNT_HOLDER_ID", "AH00000000000000000JOYBACK" if SANDBOX else ""
)
ADYEN_VIRTUAL_IBAN_COUNTRY = os.environ.get("ADYEN_VIRTUAL_IBAN_COUNTRY", "DE")
# The ledger's provider balance may differ from the provider's balances by this much before
# /healthz/ and ledger_check report it (minor units; transfers still under way explain a little).
PROVIDER_DRIFT_TOLERANCE_MINOR = int(os.environ.get("PROVIDER_DRIFT_TOLERANCE_MINOR", "0"))
# The key the sandbox bank signs its webhooks with (the first of ADYEN_HMAC_KEYS unless set).
SANDBOX_BANK_HMAC_KEY = os.environ.get("SANDBOX_BANK_HMAC_KEY", "")
# How far back a lost answer's transfer is looked for (GET /transfers needs a window).
ADYEN_QUERY_DAYS = int(os.environ.get("ADYEN_QUERY_DAYS", "30"))
# The platform's own account the payouts leave from (the debtor of pain.001 files).
PAYOUT_DEBTOR_NAME = os.environ.get("PAYOUT_DEBTOR_NAME", "JoyBack Payouts")
PAYOUT_DEBTOR_IBAN = os.environ.get("PAYOUT_DEBTOR_IBAN", SANDBOX_BANK_IBAN if SANDBOX else "")
PAYOUT_DEBTOR_BIC = os.environ.get("PAYOUT_DEBTOR_BIC", "PBNKDEFFXXX" if SANDBOX else "")
# SEPA payouts go instant unless "batch": then they wait for the next pain.001 file.
PAYOUT_SEPA_MODE = os.environ.get("PAYOUT_SEPA_MODE", "instant")
# Currencies without a local rail that are still paid, by SWIFT transfer.
PAYOUT_SWIFT_CURRENCIES = env_list("PAYOUT_SWIFT_CURRENCIES") or ["CAD", "AUD", "NZD", "SGD", "JPY", "HKD"]
PAYOUT_FILE_MAX_TRANSACTIONS = int(os.environ.get("PAYOUT_FILE_MAX_TRANSACTIONS", "10000"))
# Manual payouts above this many minor units need a second person's approval.
PAYOUT_APPROVAL_THRESHOLD = int(os.environ.get("PAYOUT_APPROVAL_THRESHOLD", "50000"))
# The controls on payouts made by hand (dashboard and API), in minor units of the payout's currency,
# over a rolling window: the brand's total and one bank account's total (across brands) are capped;
# past PAYOUT_WINDOW_APPROVAL_THRESHOLD in the window, and on the first payout to an account, a
# second person approves. More than PAYOUT_VELOCITY_ALERT_COUNT payouts of one brand within
# PAYOUT_VELOCITY_WINDOW_MINUTES raise an alert for platform staff.
PAYOUT_LIMIT_WINDOW_HOURS = int(os.environ.get("PAYOUT_LIMIT_WINDOW_HOURS", "24"))
PAYOUT_BRAND_DAILY_LIMIT = int(os.environ.get("PAYOUT_BRAND_DAILY_LIMIT", "1000000"))
PAYOUT_ACCOUNT_DAILY_LIMIT = int(os.environ.get("PAYOUT_ACCOUNT_DAILY_LIMIT", "200000"))
PAYOUT_WINDOW_APPROVAL_THRESHOLD = int(os.environ.get("PAYOUT_WINDOW_APPROVAL_THRESHOLD", "250000"))
PAYOUT_NEW_ACCOUNT_APPROVAL = env_bool("PAYOUT_NEW_ACCOUNT_APPROVAL", True)
# Four eyes are two people: for this many days after one person made another's account, gave them
# a membership, role, permission or group (or confirmed one), neither may be the second approver of
# what the other proposed (joyback.users.four_eyes).
FOUR_EYES_COOLING_DAYS = int(os.environ.get("FOUR_EYES_COOLING_DAYS", "7"))
PAYOUT_VELOCITY_ALERT_COUNT = int(os.environ.get("PAYOUT_VELOCITY_ALERT_COUNT", "20"))
PAYOUT_VELOCITY_WINDOW_MINUTES = int(os.environ.get("PAYOUT_VELOCITY_WINDOW_MINUTES", "10"))
# A submission with no answer for this long is asked about, never sent again blindly.
PAYOUT_STALE_SECONDS = int(os.environ.get("PAYOUT_STALE_SECONDS", "60"))
# The payout pipeline (payouts.pipeline): people paid per batch of the standing worker, and how
# many transfers one worker has on their way to the provider at once (the tests send in turn, on
# their own connection: sender threads would keep connections to the test database open).
PAYOUT_BATCH_SIZE = int(os.environ.get("PAYOUT_BATCH_SIZE", "100"))
PAYOUT_SEND_THREADS = int(os.environ.get("PAYOUT_SEND_THREADS", "1" if JOYBACK_ENV == "test" else "8"))
# A batch is taken once the oldest person due has waited this long (or a full batch is due): at a
# moderate rate batches fill instead of paying one or two people a pass, for this much latency
# (0: at once, as the tests, which expect an approval's payout on commit, run).
PAYOUT_GATHER_MS = int(os.environ.get("PAYOUT_GATHER_MS", "0" if JOYBACK_ENV == "test" else "200"))
SANDBOX_BANK_RETURN_AFTER_SECONDS = int(os.environ.get("SANDBOX_BANK_RETURN_AFTER_SECONDS", "0"))
# Only the bank's channel books money: its feed (fetched every minute; the sandbox bank's in the
# sandbox) and the folder it drops statements in, when set. Staff uploads wait for a second person.
BANK_DROP_FOLDER = os.environ.get("BANK_DROP_FOLDER", "")
# The sandbox's stand-in for a brand's bank transfer (a brand's "top up" in the sandbox).
SANDBOX_BANK_TRANSFER = "payouts.sandbox.files.brand_transfer_arrive"
# Run (queued, after commit) when staff verify a brand: its virtual account is requested.
BRAND_VERIFIED_TASK = "payouts.funding.tasks.virtual_account_request_task"
# Test mode's play money: the sandbox bank's test account, kept apart from the live bank channel.
SANDBOX_TEST_FUNDS = "payouts.sandbox_funding.sandbox_funds_add"
# A payout submitted this many days before the newest statement line, and on none, is an exception.
RECONCILIATION_STALE_DAYS = int(os.environ.get("RECONCILIATION_STALE_DAYS", "3"))
# Booking an exception's line to suspense above this many minor units needs a second staff member's
# approval (linking it to a payout or booking it as a brand's deposit always does).
RECONCILIATION_SECOND_APPROVAL_MINOR = int(os.environ.get("RECONCILIATION_SECOND_APPROVAL_MINOR", "10000"))
# The ledger's platform bank differing from the bank's closing balance by more than this many minor
# units pauses every payout until staff clear the alert.
BANK_DRIFT_PAUSE_MINOR = int(os.environ.get("BANK_DRIFT_PAUSE_MINOR", "0"))
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

INSTALLED_APPS = [
    "joyback.admin_apps.JoyBackAdminConfig",  # django.contrib.admin, signed in to through allauth
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "allauth",
    "allauth.account",
    "allauth.mfa",
    "django_htmx",
    "template_partials",
    "rest_framework",
    "drf_spectacular",
    # Before django_q: its manage.py qcluster is joyback's, which stops cleanly on a TERM to the group.
    "joyback",  # the standing worker's command (manage.py work)
    "django_q",
    "joyback.users",
    "joyback.ledger",
    "joyback.api",
    "campaigns",
    "compliance",
    "verification",
    "payouts",
]

MIDDLEWARE = [
    "joyback.observability.request_id_middleware",  # first: every request is counted and named
    "joyback.limits.RequestSizeLimitMiddleware",  # before anything reads a body
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "joyback.api.versions.api_version_middleware",  # JoyBack-Version on every API answer
    "django.contrib.sessions.middleware.SessionMiddleware",
    "verification.sessions.participant_cookie_middleware",  # which participant a browser is
    "verification.device.device_cookie_middleware",  # which browser it is (fraud signals)
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "joyback.replicas.ReplicaReadsMiddleware",  # last: it answers the replica pages' views itself
]

if IS_PRODUCTION:
    # Outside production runserver serves static files from the app folders.
    MIDDLEWARE.insert(2, "whitenoise.middleware.WhiteNoiseMiddleware")

# The largest request body taken (a bank statement upload is the largest there is): refused by its
# Content-Length before anything is read or stored. Bodies that are not files stay within Django's
# DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB).
STATEMENT_UPLOAD_MAX_BYTES = int(os.environ.get("STATEMENT_UPLOAD_MAX_BYTES", str(20 * 1024 * 1024)))
REQUEST_MAX_BYTES = int(os.environ.get("REQUEST_MAX_BYTES", str(STATEMENT_UPLOAD_MAX_BYTES + 64 * 1024)))

ROOT_URLCONF = "config.urls"
# The endpoints machines call (provider webhooks, POST /api/v1/events), signed or keyed, never with a
# session, CSRF token, language, messages or frames: the WSGI and ASGI applications answer a path
# this URLconf resolves with MACHINE_MIDDLEWARE instead of MIDDLEWARE (joyback.machine). Through the
# whole chain they took twice the CPU per request.
MACHINE_URLCONF = "config.machine_urls"
MACHINE_MIDDLEWARE = [
    "joyback.observability.request_id_middleware",
    "joyback.limits.RequestSizeLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "joyback.api.versions.api_version_middleware",
    "joyback.machine.machine_answer_middleware",  # the site's language and a Content-Length
]
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.i18n",
            ],
        },
    }
]

DATABASES = {
    "default": dj_database_url.parse(
        # Unset: the project's own server that `python -m joyback.embedded_db` starts for make run/test.
        os.environ.get("DATABASE_URL") or embedded_db.default_url(),
        conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "60")),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
    # The ledger's rules are PostgreSQL triggers and its races are settled by PostgreSQL row locks.
    raise ImproperlyConfigured("DATABASE_URL must point at PostgreSQL (postgres://...)")
# The same backend, with a health check that reads the socket instead of a SELECT 1 per request.
DATABASES["default"]["ENGINE"] = "joyback.postgresql"
# Connection pooling in each process (Django's psycopg pool), instead of one kept connection per
# process: DB_POOL_MAX_SIZE connections at most, shared by the process's threads; 0 keeps the one
# persistent connection. Through a pooler in transaction mode (PgBouncer before 1.21), where a
# statement prepared on one server connection is unknown on the next, DB_SERVER_PREPARE=0.
DB_POOL_MAX_SIZE = int(os.environ.get("DB_POOL_MAX_SIZE", "0"))
DATABASES["default"].setdefault("OPTIONS", {})
if DB_POOL_MAX_SIZE:
    DATABASES["default"]["CONN_MAX_AGE"] = 0  # the pool keeps them; Django refuses both at once
    DATABASES["default"]["OPTIONS"]["pool"] = {
        "min_size": int(os.environ.get("DB_POOL_MIN_SIZE", "1")),
        "max_size": DB_POOL_MAX_SIZE,
        "timeout": float(os.environ.get("DB_POOL_TIMEOUT", "10")),
    }
if not env_bool("DB_SERVER_PREPARE", True):
    DATABASES["default"]["OPTIONS"]["prepare_threshold"] = None
# A streaming replica for the long reads that may lag a moment (joyback.replicas): the dashboard,
# reconciliation and exports. Tests have the alias as a mirror of the test database, used only by
# the tests that turn REPLICA_READS on.
DATABASE_REPLICA_URL = os.environ.get("DATABASE_REPLICA_URL", "")
if DATABASE_REPLICA_URL or JOYBACK_ENV == "test":
    DATABASES["replica"] = dj_database_url.parse(
        DATABASE_REPLICA_URL or os.environ.get("DATABASE_URL") or embedded_db.default_url(),
        conn_max_age=DATABASES["default"]["CONN_MAX_AGE"],
        conn_health_checks=True,
    )
    DATABASES["replica"]["ENGINE"] = "joyback.postgresql"
    DATABASES["replica"]["OPTIONS"] = {
        **{key: value for key, value in DATABASES["default"]["OPTIONS"].items() if key != "pool"},
        "connect_timeout": int(os.environ.get("REPLICA_CONNECT_TIMEOUT", "2")),
    }
    DATABASES["replica"]["TEST"] = {"MIRROR": "default"}
REPLICA_READS = env_bool("REPLICA_READS", bool(DATABASE_REPLICA_URL))
DATABASE_ROUTERS = ["joyback.replicas.ReplicaRouter"]
# The pages whose reads may come from the replica (URL names), GET and HEAD only.
REPLICA_READ_VIEWS = [
    "brand_dashboard",
    "campaign_list",
    "payouts:payout_list",
    "payouts:campaign_payouts",
    "payouts:reconciliation",
    "payouts:reconciliation_csv",
    "compliance:report_csv",
]
# After a write, its sender reads from the primary for this long (well above the replica's lag).
REPLICA_PIN_SECONDS = int(os.environ.get("REPLICA_PIN_SECONDS", "10"))
# A replica that did not answer is tried again after this long; meanwhile the primary answers.
REPLICA_RETRY_SECONDS = float(os.environ.get("REPLICA_RETRY_SECONDS", "5"))
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_USER_MODEL = "users.User"
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {
        "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
        "OPTIONS": {"min_length": 10},
    },
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
if JOYBACK_ENV == "test":
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

LOGIN_URL = "account_login"
LOGIN_REDIRECT_URL = "brand_home"
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
ACCOUNT_USER_MODEL_USERNAME_FIELD = None
ACCOUNT_EMAIL_VERIFICATION = os.environ.get("ACCOUNT_EMAIL_VERIFICATION", "optional")
ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION = True
ACCOUNT_LOGOUT_ON_PASSWORD_CHANGE = False  # this session stays; Django ends the user's other ones
ACCOUNT_ADAPTER = "joyback.users.adapter.AccountAdapter"
ACCOUNT_FORMS = {"login": "joyback.users.adapter.LoginForm"}
# In the shared cache (see CACHES), so every web process counts the same failures.
ACCOUNT_RATE_LIMITS = {"login_failed": "10/m/ip,5/5m/key"}
# API keys, webhooks and approvals ask for the password or second factor again after this long.
ACCOUNT_REAUTHENTICATION_TIMEOUT = int(os.environ.get("REAUTHENTICATION_SECONDS", "300"))
MFA_SUPPORTED_TYPES = ["totp", "webauthn", "recovery_codes"]
MFA_TOTP_ISSUER = "JoyBack"
# A code typed in the last seconds of its 30 and sent in the next is still taken (RFC 6238 5.2's one
# step back and forth); allauth then refuses the code again for the whole window, so it is not replayed.
MFA_TOTP_TOLERANCE = 1
# Passkeys need https, but for the development server on localhost.
MFA_WEBAUTHN_ALLOW_INSECURE_ORIGIN = not IS_PRODUCTION
# Staff can change everything: their sessions end sooner than brand users' (two weeks).
STAFF_SESSION_SECONDS = int(os.environ.get("STAFF_SESSION_SECONDS", str(8 * 3600)))

LANGUAGE_CODE = "en"
LANGUAGES = [
    ("en", _("English")),
    ("de", _("German")),
    ("es", _("Spanish")),
    ("zh-hans", _("Simplified Chinese")),
]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / "staticfiles"))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Production points this at object storage shared by web and worker machines.
    "video_uploads": {
        "BACKEND": os.environ.get("VIDEO_UPLOAD_STORAGE", "django.core.files.storage.FileSystemStorage"),
        "OPTIONS": {"location": VIDEO_UPLOAD_ROOT},
    },
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if IS_PRODUCTION
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

# The folders above (VIDEO_UPLOAD_ROOT, BANK_DROP_FOLDER) are mounted on every web and worker
# machine (joyback.deploy_checks warns otherwise when they are on a machine's own disk).
SHARED_FOLDERS = env_bool("SHARED_FOLDERS", False)

EMAIL_BACKEND = os.environ.get(
    "EMAIL_BACKEND",
    "django.core.mail.backends.smtp.EmailBackend"
    if IS_PRODUCTION
    else "django.core.mail.backends.console.EmailBackend",
)
EMAIL_FILE_PATH = os.environ.get("EMAIL_FILE_PATH", str(BASE_DIR / "tmp" / "mails"))  # the file backend's
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "JoyBack <no-reply@joyback.localhost>")

# Tasks: the database is the broker unless REDIS_URL says otherwise, so a fresh machine needs nothing
# beyond its database; production sets REDIS_URL for a faster queue.
REDIS_URL = os.environ.get("REDIS_URL", "")
Q_CLUSTER = {
    "name": "joyback",
    "workers": int(os.environ.get("Q_WORKERS", "2")),
    "timeout": 60,
    "retry": 120,
    "max_attempts": 5,
    "catch_up": False,
    # Successful results are not kept: nothing reads them, and django-q2's pruning of the kept ones
    # locks and loads every kept row once per task, which at a few hundred tasks a second costs
    # more than the tasks. Failures are still kept (admin, "Failed tasks"); the work is in our tables.
    "save_limit": -1,
    # With the database as broker, an empty queue is looked at again this often (seconds): a task
    # enqueued meanwhile waits up to this long. One small query a look, which an idle cluster pays
    # every time; approved rewards reach the bank through the standing worker, not through a task.
    "poll": 0.2,
    # Tests run queued work inline, at once; everywhere else a worker process does.
    "sync": env_bool("Q_SYNC", JOYBACK_ENV == "test"),
}
if REDIS_URL:
    Q_CLUSTER["redis"] = REDIS_URL
else:
    Q_CLUSTER["orm"] = "default"
# /healthz/work/ fails when a stored event or bank details waited longer than this: the cluster's
# one-minute sweep alone would have processed it, so no worker is running.
STANDING_WORK_STALE_SECONDS = int(os.environ.get("STANDING_WORK_STALE_SECONDS", "300"))

# Login rate limits, used TOTP codes and the API's key cache must be shared by every web process:
# Redis when set (falling back to the database's cache table while it is unreachable), else that
# table. Never a per-process memory cache, where each worker would count its own failed logins.
CACHE_TABLE = "joyback_cache"
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": CACHE_TABLE},
    "database": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": CACHE_TABLE},
}
if REDIS_URL:
    CACHES["default"] = {
        "BACKEND": "joyback.cache.FallbackRedisCache",
        "LOCATION": REDIS_URL,
        # A Redis that does not answer is given up on quickly; the database answers meanwhile.
        "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
    }
elif JOYBACK_ENV == "test":
    # Tests count each page's queries as production (Redis) would make them: the cache is kept out
    # of the count. The tests of the shared cache itself switch to the table.
    CACHES["default"] = {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
# With Redis, sessions are read from the shared cache and written through to the database: no query
# per page. Never with the per-process LocMemCache, where a logout in one worker would not reach the
# others: there, Django's database sessions, read without the ORM (joyback.sessions).
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db" if REDIS_URL else "joyback.sessions"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["rest_framework.authentication.SessionAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["joyback.api.parsers.JsonParser"],
    "EXCEPTION_HANDLER": "joyback.api.exceptions.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "joyback.api.schema.ApiSchema",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "JoyBack Cashback API",
    "DESCRIPTION": "Report purchases and actions (answered 202 and processed in the background: follow "
    "them by GET /events/{id} or webhook), follow claims and balances, make and follow payouts. Errors "
    'are {"error": {"code", "message", "field"}}; every POST takes an Idempotency-Key. '
    "Keys are jb_test_… (the brand's test data: the sandbox bank and providers, no real money) or "
    "jb_live_…; every answer and webhook says which in livemode.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {"PayoutStatusEnum": "payouts.models.payouts.PayoutStatus"},
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "joyback.api.schema.defaults_within_bounds",
        "joyback.api.schema.request_bodies_required",
        "joyback.api.schema.livemode_documented",
    ],
}
# The Cashback API: requests per key and minute, and how long a webhook endpoint gets to answer.
API_REQUESTS_PER_MINUTE = int(os.environ.get("API_REQUESTS_PER_MINUTE", "1200"))
WEBHOOK_TIMEOUT_SECONDS = float(os.environ.get("WEBHOOK_TIMEOUT_SECONDS", "5"))
# Webhooks to loopback, private and link-local addresses: for local receivers in development; in
# production a brand could otherwise make our servers call internal services (SSRF).
WEBHOOK_PRIVATE_ADDRESSES = env_bool("WEBHOOK_PRIVATE_ADDRESSES", not IS_PRODUCTION)

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # htmx reads it for hx-headers
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
if IS_PRODUCTION:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True  # for the browsers' preload list: never plain http, not even the first time

# Content-Security-Policy: scripts and styles only from our own files, or inline with the nonce of
# this response (request.csp_nonce); no onclick= or javascript: (static/js/actions.js does that).
# Style attributes stay allowed: they draw the budget meters and charts, and run no script.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, NONCE],
        "style-src-attr": ["'unsafe-inline'"],
        # data: the authenticator app's QR code; TikTok's CDN: the creator's picture on the posting screen.
        "img-src": [SELF, "data:", "https://*.tiktokcdn.com", "https://*.tiktokcdn-us.com"],
        "media-src": [SELF, "blob:"],  # the preview of the video chosen for posting, before it is sent
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],
    }
}

# Logs: one JSON object per line in production (LOG_FORMAT=json), readable lines elsewhere; every
# line carries the request id (also set in queued tasks and per item of standing work).
LOG_FORMAT = os.environ.get("LOG_FORMAT", "json" if IS_PRODUCTION else "text")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request_id": {"()": "joyback.observability.RequestIdFilter"},
        "secrets": {"()": "joyback.redact.SecretsRedactFilter"},
    },
    "formatters": {
        "json": {"()": "joyback.observability.JsonFormatter"},
        "text": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "filters": ["request_id", "secrets"],
            "formatter": "json" if LOG_FORMAT == "json" else "text",
        }
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "INFO"},
        # Django's own handlers (a console one under DEBUG) write paths as they came: its records go
        # to the root's handler, which redacts links' secrets (joyback.redact), and nowhere else.
        "django": {"handlers": [], "propagate": True},
        # runserver's request lines, through the handler that redacts links' secrets (joyback.redact)
        # instead of Django's own, which writes the path as it came.
        "django.server": {"handlers": ["console"], "level": "INFO", "propagate": False},
    },
}

# GET /metrics (Prometheus): a scraper sends `Authorization: Bearer <METRICS_TOKEN>`; staff users
# signed in may read it too. Each app serves its own numbers (dotted paths).
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")
METRICS_SOURCES = [
    "joyback.metrics.standing_work_metrics",
    "joyback.metrics.failed_tasks_metrics",
    "joyback.api.selectors.webhook_metrics",
    "payouts.selectors.payout_metrics",
    "payouts.reconciliation.bank_health.reconciliation_metrics",
    "payouts.funding.selectors.provider_metrics",
]

# Error reports go to Sentry when SENTRY_DSN is set (nothing is sent otherwise).
SENTRY_DSN = os.environ.get("SENTRY_DSN", "")
if SENTRY_DSN:
    from joyback.observability import sentry_init

    sentry_init(
        SENTRY_DSN,
        environment=os.environ.get("SENTRY_ENVIRONMENT", JOYBACK_ENV),
        traces_sample_rate=float(os.environ.get("SENTRY_TRACES_SAMPLE_RATE", "0")),
    )
