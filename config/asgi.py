import os

from joyback.machine import asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# The machine endpoints by their own handler and middleware, everything else by Django's.
application = asgi_application()
