from django.apps import AppConfig


class LedgerConfig(AppConfig):
    name = "joyback.ledger"
    label = "ledger"
    verbose_name = "Ledger"
