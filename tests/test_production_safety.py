"""Production refuses to start unsafe: the sandbox left on, a secret published in the repository, no
webhook key or no real site address are startup errors of every process and of `check --deploy`,
each saying what to set. And the sandbox bank never books live money, whatever the settings say."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from campaigns.services.funding import brand_topup_sandbox
from campaigns.services.refusals import CampaignError
from joyback.ledger.models import Account, AccountKind, Transaction
from joyback.safety import production_problems
from payouts.models import StatementImport
from payouts.reconciliation.references import brand_deposit_reference
from payouts.reconciliation.statement_import import bank_statements_fetch
from payouts.sandbox.files import incoming_transfer_issue

ROOT = Path(__file__).resolve().parent.parent
PUBLISHED_HMAC_KEY = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"


def production_env(**changes):
    left_out = ("REDIS_URL", "DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE", "SANDBOX", "SITE_URL", "ADYEN_HMAC_KEYS")
    environment = {key: value for key, value in os.environ.items() if key not in left_out}
    environment.update(
        JOYBACK_ENV="production",
        SECRET_KEY="a-long-random-production-secret-key-" + "q7w8e9r0t1y2u3i4o5p6" * 2,
        PAYEE_ENCRYPTION_KEYS="yXwP0h1bq2mPn3v4Yt5Kq6Lr7Ws8Ez9Aa0Bc1Dd2Ee4=",
        PAYEE_FINGERPRINT_KEY="a-separate-fingerprint-secret-" + "z1x2c3v4b5" * 2,
        ALLOWED_HOSTS="joyback.example",
        SITE_URL="https://joyback.example",
        ADYEN_HMAC_KEYS="a1b2c3d4" * 8,
        ADYEN_API_KEY="own-adyen-key",
        ADYEN_BALANCE_ACCOUNT_ID="BA1",
        PAYOUT_DEBTOR_IBAN="DE89370400440532013000",
        INVOICE_ISSUER_ADDRESS="Example Street 1, 10115 Berlin",
        INVOICE_ISSUER_VAT_ID="DE811907980",
        SHARED_FOLDERS="1",
    )
    for key, value in changes.items():
        if value is None:
            environment.pop(key, None)
        else:
            environment[key] = value
    return environment


def run(args, **changes):
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=production_env(**changes), capture_output=True, text=True
    )


def test_the_web_process_does_not_start_with_the_sandbox_on_in_production():
    # What gunicorn loads: no system checks run there, so the app refuses when it is set up.
    started = run(["-c", "import config.wsgi"], SANDBOX="1")

    assert started.returncode != 0
    assert "SANDBOX is on in production" in started.stderr
    assert "Unset SANDBOX" in started.stderr


def test_check_deploy_names_every_unsafe_setting_with_what_to_set():
    checked = run(
        ["manage.py", "check", "--deploy"],
        SITE_URL="http://localhost:8000",
        WHATSAPP_APP_SECRET="sbx-meta-app-secret",
    )

    assert checked.returncode != 0
    for said in (
        "joyback.E103: SITE_URL is http://localhost:8000",
        "joyback.E104: WHATSAPP_APP_SECRET is the sandbox's value",
        "Set SITE_URL to the address people reach the site at",
    ):
        assert said in checked.stderr


def test_a_process_without_what_production_needs_names_all_of_it_before_anything_runs():
    started = run(["manage.py", "check", "--deploy"], ADYEN_HMAC_KEYS=None, SITE_URL=None)

    assert started.returncode != 0
    assert "JoyBack refuses to start in production: these variables must be set:" in started.stderr
    assert "  SITE_URL: the address people reach the site at" in started.stderr
    assert "  ADYEN_HMAC_KEYS: the provider's webhook HMAC keys" in started.stderr


def test_production_with_its_own_settings_starts():
    started = run(["-c", "import config.wsgi; print('up')"])

    assert started.returncode == 0, started.stderr
    assert started.stdout.strip() == "up"


@pytest.fixture
def production(settings):
    settings.IS_PRODUCTION = True
    settings.SANDBOX = False
    settings.SITE_URL = "https://joyback.example"
    settings.ADYEN_HMAC_KEYS = ["a1b2c3d4" * 8]
    settings.SECRET_KEY = "a-long-random-production-secret-key-" + "x" * 30
    settings.PAYEE_ENCRYPTION_KEYS = ["yXwP0h1bq2mPn3v4Yt5Kq6Lr7Ws8Ez9Aa0Bc1Dd2Ee4="]
    settings.PAYEE_FINGERPRINT_KEY = "a-separate-fingerprint-secret"
    for name in settings.SANDBOX_SECRETS:
        if name != "ADYEN_HMAC_KEYS":
            setattr(settings, name, f"own-{name.lower()}")
    return settings


def ids(problems):
    return [problem.id for problem in problems]


def test_production_settings_of_its_own_are_clean(production):
    assert production_problems() == []


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("ADYEN_HMAC_KEYS", ["a1b2c3d4" * 8, PUBLISHED_HMAC_KEY.lower()]),
        ("TIKTOK_CLIENT_SECRET", "sbx-tiktok-secret"),
        ("WHATSAPP_VERIFY_TOKEN", "sbx-verify-token"),
        ("ADYEN_API_KEY", "sbx-adyen-api-key"),
    ],
)
def test_a_secret_published_in_the_repository_is_refused(production, name, value):
    setattr(production, name, value)

    problems = production_problems()

    assert ids(problems) == ["joyback.E104"]
    assert problems[0].msg == f"{name} is the sandbox's value, published in the repository."
    assert problems[0].hint == f"Set {name} to the provider's own secret for this installation."


def test_keys_derived_from_the_published_secret_key_are_refused(production):
    published = "insecure-development-key-never-use-in-production"
    production.SECRET_KEY = published
    import base64
    import hashlib

    production.PAYEE_ENCRYPTION_KEYS = [
        base64.urlsafe_b64encode(hashlib.sha256(f"payee-data:{published}".encode()).digest()).decode()
    ]
    production.PAYEE_FINGERPRINT_KEY = hashlib.sha256(f"payee-fingerprints:{published}".encode()).hexdigest()

    assert ids(production_problems()) == ["joyback.E105", "joyback.E106", "joyback.E106"]


@pytest.mark.parametrize(
    "site_url",
    [
        "",
        "http://localhost:8000",
        "http://127.0.0.1",
        "https://app.localhost",
        # Found from outside: other loopback and private addresses, plain http, a bare name.
        "https://127.0.0.2",
        "https://10.0.0.5",
        "https://[::1]",
        "http://joy.example.com",
        "joy",
    ],
)
def test_a_site_address_that_is_not_the_sites_is_refused(production, site_url):
    production.SITE_URL = site_url

    assert ids(production_problems()) == ["joyback.E103"]


def test_a_public_https_site_address_is_taken(production):
    production.SITE_URL = "https://joyback.example"

    assert "joyback.E103" not in ids(production_problems())


def test_outside_production_the_sandbox_and_its_secrets_are_fine(settings):
    # make run and the tests: the defaults, the sandbox on.
    assert settings.SANDBOX and not settings.IS_PRODUCTION
    assert production_problems() == []


# Defence in depth: the sandbox bank's made-up credits never reach the live ledger.


def funding(brand) -> int:
    account = Account.objects.filter(kind=AccountKind.BRAND_FUNDING, brand_id=brand.pk).first()
    return account.balance if account else 0


@pytest.mark.django_db
@pytest.mark.parametrize("unsafe", ["production", "real_bank_account"])
def test_the_sandbox_top_up_books_no_live_money_whatever_the_settings(settings, alpaca, unsafe):
    settings.SANDBOX = True  # left on by mistake
    if unsafe == "production":
        settings.IS_PRODUCTION = True
    else:
        settings.PAYOUT_DEBTOR_IBAN = "DE89370400440532013000"  # the platform's real account
    before = Transaction.objects.count()

    with pytest.raises(CampaignError, match="simulated only in the sandbox"):
        brand_topup_sandbox(brand=alpaca, amount=2500_00, currency="EUR")

    assert funding(alpaca) == 0 and Transaction.objects.count() == before


@pytest.mark.django_db
def test_the_sandbox_bank_feed_is_not_read_in_production(settings, alpaca):
    incoming_transfer_issue(amount=2500_00, remittance=f"Alpaca {brand_deposit_reference(alpaca)}")
    settings.SANDBOX = True
    settings.IS_PRODUCTION = True

    assert bank_statements_fetch() == []
    assert not StatementImport.objects.exists() and funding(alpaca) == 0

    settings.IS_PRODUCTION = False  # the same message in the sandbox is read, as the bank's word
    assert len(bank_statements_fetch()) == 1
    assert StatementImport.objects.count() == 1 and funding(alpaca) == 0  # an exception for staff
