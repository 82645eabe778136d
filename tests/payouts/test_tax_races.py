"""Tax details under concurrency, on PostgreSQL, and the tax rows against the ledger for any run of
rewards and clawbacks."""

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from joyback.ledger.models import AccountKind, Entry
from payouts.models.tax import TaxProfile
from payouts.tax.selectors import reward_tax_rows
from tests.conftest import rewarded_in_browser
from tests.verification.test_claim_races import race
from verification.services.participants import identity_attach, participant_create
from verification.services.rewards import action_reward, claim_clawback

DETAILS = {
    "residence_country": "DE",
    "us_person": "no",
    "legal_name": "Pat Example",
    "birth_date": "1994-03-02",
    "address_line1": "Torstraße 1",
    "postal_code": "10119",
    "city": "Berlin",
    "tin": "36574261809",
    "certify": "on",
}


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_form_sent_six_times_at_once_keeps_one_current_profile(summer):
    browser = Client()
    person = rewarded_in_browser(browser, summer)
    url = reverse("payouts:tax_details", args=[person.token])

    responses = race(6, lambda i: Client().post(url, {**DETAILS, "legal_name": f"Pat Example {i}"}))

    assert [getattr(r, "status_code", r) for r in responses] == [302] * 6
    assert TaxProfile.objects.filter(participant=person, replaced_at__isnull=True).count() == 1
    assert TaxProfile.objects.filter(participant=person).count() == 6


@pytest.mark.django_db
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.sampled_from(["video", "login", "clawback_video"]), min_size=1, max_size=4))
def test_the_tax_rows_sum_to_what_the_ledger_credited_people(make_live_campaign, steps):
    """Whatever rewards and clawbacks happened, each person's rows sum to the ledger's credits to
    them, and each row keeps the class its reward was booked under."""
    TaxProfile.objects.all().delete()
    slug = f"t{timezone.now().timestamp():.6f}".replace(".", "")
    campaign = make_live_campaign(slug=slug[:50], package="tiktok_only", budget=1_000_00)
    for n, step in enumerate(steps):
        person = participant_create(brand=campaign.brand)
        identity = identity_attach(participant=person, provider="tiktok", subject=f"{slug}-{n}")
        trigger = "tiktok_login" if step == "login" else "ugc_share"
        if trigger == "ugc_share":
            action_reward(rule=campaign.rules.get(trigger="tiktok_login"), identity=identity)
        claim = action_reward(rule=campaign.rules.get(trigger=trigger), identity=identity)
        if step == "clawback_video":
            claim_clawback(claim=claim, reason="post deleted")
        start, end = timezone.now() - timedelta(days=1), timezone.now() + timedelta(days=1)
        rows = reward_tax_rows(start=start, end=end, participant_id=person.pk)
        credited = -sum(
            Entry.objects.filter(
                account__kind__in=[AccountKind.PARTICIPANT_PAYABLE, AccountKind.PARTICIPANT_RECEIVABLE],
                account__subject=f"participant:{person.pk}",
                transaction__reason__in=["reward", "clawback"],
            ).values_list("amount", flat=True)
        )
        assert sum(r.amount for r in rows) == credited
        assert {r.tax_class for r in rows if r.trigger == "ugc_share"} <= {"service"}
        assert {r.tax_class for r in rows if r.trigger == "tiktok_login"} <= {"promotional"}
        net_video = sum(r.amount for r in rows if r.trigger == "ugc_share")
        assert net_video == (0 if step == "clawback_video" else claim.amount if step == "video" else 0)
