"""Behind the load balancer (10.0.0.0/8 here) every request comes from the balancer's address; the
rate limits and fraud signals must still tell Pat (203.0.113.7) from Sam (198.51.100.9). A request
that did not come through the balancer is judged by its own address, whatever X-Forwarded-For says."""

import pytest
from django.test import RequestFactory
from django.urls import reverse

from joyback.ratelimit import client_address
from tests.conftest import rewarded_in_browser

BALANCER = "10.0.0.5"
PAT, SAM, MALLORY = "203.0.113.7", "198.51.100.9", "192.0.2.66"


def address(*, remote, forwarded=None):
    headers = {"HTTP_X_FORWARDED_FOR": forwarded} if forwarded is not None else {}
    return client_address(RequestFactory().get("/", REMOTE_ADDR=remote, **headers))


def test_without_a_proxy_the_connections_address_is_the_clients(settings):
    settings.TRUSTED_PROXIES, settings.TRUSTED_PROXY_HOPS = [], 0

    assert address(remote=PAT) == PAT
    assert address(remote=MALLORY, forwarded=PAT) == MALLORY  # a header anyone can send


def test_behind_trusted_proxy_networks_the_forwarded_client_is_used(settings):
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]

    assert address(remote=BALANCER, forwarded=PAT) == PAT
    assert address(remote=BALANCER, forwarded=f"{MALLORY}, {PAT}") == PAT  # Pat's own header is not believed
    assert address(remote=BALANCER, forwarded=f"{PAT}, 10.0.0.9") == PAT  # through two of our proxies
    assert address(remote=BALANCER) == BALANCER


def test_a_spoofed_header_from_outside_the_proxies_is_ignored(settings):
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]

    assert address(remote=MALLORY, forwarded=PAT) == MALLORY
    assert address(remote=BALANCER, forwarded="not-an-address") == BALANCER


def test_with_a_hop_count_the_address_our_proxy_appended_is_used(settings):
    settings.TRUSTED_PROXIES, settings.TRUSTED_PROXY_HOPS = [], 1

    assert address(remote=BALANCER, forwarded=f"{MALLORY}, {PAT}") == PAT
    assert address(remote=BALANCER) == BALANCER


@pytest.mark.django_db
def test_the_bank_details_rate_limit_counts_each_client_behind_the_balancer(client, summer, settings):
    settings.TRUSTED_PROXIES, settings.PAYEE_SUBMISSIONS_PER_MINUTE = ["10.0.0.0/8"], 2
    rewarded_in_browser(client, summer)
    url = reverse("payouts:payee", args=[summer.slug])

    def post(forwarded):
        return client.post(
            url, {"name": "x"}, REMOTE_ADDR=BALANCER, HTTP_X_FORWARDED_FOR=forwarded
        ).status_code

    pats = [post(PAT) for _ in range(3)]
    sam = post(SAM)

    assert pats[-1] == 429 and sam != 429  # Pat's tries are Pat's alone


@pytest.mark.django_db
def test_a_client_outside_the_proxies_cannot_dodge_the_rate_limit_with_a_header(client, summer, settings):
    settings.TRUSTED_PROXIES, settings.PAYEE_SUBMISSIONS_PER_MINUTE = ["10.0.0.0/8"], 2
    rewarded_in_browser(client, summer)
    url = reverse("payouts:payee", args=[summer.slug])

    statuses = [
        client.post(
            url, {"name": "x"}, REMOTE_ADDR=MALLORY, HTTP_X_FORWARDED_FOR=f"198.51.100.{n}"
        ).status_code
        for n in range(3)
    ]

    assert statuses[-1] == 429


@pytest.mark.django_db
def test_the_fraud_signal_records_the_real_client_behind_the_balancer(client, settings):
    from verification.views import claim_context

    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
    request = RequestFactory().get("/", REMOTE_ADDR=BALANCER, HTTP_X_FORWARDED_FOR=PAT)

    assert claim_context(request).client_ip == PAT


@pytest.mark.django_db
def test_the_login_throttle_counts_the_real_client(settings, django_user_model):
    from allauth.account.adapter import get_adapter

    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
    request = RequestFactory().post("/accounts/login/", REMOTE_ADDR=BALANCER, HTTP_X_FORWARDED_FOR=PAT)

    assert get_adapter(request).get_client_ip(request) == PAT
