"""Rewards under concurrency, on PostgreSQL: duplicate deliveries and a budget raced to zero."""

import contextlib
import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client

from campaigns.services.funding import campaign_budget_account
from verification.models import ActionClaim, ProviderEvent
from verification.providers.whatsapp import signature
from verification.sandbox.whatsapp import message_envelope
from verification.services.participants import identity_attach, participant_create
from verification.services.provider_events import provider_events_process
from verification.services.refusals import ClaimRefused
from verification.services.rewards import action_reward

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def race(count, work):
    """Run work(i) in `count` threads that start together; returns each result or exception."""
    barrier = threading.Barrier(count)

    def run(i):
        try:
            barrier.wait()
            return work(i)
        except Exception as error:
            return error
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(run, range(count)))


def whatsapp_person(campaign, number):
    person = participant_create(brand=campaign.brand)
    return identity_attach(participant=person, provider="whatsapp", subject=number)


def test_the_same_identity_racing_for_one_reward_is_paid_once(make_live_campaign):
    campaign = make_live_campaign(package="whatsapp_reward", budget=100_00)
    rule = campaign.rules.get()
    identity = identity_attach(
        participant=participant_create(brand=campaign.brand), provider="whatsapp", subject="491"
    )

    outcomes = race(10, lambda i: action_reward(rule=rule, identity=identity))

    paid = [o for o in outcomes if isinstance(o, ActionClaim)]
    refused = [o for o in outcomes if isinstance(o, ClaimRefused)]
    assert len(paid) == 1 and len(refused) == 9, outcomes
    assert {r.code for r in refused} == {"already_claimed"}
    assert campaign_budget_account(campaign=campaign).balance == 100_00 - 2_00


def test_a_budget_that_covers_n_rewards_pays_exactly_n(make_live_campaign):
    campaign = make_live_campaign(package="whatsapp_reward", budget=7 * 2_00)
    rule = campaign.rules.get()
    identities = [
        identity_attach(
            participant=participant_create(brand=campaign.brand), provider="whatsapp", subject=f"49{i}"
        )
        for i in range(20)
    ]

    outcomes = race(20, lambda i: action_reward(rule=rule, identity=identities[i]))

    paid = [o for o in outcomes if isinstance(o, ActionClaim)]
    refused = [o for o in outcomes if isinstance(o, ClaimRefused)]
    assert len(paid) == 7 and len(refused) == 13, outcomes
    assert {r.code for r in refused} == {"fully_claimed"}
    budget = campaign_budget_account(campaign=campaign)
    assert budget.balance == 0 and budget.available >= 0
    assert ActionClaim.objects.count() == 7


def test_the_same_webhook_delivered_ten_times_at_once_is_one_action_and_one_reward(make_live_campaign):
    from verification.services.provider_events import optin_code_get_or_create

    campaign = make_live_campaign(slug="club", package="whatsapp_reward")
    person = participant_create(brand=campaign.brand)
    code = optin_code_get_or_create(campaign=campaign, participant=person).code
    payload = message_envelope(wa_id="4915123456789", name="Pat", text=f"JOY {code}", message_id="wamid.SAME")
    body = json.dumps(payload).encode()
    headers = {"X-Hub-Signature-256": signature(body=body, app_secret=settings.WHATSAPP_APP_SECRET)}

    def deliver_and_work(i):
        # Each thread is Meta delivering and then a standing worker sweeping, all at once.
        response = Client().post(
            "/v/webhooks/whatsapp/", body, content_type="application/json", headers=headers
        )
        provider_events_process()
        return response

    statuses = race(10, deliver_and_work)

    assert [response.status_code for response in statuses] == [200] * 10
    assert ProviderEvent.objects.count() == 1
    assert ActionClaim.objects.count() == 1
    assert campaign_budget_account(campaign=campaign).balance == 100_00 - 2_00


def test_a_rules_lock_leaves_its_campaign_and_brand_free_for_the_brands_other_rewards(make_live_campaign):
    """Before, FOR UPDATE on the rule also locked the joined campaign and brand rows: every instant
    reward of a brand waited on every other, whatever its rule."""
    from verification.services.rewards import rule_lock

    campaign = make_live_campaign(package="whatsapp_reward", budget=100_00)
    rule = campaign.rules.get()
    held, release = threading.Event(), threading.Event()

    def hold_the_rule():
        from django.db import transaction

        try:
            with transaction.atomic():
                rule_lock(rule)
                held.set()
                release.wait(10)
        finally:
            connection.close()

    holder = threading.Thread(target=hold_the_rule)
    holder.start()
    try:
        assert held.wait(10)
        with connection.cursor() as cursor:  # NOWAIT: an error at once if another holds the row
            cursor.execute("SELECT 1 FROM campaigns_campaign WHERE id = %s FOR UPDATE NOWAIT", [campaign.pk])
            cursor.execute(
                "SELECT 1 FROM campaigns_brand WHERE id = %s FOR UPDATE NOWAIT", [campaign.brand_id]
            )
    finally:
        release.set()
        holder.join()


def test_one_persons_claims_on_two_rules_at_once_stay_within_the_allowance(make_live_campaign, monkeypatch):
    """Each claim holds its own rule's lock: before, both read what the person had earned before
    either committed, and both were paid past the allowance."""
    from campaigns.services.brands import brand_allowance_set
    from verification.services import rewards

    first = make_live_campaign(slug="first", package="whatsapp_reward", budget=100_00)
    second = make_live_campaign(slug="second", package="whatsapp_reward", budget=100_00)
    brand_allowance_set(brand=first.brand, person_allowance=3_00)  # room for one 2.00 reward
    pat = whatsapp_person(first, "491")
    # Each claim waits after its checks for the other to have checked too: with the person's lock
    # the second never gets there while the first holds it, and the first goes on alone.
    checked = threading.Barrier(2)
    signals = rewards.fraud_signals_at_claim

    def after_the_checks(**kwargs):
        with contextlib.suppress(threading.BrokenBarrierError):
            checked.wait(timeout=3)
        return signals(**kwargs)

    monkeypatch.setattr(rewards, "fraud_signals_at_claim", after_the_checks)
    rules = [first.rules.get(), second.rules.get()]

    outcomes = race(2, lambda i: action_reward(rule=rules[i], identity=pat))

    paid = [o for o in outcomes if isinstance(o, ActionClaim)]
    refused = [o for o in outcomes if isinstance(o, ClaimRefused)]
    assert len(paid) == 1 and [r.code for r in refused] == ["allowance"], outcomes
    assert ActionClaim.objects.filter(participant=pat.participant).count() == 1
