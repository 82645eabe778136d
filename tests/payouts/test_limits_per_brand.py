"""Money limits and fraud thresholds per brand and per currency: the platform's defaults are euro
amounts scaled to each currency (a yen limit is not the euro number of yen), a brand may have its
own, and a change staff make is in force only once a second staff member confirms it."""

import pytest
from django.contrib.auth.models import Permission

from campaigns.limits import limit_default, limit_value
from campaigns.models import Limit, LimitKind
from campaigns.services.limits import LimitRefused, limit_change_request
from joyback.users.four_eyes import SecondPersonRefused, staff_grant_confirm
from joyback.users.models import AccessChange, StaffGrant
from payouts.submission.states import PayoutRefused
from tests.conftest import totp_enable
from tests.payouts.conftest import staff_user
from tests.payouts.test_payout_controls import funded, new_iban, pay  # noqa: F401 - funded: a fixture
from tests.verification.test_fraud_signals import whatsapp_claim
from verification.services.rewards import ClaimContext

pytestmark = pytest.mark.django_db

ACCOUNT = LimitKind.PAYOUT_ACCOUNT_DAILY_LIMIT
BRAND = LimitKind.PAYOUT_BRAND_DAILY_LIMIT


@pytest.fixture
def root(make_user):
    return totp_enable(
        type(make_user("x@x.example")).objects.create_superuser(
            email="root@joyback.example", password="x", first_name="Root"
        )
    )


@pytest.fixture
def tara(make_user):
    user = staff_user(make_user, "tara@joyback.example")
    user.user_permissions.add(Permission.objects.get(codename="change_staffgrant"))
    return type(user).objects.get(pk=user.pk)


def limit_set(*, asked_by, confirmed_by, kind, currency, brand=None, value):
    grant = limit_change_request(actor=asked_by, kind=kind, currency=currency, brand=brand, value=value)
    return staff_grant_confirm(grant_id=grant.pk, actor=confirmed_by)


def test_the_yen_default_is_the_same_money_as_the_euro_one_not_the_same_number():
    # 200000 euro cents is 2,000 euros; yen have no minor unit, and 2,000 euros are about 300,000 yen.
    assert limit_value(kind=ACCOUNT, currency="EUR") == 200_000
    assert limit_value(kind=ACCOUNT, currency="JPY") == 300_000
    assert limit_value(kind=ACCOUNT, currency="USD") == 200_000
    assert limit_value(kind=ACCOUNT, currency="KRW") == 3_000_000  # won have no minor unit either


def test_the_defaults_follow_the_settings(settings):
    settings.PAYOUT_BRAND_DAILY_LIMIT = 100_00

    assert limit_default(kind=BRAND, currency="EUR") == 100_00
    assert limit_default(kind=BRAND, currency="JPY") == 15_000


def test_a_currency_of_the_platform_and_a_brand_of_its_own(root, tara, alpaca, bison):
    limit_set(asked_by=root, confirmed_by=tara, kind=ACCOUNT, currency="JPY", value=500_000)
    limit_set(asked_by=root, confirmed_by=tara, kind=ACCOUNT, currency="JPY", brand=alpaca, value=50_000)

    assert limit_value(kind=ACCOUNT, currency="JPY", brand_id=alpaca.pk) == 50_000
    assert limit_value(kind=ACCOUNT, currency="JPY", brand_id=bison.pk) == 500_000
    assert limit_value(kind=ACCOUNT, currency="EUR", brand_id=alpaca.pk) == 200_000  # euros untouched


def test_a_fraud_threshold_of_a_brand_holds_whatever_the_currency(root, tara, alpaca, bison, settings):
    kind = LimitKind.FRAUD_CLAIMS_PER_ADDRESS_PER_HOUR
    limit_set(asked_by=root, confirmed_by=tara, kind=kind, currency="EUR", brand=alpaca, value=2)

    assert limit_value(kind=kind, currency="JPY", brand_id=alpaca.pk) == 2
    assert limit_value(kind=kind, brand_id=bison.pk) == settings.FRAUD_CLAIMS_PER_ADDRESS_PER_HOUR


def test_a_brand_whose_fans_like_more_has_its_own_engagement_thresholds(root, tara, alpaca, bison):
    from verification.fraud import engagement_signals

    fan_club = {"views": 1000, "likes": 600, "comments": 150, "followers": 300}
    assert {code for code, _ in engagement_signals(brand_id=alpaca.pk, **fan_club)} == {
        "engagement_ratio",
        "engagement_ratio_comments",
    }

    limit_set(
        asked_by=root,
        confirmed_by=tara,
        kind=LimitKind.FRAUD_MAX_LIKES_PER_THOUSAND_VIEWS,
        currency="",
        brand=alpaca,
        value=700,
    )
    limit_set(
        asked_by=root,
        confirmed_by=tara,
        kind=LimitKind.FRAUD_MAX_COMMENTS_PER_THOUSAND_VIEWS,
        currency="",
        brand=alpaca,
        value=200,
    )

    assert engagement_signals(brand_id=alpaca.pk, **fan_club) == []
    assert len(engagement_signals(brand_id=bison.pk, **fan_club)) == 2  # the other brand keeps the default


