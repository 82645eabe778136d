"""Reach top-ups under concurrency, on PostgreSQL: re-checks of one video racing never pay a level
twice, and any sequence of readings pays exactly what the best one earned, capped."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from campaigns.reach import reach_value
from campaigns.services.funding import campaign_budget_account
from campaigns.services.rules import rule_save
from joyback.ledger.models import Hold
from joyback.ledger.selectors import ledger_drift
from tests.verification.test_claim_races import race
from tests.verification.test_engagement import DISCLOSED
from verification import reach
from verification.models import ActionClaim, ReachTopUp
from verification.providers.tiktok import TikTokVideo
from verification.services.participants import (
    identity_attach,
    participant_create,
    participant_payable_account,
)
from verification.services.rewards import claim_hold_reserve

TIERS = [[1_000, 1_00], [10_000, 5_00], [100_000, 20_00]]


def tiered_rule(campaign, **fields):
    return rule_save(
        campaign=campaign,
        trigger="ugc_share",
        **(
            dict(
                reward_amount=25_00,
                verification_mode="engagement",
                window_hours=72,
                reach_tiers=TIERS,
                reach_per_thousand=1,
            )
            | fields
        ),
    )


def reach_claim(campaign, rule, n):
    """A reach share as share_submit leaves it: claimed, its most held on the budget."""
    person = participant_create(brand=campaign.brand)
    identity = identity_attach(
        participant=person, provider="tiktok", subject=f"open-{n}", display_name=f"P{n}"
    )
    claim = ActionClaim.objects.create(
        campaign=campaign,
        rule=rule,
        participant=person,
        identity=identity,
        status="pending",
        reason="awaiting_window",
        amount=rule.reward_amount,
        currency=campaign.currency,
        evidence={"video": {"video_id": f"73{n:017d}", "view_count": 0}},
        check_at=timezone.now() + timedelta(hours=72),
        next_check_at=timezone.now(),
    )
    claim_hold_reserve(claim)
    return claim


def readings(monkeypatch, views_by_call):
    """TikTok answers each read with the next count (likes and comments those of a real audience)."""
    calls = iter(views_by_call)

    def read(claim):
        views = next(calls)
        video = TikTokVideo(
            video_id="1", share_url="", caption=DISCLOSED, create_time=0,
            view_count=views, like_count=views // 20, comment_count=views // 200, share_count=0,
        )  # fmt: skip
        return object(), video

    monkeypatch.setattr(reach, "_video_read", read)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_re_checks_of_one_video_racing_pay_each_level_once(make_live_campaign, monkeypatch, settings):
    settings.FRAUD_MAX_VIEWS_PER_HOUR = 10**12
    campaign = make_live_campaign(budget=100_00)
    rule = tiered_rule(campaign)
    claim = reach_claim(campaign, rule, 1)
    views = [12_000, 12_000, 150_000, 3_000, 12_000, 150_000, 150_000, 40_000]
    lookup = dict(enumerate(views))
    monkeypatch.setattr(
        reach,
        "_video_read",
        lambda c: (
            object(),
            TikTokVideo("1", "", DISCLOSED, 0, lookup[_thread_index()], lookup[_thread_index()] // 20, 0, 0),
        ),
    )

    outcomes = race(len(views), lambda i: (_set_index(i), reach.reach_recheck(claim_id=claim.pk))[1])

    assert all(isinstance(outcome, ActionClaim) for outcome in outcomes), outcomes
    claim.refresh_from_db()
    expected = reach_value(rule=rule, views=150_000)
    assert claim.reach_paid == expected == 20_00 + 150
    topups = list(ReachTopUp.objects.filter(claim=claim).values_list("level", "amount"))
    assert sum(amount for _level, amount in topups) == expected
    assert len({level for level, _amount in topups}) == len(topups)
    assert participant_payable_account(participant=claim.participant, currency="EUR").balance == expected
    assert Hold.objects.get(pk=claim.hold_id).amount == 25_00 - expected
    assert campaign_budget_account(campaign=campaign).held == 25_00 - expected
    assert ledger_drift() == []


_local = __import__("threading").local()


def _set_index(i):
    _local.index = i


def _thread_index():
    return _local.index


@pytest.mark.django_db
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    views=st.lists(st.integers(min_value=0, max_value=400_000), min_size=1, max_size=6),
    cap=st.sampled_from([3_00, 25_00, 60_00]),
)
def test_any_sequence_of_readings_pays_the_value_of_the_best_one_capped(
    make_live_campaign, monkeypatch, views, cap
):
    from django.conf import settings as django_settings

    monkeypatch.setattr(django_settings, "FRAUD_MAX_VIEWS_PER_HOUR", 10**12)
    campaign = _campaign(make_live_campaign)
    rule = tiered_rule(campaign, reward_amount=cap)
    claim = reach_claim(campaign, rule, _counter())
    readings(monkeypatch, [*views, max(views) // 3])
    payable_before = participant_payable_account(participant=claim.participant, currency="EUR").balance

    for _ in views:
        reach.reach_recheck(claim_id=claim.pk)
    ActionClaim.objects.filter(pk=claim.pk).update(check_at=timezone.now() - timedelta(seconds=1))
    reach.reach_recheck(claim_id=claim.pk)  # the window's end reads a lower count: nothing back

    claim.refresh_from_db()
    expected = min(reach_value(rule=rule, views=max(views)), cap)
    assert claim.reach_paid == expected
    levels = list(ReachTopUp.objects.filter(claim=claim).order_by("pk").values_list("level", "amount"))
    assert sum(amount for _level, amount in levels) == expected
    assert [level for level, _amount in levels] == sorted({level for level, _amount in levels})
    payable = participant_payable_account(participant=claim.participant, currency="EUR").balance
    assert payable - payable_before == expected
    assert claim.status == ("approved" if expected else "rejected")
    assert not Hold.objects.filter(reference=f"claim:{claim.pk}", status="reserved").exists()


_campaigns = {}
_count = [0]


def _counter():
    _count[0] += 1
    return _count[0]


def _campaign(make_live_campaign):
    """One funded campaign per test run (hypothesis reruns the body in one database transaction)."""
    campaign = _campaigns.get(connection.alias)
    if campaign is None or not type(campaign).objects.filter(pk=campaign.pk).exists():
        _count[0] += 1
        campaign = make_live_campaign(slug=f"reach-{_count[0]}", budget=100_000_00)
        _campaigns[connection.alias] = campaign
    return campaign
