from django.apps import AppConfig


class VerificationConfig(AppConfig):
    name = "verification"

    def ready(self):
        # Its standing work (provider webhook events, API events) is declared in joyback.background.
        import verification.connectors  # noqa: F401  (registers the shops' delivery processors)
