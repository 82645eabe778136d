"""The quickstart and the webhook-verification snippets in docs/ work as written: the curl steps
and the Python quickstart run against a live server, and the Python, Node and PHP snippets verify
a real signed delivery and refuse a tampered one."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from joyback.api.keys import api_key_create
from joyback.api.webhooks.delivery import webhook_event_emit
from joyback.api.webhooks.endpoints import webhook_endpoint_create

DOCS = Path(__file__).resolve().parents[2] / "docs"
SNIPPETS = DOCS / "snippets"

pytestmark = pytest.mark.slow


@pytest.fixture
def cashback(make_live_campaign):
    campaign = make_live_campaign(slug="cashback-week", package="cashback", budget=100_00)
    campaign.rules.filter(trigger="purchase").update(cashback_basis_points=500, return_window_days=14)
    return campaign


@pytest.fixture
def key(alpaca):
    return api_key_create(brand_id=alpaca.pk, name="quickstart", scopes=["read", "events"]).secret


def test_the_quickstart_shows_each_snippet_as_it_runs():
    guide = (DOCS / "quickstart.md").read_text()
    for name in ("quickstart.py", "verify_webhook.py", "verify_webhook.js", "verify_webhook.php"):
        assert (SNIPPETS / name).read_text().rstrip() in guide, name


def _curl_blocks() -> list[str]:
    guide = (DOCS / "quickstart.md").read_text()
    return [block for block in re.findall(r"```bash\n(.*?)```", guide, re.S) if block.startswith("curl")]


@pytest.mark.django_db(transaction=True)
def test_the_curl_steps_run_against_the_api(live_server, key, cashback):
    report, read, refund = _curl_blocks()
    env = {**os.environ, "JOYBACK_URL": live_server.url, "JOYBACK_KEY": key}

    def run(block, **extra):
        done = subprocess.run(["bash", "-c", block], env={**env, **extra}, capture_output=True, timeout=30)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    accepted = run(report)
    assert accepted["status"] == "received"
    event = run(read, EVENT_ID=accepted["id"])
    assert event["status"] == "processed" and event["claim"]["status"] == "pending"
    assert run(report) == accepted  # the same Idempotency-Key: the first answer again
    refunded = run(refund)
    assert run(read, EVENT_ID=refunded["id"])["claim"]["status"] == "rejected"


@pytest.mark.django_db(transaction=True)
def test_the_python_quickstart_runs_against_the_api(live_server, key, cashback):
    done = subprocess.run(
        [sys.executable, str(SNIPPETS / "quickstart.py")],
        env={**os.environ, "JOYBACK_URL": live_server.url, "JOYBACK_KEY": key, "ORDER_ID": "PY-1"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("accepted 202 ")
    assert lines[1] == "event processed claim pending"
    assert lines[2] == "replayed true True"


@pytest.fixture
def delivery(alpaca, receiver, django_capture_on_commit_callbacks):
    """A real delivery of ours: the raw body, its JoyBack-Signature and the endpoint's secret."""
    endpoint = webhook_endpoint_create(
        brand_id=alpaca.pk, url="https://shop.example/hooks", event_types=["reward.approved"]
    )
    with django_capture_on_commit_callbacks(execute=True):
        webhook_event_emit(brand_id=alpaca.pk, type="reward.approved", data={"claim_id": 7})
    request = receiver.requests[-1]
    return request.content, request.headers["JoyBack-Signature"], endpoint.secret


VERIFIERS = {
    "python": [sys.executable, str(SNIPPETS / "verify_webhook.py")],
    "node": ["node", str(SNIPPETS / "verify_webhook.js")],
    "php": ["php", str(SNIPPETS / "verify_webhook.php")],
}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "language",
    [
        pytest.param(
            language,
            marks=pytest.mark.skipif(
                shutil.which(command[0]) is None,
                reason=f"{command[0]} is not installed (.ci/run installs php-cli)",
            ),
        )
        for language, command in VERIFIERS.items()
    ],
)
def test_the_verification_snippet_accepts_a_real_delivery_and_refuses_a_tampered_one(delivery, language):
    command = VERIFIERS[language]
    body, header, secret = delivery

    def verify(body, header, secret):
        env = {**os.environ, "JOYBACK_WEBHOOK_SECRET": secret}
        done = subprocess.run([*command, header], input=body, env=env, capture_output=True, timeout=30)
        return done.stdout.decode().strip(), done.returncode

    assert verify(body, header, secret) == ("valid", 0)
    assert verify(body.replace(b"7", b"8"), header, secret) == ("invalid", 1)
    assert verify(body, header, "another-secret") == ("invalid", 1)
    stale = re.sub(r"t=\d+", "t=1000000000", header)
    assert verify(body, stale, secret) == ("invalid", 1)
