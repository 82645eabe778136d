"""The product's settings, served with the bench's URLconf (the product's pages plus a hello world).

Only `make bench` uses this, through DJANGO_SETTINGS_MODULE, so that the reference view and the
product's pages are answered by the same server, middleware and configuration in the same run.
"""

from config.settings import *  # noqa: F403

ROOT_URLCONF = "tests.bench.urls"
