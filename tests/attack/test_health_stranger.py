"""What a stranger learns from, and costs, the health endpoints with no token: /healthz/live,
/healthz/ready, /healthz/work/ and /metrics say little; /healthz/ answers the status alone, kept a
few seconds, so a stranger neither makes every node call the payment provider nor learns that the
platform's money disagrees with its bank."""

from unittest import mock

import httpx
import pytest

from tests.conftest import MONITORING

pytestmark = pytest.mark.django_db


def test_anonymous_health_checks_do_not_each_call_the_payment_provider(client, settings):
    """Every anonymous GET /healthz/ makes the server call PSP_API_BASE (up to a second each while
    it is slow, holding a web worker): a stranger's loop is a load on every node and on the
    provider. The provider's answer should be cached a little (or probed only for the monitor)."""
    settings.SANDBOX = False
    settings.PSP_API_BASE = "https://psp.invalid/"
    with mock.patch("joyback.health.httpx.get", return_value=httpx.Response(401)) as probe:
        for _ in range(20):
            client.get("/healthz/")

    assert probe.call_count <= 2, (
        f"20 anonymous health checks called the payment provider {probe.call_count} times"
    )


def test_a_stranger_is_not_told_that_the_money_disagrees_with_the_bank(client, settings):
    """An anonymous caller learns `"bank": "failing"`, which checks are down and how they are named:
    that the ledger and the bank disagree (a drift, a broken statement chain) is the platform's most
    sensitive state and the moment a fraudster would want to know. The uptime monitor has a token;
    without it the answer should be the status alone."""
    with mock.patch(
        "payouts.reconciliation.bank_health.bank_alert_problems", return_value=["BANK ALERT #1 drift: x"]
    ):
        settings.HEALTH_CHECKS = ["payouts.reconciliation.bank_health.bank_alert_problems"]
        body = client.get("/healthz/").json()

    assert set(body) == {"status"}, f"a stranger reads {body}"


# --- What held ------------------------------------------------------------------------------------


def test_details_metrics_and_workers_need_the_token(client, monitoring, make_user):
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    staff = make_user("staff@example.org", is_staff=True)  # no second factor yet
    client.force_login(staff)
    assert client.get("/metrics").status_code == 401
    client.logout()

    assert set(client.get("/healthz/work/").json()) == {"status"}
    ready = client.get("/healthz/ready").json()
    assert all(set(check) == {"ok"} for check in ready["checks"].values())
    assert client.get("/metrics", **MONITORING).status_code == 200
