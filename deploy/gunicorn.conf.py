"""gunicorn's settings for a JoyBack web node (gunicorn -c deploy/gunicorn.conf.py config.wsgi).

Each setting can be given by the environment, so the same file serves a container, a systemd unit
and `make cluster`."""

import multiprocessing
import os

from config.env import Env
from config.variables import VARIABLES
from joyback.redact import gunicorn_logger_class

env = Env(VARIABLES)  # every variable declared in config/variables.py, as the settings read theirs

port = env.get("PORT")  # not a gunicorn setting: it takes only the names it knows
bind = env.get("GUNICORN_BIND") or f"0.0.0.0:{port}"
# Sync workers: a request holds its worker; the pages are short and CPU-bound, so two per CPU keep
# the CPUs busy while one waits on PostgreSQL. Threads (GUNICORN_THREADS > 1) make them gthread
# workers, whose threads share the process's database pool (DB_POOL_MAX_SIZE).
workers = env.get("WEB_CONCURRENCY", default=2 * multiprocessing.cpu_count())
threads = env.get("GUNICORN_THREADS")
worker_class = "gthread" if threads > 1 else "sync"
# No preload: each worker opens its own database connections and broker after the fork.
preload_app = False
timeout = env.get("GUNICORN_TIMEOUT")
graceful_timeout = env.get("GUNICORN_GRACEFUL_TIMEOUT")
keepalive = 5  # behind a load balancer that keeps connections open
# A worker is replaced after this many requests (with jitter, so they do not all restart at once):
# whatever a library leaks is given back.
max_requests = env.get("GUNICORN_MAX_REQUESTS")
max_requests_jitter = max_requests // 10
# The heartbeat file on a RAM disk: a container's overlay file system can stall a worker's fsync.
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None  # noqa: S108 - gunicorn's own advice
# The proxy in front sets X-Forwarded-Proto; Django reads the client address from TRUSTED_PROXIES.
forwarded_allow_ips = env.get("FORWARDED_ALLOW_IPS")
accesslog = env.get("GUNICORN_ACCESS_LOG") or None
# The access log without the secrets of links (a status link's token, an OAuth code): joyback.redact.
logger_class = gunicorn_logger_class()
errorlog = "-"
loglevel = env.get("GUNICORN_LOG_LEVEL")
proc_name = env.get("GUNICORN_PROC_NAME")
