"""Fiona (finance) pays by hand, approves, cancels and pays again; Pat answers the bank's name check;
rewards taken back are netted against the next payout."""

from datetime import timedelta

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from joyback.ledger.models import Account, AccountKind
from joyback.ledger.selectors import ledger_drift
from payouts.models import PayeeAccount, Payout, SandboxBankPayment, VopCheck
from payouts.submission.sweeps import payouts_sweep
from tests.conftest import SignedInClient, fund, rewarded_in_browser
from tests.payouts.conftest import IBANS, payee_details

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _new_accounts_need_no_second_approval(settings):
    """These tests are about the payout itself; the controls on payouts (limits, the second
    approval of a first payout to an account) are tested in tests/payouts/test_payout_controls.py."""
    settings.PAYOUT_NEW_ACCOUNT_APPROVAL = False


MANUAL = {
    "name": "Mo Manual",
    "email": "mo@example.com",
    "iban": IBANS["settle"],
    "consent": "on",
    "currency": "EUR",
}


def funding(brand):
    return Account.objects.get(kind=AccountKind.BRAND_FUNDING, brand_id=brand.pk, currency="EUR").balance


@pytest.fixture
def funded(alpaca):
    fund(alpaca, 2_000_00, "EUR", reference="DEP-OPS")
    return alpaca


def manual(client, brand, **changes):
    return client.post(reverse("payouts:payout_manual", args=[brand.slug]), MANUAL | changes)


def act(client, payout, action, **extra):
    return client.post(
        reverse("payouts:payout_action", args=[payout.brand.slug, payout.pk]), {"action": action, **extra}
    )


def test_a_small_manual_payout_goes_at_once(client, fiona, funded, django_capture_on_commit_callbacks):
    client.force_login(fiona)

    with django_capture_on_commit_callbacks(execute=True):
        response = manual(client, funded, amount="25.00")

    payout = Payout.objects.get()
    assert response.status_code == 302 and response["Location"].endswith(f"/payouts/{payout.pk}/")
    assert (payout.status, payout.amount, payout.manual, payout.created_by) == ("settled", 25_00, True, fiona)
    assert funding(funded) == 2_000_00 - 25_00
    page = client.get(response["Location"]).content.decode()
    assert payout.end_to_end_id in page and "Created → " in page and "<strong>Paid</strong>" in page


def test_a_large_manual_payout_waits_for_a_second_person(
    client, fiona, alice, funded, django_capture_on_commit_callbacks
):
    client.force_login(fiona)
    with django_capture_on_commit_callbacks(execute=True):
        manual(client, funded, amount="900.00")
    payout = Payout.objects.get()
    assert payout.status == "awaiting_approval"
    assert not SandboxBankPayment.objects.exists()

    act(client, payout, "approve")
    payout.refresh_from_db()
    assert payout.status == "awaiting_approval"
    assert "second person" in client.get(reverse("payouts:payout_list", args=[funded.slug])).content.decode()

    owner = SignedInClient()
    owner.force_login(alice)
    with django_capture_on_commit_callbacks(execute=True):
        act(owner, payout, "approve")

    payout.refresh_from_db()
    assert (payout.status, payout.approved_by) == ("settled", alice)


def test_a_payout_not_yet_sent_can_be_cancelled_and_the_money_returns(client, fiona, funded):
    client.force_login(fiona)
    manual(client, funded, amount="900.00")
    payout = Payout.objects.get()

    act(client, payout, "cancel")

    payout.refresh_from_db()
    assert payout.status == "cancelled" and funding(funded) == 2_000_00
    assert ledger_drift() == []


def test_a_sent_payout_cannot_be_cancelled(client, fiona, funded, django_capture_on_commit_callbacks):
    client.force_login(fiona)
    with django_capture_on_commit_callbacks(execute=True):
        manual(client, funded, amount="10.00")
    payout = Payout.objects.get()

    response = act(client, payout, "cancel")

    payout.refresh_from_db()
    assert payout.status == "settled"
    assert "can no longer be cancelled" in client.get(response["Location"]).content.decode()


