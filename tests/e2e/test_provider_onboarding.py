"""Onboarding at the payment provider, in a real browser: Alice's brand must give Adyen its register
extract on Adyen's hosted page (the sandbox's) before funding and payouts open; Bob's brand is
refused by Adyen and is told so."""

import pytest
from django.test import override_settings

from campaigns.models import Brand
from campaigns.services.brands import brand_create
from payouts.funding import services as funding
from payouts.models import ProviderOnboarding
from payouts.sandbox.funding import funding_webhooks_deliver
from payouts.sandbox.onboarding import documents_give
from payouts.submission.webhooks import transfer_events_process
from tests.conftest import verified
from tests.e2e.conftest import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def onboarded(owner, slug: str, legal_name: str) -> Brand:
    brand = verified(
        brand_create(name=slug.title(), slug=slug, owner=owner, currency="EUR"), provider_allowed=False
    )
    Brand.objects.filter(pk=brand.pk).update(legal_name=legal_name)
    brand.refresh_from_db()
    funding.virtual_account_request(brand=brand, currency="EUR")  # opened after the commit
    webhooks()
    return brand


def webhooks():
    funding_webhooks_deliver()
    transfer_events_process()


def test_a_brand_gives_adyen_its_register_extract(live_server, page, screenshot, alice, tmp_path):
    with override_settings(SITE_URL=live_server.url):
        brand = onboarded(alice, "alpaca", "Alpaca Coffee Documents GmbH")
        assert ProviderOnboarding.objects.get(brand=brand).status == "documents"
        sign_in(page, live_server, alice.email, next_path=f"/brands/{brand.slug}/funding/")
        page.wait_for_selector("[data-testid=onboarding-status]")
        asked = page.get_by_test_id("onboarding-asked").inner_text()
        assert "Adyen needs your company's register extract." in asked
        screenshot(page, "onboarding-01-documents-needed")

        page.get_by_role("button", name="Give Adyen the documents").click()
        page.wait_for_selector("[data-testid=sandbox-onboarding-status]")
        assert "/sandbox/bank/onboarding/" in page.url
        extract = tmp_path / "register-extract.pdf"
        extract.write_bytes(b"%PDF-1.4 register extract")
        page.get_by_label("Company register extract (PDF)").set_input_files(str(extract))
        screenshot(page, "onboarding-02-adyen-hosted-page")
        page.get_by_role("button", name="Submit to Adyen").click()
        page.wait_for_selector("[data-testid=onboarding-status]")
        assert f"/brands/{brand.slug}/funding/" in page.url

        webhooks()  # Adyen's signed account holder webhook: the capabilities allowed
        page.reload()
        assert page.get_by_test_id("onboarding-status").inner_text() == "Verified by the payment provider"
        assert page.get_by_test_id("virtual-iban").is_visible()
        screenshot(page, "onboarding-03-verified")
    assert ProviderOnboarding.objects.get(brand=brand).allowed


def test_a_refused_brand_is_told_why(live_server, page, screenshot, bob):
    with override_settings(SITE_URL=live_server.url):
        brand = onboarded(bob, "bison", "Refused Trading Ltd")
        documents_give(legal_entity_id=ProviderOnboarding.objects.get(brand=brand).legal_entity_id)
        webhooks()
        sign_in(page, live_server, bob.email, next_path=f"/brands/{brand.slug}/funding/")
        page.wait_for_selector("[data-testid=onboarding-refused]")
        assert page.get_by_test_id("onboarding-status").inner_text() == "Refused by the payment provider"
        assert (
            "Adyen has refused to verify your company"
            in page.get_by_test_id("onboarding-refused").inner_text()
        )
        assert page.get_by_role("button", name="Give Adyen the documents").count() == 0
        screenshot(page, "onboarding-04-refused")
