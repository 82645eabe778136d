"""What kind of installation this is, and the Django frame every other layer hangs on: the apps,
the middleware, the URLconfs, templates, languages and static files.

JOYBACK_ENV is "development" (make run), "test" (make test) or "production" (the default, so that
a forgotten variable fails safe: no debug, secure cookies, every required value given). Every
environment variable is read through `env` (config.env) and declared in config.variables.
"""

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

from config.env import Env
from config.variables import VARIABLES

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = Env(VARIABLES)

JOYBACK_ENV = env.get("JOYBACK_ENV")
if JOYBACK_ENV not in {"development", "test", "production"}:
    raise ImproperlyConfigured(f"JOYBACK_ENV must be development, test or production, not {JOYBACK_ENV!r}")
IS_PRODUCTION = JOYBACK_ENV == "production"
env.production = IS_PRODUCTION

DEBUG = env.get("DEBUG", default=JOYBACK_ENV == "development")
# The sandbox providers and bank stand in for TikTok, WhatsApp and the banks: on by default outside
# production, and never on in production unless said so (then joyback.safety refuses to start).
SANDBOX = env.get("SANDBOX")
env.sandbox = SANDBOX
# The address people reach the site at (links in messages, provider redirects); production must say it.
SITE_URL = env.get("SITE_URL")

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
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en"
LANGUAGES = [
    ("en", _("English")),
    ("de", _("German")),
    ("es", _("Spanish")),
    ("zh-hans", _("Simplified Chinese")),
]
LOCALE_PATHS = [BASE_DIR / "locale"]
# English dates day first, as European brands write them (config/formats/en).
FORMAT_MODULE_PATH = ["config.formats"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env.get("STATIC_ROOT") or BASE_DIR / "staticfiles")

# The public landing page is the same for every visitor: its body is cached this long.
LANDING_CACHE_SECONDS = env.get("LANDING_CACHE_SECONDS")
# With Redis, how long each web process keeps a landing page it fetched (0: never; see campaigns.views).
LANDING_LOCAL_SECONDS = env.get("LANDING_LOCAL_SECONDS")

# Run when a campaign or its rules are saved and before it goes live; each returns problems, and a
# blocking one refuses the launch. Dotted paths: campaigns may not import the apps to its right.
CAMPAIGN_LAUNCH_CHECKS = ["compliance.services.campaign_lint"]
# A running campaign's new rule words only JoyBack's review can clear: put before the reviewers.
CAMPAIGN_WORDS_PROPOSED = ["compliance.services.instructions_propose"]
# What verification hands a WhatsApp status of a message we sent (delivered, read, failed): the
# audience's template sends record it.
WHATSAPP_STATUS_RECEIVERS = ["payouts.audience.broadcasts.whatsapp_status_record"]
# How long an erased person's payout, ledger and compliance records keep their personal data before
# the retention job pseudonymises them (German bookkeeping law: 10 years; set what applies).
PRIVACY_RETENTION_DAYS = env.get("PRIVACY_RETENTION_DAYS")
