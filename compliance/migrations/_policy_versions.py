"""What the policy migrations share (a module the migration loader skips: its name starts with _).

Each policy migration makes the policies in force those of compliance/policies/policies.toml as it
is when the migration runs, each changed one as its next version; the versions in force until then
stay for the record. A running site gets a changed file only through such a migration, so the newest
one records the file's SHA-256 (SOURCE_SHA256), and tests/compliance/test_policy_versions.py fails
when the file has changed since."""

import hashlib
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "policies" / "policies.toml"


def source_sha256() -> str:
    return hashlib.sha256(SOURCE.read_bytes()).hexdigest()


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
