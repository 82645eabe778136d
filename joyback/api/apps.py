from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "joyback.api"
    label = "api"
    verbose_name = "Cashback API"

    def ready(self):
        # deferred: ready() runs once every app's models are loaded
        from joyback.api import schema  # noqa: F401  registers the bearer scheme with the schema generator