def test_bad_manual_details_are_refused_and_nothing_is_stored(client, fiona, funded):
    client.force_login(fiona)

    response = manual(client, funded, amount="10.00", iban="DE89370400440532013001")

    assert response.status_code == 400 and "check digits" in response.content.decode()
    assert not Payout.objects.exists() and not PayeeAccount.objects.exists()


def test_more_than_the_funding_holds_is_refused(client, fiona, funded):
    client.force_login(fiona)

    response = manual(client, funded, amount="5000.00")

    assert response.status_code == 400 and "does not hold enough" in response.content.decode()
    assert not Payout.objects.exists() and funding(funded) == 2_000_00


@pytest.mark.parametrize("persona", ["vic", "bob"])
def test_viewers_and_outsiders_cannot_pay(client, persona, request, funded):
    client.force_login(request.getfixturevalue(persona))

    response = manual(client, funded, amount="10.00")

    assert response.status_code in (403, 404) and not Payout.objects.exists()


def test_a_technical_rejection_is_paid_again_on_retry(
    client, fiona, owed, django_capture_on_commit_callbacks
):
    owed(iban=IBANS["AB05"])
    failed = Payout.objects.get()
    assert failed.status == "rejected"
    # The payee's bank is back: the same account now settles.
    from payouts.models import SandboxBankAccount

    SandboxBankAccount.objects.create(account=IBANS["AB05"], outcome="settle")
    client.force_login(fiona)

    with django_capture_on_commit_callbacks(execute=True):
        act(client, failed, "retry")
    later = timezone.now() + timedelta(minutes=5)
    for now in (None, later):  # after an instant timeout the money goes by the next file; its booking
        with django_capture_on_commit_callbacks(execute=True):
            payouts_sweep(now=now)

    again = Payout.objects.exclude(pk=failed.pk).get()
    assert (again.scheme, again.status, again.repays) == ("sepa", "settled", failed)


def test_retry_waits_for_corrected_details(client, fiona, owed):
    owed(iban=IBANS["AC01"])
    failed = Payout.objects.get()
    client.force_login(fiona)

    response = act(client, failed, "retry")

    assert "not corrected their bank details" in client.get(response["Location"]).content.decode()
    assert Payout.objects.count() == 1


def test_a_close_match_asks_pat_and_pays_the_name_chosen(
    client, summer, owed, django_capture_on_commit_callbacks
):
    person = owed(iban=IBANS["close_match"], name="Pat Example")
    payout = Payout.objects.get()
    assert (payout.status, payout.reason_code) == ("created", "VOP")
    status = client.get(reverse("payouts:status_page", args=[summer.slug, person.token])).content.decode()
    assert "slightly different name" in status and "Pat EXAMPLE JR" in status

    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("payouts:status_vop_choose", args=[person.token]), {"choice": "bank_name"})

    payout.refresh_from_db()
    assert payout.status == "settled"
    assert SandboxBankPayment.objects.get().creditor_name == "Pat EXAMPLE JR"
    assert VopCheck.objects.get().choice == "bank_name"


def test_no_match_waits_until_pat_insists(client, summer, owed, django_capture_on_commit_callbacks):
    person = owed(iban=IBANS["no_match"])
    assert Payout.objects.get().status == "created"

    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("payouts:status_vop_choose", args=[person.token]), {"choice": "keep_name"})

    assert Payout.objects.get().status == "settled"


def test_a_bad_vop_answer_is_refused(client, owed):
    person = owed(iban=IBANS["no_match"])

    response = client.post(reverse("payouts:status_vop_choose", args=[person.token]), {"choice": "bank_name"})

    assert response.status_code == 400 and "did not tell us a name" in response.content.decode()
    assert VopCheck.objects.get().choice == ""


def test_a_bank_that_cannot_check_names_does_not_stop_the_payout(owed):
    owed(iban=IBANS["not_possible"])

    assert Payout.objects.get().status == "settled"
    assert VopCheck.objects.get().result == "NOAP"


