"""Brands: creating them, their members, their legal details and staff's verification, the most
one person may earn."""

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext

from campaigns.invoices import vat_id_fits, vat_id_normal
from campaigns.limits import euro_cents_in
from campaigns.models import (
    Brand,
    BrandVerification,
    Membership,
    Role,
    VatIdCheck,
)
from campaigns.selectors import (
    brand_owner_verified_email,
    brand_verification_missing,
)
from campaigns.services.funding import brand_funding_account
from campaigns.services.refusals import CampaignError
from joyback.money import currency_check
from joyback.queue import enqueue_on_commit
from joyback.users.four_eyes import access_change_record
from joyback.users.models import AccessChangeKind

RESERVED_SLUGS = frozenset({"new"})  # taken by /brands/new/


def _free_slug(name: str) -> str:
    base = slugify(name)[:50] or "brand"
    slug, n = base, 1
    while slug in RESERVED_SLUGS or Brand.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    return slug


def brand_create(*, name: str, owner, slug: str = "", currency: str = "EUR") -> Brand:
    currency_check(currency)
    if "--" in slug:
        # The address of test twins (campaigns.modes), which slugify never makes.
        raise CampaignError(gettext("A brand's address may not contain two hyphens in a row."))
    with transaction.atomic(durable=True):
        brand = Brand.objects.create(
            name=name,
            slug=slug or _free_slug(name),
            default_currency=currency,
            # The platform's default is euro cents: a yen brand's people may earn as much money, not
            # a hundredth of it.
            person_allowance=euro_cents_in(amount=settings.PERSON_ALLOWANCE_DEFAULT, currency=currency)
            or None,
        )
        membership = Membership.objects.create(brand=brand, user=owner, role=Role.OWNER)
        membership_change_record(membership=membership, actor=owner, before="none")
        brand_funding_account(brand=brand, currency=currency)
    return brand


def brand_legal_details_save(
    *, brand: Brand, legal_name: str, registration_number: str, country: str, vat_id: str | None = None
) -> Brand:
    """The owner says who the brand is in law. Changing it after verification withdraws the
    verification: staff verified the details as they were. The VAT number (None: unchanged) only
    decides the VAT of the platform's next invoices (campaigns.invoices)."""
    legal_name, registration_number = legal_name.strip(), registration_number.strip()
    country = country.strip().upper()
    if len(country) != 2 or not country.isalpha():
        raise CampaignError(gettext("Choose the country the company is registered in."))
    if vat_id is not None:
        vat_id = _vat_id_checked(country=country, vat_id=vat_id)
    with transaction.atomic(durable=True):
        locked = Brand.objects.select_for_update().get(pk=brand.pk)
        if vat_id is not None and vat_id != locked.vat_id:
            # A new number is unconfirmed until VIES answers for it: asked at the next run.
            locked.vat_id, locked.vies_next_check_at = vat_id, timezone.now()
            locked.save(update_fields=["vat_id", "vies_next_check_at"])
        changed = (locked.legal_name, locked.registration_number, locked.country) != (
            legal_name,
            registration_number,
            country,
        )
        locked.legal_name, locked.registration_number, locked.country = (
            legal_name,
            registration_number,
            country,
        )
        if changed and locked.verified_at is not None:
            locked.verified_at, locked.verified_by = None, None
        locked.save(
            update_fields=["legal_name", "registration_number", "country", "verified_at", "verified_by"]
        )
    return locked


def brand_verify(*, brand: Brand, actor, note: str = "") -> Brand:
    """Platform staff confirm who the brand is: from now on it may fund campaigns and pay out.
    Recorded with who, when and what they saw, in the same transaction."""
    if not (actor.is_active and actor.is_staff):
        raise CampaignError(gettext("Only platform staff verify brands."))
    with transaction.atomic(durable=True):
        locked = Brand.objects.select_for_update().get(pk=brand.pk)
        if locked.memberships.filter(user=actor).exists():
            raise CampaignError(gettext("Staff may not verify a brand they are a member of."))
        missing = brand_verification_missing(brand=locked)
        if missing:
            raise CampaignError(
                gettext("%(brand)s cannot be verified yet; missing: %(missing)s.")
                % {"brand": locked.name, "missing": ", ".join(missing)}
            )
        if locked.verified_at is not None:
            return locked
        locked.verified_at, locked.verified_by = timezone.now(), actor
        locked.save(update_fields=["verified_at", "verified_by"])
        _verification_record(locked, action=BrandVerification.Action.VERIFIED, actor=actor, note=note)
        # The brand's own account to fund by bank transfer, opened at the provider after commit.
        if settings.BRAND_VERIFIED_TASK:
            enqueue_on_commit(settings.BRAND_VERIFIED_TASK, locked.pk, locked.default_currency)
    return locked


def brand_verification_revoke(*, brand: Brand, actor, note: str) -> Brand:
    """Staff withdraw a verification (a doubt about the company): funding and payouts stop."""
    if not (actor.is_active and actor.is_staff):
        raise CampaignError(gettext("Only platform staff verify brands."))
    if not note.strip():
        raise CampaignError(gettext("Say why the verification is withdrawn."))
    with transaction.atomic(durable=True):
        locked = Brand.objects.select_for_update().get(pk=brand.pk)
        if locked.verified_at is None:
            return locked
        locked.verified_at, locked.verified_by = None, None
        locked.save(update_fields=["verified_at", "verified_by"])
        _verification_record(locked, action=BrandVerification.Action.REVOKED, actor=actor, note=note)
    return locked


