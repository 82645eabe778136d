"""The settings fail safe: production refuses to start without what it needs, naming every missing
variable at once (SITE_URL included), and with them it is secure by default."""

import os
import subprocess
import sys

import pytest

from config.variables import VARIABLES

REQUIRED = {
    "SECRET_KEY": "s" * 50,
    "ALLOWED_HOSTS": "joyback.example",
    "SITE_URL": "https://joyback.example",
    "PAYEE_ENCRYPTION_KEYS": "b3BlbnNlc2FtZS1vcGVuc2VzYW1lLW9wZW5zZXNhbWU=",
    "PAYEE_FINGERPRINT_KEY": "f" * 40,
    "ADYEN_API_KEY": "own-adyen-key",
    "ADYEN_BALANCE_ACCOUNT_ID": "BA1",
    "ADYEN_HMAC_KEYS": "a1b2c3d4" * 8,
    "PAYOUT_DEBTOR_IBAN": "DE89370400440532013000",
    "INVOICE_ISSUER_ADDRESS": "Example Street 1, 10115 Berlin",
    "INVOICE_ISSUER_VAT_ID": "DE811907980",
}


def load_settings(**env):
    environment = {
        key: value for key, value in os.environ.items() if key not in {"JOYBACK_ENV", "SANDBOX", *REQUIRED}
    }
    environment.update(env)
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import config.settings as s; print(s.DEBUG, s.SESSION_COOKIE_SECURE)",
        ],
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_required_list_is_what_production_needs():
    # DATABASE_URL comes from the test run's own environment here.
    assert {var.name for var in VARIABLES if var.required} == {*REQUIRED, "DATABASE_URL"}


def test_production_without_secret_key_refuses_to_start():
    result = load_settings(**{**REQUIRED, "SECRET_KEY": ""})
    assert result.returncode != 0
    assert "JoyBack refuses to start in production: these variables must be set:" in result.stderr
    assert "SECRET_KEY: Django's signing key" in result.stderr


def test_production_with_what_it_needs_is_secure_by_default():
    result = load_settings(**REQUIRED)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "True"]


@pytest.mark.parametrize("missing", sorted(REQUIRED))
def test_production_without_a_required_variable_refuses_to_start(missing):
    result = load_settings(**{key: value for key, value in REQUIRED.items() if key != missing})
    assert result.returncode != 0
    assert f"\n  {missing}: " in result.stderr


def test_production_without_a_site_address_does_not_link_to_localhost():
    # The "check your bank details" message would have sent people to http://localhost:8000.
    result = load_settings(**{**REQUIRED, "SITE_URL": ""})
    assert "SITE_URL: the address people reach the site at" in result.stderr
    assert "localhost" not in result.stdout


def test_every_missing_variable_is_named_in_one_message():
    result = load_settings()
    named = [line.split(":")[0].strip() for line in result.stderr.splitlines() if line.startswith("  ")]
    assert set(REQUIRED) <= set(named)


def test_a_value_of_the_wrong_type_is_refused_naming_the_variable():
    result = load_settings(JOYBACK_ENV="test", PAYOUT_BATCH_SIZE="many")
    assert result.returncode != 0
    assert "PAYOUT_BATCH_SIZE must be a number, not 'many'" in result.stderr


def test_an_unknown_environment_name_is_refused():
    result = load_settings(JOYBACK_ENV="staging")
    assert "JOYBACK_ENV must be" in result.stderr
