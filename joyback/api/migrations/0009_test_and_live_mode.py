from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("api", "0008_api_key_version"),
    ]

    operations = [
        migrations.AddField(
            model_name="apikey",
            name="livemode",
            field=models.BooleanField(db_default=True, default=True),
        ),
        migrations.AddField(
            model_name="webhookevent",
            name="livemode",
            field=models.BooleanField(db_default=True, default=True),
        ),
    ]
