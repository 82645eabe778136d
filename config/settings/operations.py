"""The Cashback API, logs, metrics and error reports."""

from config.settings.base import JOYBACK_ENV, env

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
API_REQUESTS_PER_MINUTE = env.get("API_REQUESTS_PER_MINUTE")
WEBHOOK_TIMEOUT_SECONDS = env.get("WEBHOOK_TIMEOUT_SECONDS")

# Logs: one JSON object per line in production (LOG_FORMAT=json), readable lines elsewhere; every
# line carries the request id (also set in queued tasks and per item of standing work).
LOG_FORMAT = env.get("LOG_FORMAT")
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
    "root": {"handlers": ["console"], "level": env.get("LOG_LEVEL")},
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
METRICS_TOKEN = env.get("METRICS_TOKEN")
METRICS_SOURCES = [
    "joyback.metrics.standing_work_metrics",
    "joyback.metrics.failed_tasks_metrics",
    "joyback.api.selectors.webhook_metrics",
    "payouts.selectors.payout_metrics",
    "payouts.reconciliation.bank_health.reconciliation_metrics",
    "payouts.funding.selectors.provider_metrics",
]

# Error reports go to Sentry when SENTRY_DSN is set (nothing is sent otherwise).
SENTRY_DSN = env.get("SENTRY_DSN")
if SENTRY_DSN:
    from joyback.observability import sentry_init

    sentry_init(
        SENTRY_DSN,
        environment=env.get("SENTRY_ENVIRONMENT") or JOYBACK_ENV,
        traces_sample_rate=env.get("SENTRY_TRACES_SAMPLE_RATE"),
    )
