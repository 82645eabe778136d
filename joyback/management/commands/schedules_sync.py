"""`manage.py schedules_sync`: the database's recurring schedules made to match
joyback.background.SCHEDULES (also done by `migrate` and when the task cluster starts)."""

from django.core.management.base import BaseCommand

from joyback.schedules import schedules_sync


class Command(BaseCommand):
    help = "Create, update and remove recurring schedules so they match the ones the code declares."

    def handle(self, *args, **options):
        synced = schedules_sync()
        for verb, names in (
            ("created", synced.created),
            ("updated", synced.updated),
            ("removed", synced.removed),
        ):
            for name in names:
                self.stdout.write(f"{verb} {name}")
        if not synced:
            self.stdout.write("the schedules already match the code")
