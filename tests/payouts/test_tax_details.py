"""Tax: each reward records what it is for tax when it is booked; a person paid for a service
(a video) gives their tax details before the payout leaves, and is told why; nothing more is asked
for a login. The details are checked per country, stored encrypted, and kept after an erasure for
the legal retention only."""

import json
from datetime import date, datetime, timedelta

import pytest
from django.core import mail
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from campaigns.tax import TABLES, campaign_tax_check, reward_tax_judge, tax_class_for
from joyback.ledger.models import AccountKind, Entry
from payouts.models import Payout
from payouts.models.tax import TaxProfile
from payouts.privacy import participant_erase, privacy_retention_enforce
from payouts.tax.selectors import reward_tax_rows, tax_details_needed, tax_identity_read, tax_profile_current
from payouts.tax.services import tax_profiles_retention_enforce
from payouts.tax.tins import TinRefused, tin_check
from tests.payouts.conftest import payee_details
from verification.models import ActionClaim
from verification.services.rewards import action_reward

pytestmark = pytest.mark.django_db

GOOD = {
    "residence_country": "DE",
    "us_person": "no",
    "legal_name": "Pat Example",
    "birth_date": "1994-03-02",
    "address_line1": "Torstraße 1",
    "postal_code": "10119",
    "city": "Berlin",
    "tin": "36 574 261 809",
    "certify": "on",
}


def video_rewarded(person, campaign):
    """Pat's video for the campaign was rewarded: a personal service."""
    rule = campaign.rules.get(trigger="ugc_share")
    identity = person.identities.get(provider="tiktok")
    return action_reward(rule=rule, identity=identity)


@pytest.fixture
def video_owed(client, summer, django_capture_on_commit_callbacks):
    from tests.conftest import rewarded_in_browser

    person = rewarded_in_browser(client, summer)
    claim = video_rewarded(person, summer)
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        payee_details(client, summer)
    return person, claim


def test_a_login_is_booked_as_a_promotional_gift_and_paid_with_nothing_more_asked(owed):
    person = owed()

    claim = ActionClaim.objects.get(participant=person)
    assert (claim.tax_class, claim.tax_country, claim.tax_table) == ("promotional", "DE", "2026-1")
    assert Payout.objects.get(participant=person).status == "settled"
    assert not tax_details_needed(participant_id=person.pk)
    assert not any("tax" in m.subject.lower() for m in mail.outbox)


def test_a_video_holds_the_payout_until_the_tax_details_are_given_then_pays_it(
    client, summer, video_owed, django_capture_on_commit_callbacks
):
    person, claim = video_owed
    claim.refresh_from_db()
    assert (claim.tax_class, claim.tax_country) == ("service", "DE")
    assert not Payout.objects.filter(participant=person).exists()
    told = [m for m in mail.outbox if m.subject == "Your reward waits for your tax details"]
    assert len(told) == 1 and "/tax" not in told[0].body and person.token in told[0].body
    status = client.get(reverse("payouts:status_page", args=[summer.slug, person.token])).content.decode()
    assert "Your payout waits for your tax details." in status and "Give my tax details" in status

    url = reverse("payouts:tax_details", args=[person.token])
    refused = Client().post(url, {**GOOD, "tin": "36574261800"})
    assert refused.status_code == 400
    assert "This is not a valid German tax identification number" in refused.content.decode()
    assert not TaxProfile.objects.exists()

    with django_capture_on_commit_callbacks(execute=True):
        saved = Client().post(url, GOOD)
    assert saved.status_code == 302 and saved["Location"].endswith("?tax=saved")
    from payouts.pipeline import payouts_due_process

    payouts_due_process()
    assert Payout.objects.get(participant=person).status == "settled"
    identity = tax_identity_read(profile=tax_profile_current(participant_id=person.pk))
    assert (identity.tin, identity.tin_kind, identity.tin_country, identity.us_status) == (
        "36574261809",
        "de_idnr",
        "DE",
        "w8ben",
    )
    assert identity.birth_date == date(1994, 3, 2) and identity.address["city"] == "Berlin"
    with connection.cursor() as cursor:
        cursor.execute("SELECT tin, legal_name, birth_date FROM payouts_taxprofile")
        stored = " ".join(cursor.fetchone())
    assert "36574261809" not in stored and "Pat" not in stored and "1994" not in stored