def _verification_record(brand: Brand, *, action: str, actor, note: str) -> None:
    BrandVerification.objects.create(
        brand=brand,
        action=action,
        actor=actor,
        legal_name=brand.legal_name,
        registration_number=brand.registration_number,
        country=brand.country,
        owner_email=brand_owner_verified_email(brand=brand),
        note=note,
        at=timezone.now(),
    )


def member_add(*, brand: Brand, user, role: str, actor=None) -> Membership:
    """A member added or given another role, recorded with who did it (the four-eyes rule reads it:
    joyback.users.four_eyes)."""
    with transaction.atomic():
        before = Membership.objects.select_for_update().filter(brand=brand, user=user).first()
        membership, _ = Membership.objects.update_or_create(
            brand=brand, user=user, defaults={"role": Role(role)}
        )
        if before is None or before.role != membership.role:
            membership_change_record(
                membership=membership, actor=actor, before=before.role if before else "none"
            )
    return membership


def membership_grant_value(*, brand: Brand, role: str) -> str:
    return f"{brand.pk}:{role}"


def membership_grant_apply(*, subject, value: str, actor) -> Membership:
    """A role that moves money, asked for by one staff member, given once a second confirmed it."""
    brand_id, role = value.split(":", 1)
    return member_add(brand=Brand.objects.get(pk=int(brand_id)), user=subject, role=role, actor=actor)


def membership_remove_record(*, membership: Membership, actor) -> None:
    access_change_record(
        actor=actor,
        subject=membership.user,
        kind=AccessChangeKind.MEMBERSHIP,
        detail=f"{membership.role} -> none in {membership.brand.slug}",
        brand_id=membership.brand_id,
    )


def membership_change_record(*, membership: Membership, actor, before: str) -> None:
    access_change_record(
        actor=actor,
        subject=membership.user,
        kind=AccessChangeKind.MEMBERSHIP,
        detail=f"{before} -> {membership.role} in {membership.brand.slug}",
        brand_id=membership.brand_id,
    )


def brand_allowance_set(*, brand: Brand, person_allowance: int | None) -> Brand:
    """The most one person may earn across all of the brand's campaigns (None: no limit)."""
    if person_allowance is not None and person_allowance <= 0:
        raise CampaignError("The allowance must be more than zero, or empty for no limit.")
    brand.person_allowance = person_allowance
    brand.save(update_fields=["person_allowance"])
    return brand


def _vat_id_checked(*, country: str, vat_id: str) -> str:
    vat_id = vat_id_normal(vat_id)
    if vat_id and not vat_id_fits(country=country, vat_id=vat_id):
        raise CampaignError(
            gettext(
                "This VAT number is not one of %(country)s: it starts with the country's code "
                "(EL for Greece), then 2 to 12 letters or digits."
            )
            % {"country": country or "-"}
        )
    return vat_id


def brand_vat_id_save(*, brand: Brand, vat_id: str) -> Brand:
    """The owner gives (or corrects, or removes) the brand's VAT number, verified or not: it only
    decides the VAT of the platform's next invoices, once VIES confirmed it (campaigns.invoices)."""
    with transaction.atomic(durable=True):
        locked = Brand.objects.select_for_update().get(pk=brand.pk)
        if not locked.country:
            raise CampaignError(gettext("Choose the country the company is registered in first."))
        vat_id = _vat_id_checked(country=locked.country, vat_id=vat_id)
        if vat_id != locked.vat_id:
            # A new number is unconfirmed until VIES answers for it: asked at the next run.
            locked.vat_id, locked.vies_next_check_at = vat_id, timezone.now()
            locked.save(update_fields=["vat_id", "vies_next_check_at"])
    return locked


def brand_vies_record(
    *,
    brand_id: int,
    vat_id: str,
    status: str,
    next_check_at,
    request_identifier: str = "",
    request_date: str = "",
    error: str = "",
) -> bool:
    """VIES's answer about `vat_id` (payouts.vies asked it), kept on the brand as the evidence a
    reverse charge rests on; False, and nothing kept, when the brand's number changed meanwhile. An
    answer VIES could not give (unavailable) never undoes what it said of the same number before
    (valid or not): that stands, and the number is asked about again later."""
    with transaction.atomic(durable=True):
        locked = Brand.objects.select_for_update().get(pk=brand_id)
        if vat_id_normal(locked.vat_id) != vat_id:
            return False
        answered = locked.vies_vat_id == vat_id and locked.vies_status in (
            VatIdCheck.VALID,
            VatIdCheck.INVALID,
        )
        if status == VatIdCheck.UNAVAILABLE and answered:
            locked.vies_error, locked.vies_next_check_at = error[:40], next_check_at
            locked.save(update_fields=["vies_error", "vies_next_check_at"])
            return True
        locked.vies_status, locked.vies_vat_id, locked.vies_error = status, vat_id, error[:40]
        locked.vies_next_check_at, locked.vies_checked_at = next_check_at, timezone.now()
        if status != VatIdCheck.UNAVAILABLE:
            locked.vies_request_identifier = request_identifier[:40]
            locked.vies_request_date = request_date[:40]
        locked.save(
            update_fields=[
                "vies_status",
                "vies_vat_id",
                "vies_error",
                "vies_next_check_at",
                "vies_checked_at",
                "vies_request_identifier",
                "vies_request_date",
            ]
        )
    return True
