from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from joyback.api.errors import catalogue_markdown


class Command(BaseCommand):
    help = "Write the API's error catalogue to docs/api-errors.md."

    def handle(self, *args, **options):
        path = Path(settings.BASE_DIR) / "docs" / "api-errors.md"
        path.write_text(catalogue_markdown())
        self.stdout.write(f"wrote {path}")
