"""Each brand onboarded at the payment provider: its own legal entity (LegalEntityService v4), its
own account holder with the capabilities JoyBack needs (BalancePlatformService v2), its balance
account under it, Adyen's hosted onboarding link, and the signed balancePlatform.accountHolder.
updated webhooks that say what Adyen allows and what it still asks. Live money moves only when
Adyen allows the capabilities AND staff verified the brand.

Every request is validated against Adyen's published OpenAPI schemas (the parts kept in
tests/payouts/adyen/, MIT licence), with their documented examples; the webhooks start from the
sandbox's, validated against BalancePlatformConfigurationNotification-v2, and from Adyen's own
documented examples.
"""

import copy
import json

import pytest
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from campaigns.services.brands import brand_create, brand_verification_revoke
from campaigns.services.funding import BrandNotVerified, brand_money_allowed_check
from payouts.funding import onboarding
from payouts.funding import selectors as funding_selectors
from payouts.funding import services as funding
from payouts.models import Notification, ProviderOnboarding, SandboxLegalEntity, VirtualAccount
from payouts.providers import adyen_funding, adyen_onboarding
from payouts.sandbox import onboarding as sandbox_onboarding
from payouts.sandbox.funding import funding_webhooks_deliver
from payouts.submission.webhooks import transfer_events_process
from tests.conftest import provider_events, verified
from tests.payouts.test_adyen_transfers import NEXT_KEY, SPEC_DIR, TRANSFERS, deliver, example, spec_errors

pytestmark = pytest.mark.django_db

LEGAL = json.loads((SPEC_DIR / "LegalEntityService-v4.subset.json").read_text())
HOLDERS = json.loads((SPEC_DIR / "BalancePlatformService-v2-accountHolders.subset.json").read_text())
CONFIGURATION = json.loads((SPEC_DIR / "BalancePlatformConfigurationNotification-v2.subset.json").read_text())


def brand_named(owner, legal_name: str, slug: str):
    """A live brand staff verified, with this legal name (the sandbox's magic values), which the
    provider has not allowed yet."""
    brand = verified(
        brand_create(name=slug.title(), slug=slug, owner=owner, currency="EUR"), provider_allowed=False
    )
    type(brand).objects.filter(pk=brand.pk).update(legal_name=legal_name)
    brand.refresh_from_db()
    return brand


def onboard(brand, capture):
    """What staff verifying the brand sets going: its account opened at the provider by the
    standing worker, the brand onboarded there first; then the provider's webhooks delivered."""
    with capture(execute=True):
        funding.virtual_account_request(brand=brand, currency="EUR")
    account = VirtualAccount.objects.get(brand=brand)
    assert account.status == "open", account.error
    webhooks()
    return ProviderOnboarding.objects.get(brand=brand), account


def webhooks():
    funding_webhooks_deliver()
    transfer_events_process()


# Contract: what the adapter sends is what Adyen documents.


def test_the_legal_entity_request_is_adyens_organization():
    sent = adyen_onboarding.legal_entity_request(
        legal_name="Alpaca Coffee GmbH", registration_number="HRB 12345", country="de", reference="brand-1"
    )
    assert spec_errors(LEGAL, "LegalEntityInfoRequiredType", sent) == []
    assert sent["type"] == "organization" and sent["organization"]["registeredAddress"] == {"country": "DE"}
    for name in (
        "post-legalEntities-createLegalEntityOrganizationNL",
        "post-legalEntities-createLegalEntityOrganizationUS",
    ):
        assert spec_errors(LEGAL, "LegalEntityInfoRequiredType", example(LEGAL, name)) == []
    answer = example(LEGAL, "post-legalEntities-createLegalEntityOrganizationNL-200")
    assert spec_errors(LEGAL, "LegalEntity", answer) == [] and answer["id"].startswith("LE")
    # The schema refuses what it does not document, so the checks above mean something.
    assert spec_errors(LEGAL, "LegalEntityInfoRequiredType", {**sent, "colour": "green"})
    assert spec_errors(LEGAL, "LegalEntityInfoRequiredType", {"type": "organization", "organization": {}})


