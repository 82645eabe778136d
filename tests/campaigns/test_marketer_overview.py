"""The marketer's overview: visits counted on the server, the funnel from a visit to a person paid,
what a verified action and a paid person cost, the shared videos' reach, and charts with their
values as text. Finance reads the ledger on its own page."""

import threading
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st

from campaigns.models import LandingVisitDay
from campaigns.overview import overview_window
from campaigns.visits import landing_visit_add
from joyback.charts import Chart, Series, buckets_between, nice_ticks, spread
from payouts.overview import conversion, cost_per, overview_funnels
from verification.models import ActionClaim, ClaimStatus
from verification.services.participants import identity_attach, participant_create
from verification.services.rewards import action_reward

pytestmark = pytest.mark.django_db

BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"


def visit(client, slug, *, agent=BROWSER, address="203.0.113.7", **headers):
    return client.get(f"/c/{slug}/", headers={"User-Agent": agent, **headers}, REMOTE_ADDR=address)


def visits_today(campaign):
    row = LandingVisitDay.objects.filter(campaign=campaign, day=timezone.now().date()).first()
    return row.visits if row else 0


# Visits


def test_a_person_opening_the_landing_page_twice_in_a_day_is_one_visit(client, summer):
    assert visit(client, summer.slug).status_code == 200
    visit(client, summer.slug)
    visit(client, summer.slug, address="198.51.100.4")  # someone else

    assert visits_today(summer) == 2


@pytest.mark.parametrize(
    "agent",
    [
        "Googlebot/2.1 (+http://www.google.com/bot.html)",
        "facebookexternalhit/1.1",
        "WhatsApp/2.23.20.0",
        "curl/8.5.0",
        "Mozilla/5.0 (X11; Linux x86_64) HeadlessChrome/131.0 Safari/537.36",
        "",
    ],
)
def test_bots_and_link_previews_are_not_visits(client, summer, agent):
    assert visit(client, summer.slug, agent=agent).status_code == 200

    assert visits_today(summer) == 0


@pytest.mark.parametrize(
    "header", [{"Sec-Purpose": "prefetch"}, {"Purpose": "prefetch"}, {"Sec-Purpose": "prefetch;prerender"}]
)
def test_prefetches_are_not_visits(client, summer, header):
    visit(client, summer.slug, **header)

    assert visits_today(summer) == 0


def test_nothing_about_the_visitor_is_stored(client, summer):
    visit(client, summer.slug, address="203.0.113.99")

    row = LandingVisitDay.objects.get(campaign=summer)
    stored = " ".join(str(value) for value in LandingVisitDay.objects.values_list().get(pk=row.pk))
    assert "203.0.113.99" not in stored and "Mozilla" not in stored
    assert {field.name for field in LandingVisitDay._meta.fields} == {
        "id",
        "campaign",
        "brand",
        "day",
        "visits",
    }


def test_a_draft_or_unknown_campaign_counts_nothing(client, alpaca):
    assert visit(client, "no-such-campaign").status_code == 404
    assert not LandingVisitDay.objects.exists()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_visits_counted_at_once_by_many_workers_all_count(make_live_campaign):
    campaign = make_live_campaign(slug="racing")
    day = timezone.now().date()
    workers, each = 8, 25
    barrier = threading.Barrier(workers)
    errors = []

    def count():
        try:
            barrier.wait()
            for _ in range(each):
                landing_visit_add(campaign_id=campaign.pk, day=day)
        except Exception as error:
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=count) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert LandingVisitDay.objects.get(campaign=campaign, day=day).visits == workers * each
    assert LandingVisitDay.objects.filter(campaign=campaign).count() == 1


# Funnel and cost maths


def test_cost_rounds_half_up_to_a_whole_minor_unit():
    assert cost_per(1000, 3) == 333
    assert cost_per(1001, 2) == 501  # 500.5 -> 501
    assert cost_per(999, 2) == 500  # 499.5 -> 500
    assert cost_per(500, 0) is None