def test_uk_and_us_rails(client, make_live_campaign, django_capture_on_commit_callbacks):
    from payouts.submission.submit import payout_status_check

    pounds = make_live_campaign(slug="uk-club", package="tiktok_only", currency="GBP")
    dollars = make_live_campaign(slug="us-club", package="tiktok_only", currency="USD")
    for campaign, details in (
        (pounds, {"sort_code": "12-34-56", "account_number": "12345678"}),
        (dollars, {"routing_number": "011000015", "account_number": "000123456789"}),
    ):
        browser = Client()
        rewarded_in_browser(browser, campaign, subject=f"oid-{campaign.slug}")
        with django_capture_on_commit_callbacks(execute=True):
            payee_details(browser, campaign, iban="", email=f"{campaign.slug}@example.com", **details)

    uk, us = Payout.objects.get(currency="GBP"), Payout.objects.get(currency="USD")
    assert (uk.scheme, uk.status) == ("fps", "settled")
    assert (us.scheme, us.status) == ("ach", "accepted")
    assert not VopCheck.objects.exists()
    payout_status_check(payout_id=us.pk)
    us.refresh_from_db()
    assert us.status == "settled"


def test_pat_without_email_is_told_on_whatsapp(owed):
    from payouts.models import Notification

    owed(email="", phone="+49 151 23456789")

    (note,) = Notification.objects.filter(kind="settled")
    assert note.channel == "whatsapp"
    assert note.sent_at and note.provider_message_id.startswith("wamid.")
    assert not [m for m in mail.outbox if "is paid" in m.subject]


def test_a_reward_taken_back_after_payout_is_netted_against_the_next(owed, summer):
    from payouts.submission.create import payout_for_participant
    from verification.models import ActionClaim
    from verification.services.participants import identity_attach
    from verification.services.rewards import action_reward, claim_clawback

    person = owed()
    login = ActionClaim.objects.get()
    claim_clawback(claim=login, reason="post deleted")
    receivable = Account.objects.get(kind=AccountKind.PARTICIPANT_RECEIVABLE, subject=person.ledger_subject)
    assert receivable.balance == 1_00 and ActionClaim.objects.get().status == "clawed_back"

    whatsapp = identity_attach(participant=person, provider="whatsapp", subject="4915123456789")
    action_reward(rule=summer.rules.get(trigger="whatsapp_optin"), identity=whatsapp)

    assert payout_for_participant(participant_id=person.pk, currency="EUR") is None
    receivable.refresh_from_db()
    payable = Account.objects.get(kind=AccountKind.PARTICIPANT_PAYABLE, subject=person.ledger_subject)
    assert (receivable.balance, payable.balance, Payout.objects.count()) == (0, 0, 1)
    assert ledger_drift() == []


def test_a_reward_taken_back_before_payout_never_leaves(client, summer):
    from verification.models import ActionClaim
    from verification.services.rewards import claim_clawback

    person = rewarded_in_browser(client, summer)
    claim_clawback(claim=ActionClaim.objects.get(), reason="refund")

    payable = Account.objects.get(kind=AccountKind.PARTICIPANT_PAYABLE, subject=person.ledger_subject)
    assert payable.balance == 0
    assert not Account.objects.filter(kind=AccountKind.PARTICIPANT_RECEIVABLE, balance__gt=0).exists()


def test_swift_pays_where_no_local_rail_reaches(
    client, make_live_campaign, django_capture_on_commit_callbacks
):
    from payouts.submission.submit import payout_status_check

    loonies = make_live_campaign(slug="ca-club", package="tiktok_only", currency="CAD")
    rewarded_in_browser(client, loonies)
    bad = client.post(
        reverse("payouts:payee", args=["ca-club"]),
        {
            "name": "Pat",
            "email": "pat@example.com",
            "bic": "TDOM",
            "account_number": "1234567",
            "consent": "on",
        },
    )
    assert bad.status_code == 400 and "8 or 11 letters" in bad.content.decode()
    assert not PayeeAccount.objects.exists()

    with django_capture_on_commit_callbacks(execute=True):
        payee_details(
            client,
            loonies,
            iban="",
            bic="TDOMCATTTOR",
            account_number="0012345678",
            address_line="100 King Street West",
            address_city="Toronto",
            address_postal_code="M5X 1A9",
            address_region="ON",
            address_country="ca",
        )

    payout = Payout.objects.get()
    assert (payout.scheme, payout.status, payout.payee.rail) == ("swift", "accepted", "swift")
    payout_status_check(payout_id=payout.pk)
    payout.refresh_from_db()
    assert payout.status == "settled"