def test_the_account_holder_request_asks_adyens_capabilities():
    sent = adyen_onboarding.account_holder_request(
        legal_entity_id="LE322JV223222D5GG42KN6869", reference="brand-1", description="Alpaca Coffee GmbH"
    )
    assert spec_errors(HOLDERS, "AccountHolderInfo", sent) == []
    assert set(sent["capabilities"]) == {"receiveFromThirdParty", "sendToThirdParty", "sendToBalanceAccount"}
    assert (
        spec_errors(HOLDERS, "AccountHolderInfo", example(HOLDERS, "post-accountHolders-createAccountHolder"))
        == []
    )
    documented = example(HOLDERS, "post-accountHolders-createAccountHolder-200")
    assert spec_errors(HOLDERS, "AccountHolder", documented) == []
    state = adyen_onboarding.account_holder_state(documented)
    # Adyen's documented answer: every capability pending, none allowed, so nothing opens.
    assert state.account_holder_id == "AH3227C223222H5J4DCLW9VBV" and not state.allowed and not state.refused


def test_the_balance_account_is_opened_under_the_brands_own_account_holder():
    sent = adyen_funding.balance_account_request(
        account_holder_id="AH3227C223222H5J4DCLW9VBV",
        currency="EUR",
        reference="brand-1-EUR",
        description="x",
    )
    assert spec_errors(HOLDERS, "BalanceAccountInfo", sent) == []
    assert sent["accountHolderId"] == "AH3227C223222H5J4DCLW9VBV"
    assert not hasattr(adyen_funding, "sweep_request")  # nothing sweeps a brand's money anywhere


def test_the_onboarding_link_request_is_adyens():
    sent = adyen_onboarding.onboarding_link_request(redirect_url="https://joyback.example/x", language="de")
    assert spec_errors(LEGAL, "OnboardingLinkInfo", sent) == [] and sent["locale"] == "de-DE"
    assert (
        spec_errors(
            LEGAL,
            "OnboardingLinkInfo",
            example(LEGAL, "post-legalEntities-id-onboardingLinks-createOnboardingLink"),
        )
        == []
    )
    answer = example(LEGAL, "post-legalEntities-id-onboardingLinks-createOnboardingLink-200")
    assert spec_errors(LEGAL, "OnboardingLink", answer) == []


def test_an_internal_transfer_is_adyens_transfer_info():
    sent = adyen_funding.internal_transfer_request(
        source="BA00000000000000000JOYBACK",
        destination="BA32272223222B5CTDQPM6W2H",
        amount=100_00,
        currency="EUR",
        reference="custody-1",
        description="to its own account",
    )
    assert spec_errors(TRANSFERS, "TransferInfo", sent) == []
    assert sent["category"] == "internal" and sent["counterparty"] == {
        "balanceAccountId": "BA32272223222B5CTDQPM6W2H"
    }


@pytest.mark.parametrize("name", sorted(k for k in CONFIGURATION["components"]["examples"] if "updated" in k))
def test_adyens_documented_account_holder_webhooks_read_as_words(name):
    documented = example(CONFIGURATION, name)
    assert spec_errors(CONFIGURATION, "AccountHolderNotificationRequest", documented) == []
    state = adyen_onboarding.webhook_account_holder(documented)
    assert state is not None and not state.allowed
    codes = {problem.code for problem in state.problems}
    assert "1_703" in codes  # "Upload a bank statement"
    words = funding_selectors.onboarding_problem_words(
        [{"code": p.code, "message": p.message} for p in state.problems]
    )
    assert "Adyen needs a bank statement of your company's account." in words
    if "lem-v3" in name:
        assert {"2_902", "1_500", "1_501", "2_124", "2_151"} <= codes
        assert "Adyen needs your company's register extract." in words


# The sandbox answers in the same formats.


def test_the_sandbox_answers_as_adyen_documents(alice, django_capture_on_commit_callbacks):
    brand = brand_named(alice, "Alpaca Coffee Documents GmbH", "alpaca")
    found, account = onboard(brand, django_capture_on_commit_callbacks)
    entity = SandboxLegalEntity.objects.get(legal_entity_id=found.legal_entity_id)
    assert spec_errors(LEGAL, "LegalEntity", sandbox_onboarding._legal_entity_json(entity)) == []
    holder = sandbox_onboarding.account_holder_json(entity)
    assert spec_errors(HOLDERS, "AccountHolder", holder) == []
    webhook = sandbox_onboarding._webhook(entity)
    assert spec_errors(CONFIGURATION, "AccountHolderNotificationRequest", webhook) == []
    assert account.account_holder_id == found.account_holder_id != ""
    assert account.sweep_id == "" and not account.brand.virtual_accounts.exclude(sweep_id="").exists()


