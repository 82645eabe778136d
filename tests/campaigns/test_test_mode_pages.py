"""The dashboard's test data: /brands/<slug>--test/ shows the brand's test twin with the live
brand's members and roles. Every brand page honours it, keeps test and live objects apart, and
refuses other brands' members, as the live pages do (the URLs found in the URLconf)."""

import pytest

from campaigns.models import Brand
from campaigns.modes import brand_test_twin
from campaigns.services.brands import brand_create
from joyback.api.models import ApiKey
from tests.campaigns.test_cross_brand import brand_scoped_patterns, url_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def twins(alpaca, bison):
    return brand_test_twin(brand=alpaca), brand_test_twin(brand=bison)


def test_every_test_page_of_your_brand_answers(client, alice, twins):
    client.force_login(alice)
    alpaca_test, _ = twins
    for pattern, namespace, converters in brand_scoped_patterns():
        url = url_for(pattern, namespace, converters, slug_brand=alpaca_test, object_brand=alpaca_test)
        assert url.startswith("/brands/alpaca--test/") or "/alpaca--test/" in url, url
        # Test data is the free trial: it is never invoiced, so an invoice's download is not found.
        free_trial = "/invoices/" in url
        assert client.get(url).status_code in ((404,) if free_trial else (200, 405)), url


@pytest.mark.parametrize("method", ["get", "post"])
def test_another_brands_test_data_is_404_everywhere(client, alice, twins, method):
    client.force_login(alice)
    _, bison_test = twins
    for pattern, namespace, converters in brand_scoped_patterns():
        url = url_for(pattern, namespace, converters, slug_brand=bison_test, object_brand=bison_test)
        response = getattr(client, method)(url)
        assert response.status_code == 404, f"{method.upper()} {url} gave {response.status_code}"


def test_live_objects_are_404_under_your_test_data_and_test_objects_under_live(client, alice, alpaca, twins):
    client.force_login(alice)
    alpaca_test, _ = twins
    checked = 0
    for pattern, namespace, converters in brand_scoped_patterns():
        if set(converters) == {"brand_slug"}:
            continue
        for slug_brand, object_brand in ((alpaca_test, alpaca), (alpaca, alpaca_test)):
            url = url_for(pattern, namespace, converters, slug_brand=slug_brand, object_brand=object_brand)
            codes = {client.get(url).status_code, client.post(url).status_code}
            assert 404 in codes and codes <= {404, 405}, f"{url} answered {codes} across modes"
            checked += 1
    assert checked >= 10


def test_the_switch_makes_the_twin_once_and_remembers_the_choice(client, alice, alpaca):
    client.force_login(alice)
    assert client.get("/brands/alpaca--test/").status_code == 404  # no test data yet
    switched = client.post("/brands/alpaca/mode/", {"mode": "test"})
    assert switched.status_code == 302 and switched["Location"] == "/brands/alpaca--test/"
    page = client.get("/brands/alpaca--test/").content.decode()
    assert 'data-testid="test-banner"' in page and 'aria-checked="true"' in page
    assert client.post("/brands/alpaca--test/mode/", {"mode": "test"})["Location"] == "/brands/alpaca--test/"
    assert Brand.objects.filter(live_brand=alpaca).count() == 1
    assert client.get("/brands/")["Location"] == "/brands/alpaca--test/"
    assert client.post("/brands/alpaca--test/mode/", {"mode": "live"})["Location"] == "/brands/alpaca/"
    assert client.get("/brands/")["Location"] == "/brands/alpaca/"
    assert 'data-testid="test-banner"' not in client.get("/brands/alpaca/").content.decode()


def test_another_brands_member_cannot_switch_it_nor_make_its_twin(client, bob, alpaca, bison):
    client.force_login(bob)
    assert client.post("/brands/alpaca/mode/", {"mode": "test"}).status_code == 404
    assert not Brand.objects.filter(live_brand=alpaca).exists()


def test_an_unverified_brand_gets_a_test_key_but_no_live_key(client, alice):
    brand = brand_create(name="Unverified Umbrellas", slug="umbrellas", owner=alice)
    client.force_login(alice)
    form = {"name": "Shop backend", "scopes": ["read", "events"]}

    refused = client.post("/brands/umbrellas/developers/keys/", form)
    assert refused.status_code == 400
    assert "Live keys are issued once JoyBack has verified the brand" in refused.content.decode()
    assert not ApiKey.objects.exists()

    client.post("/brands/umbrellas/mode/", {"mode": "test"})
    made = client.post("/brands/umbrellas--test/developers/keys/", form)
    assert made.status_code == 200
    key = ApiKey.objects.get()
    assert key.brand_id == brand_test_twin(brand=brand).pk and key.livemode is False
    assert key.prefix.startswith("jb_test_") and key.prefix in made.content.decode()


def test_a_verified_brand_gets_a_live_key(client, alice, alpaca):
    client.force_login(alice)
    made = client.post("/brands/alpaca/developers/keys/", {"name": "Shop", "scopes": ["read"]})
    assert made.status_code == 200
    key = ApiKey.objects.get()
    assert key.prefix.startswith("jb_live_") and key.livemode is True and key.brand_id == alpaca.pk


def test_a_live_key_of_an_unverified_brand_is_not_rotated_into_a_new_one(client, alice):
    from joyback.api.keys import api_key_create

    brand = brand_create(name="Unverified Umbrellas", slug="umbrellas", owner=alice)
    old = api_key_create(brand_id=brand.pk, name="made before", scopes=["read"]).api_key
    client.force_login(alice)
    answer = client.post(
        f"/brands/umbrellas/developers/keys/{old.pk}/rotate/", {"grace_hours": 0}, follow=True
    )
    assert "Live keys are issued once JoyBack has verified the brand" in answer.content.decode()
    assert list(ApiKey.objects.values_list("pk", "revoked_at")) == [(old.pk, None)]