@given(spent=st.integers(min_value=0, max_value=10**12), count=st.integers(min_value=1, max_value=10**6))
def test_cost_per_is_the_nearest_whole_minor_unit(spent, count):
    cost = cost_per(spent, count)
    assert isinstance(cost, int)
    assert abs(cost * count - spent) * 2 <= count


@given(count=st.integers(min_value=0, max_value=10**6), of=st.integers(min_value=0, max_value=10**6))
def test_conversion_is_a_percentage_to_one_decimal(count, of):
    rate = conversion(count, of)
    if of == 0:
        assert rate is None
    else:
        assert abs(rate - Decimal(100 * count) / of) <= Decimal("0.05")
        assert rate.as_tuple().exponent == -1


def _person_rewarded(campaign, subject, trigger="tiktok_login"):
    person = participant_create(brand=campaign.brand)
    identity = identity_attach(participant=person, provider="tiktok", subject=subject, display_name=subject)
    return action_reward(rule=campaign.rules.get(trigger=trigger), identity=identity)


def test_the_funnel_counts_each_step_and_its_conversion(alpaca, summer):
    day = timezone.now().date()
    for _ in range(10):
        landing_visit_add(campaign_id=summer.pk, day=day)
    rewarded = [_person_rewarded(summer, f"person-{i}") for i in range(4)]
    assert all(claim.status == ClaimStatus.APPROVED for claim in rewarded)

    per_campaign, totals = overview_funnels(window=overview_window(data={}, brand=alpaca))

    funnel = totals[0]
    steps = funnel.steps()
    assert [count for _name, count, _rate in steps] == [10, 4, 4, 0]
    assert [str(rate) if rate is not None else None for *_, rate in steps] == [None, "40.0", "100.0", "0.0"]
    # The rewards the ledger booked: four TikTok logins of the campaign's login rule.
    login = summer.rules.get(trigger="tiktok_login").reward_amount
    assert funnel.spent == 4 * login
    assert funnel.per_verified_action == login
    assert funnel.per_paid_person is None  # nobody paid yet: no cost to divide
    assert per_campaign[0].name == summer.name


def test_the_funnel_of_one_campaign_leaves_the_others_out(alpaca, summer, make_live_campaign):
    winter = make_live_campaign(slug="winter-glow")
    _person_rewarded(summer, "in-summer")
    _person_rewarded(winter, "in-winter")

    window = overview_window(data={"campaign": str(winter.pk)}, brand=alpaca)
    _per_campaign, totals = overview_funnels(window=window)

    assert len(totals[0].verified) == 1 and totals[0].name


def test_a_campaign_of_another_brand_cannot_be_chosen(alpaca, bison, make_live_campaign):
    theirs = make_live_campaign(slug="bison-only", brand=bison)

    window = overview_window(data={"campaign": str(theirs.pk)}, brand=alpaca)

    assert theirs.pk not in window.campaign_ids
    assert "campaign" in window.form.errors


def test_bad_dates_are_refused_with_a_message_and_the_defaults_kept(alpaca):
    window = overview_window(data={"start": "2026-05-10", "end": "2026-05-01"}, brand=alpaca)

    assert "end" in window.form.errors
    assert (window.end - window.start).days == 29


def test_the_last_day_a_date_field_takes_is_refused_not_a_server_error(client, alice, alpaca, summer):
    client.force_login(alice)

    response = client.get(reverse("brand_overview_traffic", args=["alpaca"]), {"end": "9999-12-31"})

    assert response.status_code == 200
    assert response.context["window"].end == timezone.localdate()


def test_a_start_alone_years_back_is_refused_like_a_range_over_400_days(alpaca):
    window = overview_window(data={"start": "0001-01-01"}, brand=alpaca)

    assert "start" in window.form.errors
    assert (window.end - window.start).days == 29


# Reach