def test_a_yen_brand_starts_with_a_person_allowance_worth_as_much_as_a_euro_one(make_user, settings):
    from campaigns.services.brands import brand_create

    settings.PERSON_ALLOWANCE_DEFAULT = 100_00  # 100 euros
    owner = make_user("kenji@example.jp")

    assert brand_create(name="Euro", owner=owner, currency="EUR").person_allowance == 100_00
    assert brand_create(name="Yen", owner=owner, currency="JPY").person_allowance == 15_000
    settings.PERSON_ALLOWANCE_DEFAULT = 0
    assert brand_create(name="Open", owner=owner, currency="JPY").person_allowance is None


def test_one_staff_member_alone_cannot_change_a_limit(root, alpaca):
    grant = limit_change_request(actor=root, kind=BRAND, currency="EUR", brand=alpaca, value=10**9)

    assert limit_value(kind=BRAND, currency="EUR", brand_id=alpaca.pk) == 1_000_000
    assert not Limit.objects.exists()
    with pytest.raises(SecondPersonRefused):
        staff_grant_confirm(grant_id=grant.pk, actor=root)
    assert limit_value(kind=BRAND, currency="EUR", brand_id=alpaca.pk) == 1_000_000


def test_the_second_staff_member_puts_it_in_force_and_both_are_recorded(root, tara, alpaca):
    grant = limit_change_request(actor=root, kind=BRAND, currency="EUR", brand=alpaca, value=5_000_000)

    staff_grant_confirm(grant_id=grant.pk, actor=tara)

    assert limit_value(kind=BRAND, currency="EUR", brand_id=alpaca.pk) == 5_000_000
    limit = Limit.objects.get()
    assert (limit.changed_by, limit.approved_by, limit.brand) == (root, tara, alpaca)
    asked = f"limit payout_brand_daily_limit:EUR:{alpaca.pk}:5000000"
    assert list(AccessChange.objects.filter(kind="limit").order_by("pk").values_list("actor", "detail")) == [
        (root.pk, asked),
        (tara.pk, f"{asked}, asked by root@joyback.example"),
    ]
    assert StaffGrant.objects.get().confirmed_by == tara


def test_changing_limits_together_does_not_bar_two_staff_from_being_each_others_second_person(root, tara):
    # A limit gives nobody access: the two may go on approving each other's changes and payouts.
    limit_set(asked_by=root, confirmed_by=tara, kind=ACCOUNT, currency="EUR", value=100_00)
    limit_set(asked_by=tara, confirmed_by=root, kind=ACCOUNT, currency="EUR", value=200_00)

    assert limit_value(kind=ACCOUNT, currency="EUR") == 200_00


def test_staff_ask_in_the_admin_and_nothing_changes_until_confirmed(client, root, tara, alpaca):
    client.force_login(root)

    response = client.post(
        "/admin/campaigns/limit/add/",
        {"kind": BRAND, "brand": alpaca.pk, "currency": "EUR", "value": 5_000_000},
    )

    assert response.status_code == 302
    assert not Limit.objects.exists()
    assert limit_value(kind=BRAND, currency="EUR", brand_id=alpaca.pk) == 1_000_000
    grant = StaffGrant.objects.get(kind="limit")
    staff_grant_confirm(grant_id=grant.pk, actor=tara)
    assert limit_value(kind=BRAND, currency="EUR", brand_id=alpaca.pk) == 5_000_000
    assert client.get("/admin/campaigns/limit/").status_code == 200


def test_an_amount_limit_needs_a_currency_and_a_whole_number(root, alpaca):
    with pytest.raises(LimitRefused):
        limit_change_request(actor=root, kind=BRAND, currency="", brand=alpaca, value=100)
    with pytest.raises(LimitRefused):
        limit_change_request(actor=root, kind=BRAND, currency="EUR", brand=alpaca, value=-1)


def test_a_brands_own_limit_refuses_its_manual_payout(funded, fiona, root, tara, settings):  # noqa: F811
    settings.PAYOUT_NEW_ACCOUNT_APPROVAL = False
    limit_set(asked_by=root, confirmed_by=tara, kind=BRAND, currency="EUR", brand=funded, value=50_00)

    with pytest.raises(PayoutRefused) as refused:
        pay(funded, 60_00, iban=new_iban(), by=fiona)

    assert "above its limit of" in refused.value.message and "50.00" in refused.value.message
    assert pay(funded, 50_00, iban=new_iban(), by=fiona).amount == 50_00


def test_a_brands_own_fraud_threshold_sends_its_claims_to_review(make_live_campaign, root, tara):
    club = make_live_campaign(slug="club", package="whatsapp_reward")
    kind = LimitKind.FRAUD_CLAIMS_PER_ADDRESS_PER_HOUR
    limit_set(asked_by=root, confirmed_by=tara, kind=kind, currency="", brand=club.brand, value=1)

    claims = [whatsapp_claim(club, f"49{i}", ClaimContext(client_ip="203.0.113.9")) for i in range(2)]

    assert [claim.status for claim in claims] == ["approved", "needs_review"]
    assert claims[-1].signals.get().code == "ip_velocity"
