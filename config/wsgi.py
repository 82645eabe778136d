import gc
import os
from importlib import import_module

from django.conf import settings

from joyback.machine import wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# The machine endpoints by their own handler and middleware, everything else by Django's.
application = wsgi_application()

# What is loaded now (the apps, the URLconf and the views it imports) lives as long as the worker:
# frozen, it is left out of the garbage collector's passes, which otherwise walk it again and again
# while requests run (about 2 % of a claim's time).
import_module(settings.ROOT_URLCONF)
gc.freeze()
