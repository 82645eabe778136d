"""A running site gets a changed policy file only through a migration (compliance/migrations/
_policy_versions.py): the newest policy migration must name the file as it is now."""

import importlib
import pkgutil

import compliance.migrations
from compliance.migrations._policy_versions import source_sha256


def _newest_policy_migration():
    names = sorted(
        info.name for info in pkgutil.iter_modules(compliance.migrations.__path__) if info.name[:4].isdigit()
    )
    modules = [importlib.import_module(f"compliance.migrations.{name}") for name in names]
    return [module for module in modules if hasattr(module, "SOURCE_SHA256")][-1]


def test_the_newest_policy_migration_brings_the_policy_file_as_it_is():
    newest = _newest_policy_migration()

    assert source_sha256() == newest.SOURCE_SHA256, (
        "compliance/policies/policies.toml changed since "
        f"{newest.__name__.rsplit('.', 1)[-1]}: add a policy migration (as it does) with the file's "
        f"SHA-256 {source_sha256()}, so that running sites get the new versions"
    )
