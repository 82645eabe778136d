"""The first version of every policy, read from compliance/policies/policies.toml."""

from django.db import migrations


def load(apps, schema_editor):
    from compliance.checker import policies_from_source

    Policy = apps.get_model("compliance", "Policy")
    for entry in policies_from_source():
        if Policy.objects.filter(code=entry["code"]).exists():
            continue
        data = {key: value for key, value in entry.items() if key not in ("code", "name", "notes")}
        Policy.objects.create(
            code=entry["code"],
            version=1,
            name=entry["name"],
            countries=entry["countries"],
            notes=entry.get("notes", ""),
            data=data,
            is_current=True,
        )


class Migration(migrations.Migration):
    dependencies = [("compliance", "0001_initial")]

    operations = [migrations.RunPython(load, migrations.RunPython.noop)]
