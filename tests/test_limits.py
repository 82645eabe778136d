"""What a request may send, and the headers every answer carries: a body too large or too deeply
nested is refused with 400 or 413 and nothing stored; production settings pass check --deploy."""

import os
import subprocess
import sys

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from payouts.models import StatementImport
from verification.models import ProviderEvent
from verification.providers.whatsapp import signature

pytestmark = pytest.mark.django_db

DEEP = ("[" * 100_000 + "]" * 100_000).encode()


def test_a_deeply_nested_whatsapp_webhook_is_refused_with_400(client, settings):
    response = client.post(
        "/v/webhooks/whatsapp/",
        DEEP,
        content_type="application/json",
        headers={"X-Hub-Signature-256": signature(body=DEEP, app_secret=settings.WHATSAPP_APP_SECRET)},
    )

    assert response.status_code == 400
    assert not ProviderEvent.objects.exists()


def test_a_40_mb_statement_is_refused_before_it_is_read(client, fiona, alpaca, monkeypatch):
    from django.http import multipartparser

    def never(*args, **kwargs):
        raise AssertionError("the upload was parsed (and written to a temporary file)")

    monkeypatch.setattr(multipartparser.MultiPartParser, "parse", never)
    client.force_login(fiona)
    statement = SimpleUploadedFile(
        "big.xml", b"<" + b"x" * (40 * 1024 * 1024), content_type="application/xml"
    )

    response = client.post(reverse("payouts:statement_compare", args=["alpaca"]), {"statement": statement})

    assert response.status_code == 413
    assert "larger than" in response.content.decode()
    assert not StatementImport.objects.exists()


def test_an_api_body_too_large_is_413_in_json(client, settings):
    settings.REQUEST_MAX_BYTES = 1024

    response = client.post("/api/v1/events", b"{" + b" " * 2048 + b"}", content_type="application/json")

    assert response.status_code == 413 and response.json()["error"]["code"] == "too_large"


def test_a_non_file_body_over_djangos_limit_is_400_not_500(client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    body = b'{"entry": "' + b"x" * 4096 + b'"}'

    response = client.post(
        "/v/webhooks/whatsapp/",
        body,
        content_type="application/json",
        headers={"X-Hub-Signature-256": signature(body=body, app_secret=settings.WHATSAPP_APP_SECRET)},
    )

    assert response.status_code in (400, 413)


def production_env(**extra):
    # Not the test run's own switches (the browser tests allow async-unsafe calls, for example).
    left_out = ("REDIS_URL", "DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE")
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
        # The upload folder mounted on every machine (joyback.deploy_checks warns otherwise).
        SHARED_FOLDERS="1",
        **extra,
    )
    return environment


def test_check_deploy_is_clean_with_production_settings():
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        env=production_env(),
        capture_output=True,
        text=True,
        check=False,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_sends_hsts_with_preload():
    code = (
        "import config.settings as s; "
        "print(s.SECURE_HSTS_SECONDS, s.SECURE_HSTS_PRELOAD, s.SECURE_HSTS_INCLUDE_SUBDOMAINS)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], env=production_env(), capture_output=True, text=True, check=True
    )

    seconds, preload, subdomains = result.stdout.split()
    assert int(seconds) >= 31536000 and preload == "True" and subdomains == "True"


@pytest.mark.parametrize(
    ("length", "message"),
    [
        ("-5", "The Content-Length header is negative."),
        ("five", "The Content-Length header is not a number."),
    ],
)
def test_a_bad_content_length_is_refused_saying_what_is_wrong_with_it(client, length, message):
    response = client.post("/api/v1/events", b"{}", content_type="application/json", CONTENT_LENGTH=length)

    assert response.status_code == 400 and response.json()["error"]["message"] == message
