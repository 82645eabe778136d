"""PostgreSQL: the primary, its pool, and the replica the long reads may use."""

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config.settings.base import env
from joyback import embedded_db

# Unset outside production: the project's own server that `python -m joyback.embedded_db` starts for
# make run/test (production refuses to start without it).
database_url = env.get("DATABASE_URL") or embedded_db.default_url()  # not a setting: it holds a password
DATABASES = {
    "default": dj_database_url.parse(
        database_url, conn_max_age=env.get("DB_CONN_MAX_AGE"), conn_health_checks=True
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
DB_POOL_MAX_SIZE = env.get("DB_POOL_MAX_SIZE")
DATABASES["default"].setdefault("OPTIONS", {})
if DB_POOL_MAX_SIZE:
    DATABASES["default"]["CONN_MAX_AGE"] = 0  # the pool keeps them; Django refuses both at once
    DATABASES["default"]["OPTIONS"]["pool"] = {
        "min_size": env.get("DB_POOL_MIN_SIZE"),
        "max_size": DB_POOL_MAX_SIZE,
        "timeout": env.get("DB_POOL_TIMEOUT"),
    }
if not env.get("DB_SERVER_PREPARE"):
    DATABASES["default"]["OPTIONS"]["prepare_threshold"] = None


def replica_database(url: str) -> dict:
    """The replica alias: the primary's options, but for its pool, and a short connect timeout."""
    replica = dj_database_url.parse(
        url, conn_max_age=DATABASES["default"]["CONN_MAX_AGE"], conn_health_checks=True
    )
    replica["ENGINE"] = "joyback.postgresql"
    replica["OPTIONS"] = {
        **{key: value for key, value in DATABASES["default"]["OPTIONS"].items() if key != "pool"},
        "connect_timeout": env.get("REPLICA_CONNECT_TIMEOUT"),
    }
    return replica


# A streaming replica for the long reads that may lag a moment (joyback.replicas): the dashboard,
# reconciliation and exports.
DATABASE_REPLICA_URL = env.get("DATABASE_REPLICA_URL")
if DATABASE_REPLICA_URL:
    DATABASES["replica"] = replica_database(DATABASE_REPLICA_URL)
REPLICA_READS = env.get("REPLICA_READS", default=bool(DATABASE_REPLICA_URL))
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
REPLICA_PIN_SECONDS = env.get("REPLICA_PIN_SECONDS")
# A replica that did not answer is tried again after this long; meanwhile the primary answers.
REPLICA_RETRY_SECONDS = env.get("REPLICA_RETRY_SECONDS")