def test_reach_is_the_videos_latest_counts(client, alice, alpaca, summer):
    share = summer.rules.get(trigger="ugc_share")
    for index, (views, recheck) in enumerate([(100, 900), (50, None)]):
        person = participant_create(brand=alpaca)
        identity = identity_attach(participant=person, provider="tiktok", subject=f"s{index}")
        evidence = {
            "video": {"video_id": f"v{index}", "view_count": views, "like_count": 5, "comment_count": 1}
        }
        if recheck:
            evidence["recheck"] = {
                "video_id": f"v{index}",
                "view_count": recheck,
                "like_count": 40,
                "comment_count": 3,
            }
        ActionClaim.objects.create(
            campaign=summer, brand_id=summer.brand_id, rule=share, participant=person, identity=identity,
            amount=share.reward_amount, currency="EUR", evidence=evidence, status=ClaimStatus.PENDING,
        )  # fmt: skip
    client.force_login(alice)

    body = client.get(reverse("verification:overview_reach", args=["alpaca"])).content.decode()

    # Views 900 (measured at the window's close) + 50 (at the share); likes 40 + 5; comments 3 + 1.
    assert ">950<" in body and ">45<" in body and ">4<" in body
    # The earned media value, with its method: 950 views at €5.00 per 1,000 views.
    assert "Earned media value" in body and ">€4.75<" in body
    assert "per 1,000 views" in body and "not money received" in body

    # A share paid by reach keeps a reading per re-check: the latest one counts.
    from verification.models import VideoMetric

    read = ActionClaim.objects.get(evidence__video__video_id="v1")
    VideoMetric.objects.create(
        claim=read,
        brand_id=read.brand_id,
        at=timezone.now() - timedelta(hours=2),
        views=60,
        likes=6,
        comments=1,
    )
    VideoMetric.objects.create(
        claim=read, brand_id=read.brand_id, at=timezone.now(), views=700, likes=70, comments=7
    )
    body = client.get(reverse("verification:overview_reach", args=["alpaca"])).content.decode()
    assert ">1,600<" in body and ">110<" in body and ">10<" in body
    assert "<title>Views," in body  # values on hover
    assert "<table" in body  # and as text


# Pages


def test_the_overview_offers_a_first_step_to_a_new_brand(client, alice, alpaca):
    client.force_login(alice)

    body = client.get(reverse("brand_dashboard", args=["alpaca"])).content.decode()

    assert "Create your first campaign" in body
    assert "Recent ledger transactions" not in body


def test_the_overview_is_composed_of_each_apps_fragments(client, alice, alpaca, summer):
    client.force_login(alice)

    body = client.get(reverse("brand_dashboard", args=["alpaca"]) + "?period=week").content.decode()

    for fragment in ("payouts:overview_funnel", "brand_overview_traffic", "verification:overview_reach"):
        assert reverse(fragment, args=["alpaca"]) + "?period=week" in body
    assert "Recent ledger transactions" not in body
    for fragment in ("payouts:overview_funnel", "brand_overview_traffic", "verification:overview_reach"):
        response = client.get(
            reverse(fragment, args=["alpaca"]), {"period": "week"}, headers={"HX-Request": "true"}
        )
        assert response.status_code == 200 and "<html" not in response.content.decode()


def test_the_traffic_chart_has_axes_dates_currency_and_a_table(client, alice, alpaca, summer):
    landing_visit_add(campaign_id=summer.pk, day=timezone.now().date())
    _person_rewarded(summer, "charted")
    client.force_login(alice)

    body = client.get(reverse("brand_overview_traffic", args=["alpaca"])).content.decode()

    assert 'viewBox="0 0 420 230"' in body
    assert "Landing page visits" in body and "Spent on rewards" in body and "(EUR)" in body
    today = timezone.now().date()
    assert f"{today.day} {today:%b}" in body  # a date on the axis, day first (config/formats/en)
    assert "Visits, " in body and "<title>" in body


def test_finance_reads_the_ledger_on_its_own_page(client, fiona, alpaca, summer):
    client.force_login(fiona)

    body = client.get(reverse("brand_finance", args=["alpaca"])).content.decode()

    assert "Recent ledger transactions" in body and "Funding for Summer Glow" in body


def test_the_campaign_page_draws_the_budget_with_dates_and_currency(client, alice, summer):
    client.force_login(alice)

    body = client.get(reverse("campaign_detail", args=["alpaca", summer.pk])).content.decode()

    assert "Budget available, day by day" in body and "Spent on rewards per week" in body
    assert "€100.00" in body  # the funded budget, on hover and in the table