# Onboarding: documents needed, verified, refused; money opens only on both words.


def test_a_brand_must_give_documents_before_money_moves(client, alice, django_capture_on_commit_callbacks):
    brand = brand_named(alice, "Alpaca Coffee Documents GmbH", "alpaca")
    found, account = onboard(brand, django_capture_on_commit_callbacks)
    assert (found.status, found.allowed) == ("documents", False)
    assert {p["code"] for p in found.problems} == {"1_501", "2_902"}
    with pytest.raises(BrandNotVerified, match="Adyen"):
        brand_money_allowed_check(brand=brand)
    assert brand.pk in funding_selectors.brands_custody_blocked(brand_ids=[brand.pk])
    told = Notification.objects.filter(brand=brand, kind="onboarding_documents")
    assert told.count() == 1

    client.force_login(alice)
    page = client.get(reverse("payouts:funding", args=[brand.slug])).content.decode()
    assert "Adyen needs your company&#x27;s register extract." in page
    assert "Adyen needs you to accept its terms of service." in page
    response = client.post(reverse("payouts:funding_onboarding_link", args=[brand.slug]))
    assert response.status_code == 302
    assert f"/sandbox/bank/onboarding/{found.legal_entity_id}/" in response["Location"]

    # The brand gives the register extract on the hosted page; Adyen's signed webhook allows it.
    sandbox_onboarding.documents_give(legal_entity_id=found.legal_entity_id)
    webhooks()
    found.refresh_from_db()
    assert (found.status, found.allowed) == ("verified", True)
    brand_money_allowed_check(brand=brand)  # open now
    assert Notification.objects.filter(brand=brand, kind="onboarding_verified").count() == 1
    assert funding_selectors.brand_balance_account_id(brand=brand) == account.balance_account_id


def test_a_refused_brand_is_told_why_and_stays_closed(client, alice, django_capture_on_commit_callbacks):
    brand = brand_named(alice, "Refused Trading Ltd", "refused")
    found, _account = onboard(brand, django_capture_on_commit_callbacks)
    sandbox_onboarding.documents_give(legal_entity_id=found.legal_entity_id)
    webhooks()
    found.refresh_from_db()
    assert (found.status, found.allowed) == ("refused", False)
    with pytest.raises(BrandNotVerified):
        brand_money_allowed_check(brand=brand)
    assert Notification.objects.filter(brand=brand, kind="onboarding_refused").count() == 1
    client.force_login(alice)
    page = client.get(reverse("payouts:funding", args=[brand.slug])).content.decode()
    assert "Adyen has refused to verify your company" in page
    # No link to the hosted page: documents cannot change a refusal.
    client.post(reverse("payouts:funding_onboarding_link", args=[brand.slug]))
    assert "refused" in client.get(reverse("payouts:funding", args=[brand.slug])).content.decode()


def test_a_brand_with_nothing_more_to_give_is_verified_at_once(alice, django_capture_on_commit_callbacks):
    brand = brand_named(alice, "Llama Tea GmbH", "llama")
    found, _account = onboard(brand, django_capture_on_commit_callbacks)
    assert (found.status, found.allowed) == ("verified", True)


def test_money_opens_only_on_both_words(alice, admin_user, django_capture_on_commit_callbacks):
    """Adyen allowing the capabilities is not enough without staff, nor staff without Adyen."""
    brand = brand_named(alice, "Llama Tea GmbH", "llama")
    onboard(brand, django_capture_on_commit_callbacks)
    brand_money_allowed_check(brand=brand)
    brand_verification_revoke(brand=brand, actor=admin_user, note="a doubt about the company")
    with pytest.raises(BrandNotVerified):
        brand_money_allowed_check(brand=brand)


