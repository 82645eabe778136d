"""Configuration has one source: every environment variable the settings read is declared once in
config/variables.py, and what the README and the container entrypoint say about them is written
from there."""

import re
from pathlib import Path

from django.conf import settings

from config import docs
from config.variables import VARIABLES

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "config"
DECLARED = {var.name for var in VARIABLES}


def test_the_readme_and_the_entrypoint_say_what_the_declarations_say():
    for path, text in docs.rendered().items():
        assert path.read_text() == text, f"{path.name} differs: run python -m config.docs"


def test_the_readme_names_every_variable_with_its_default_and_whether_production_needs_it():
    readme = (ROOT / "README.md").read_text()
    for var in VARIABLES:
        row = next(line for line in readme.splitlines() if line.startswith(f"| `{var.name}` |"))
        assert row.endswith("| required |") == var.required
    assert "| `SITE_URL` |" in readme and "| `TIKTOK_ADS_ACCESS_TOKEN` |" in readme


def test_the_entrypoint_refuses_exactly_what_production_needs():
    entrypoint = (ROOT / "deploy" / "entrypoint.sh").read_text()
    listed = re.search(r'^required="([^"]*)"$', entrypoint, re.MULTILINE).group(1).split()
    assert listed == [var.name for var in VARIABLES if var.required]
    assert "SITE_URL" in listed


def test_the_settings_read_the_environment_only_through_the_declarations():
    for path in CONFIG.rglob("*.py"):
        if path.name == "env.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if "DJANGO_SETTINGS_MODULE" in line:
                continue  # wsgi/asgi name the settings module, they read nothing
            assert not re.search(r"os\.environ|getenv\(", line), f"{path.relative_to(ROOT)}:{number}: {line}"


def declared_for(reader: str) -> set[str]:
    return {var.name for var in VARIABLES if var.read_by == reader}


def read_in(*paths: Path) -> set[str]:
    source = "\n".join(path.read_text() for path in paths)
    return set(re.findall(r'env\.get\(\s*"([A-Z0-9_]+)"', source))


def test_every_declared_variable_is_read_by_its_reader_and_nothing_else_is():
    assert read_in(*(CONFIG / "settings").glob("*.py")) == declared_for("settings")
    gunicorn = ROOT / "deploy" / "gunicorn.conf.py"
    assert read_in(gunicorn) == declared_for("gunicorn")
    assert not re.search(r"os\.environ|getenv\(", gunicorn.read_text())
    entrypoint = (ROOT / "deploy" / "entrypoint.sh").read_text()
    for name in declared_for("entrypoint"):
        assert "${" + name in entrypoint


def test_the_running_settings_read_declared_variables_only():
    from config.settings import env

    assert env.read <= DECLARED
    assert {"SITE_URL", "SECRET_KEY", "PAYOUT_BRAND_DAILY_LIMIT"} <= env.read


def test_tests_run_with_the_test_layer():
    assert settings.PASSWORD_HASHERS == ["django.contrib.auth.hashers.MD5PasswordHasher"]
    assert settings.Q_CLUSTER["sync"] is True


def test_the_production_layers_hold_no_test_branches():
    for path in (CONFIG / "settings").glob("*.py"):
        if path.name in {"test.py", "__init__.py"}:
            continue
        assert not re.search(r'[!=]= "test"', path.read_text()), f"{path.name} decides something for tests"
