"""Renamed the provider events' schedule to the standing-work sweep; joyback/background.py declares it now."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("verification", "0006_provider_event_processing")]

    # The schedule it made is declared in joyback/background.py now and synced at every start and
    # migrate (joyback/schedules.py); the migration stays, empty, for the databases that applied it.
    operations = []
