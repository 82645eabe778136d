"""The policies as compliance/policies/policies.toml now has them, as each one's next version: a
brief's sentences read by their structure (`[languages.*.brief]`: the tasks a brand may ask, the
elements of each blocked kind in four languages). The versions in force until now stay for the record."""

from django.db import migrations


def revise(apps, schema_editor):
    # deferred: a data migration reads the policy file as it is when the migration runs
    from compliance.checker import policies_from_source

    Policy = apps.get_model("compliance", "Policy")
    for entry in policies_from_source():
        data = {key: value for key, value in entry.items() if key not in ("code", "name", "notes")}
        current = Policy.objects.filter(code=entry["code"], is_current=True).first()
        if current is None or current.data == data:
            continue
        latest = Policy.objects.filter(code=entry["code"]).order_by("-version").first()
        Policy.objects.filter(pk=current.pk).update(is_current=False)
        Policy.objects.create(
            code=entry["code"],
            version=latest.version + 1,
            name=entry["name"],
            countries=entry["countries"],
            notes=entry.get("notes", ""),
            data=data,
            is_current=True,
            source="compliance/policies/policies.toml",
        )


class Migration(migrations.Migration):
    live_safe_reviewed = "inserts one new version per shipped policy: a handful of rows in a small table"
    dependencies = [("compliance", "0005_policies_fail_closed")]

    operations = [migrations.RunPython(revise, migrations.RunPython.noop)]