def test_charts_count_by_week_from_monday():
    monday = timezone.now().date() - timedelta(days=timezone.now().date().weekday())
    buckets = buckets_between(start=monday + timedelta(days=2), end=monday + timedelta(days=9), period="week")

    assert buckets == [monday, monday + timedelta(days=7)]
    assert spread({monday + timedelta(days=3): 2, monday + timedelta(days=8): 5}, buckets, "week") == [2, 5]


@given(top=st.integers(min_value=0, max_value=10**12))
def test_the_axis_reaches_every_value_in_round_steps(top):
    ticks = nice_ticks(top)
    assert ticks[0] == 0 and ticks[-1] >= top and len(ticks) <= 6


def test_an_empty_chart_says_so_instead_of_drawing_a_flat_band():
    chart = Chart(title="t", buckets=[], series=[Series("s", [])], empty_text="Nothing yet")
    assert chart.empty


def test_a_chart_in_german_keeps_svg_numbers_and_german_labels():
    import re

    from django.template import Context, Template
    from django.utils.translation import override

    days = buckets_between(
        start=timezone.now().date() - timedelta(days=6), end=timezone.now().date(), period="day"
    )
    chart = Chart(
        title="Besuche",
        buckets=days,
        series=[Series("Ausgaben", [1250, 0, 333, 0, 0, 70, 5])],
        currency="EUR",
    )

    with override("de"):
        html = Template("{% load chart_tags %}{% chart chart %}").render(Context({"chart": chart}))

    coordinates = re.findall(r'\b(?:x|y|width|height|x1|x2|y1|y2)="([^"]*)"', html)
    assert coordinates and all(re.fullmatch(r"-?\d+(\.\d+)?", value) for value in coordinates)
    assert "12,50\u00a0€" in html  # the value on hover, the German way


# Units and what the rewards earned


def test_each_count_says_whether_it_counts_visits_people_or_actions(client, alice, alpaca, summer):
    _person_rewarded(summer, "unit-person")
    client.force_login(alice)
    from campaigns.services.campaigns import campaign_create

    campaign_create(
        brand=alpaca, name="Second", package="tiktok_only", currency="EUR", countries=["DE"], languages=["en"]
    )
    html = client.get(reverse("payouts:overview_funnel", args=["alpaca"])).content.decode()

    for label in (
        "Landing page visits",
        "People who started a step",
        "People verified",
        "People paid to their bank",
    ):
        assert label in html
    for column in ("People verified", "Verified actions", "Per verified action", "Per person paid"):
        assert f">{column}</th>" in html
    assert ">Verified</th>" not in html and ">Paid</th>" not in html


def test_sales_the_shop_reports_give_the_return_on_the_rewards(alpaca, make_live_campaign):
    from verification.cashback import Customer, purchase_record

    shop = make_live_campaign(slug="cashback-week", package="cashback", budget=100_00)
    # Instant cashback (no return window): the rewards are spent at once, 5 % of each purchase.
    shop.rules.filter(trigger="purchase").update(
        cashback_basis_points=500, reward_amount=50_00, return_window_days=0
    )
    purchase_record(
        brand=alpaca, order_id="A-1", amount=200_00, currency="EUR", customer=Customer(email="k@example.com")
    )
    purchase_record(
        brand=alpaca, order_id="A-2", amount=100_00, currency="EUR", customer=Customer(email="l@example.com")
    )

    per_campaign, totals = overview_funnels(window=overview_window(data={}, brand=alpaca))

    funnel = totals[0]
    assert funnel.sales == 300_00
    assert funnel.spent == 10_00 + 5_00
    assert funnel.roi == Decimal("1900.0")  # (300 - 15) / 15
    assert per_campaign[0].sales == 300_00


def test_without_reported_sales_there_is_no_return_to_show(alpaca, summer):
    _person_rewarded(summer, "no-sales")
    _per_campaign, totals = overview_funnels(window=overview_window(data={}, brand=alpaca))
    assert totals[0].sales is None and totals[0].roi is None
