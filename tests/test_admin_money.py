"""Rita (staff, with a second factor) in the admin: money reads as money, statuses change only through
the services' actions, each with who and why, and rows only the product makes have no "Add"."""

import pytest
from django.contrib.admin.models import LogEntry
from django.test import override_settings
from django.urls import reverse

from payouts.models import Payout
from tests.conftest import PASSWORD, SignedInClient, fund, totp_enable
from tests.payouts.conftest import IBANS
from verification.models import ActionClaim, ReviewDecision
from verification.services.participants import identity_attach, participant_create
from verification.services.rewards import ClaimContext, action_reward

pytestmark = pytest.mark.django_db


@pytest.fixture
def rita(django_user_model):
    return totp_enable(
        django_user_model.objects.create_superuser(email="rita@joyback.example", password=PASSWORD)
    )


@pytest.fixture
def admin(rita):
    browser = SignedInClient()
    browser.force_login(rita)
    return browser


@pytest.fixture
def waiting_payout(client, fiona, alpaca, django_capture_on_commit_callbacks):
    """Fiona's manual payout of €900.00, above the threshold: it waits for a second person."""
    fund(alpaca, 2_000_00, "EUR", reference="DEP-ADMIN")
    client.force_login(fiona)
    details = {"name": "Mo Manual", "email": "mo@example.com", "iban": IBANS["settle"], "consent": "on"}
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("payouts:payout_manual", args=["alpaca"]), details | {"amount": "900.00"})
    payout = Payout.objects.get()
    assert payout.status == "awaiting_approval"
    return payout


@pytest.fixture
def flagged(make_live_campaign):
    campaign = make_live_campaign(slug="club", package="whatsapp_reward")
    identity = identity_attach(
        participant=participant_create(brand=campaign.brand), provider="whatsapp", subject="1"
    )
    with override_settings(FRAUD_CLAIMS_PER_ADDRESS_PER_HOUR=0):
        claim = action_reward(
            rule=campaign.rules.get(), identity=identity, context=ClaimContext(client_ip="192.0.2.1")
        )
    assert claim.status == "needs_review"
    return claim


def run_action(admin, model, action, rows, reason=""):
    opts = model._meta
    return admin.post(
        reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"),
        {"action": action, "_selected_action": [row.pk for row in rows], "reason": reason},
        follow=True,
    )


def test_amounts_are_shown_with_their_currency(admin, waiting_payout):
    listing = admin.get(reverse("admin:payouts_payout_changelist")).content.decode()
    accounts = admin.get(reverse("admin:ledger_account_changelist")).content.decode()

    assert "€900.00" in listing and "90000" not in listing
    assert "€2,000.00" in accounts or "€1,100.00" in accounts


def test_adding_an_action_claim_is_not_offered(admin, flagged):
    response = admin.get(reverse("admin:verification_actionclaim_add"))
    listing = admin.get(reverse("admin:verification_actionclaim_changelist")).content.decode()

    assert response.status_code == 403
    assert reverse("admin:verification_actionclaim_add") not in listing


@pytest.mark.parametrize("model", ["verification_participant", "api_apikey", "api_webhookendpoint"])
def test_rows_only_the_product_makes_have_no_add(admin, model):
    assert admin.get(reverse(f"admin:{model}_add")).status_code == 403


def test_a_claims_status_cannot_be_edited_by_hand(admin, flagged):
    url = reverse("admin:verification_actionclaim_change", args=[flagged.pk])
    page = admin.get(url).content.decode()

    admin.post(url, {"status": "approved", "reason": "typed", "amount": "1"})

    flagged.refresh_from_db()
    assert 'name="status"' not in page
    assert (flagged.status, flagged.amount) == ("needs_review", flagged.amount)


def test_a_payouts_status_cannot_be_edited_by_hand(admin, waiting_payout):
    url = reverse("admin:payouts_payout_change", args=[waiting_payout.pk])

    admin.post(url, {"status": "settled", "amount": "1"})

    waiting_payout.refresh_from_db()
    assert (waiting_payout.status, waiting_payout.amount) == ("awaiting_approval", 900_00)
    assert 'name="status"' not in admin.get(url).content.decode()


def test_an_approval_without_a_reason_is_refused_and_changes_nothing(admin, waiting_payout):
    response = run_action(admin, Payout, "approve", [waiting_payout])

    waiting_payout.refresh_from_db()
    assert "Give a reason" in response.content.decode()
    assert waiting_payout.status == "awaiting_approval"
    assert not LogEntry.objects.exists()


def test_an_approval_in_the_admin_goes_through_the_service_with_who_and_why(
    admin, rita, waiting_payout, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = run_action(
            admin, Payout, "approve", [waiting_payout], reason="checked with Fiona by phone"
        )

    waiting_payout.refresh_from_db()
    assert "1 payout(s) approved" in response.content.decode()
    assert waiting_payout.approved_by == rita and waiting_payout.status != "awaiting_approval"
    entry = LogEntry.objects.get(object_id=str(waiting_payout.pk))
    assert entry.user == rita and "checked with Fiona by phone" in entry.get_change_message()


def test_a_claim_is_decided_in_the_admin_through_the_review_service(admin, rita, flagged):
    response = run_action(admin, ActionClaim, "reject", [flagged], reason="same person, second phone")

    flagged.refresh_from_db()
    assert "1 claim(s) rejected" in response.content.decode()
    assert flagged.status == "rejected"
    decision = ReviewDecision.objects.get()
    assert (decision.decided_by, decision.reason) == (rita, "same person, second phone")
    entry = LogEntry.objects.get(object_id=str(flagged.pk))
    assert entry.user == rita and "same person, second phone" in entry.get_change_message()
