"""The whole demo in one process: brands and campaigns, their funding, payouts with each bank
outcome, the sandbox shops' orders, the demo brand's audience, the year's tax reports, and the
platform's fees with the brand's invoice (make run does this). Safe to run again.

One process instead of four: each would start Django anew, and on a busy machine that start is a
good part of a cold `make run`.
"""

from django.core.management import call_command
from django.core.management.base import BaseCommand

# The fees last: every reward the demo made is moved and on the invoice.
STEPS = (
    "demo_seed",
    "demo_funding",
    "demo_payouts",
    "demo_shops",
    "demo_audience",
    "demo_tax",
    "demo_fees",
)


class Command(BaseCommand):
    help = "Seed the whole demo: " + ", ".join(STEPS) + " (idempotent)."

    def handle(self, *args, **options):
        for step in STEPS:
            call_command(step, stdout=self.stdout, stderr=self.stderr)
