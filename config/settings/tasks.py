"""Tasks, the shared cache, sessions, file storage and mail."""

from config.settings.base import BASE_DIR, IS_PRODUCTION, env

# Tasks: the database is the broker unless REDIS_URL says otherwise, so a fresh machine needs nothing
# beyond its database; production sets REDIS_URL for a faster queue.
REDIS_URL = env.get("REDIS_URL")
Q_CLUSTER = {
    "name": "joyback",
    "workers": env.get("Q_WORKERS"),
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
    # A worker process runs queued work (the test layer runs it inline, at once).
    "sync": env.get("Q_SYNC"),
    # django-q2's broker, whose loops back off and reconnect when the database or Redis goes away.
    "broker_class": "joyback.queue.broker_resilient",
}
if REDIS_URL:
    Q_CLUSTER["redis"] = REDIS_URL
else:
    Q_CLUSTER["orm"] = "default"
# /healthz/work/ fails when a stored event or bank details waited longer than this: the cluster's
# one-minute sweep alone would have processed it, so no worker is running.
STANDING_WORK_STALE_SECONDS = env.get("STANDING_WORK_STALE_SECONDS")
# A standing worker's claim on a row lasts this long, renewed while the worker holds it: the rows of
# a worker that died are taken by another within it.
STANDING_WORK_LEASE_SECONDS = env.get("STANDING_WORK_LEASE_SECONDS")
# Each worker writes its heartbeat row this often; /healthz/work/ fails when none of a kind beat
# within WORKER_STALE_SECONDS, or a silent one may still hold leases (joyback.heartbeats).
WORKER_HEARTBEAT_SECONDS = env.get("WORKER_HEARTBEAT_SECONDS")
WORKER_STALE_SECONDS = env.get("WORKER_STALE_SECONDS")

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
# With Redis, sessions are read from the shared cache and written through to the database: no query
# per page. Never with the per-process LocMemCache, where a logout in one worker would not reach the
# others: there, Django's database sessions, read without the ORM (joyback.sessions).
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db" if REDIS_URL else "joyback.sessions"

# Posting through JoyBack (TikTok Direct Post): a chosen file is stored here (streamed to disk, never
# held in memory) until a worker has sent it to TikTok.
VIDEO_UPLOAD_ROOT = env.get("VIDEO_UPLOAD_ROOT") or str(BASE_DIR / "var" / "video-uploads")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Production points this at object storage shared by web and worker machines.
    "video_uploads": {
        "BACKEND": env.get("VIDEO_UPLOAD_STORAGE"),
        "OPTIONS": {"location": VIDEO_UPLOAD_ROOT},
    },
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if IS_PRODUCTION
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
# The folders VIDEO_UPLOAD_ROOT and BANK_DROP_FOLDER are mounted on every web and worker machine
# (joyback.deploy_checks warns otherwise when they are on a machine's own disk).
SHARED_FOLDERS = env.get("SHARED_FOLDERS")

EMAIL_BACKEND = env.get("EMAIL_BACKEND")
EMAIL_FILE_PATH = env.get("EMAIL_FILE_PATH") or str(BASE_DIR / "tmp" / "mails")  # the file backend's
DEFAULT_FROM_EMAIL = env.get("DEFAULT_FROM_EMAIL")
