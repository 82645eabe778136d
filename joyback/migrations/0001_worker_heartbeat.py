from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = []

    operations = [
        migrations.CreateModel(
            name="WorkerHeartbeat",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(help_text="kind@host:pid", max_length=200, unique=True)),
                ("kind", models.CharField(max_length=20)),
                ("started_at", models.DateTimeField()),
                ("beat_at", models.DateTimeField()),
                (
                    "holding",
                    models.PositiveIntegerField(default=0, help_text="Rows it held leased at its last beat"),
                ),
                (
                    "stopped_at",
                    models.DateTimeField(blank=True, help_text="Set when it stopped cleanly", null=True),
                ),
            ],
            options={
                "indexes": [models.Index(fields=["kind", "beat_at"], name="joyback_heartbeat_kind_beat")],
            },
        ),
    ]