def test_a_second_video_in_another_month_is_not_held_again(client, summer, video_owed):
    person, _ = video_owed
    TaxProfile.objects.create(
        participant=person,
        brand_id=person.brand_id,
        legal_name="Pat Example",
        tin="36574261809",
        birth_date="1994-03-02",
        address="{}",
        residence_country="DE",
        tin_country="DE",
        tin_kind="de_idnr",
        us_status="w8ben",
        certified_at=timezone.now(),
        certification_version="2026-12",
    )
    assert not tax_details_needed(participant_id=person.pk)


@pytest.mark.parametrize(
    ("country", "kind", "number", "compact"),
    [
        ("DE", "de_idnr", "36 574 261 809", "36574261809"),
        ("ES", "es_nif", "12345678-z", "12345678Z"),
        ("ES", "es_nie", "X-2482300W", "X2482300W"),
        ("GB", "gb_utr", "19558 39661", "1955839661"),
        ("GB", "gb_nino", "ab 12 34 56 c", "AB123456C"),
        ("US", "us_ssn", "536-90-4399", "536904399"),
        ("US", "us_itin", "912-90-3456", "912903456"),
        ("FR", "other", "3023217600053", "3023217600053"),
        ("IT", "other", "RCCMNL83S18D969H", "RCCMNL83S18D969H"),
        ("CH", "other", "756.1234.5678.97", "7561234567897"),
    ],
)
def test_tax_numbers_are_checked_by_the_issuing_country(country, kind, number, compact):
    assert tin_check(number=number, kind=kind, country=country).number == compact


@pytest.mark.parametrize(
    ("country", "kind", "number"),
    [
        ("DE", "de_idnr", "36574261800"),  # check digit
        ("ES", "es_nif", "12345678A"),
        ("GB", "gb_nino", "QQ123456C"),  # a prefix HMRC never issues (its own example)
        ("GB", "gb_utr", "1955839662"),
        ("US", "us_ssn", "078-05-1120"),  # the wallet SSN, blacklisted
        ("US", "us_itin", "123-45-6789"),
        ("DE", "es_nif", "12345678Z"),  # Spain's number for a German
        ("FR", "other", "123"),
    ],
)
def test_a_wrong_tax_number_is_refused_with_a_reason(country, kind, number):
    with pytest.raises(TinRefused) as refused:
        tin_check(number=number, kind=kind, country=country)
    assert str(refused.value.message)


def test_a_reward_offered_in_several_countries_is_judged_by_the_strictest():
    assert tax_class_for(trigger="referral", country="DE") == "promotional"
    assert tax_class_for(trigger="referral", country="US") == "service"
    judged = reward_tax_judge(trigger="referral", countries=["DE", "US"])
    assert (judged.tax_class, judged.country, judged.reportable) == ("service", "US", True)
    assert reward_tax_judge(trigger="purchase", countries=["ES", "US"]).tax_class == "rebate"
    # Every kind of reward has a class in every version of the table.
    from campaigns.models import Trigger

    for table in TABLES.values():
        for rules in table.values():
            assert set(rules) == set(Trigger.values)


def test_the_launch_check_states_each_rules_class_without_blocking(summer):
    stated = campaign_tax_check(campaign=summer)

    assert {p.code for p in stated} == {"tax_class"} and not any(p.blocking for p in stated)
    texts = {summer.rules.get(pk=p.rule_id).trigger: p.message for p in stated}
    assert texts["ugc_share"].startswith("UGC share: Personal service (DE).")
    assert "before this reward is paid out" in texts["ugc_share"]
    assert "Promotional gift" in texts["tiktok_login"] and "Nothing more is asked" in texts["tiktok_login"]


def test_the_campaign_page_states_each_rules_tax_class_beside_the_launch_check(client, alice, summer):
    client.force_login(alice)
    html = client.get(reverse("campaign_detail", args=[summer.brand.slug, summer.pk])).content.decode()

    assert 'id="tax-statements"' in html
    assert "UGC share: Personal service (DE)." in html and "TikTok login: Promotional gift (DE)." in html


