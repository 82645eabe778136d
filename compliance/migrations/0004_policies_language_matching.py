"""The policies as compliance/policies/policies.toml now has them, as each one's next version:
whole-word matching with the Chinese compounds, sponsor connectors, the linter's word pairs, and the
label as advice where the law asks only for a clear caption. The versions in force until now stay
for the record (every past verdict names the version it was made under)."""

from django.db import migrations


def revise(apps, schema_editor):
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
    dependencies = [("compliance", "0003_append_only_decisions")]

    operations = [migrations.RunPython(revise, migrations.RunPython.noop)]