def test_a_late_webhook_changes_nothing_and_an_unsigned_one_is_refused(
    client, alice, django_capture_on_commit_callbacks
):
    brand = brand_named(alice, "Alpaca Coffee Documents GmbH", "alpaca")
    found, _account = onboard(brand, django_capture_on_commit_callbacks)
    entity = SandboxLegalEntity.objects.get(legal_entity_id=found.legal_entity_id)
    older = sandbox_onboarding._webhook(entity)
    sandbox_onboarding.documents_give(legal_entity_id=found.legal_entity_id)
    webhooks()
    # The "documents needed" webhook again, delivered after the verification: stale.
    older["timestamp"] = "2020-01-01T00:00:00+00:00"
    assert deliver(client, older).status_code == 200
    transfer_events_process()
    found.refresh_from_db()
    assert found.allowed
    # Forged: a brand (or anyone) signing its own "allowed" webhook is refused at the door.
    forged = sandbox_onboarding._webhook(entity)
    forged["data"]["accountHolder"]["capabilities"]["sendToThirdParty"]["allowed"] = True
    assert deliver(client, forged, key=NEXT_KEY).status_code == 401
    assert deliver(client, forged, signature="").status_code == 401


def test_a_webhook_for_an_unknown_account_holder_books_nothing(client, alice):
    documented = example(
        CONFIGURATION, "post-balancePlatform.accountHolder.updated-balancePlatform-accountHolder-updated"
    )
    assert deliver(client, documented).status_code == 200
    transfer_events_process()
    assert provider_events().get().outcome == "account_holder_unknown"
    assert not ProviderOnboarding.objects.exists()


def test_the_brand_is_reminded_while_documents_are_asked(alice, django_capture_on_commit_callbacks):
    brand = brand_named(alice, "Alpaca Coffee Documents GmbH", "alpaca")
    onboard(brand, django_capture_on_commit_callbacks)
    assert onboarding.onboarding_reminders_send() == 0  # just told
    later = timezone.now() + onboarding.REMIND_EVERY
    assert onboarding.onboarding_reminders_send(now=later) == 1
    assert onboarding.onboarding_reminders_send(now=later) == 0
    assert Notification.objects.filter(brand=brand, kind="onboarding_documents").count() == 2


def test_a_brand_without_legal_details_is_not_onboarded(alice):
    brand = brand_create(name="Llama", slug="llama", owner=alice, currency="EUR")
    with pytest.raises(onboarding.OnboardingRefused):
        onboarding.onboarding_ensure(brand=brand)
    assert not SandboxLegalEntity.objects.exists()


def test_another_brand_is_refused_on_every_onboarding_url(
    client, alice, bob, bison, django_capture_on_commit_callbacks
):
    brand = brand_named(alice, "Alpaca Coffee Documents GmbH", "alpaca")
    found, _account = onboard(brand, django_capture_on_commit_callbacks)
    client.force_login(bob)
    assert client.get(reverse("payouts:funding", args=[brand.slug])).status_code == 404
    assert client.post(reverse("payouts:funding_onboarding_link", args=[brand.slug])).status_code == 404
    own = client.get(reverse("payouts:funding", args=[bison.slug])).content.decode()
    assert found.legal_entity_id not in own


def test_the_hosted_page_wants_a_document_and_is_closed_outside_the_sandbox(
    client, alice, django_capture_on_commit_callbacks
):
    brand = brand_named(alice, "Alpaca Coffee Documents GmbH", "alpaca")
    found, _account = onboard(brand, django_capture_on_commit_callbacks)
    url = reverse("payouts:sandbox_onboarding_page", args=[found.legal_entity_id])
    assert client.post(url).status_code == 400
    assert SandboxLegalEntity.objects.get(legal_entity_id=found.legal_entity_id).status == "documents"
    with override_settings(SANDBOX=False):
        assert client.get(url).status_code == 404


def test_two_states_of_one_account_holder_in_the_same_second_are_two_events():
    """Adyen's timestamps are whole seconds: "documents needed" and "verified" a moment apart share
    one, and the second must not be dropped as a redelivery of the first (the brand would stay
    closed). A true redelivery is still one event."""
    from payouts.providers.adyen import webhook_event_id

    documents = example(
        CONFIGURATION, "post-balancePlatform.accountHolder.updated-balancePlatform-accountHolder-updated"
    )
    verified = copy.deepcopy(documents)
    for capability in verified["data"]["accountHolder"].get("capabilities", {}).values():
        capability["allowed"] = not capability.get("allowed")

    assert webhook_event_id(documents) != webhook_event_id(verified)
    assert webhook_event_id(documents) == webhook_event_id(copy.deepcopy(documents))