def test_the_reward_rows_carry_the_booked_class_and_sum_to_the_ledger(video_owed):
    person, claim = video_owed
    start = timezone.now() - timedelta(days=1)
    end = timezone.now() + timedelta(days=1)
    # Today's table changed its mind about logins: the booked rewards keep what they were.
    TABLES["2099-1"] = {"*": {**TABLES["2026-1"]["*"], "tiktok_login": "service"}}
    try:
        rows = reward_tax_rows(start=start, end=end, participant_id=person.pk)
    finally:
        del TABLES["2099-1"]

    login = ActionClaim.objects.get(participant=person, rule__trigger="tiktok_login")
    assert sorted((r.trigger, r.tax_class, r.amount) for r in rows) == [
        ("tiktok_login", "promotional", login.amount),
        ("ugc_share", "service", claim.amount),
    ]
    credited = -sum(
        Entry.objects.filter(
            account__kind=AccountKind.PARTICIPANT_PAYABLE,
            account__subject=f"participant:{person.pk}",
            transaction__reason="reward",
        ).values_list("amount", flat=True)
    )
    assert sum(r.amount for r in rows) == credited


def _profile(person, country="DE"):
    return TaxProfile.objects.create(
        participant=person,
        brand_id=person.brand_id,
        legal_name="Pat Example",
        tin="36574261809",
        birth_date="1994-03-02",
        address=json.dumps({"city": "Berlin"}),
        residence_country=country,
        tin_country=country,
        tin_kind="de_idnr",
        us_status="w8ben",
        certified_at=timezone.now(),
        certification_version="2026-12",
    )


def test_an_erasure_keeps_a_service_providers_tax_details_for_ten_years_in_germany(video_owed):
    person, claim = video_owed
    _profile(person)

    participant_erase(participant=person)

    kept = TaxProfile.objects.get(participant=person)
    assert kept.legal_name == "Pat Example" and kept.erased_at is None
    assert kept.retain_until == date(claim.created_at.year + 10, 12, 31)
    assert tax_profiles_retention_enforce(now=timezone.now()) == 0
    after = datetime(kept.retain_until.year + 1, 1, 1, tzinfo=timezone.get_current_timezone())
    assert tax_profiles_retention_enforce(now=after) == 1
    gone = TaxProfile.objects.get(participant=person)
    assert (gone.legal_name, gone.tin, gone.birth_date, gone.address) == ("erased", "", "", "")
    assert gone.residence_country == "DE"  # no one is named by a country


@pytest.mark.parametrize(("country", "years"), [("ES", 6), ("GB", 6), ("US", 7), ("FR", 10)])
def test_the_retention_follows_the_country_of_residence(video_owed, country, years):
    person, claim = video_owed
    _profile(person, country)

    participant_erase(participant=person)

    assert TaxProfile.objects.get().retain_until == date(claim.created_at.year + years, 12, 31)


def test_an_erasure_of_someone_never_paid_for_a_service_erases_their_tax_details_at_once(owed):
    person = owed()
    _profile(person)

    participant_erase(participant=person)
    privacy_retention_enforce()

    gone = TaxProfile.objects.get()
    assert gone.erased_at is not None and gone.tin == "" and gone.legal_name == "erased"


def test_another_persons_token_shows_no_tax_form(client):
    assert client.get(reverse("payouts:tax_details", args=["no-such-token"])).status_code == 404


def test_a_persons_data_download_holds_their_tax_details(video_owed):
    from payouts.privacy import participant_export

    person, _ = video_owed
    _profile(person)

    (given,) = participant_export(participant=person)["tax_details"]

    assert (given["tin"], given["birth_date"], given["address"]) == (
        "36574261809",
        "1994-03-02",
        {"city": "Berlin"},
    )


@pytest.mark.parametrize(
    ("language", "subject"),
    [
        ("de", "Deine Belohnung wartet auf deine Steuerdaten"),
        ("es", "Tu recompensa espera tus datos fiscales"),
        ("zh-hans", "您的奖励正在等待您的税务信息"),
    ],
)
def test_the_person_is_told_in_their_own_language(
    client, summer, django_capture_on_commit_callbacks, language, subject
):
    from tests.conftest import rewarded_in_browser

    client.defaults["HTTP_ACCEPT_LANGUAGE"] = language
    person = rewarded_in_browser(client, summer)
    video_rewarded(person, summer)
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        payee_details(client, summer)

    (told,) = [m for m in mail.outbox if m.subject == subject]
    assert person.token in told.body
