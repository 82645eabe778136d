"""PostgreSQL: the primary, its pool, and the replica the long reads may use."""

from urllib.parse import urlsplit, urlunsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config.settings.base import env
from joyback import embedded_db


def database_parse(url: str, **options) -> dict:
    """dj_database_url.parse, and libpq's multi-host form too: postgres://user@host1:port1,host2:port2/
    name?target_session_attrs=read-write, as a failover cluster is reached (the first host whose
    session is read-write: whichever is the primary now). HOST and PORT become libpq's lists."""
    scheme, netloc, path, query, fragment = urlsplit(url)
    userinfo, at, hosts = netloc.rpartition("@")
    if "," not in hosts:
        return dj_database_url.parse(url, **options)
    pairs = []
    for host in hosts.split(","):
        name, colon, port = host.rpartition(":") if not host.endswith("]") else (host, "", "")
        pairs.append((name, port) if colon else (host, ""))
    config = dj_database_url.parse(
        urlunsplit((scheme, f"{userinfo}{at}{pairs[0][0]}", path, query, fragment)), **options
    )
    config["HOST"] = ",".join(name for name, _port in pairs)
    ports = [port for _name, port in pairs]
    config["PORT"] = ",".join(port or "5432" for port in ports) if any(ports) else ""
    return config


# Unset outside production: the project's own server that `python -m joyback.embedded_db` starts for
# make run/test (production refuses to start without it). A failover cluster is named by a multi-host
# URL with target_session_attrs=read-write (docs/deploy.md).
database_url = env.get("DATABASE_URL") or embedded_db.default_url()  # not a setting: it holds a password
DATABASES = {
    "default": database_parse(database_url, conn_max_age=env.get("DB_CONN_MAX_AGE"), conn_health_checks=True)
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
    replica = database_parse(url, conn_max_age=DATABASES["default"]["CONN_MAX_AGE"], conn_health_checks=True)
    replica["ENGINE"] = "joyback.postgresql"
    replica["OPTIONS"] = {
        **{
            key: value
            for key, value in DATABASES["default"]["OPTIONS"].items()
            if key not in ("pool", "target_session_attrs")
        },
        **replica.get("OPTIONS", {}),  # its own URL's (target_session_attrs=standby)
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
# The health checks report the replica lagging beyond this (joyback.health).
REPLICA_MAX_LAG_SECONDS = env.get("REPLICA_MAX_LAG_SECONDS")
