"""Alice writes what people agree to when they opt in to hear from Alpaca Coffee again: per channel
and language, each save a new version; wording that names neither the brand nor the channel is
refused, and a campaign whose wording no longer names the brand does not go live."""

import pytest
from django.urls import reverse

from campaigns.models import Brand, ConsentWording
from campaigns.services.campaigns import campaign_create, campaign_transition
from campaigns.services.consent import consent_wording_save
from campaigns.services.funding import campaign_fund
from campaigns.services.refusals import CampaignError
from tests.conftest import fund

pytestmark = pytest.mark.django_db


@pytest.fixture
def draft(alpaca):
    fund(alpaca, 10_00, "EUR", reference="FUND-DRAFT")
    campaign = campaign_create(
        brand=alpaca,
        name="Club",
        package="whatsapp_reward",
        currency="EUR",
        countries=["DE"],
        languages=["en"],
    )
    campaign_fund(campaign=campaign, amount=10_00)
    return campaign


def test_each_save_is_a_new_version_and_the_old_one_stays(draft, alice):
    first = consent_wording_save(
        campaign=draft, channel="whatsapp", language="en", user=alice, text="Alpaca Coffee news on WhatsApp."
    )
    second = consent_wording_save(
        campaign=draft,
        channel="whatsapp",
        language="en",
        user=alice,
        text="Alpaca Coffee offers on WhatsApp.",
    )
    assert (first.version, second.version) == (1, 2)
    assert ConsentWording.objects.count() == 2


def test_the_brands_other_names_count_and_email_is_named_in_any_language(draft, alice):
    Brand.objects.filter(pk=draft.brand_id).update(disclosure_names=["@alpacacoffee"])
    draft.brand.refresh_from_db()
    saved = consent_wording_save(
        campaign=draft,
        channel="email",
        language="de",
        user=alice,
        text="Ja, @alpacacoffee darf mir E-Mails schicken.",
    )
    assert saved.version == 1
    with pytest.raises(CampaignError, match="must say the messages come by Email"):
        consent_wording_save(
            campaign=draft, channel="email", language="de", user=alice, text="@alpacacoffee, ja!"
        )


def test_a_wording_that_no_longer_names_the_brand_keeps_the_campaign_from_going_live(draft, alice):
    consent_wording_save(
        campaign=draft, channel="whatsapp", language="en", user=alice, text="Alpaca Coffee news on WhatsApp."
    )
    Brand.objects.filter(pk=draft.brand_id).update(name="Llama Roasters")
    draft.brand.refresh_from_db()

    with pytest.raises(CampaignError, match="must name your brand"):
        campaign_transition(campaign=draft, to="live")
    draft.refresh_from_db()
    assert draft.status == "draft"


def test_the_campaign_page_shows_the_wording_and_saves_a_new_version(client, alice, draft):
    client.force_login(alice)
    url = reverse("campaign_consent", args=["alpaca", draft.pk])
    card = client.get(url, headers={"HX-Request": "true"}).content.decode()
    assert "I agree that Alpaca Coffee sends me news and offers on WhatsApp" in card

    bad = client.post(url, {"channel": "whatsapp", "language": "en", "text": "Send me news."})
    assert bad.status_code == 400 and "must name your brand" in bad.content.decode()
    assert not ConsentWording.objects.exists()
    good = client.post(
        url, {"channel": "whatsapp", "language": "es", "text": "Alpaca Coffee por WhatsApp, sí."}
    )
    assert good.status_code == 302 and ConsentWording.objects.get().language == "es"


def test_a_viewer_cannot_change_it_and_another_brand_gets_404(client, vic, bob, bison, draft):
    url = reverse("campaign_consent", args=["alpaca", draft.pk])
    client.force_login(vic)
    assert client.get(url).status_code == 200
    assert (
        client.post(
            url, {"channel": "whatsapp", "language": "en", "text": "Alpaca Coffee WhatsApp"}
        ).status_code
        == 403
    )
    client.force_login(bob)
    assert client.get(url).status_code == 404
    assert client.get(reverse("campaign_consent", args=["bison", draft.pk])).status_code == 404
    assert not ConsentWording.objects.exists()
