"""What tests change (JOYBACK_ENV=test), layered over the others: nothing here reaches production.

Each value still gives way to the environment when it sets the variable (a benchmark sets them)."""

from config.settings.base import env
from config.settings.database import DATABASES, database_url, replica_database
from config.settings.tasks import CACHES, Q_CLUSTER, REDIS_URL

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Queued work runs inline, at once.
Q_CLUSTER["sync"] = env.get("Q_SYNC", default=True)

# Tests count each page's queries as production (Redis) would make them: the cache is kept out of
# the count. The tests of the shared cache itself switch to the table.
if not REDIS_URL:
    CACHES["default"] = {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}

# The replica alias as a mirror of the test database, used only by the tests that turn REPLICA_READS on.
if "replica" not in DATABASES:
    DATABASES["replica"] = replica_database(database_url)
DATABASES["replica"]["TEST"] = {"MIRROR": "default"}

# The tests send in turn, on their own connection (sender threads would keep connections to the test
# database open), and expect an approval's payout on commit: no gathering.
PAYOUT_SEND_THREADS = env.get("PAYOUT_SEND_THREADS", default=1)
PAYOUT_GATHER_MS = env.get("PAYOUT_GATHER_MS", default=0)
