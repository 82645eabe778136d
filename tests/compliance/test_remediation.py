"""A share whose disclosure fails: the person is told what to change and has 24 hours, then the
reward is paid (fixed) or voided with its hold released (not fixed). Time travels by patching
the clock every service reads (django.utils.timezone.now)."""

from datetime import timedelta
from unittest import mock

import pytest
from django.urls import reverse
from django.utils import timezone

from campaigns.services.funding import campaign_budget_account
from compliance.models import ComplianceDecision, RemediationCase
from compliance.selectors import audit_chain_problems
from joyback.ledger.models import Hold
from joyback.ledger.selectors import ledger_drift
from tests.verification.test_engagement import counts, share
from tests.verification.test_tiktok_login import authorize
from verification.models import ActionClaim, SandboxTikTokUser
from verification.sandbox.tiktok.display_api import video_post, video_share_url
from verification.services.shares import engagement_recheck, remediation_recheck

pytestmark = pytest.mark.django_db


class Clock:
    def __init__(self):
        self.now = timezone.now()

    def travel(self, **delta):
        self.now += timedelta(**delta)


@pytest.fixture
def clock():
    clock = Clock()
    with mock.patch("django.utils.timezone.now", side_effect=lambda: clock.now):
        yield clock


@pytest.fixture
def undisclosed(client, summer, clock):
    client.get(authorize(client, summer.slug, display_name="Pat Creator"))
    pat = SandboxTikTokUser.objects.get(display_name="Pat Creator")
    video = video_post(user=pat, caption="Loving the summer range! #coffee #summer #ad", view_count=10)
    share(client, summer, video_share_url(video))
    return video, ActionClaim.objects.get(rule__trigger="ugc_share")


def test_the_person_is_told_exactly_what_to_change(client, summer, undisclosed):
    _video, claim = undisclosed
    case = RemediationCase.objects.get(claim_id=claim.pk)

    steps = client.get(reverse("verification:steps", args=[summer.slug])).content.decode()

    assert case.status == "open" and case.reasons == ["not_first", "buried_in_hashtags"]
    assert case.deadline == case.opened_at + timedelta(hours=24)
    assert "Here the disclosure has to come before anything else." in steps
    assert (
        "Start your caption with “Ad · Paid partnership with Alpaca Coffee”, before anything else." in steps
    )
    assert "Rule: Germany and Austria: UWG § 5a and MStV § 22" in steps
    assert "Ad · Paid partnership with Alpaca Coffee" in steps and "paid-partnership label" in steps


def test_fixed_within_24_hours_is_approved_and_paid(client, summer, undisclosed, clock):
    video, claim = undisclosed
    clock.travel(hours=5)
    counts(video, caption="Ad · Paid partnership with Alpaca Coffee. Loving the summer range!")
    clock.travel(hours=19)  # the deadline

    claim = remediation_recheck(claim_id=claim.pk)
    assert (claim.status, claim.reason) == ("pending", "awaiting_window")
    assert RemediationCase.objects.get(claim_id=claim.pk).status == "fixed"

    clock.travel(hours=48)  # the 72-hour window closes
    counts(video, view_count=900)
    claim = engagement_recheck(claim_id=claim.pk)

    assert (claim.status, claim.reason) == ("approved", "thresholds_met")
    assert Hold.objects.get(pk=claim.hold_id).status == "committed"
    assert campaign_budget_account(campaign=summer).balance == 100_00 - 1_00 - 5_00
    assert ledger_drift() == [] and audit_chain_problems() == []


def test_not_fixed_is_voided_and_the_hold_released(client, summer, undisclosed, clock):
    _video, claim = undisclosed
    clock.travel(hours=23)
    assert remediation_recheck(claim_id=claim.pk).status == "pending"  # early: still time left

    clock.travel(hours=1, seconds=1)
    claim = remediation_recheck(claim_id=claim.pk)

    assert (claim.status, claim.reason) == ("rejected", "disclosure_not_fixed")
    assert Hold.objects.get(pk=claim.hold_id).status == "voided"
    assert campaign_budget_account(campaign=summer).held == 0
    assert claim.ledger_transaction_id is None
    assert RemediationCase.objects.get(claim_id=claim.pk).status == "voided"
    kinds = list(ComplianceDecision.objects.filter(claim_id=claim.pk).values_list("kind", flat=True))
    assert kinds == ["caption_check", "case_opened", "caption_check", "caption_check", "case_voided"]


def test_the_window_closing_does_not_pay_a_share_still_in_remediation(client, summer, undisclosed, clock):
    video, claim = undisclosed
    counts(video, view_count=900)
    clock.travel(hours=80)

    assert engagement_recheck(claim_id=claim.pk).status == "pending"
    assert ActionClaim.objects.get(pk=claim.pk).ledger_transaction_id is None


def test_the_person_can_ask_for_an_early_recheck(client, summer, undisclosed, clock):
    video, claim = undisclosed
    counts(video, caption="#ad Loving the summer range!")

    response = client.post(
        reverse("verification:share_recheck", args=[summer.slug]), {"claim": claim.pk}, follow=True
    )

    assert "your disclosure is fixed" in response.content.decode()
    assert RemediationCase.objects.get(claim_id=claim.pk).status == "fixed"


def test_a_doubtful_caption_goes_to_the_brand_and_clearing_it_lets_the_share_continue(
    client, summer, alice, clock, django_capture_on_commit_callbacks
):
    client.get(authorize(client, summer.slug, display_name="Pat Creator"))
    pat = SandboxTikTokUser.objects.get(display_name="Pat Creator")
    video = video_post(user=pat, caption="Ad: not sponsored by anyone, honestly", view_count=900)
    share(client, summer, video_share_url(video))
    claim = ActionClaim.objects.get(rule__trigger="ugc_share")
    case = RemediationCase.objects.get(claim_id=claim.pk)
    assert (claim.reason, case.status) == ("compliance_review", "review")

    client.force_login(alice)
    queue = client.get(reverse("compliance:queue", args=["alpaca"])).content.decode()
    assert "not sponsored by anyone" in queue
    refused = client.post(reverse("compliance:case_decide", args=["alpaca", case.pk]), {"decision": "clear"})
    assert refused.status_code == 302 and RemediationCase.objects.get(pk=case.pk).status == "review"

    clock.travel(hours=73)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            reverse("compliance:case_decide", args=["alpaca", case.pk]),
            {"decision": "clear", "note": "It is disclosed up front"},
        )

    assert RemediationCase.objects.get(pk=case.pk).status == "cleared"
    assert ActionClaim.objects.get(pk=claim.pk).status == "approved"
    review = ComplianceDecision.objects.get(case=case, kind="brand_review")
    assert review.decided_by == alice and review.evidence["note"] == "It is disclosed up front"
