from django.apps import AppConfig


class VerificationConfig(AppConfig):
    name = "verification"

    def ready(self):
        # Its standing work (provider webhook events, API events) is declared in joyback.background.
        # deferred: ready() runs once every app's models are loaded
        import verification.connectors  # noqa: F401  (registers the shops' delivery processors)
