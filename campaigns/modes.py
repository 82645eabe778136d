"""Test mode: each brand may have a test twin, a Brand of its own that holds the brand's test
campaigns, participants, ledger accounts, API keys and webhooks.

The twin is addressed as /brands/<slug>--test/: slugify never makes "--", so no live brand can
take that address, and every page that finds its brand by slug shows the twin's data with the
members and roles of the live brand. A twin moves only play money (the sandbox bank's), so it needs
no verification by staff: a developer integrates before the brand is verified. Its verification is
for play money alone: nothing live (an account at the provider, a live key) ever takes it for the
live brand's, and every provider call it makes goes to the sandbox (joyback.modes).
"""

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext

from campaigns.models import Brand
from campaigns.services.funding import brand_funding_account

TEST_SUFFIX = "--test"


def brand_livemode_lookup(brand_id: int) -> bool | None:
    """For joyback.modes: the apps to the left of campaigns know brands only by id."""
    return Brand.objects.filter(pk=brand_id).values_list("livemode", flat=True).first()


def slug_mode_split(slug: str) -> tuple[str, bool]:
    """The live brand's slug and whether the address is its test twin's."""
    if slug.endswith(TEST_SUFFIX):
        return slug.removesuffix(TEST_SUFFIX), False
    return slug, True


def test_slug(brand: Brand) -> str:
    return f"{brand.slug}{TEST_SUFFIX}"


def live_brand_of(brand: Brand) -> Brand:
    """The live brand whose members, roles and verification a (twin) brand answers to."""
    return brand if brand.livemode else brand.live_brand


def brand_test_twin_get(*, brand: Brand) -> Brand | None:
    """The brand's test twin if it was made, else None; a twin is its own."""
    if not brand.livemode:
        return brand
    return Brand.objects.filter(live_brand=brand).first()


def brand_test_twin(*, brand: Brand) -> Brand:
    """The brand's test twin, made on first use; a twin is its own."""
    if not brand.livemode:
        return brand
    twin = brand_test_twin_get(brand=brand)
    if twin is not None:
        return twin

    try:
        with transaction.atomic():
            twin = Brand.objects.create(
                name=brand.name,
                slug=test_slug(brand),
                default_currency=brand.default_currency,
                person_allowance=brand.person_allowance,
                disclosure_names=brand.disclosure_names,
                legal_name=brand.legal_name,
                registration_number=brand.registration_number,
                country=brand.country,
                livemode=False,
                live_brand=brand,
                # Play money only: funding and payouts in test mode need no staff verification.
                # Never read for anything live (payouts.funding refuses twins an account).
                verified_at=timezone.now(),
            )
            brand_funding_account(brand=twin, currency=twin.default_currency)
    except IntegrityError:
        # Two first uses at once: the other one made it.
        return Brand.objects.get(live_brand=brand)
    return twin


def live_key_refusal(*, brand: Brand) -> str:
    """Why the brand may not have a new live key yet ("" when it may): live keys wait for staff to
    verify the brand; test keys never do."""
    if not brand.livemode:
        return ""
    if Brand.objects.filter(pk=brand.pk, verified_at__isnull=False).exists():
        return ""
    return gettext(
        "Live keys are issued once JoyBack has verified the brand. Until then, switch to test data "
        "and make a test key (jb_test_…): it works the same on the brand's test data and the sandbox."
    )
