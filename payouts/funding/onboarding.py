"""Writes of a brand's onboarding at the payment provider: its own legal entity and account holder
there, the hosted onboarding link, and what the provider's signed webhooks say of its capabilities.

Live funding and payouts open only when both say yes: platform staff verified the brand
(campaigns) AND the provider allows every capability the brand's account needs
(brand_custody_check, a BRAND_MONEY_CHECKS plug-in). Nothing heard from the provider is a no.
"""

import logging
from datetime import timedelta

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from campaigns.models import Brand
from campaigns.services.funding import BrandNotVerified
from payouts.funding.selectors import brands_custody_blocked, brands_holding_own
from payouts.models import ProviderOnboarding
from payouts.models.onboarding import OnboardingStatus as Status
from payouts.notifications import onboarding_notify
from payouts.providers import adyen_funding
from payouts.providers import adyen_onboarding as provider
from payouts.psp import PspError, routed_for

logger = logging.getLogger(__name__)

# A brand the provider asks documents of is reminded this often, while it is asked.
REMIND_EVERY = timedelta(days=3)


class OnboardingRefused(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def brand_custody_check(*, brand: Brand) -> None:
    """BRAND_MONEY_CHECKS: a live brand's money moves only while the provider allows its account's
    capabilities and its balance account agrees with its ledger account."""
    if brand.pk not in brands_custody_blocked(brand_ids=[brand.pk]):
        return
    onboarding = ProviderOnboarding.objects.filter(brand_id=brand.pk).first()
    if onboarding is not None and onboarding.allowed and not brands_holding_own(brand_ids=[brand.pk]):
        raise BrandNotVerified(
            _(
                "Funding and payouts wait for your brand's own account at our payment provider, Adyen: "
                "JoyBack no longer keeps brands' money for them. It is being opened; if this stays, "
                "see the funding page or write to support."
            )
        )
    if onboarding is not None and onboarding.allowed:
        raise BrandNotVerified(
            _(
                "Payouts are paused for this brand: its balance account at the payment provider "
                "differs from JoyBack's books, and staff are looking into it."
            )
        )
    raise BrandNotVerified(
        _(
            "Funding and payouts open once our payment provider, Adyen, has verified your company "
            "too. See the funding page for what Adyen still needs."
        )
    )


def onboarding_ensure(*, brand: Brand) -> ProviderOnboarding:
    """The brand's legal entity and account holder at the provider, made where still missing (by
    the standing worker, outside any transaction; each request keyed, so a retry is a replay).
    Only a live brand staff verified is onboarded: its legal details are what staff checked."""
    if not (brand.livemode and brand.verified and brand.country):
        raise OnboardingRefused("only a live brand staff verified, with its country, is onboarded")
    ProviderOnboarding.objects.bulk_create(
        [ProviderOnboarding(brand=brand, provider=adyen_funding.NAME)], ignore_conflicts=True
    )
    onboarding = ProviderOnboarding.objects.get(brand=brand)
    key = f"joyback-brand-{brand.pk}"
    try:
        with routed_for(livemode=True):
            if not onboarding.legal_entity_id:
                legal_entity_id = provider.legal_entity_create(
                    key=key,
                    legal_name=brand.legal_name or brand.name,
                    registration_number=brand.registration_number,
                    country=brand.country,
                    reference=f"brand-{brand.pk}",
                )
                ProviderOnboarding.objects.filter(pk=onboarding.pk, legal_entity_id="").update(
                    legal_entity_id=legal_entity_id
                )
                onboarding.refresh_from_db()
            if not onboarding.account_holder_id:
                state = provider.account_holder_create(
                    key=key,
                    legal_entity_id=onboarding.legal_entity_id,
                    reference=f"brand-{brand.pk}",
                    description=f"{brand.legal_name or brand.name} (JoyBack brand {brand.pk})",
                )
                with transaction.atomic(durable=True):
                    locked = ProviderOnboarding.objects.select_for_update().get(pk=onboarding.pk)
                    if not locked.account_holder_id:
                        locked.account_holder_id = state.account_holder_id
                        _state_apply(locked, state)
                onboarding.refresh_from_db()
    except PspError as refused:
        ProviderOnboarding.objects.filter(pk=onboarding.pk).update(error=str(refused)[:300])
        raise
    return onboarding


def _status_of(state: provider.AccountHolderState) -> str:
    if state.allowed:
        return Status.VERIFIED
    if state.refused:
        return Status.REFUSED
    if state.problems:
        return Status.DOCUMENTS_NEEDED
    return Status.PENDING


def _state_apply(onboarding: ProviderOnboarding, state: provider.AccountHolderState) -> bool:
    """The provider's word on the account holder, on the locked row, in the caller's transaction;
    the brand's funders told when its status changed. Whether it changed."""
    before = onboarding.status
    onboarding.capabilities = state.capabilities
    onboarding.problems = [
        {"code": problem.code, "message": problem.message, "capability": problem.capability}
        for problem in state.problems
    ]
    onboarding.allowed = state.allowed
    onboarding.status = _status_of(state)
    onboarding.error = ""
    if state.at is not None:
        onboarding.provider_updated_at = state.at
    changed = before != onboarding.status
    if changed and onboarding.status in (Status.DOCUMENTS_NEEDED, Status.REFUSED, Status.VERIFIED):
        onboarding.reminded_at = timezone.now()
        onboarding_notify(onboarding=onboarding, key=f"{onboarding.status}:{timezone.now().timestamp():.0f}")
    onboarding.save()
    return changed


def account_holder_webhook_apply(payload: dict) -> str | None:
    """A stored balancePlatform.accountHolder webhook (signature checked at intake), applied to the
    brand whose account holder it names; what it did, or None when it is not one. A webhook older
    than the newest applied changes nothing (webhooks come out of order)."""
    state = provider.webhook_account_holder(payload)
    if state is None:
        return None
    with transaction.atomic(durable=True):
        onboarding = (
            ProviderOnboarding.objects.select_for_update()
            .filter(provider=adyen_funding.NAME, account_holder_id=state.account_holder_id)
            .first()
        )
        if onboarding is None:
            return "account_holder_unknown"
        if (
            state.at is not None
            and onboarding.provider_updated_at is not None
            and state.at < onboarding.provider_updated_at
        ):
            return "account_holder_stale"
        _state_apply(onboarding, state)
    return f"onboarding_{onboarding.status}"


def onboarding_link_make(*, brand: Brand, language: str, redirect_url: str, theme_id: str = "") -> str:
    """A fresh link to the provider's hosted onboarding page for the brand's legal entity."""
    onboarding = ProviderOnboarding.objects.filter(brand_id=brand.pk).exclude(legal_entity_id="").first()
    if onboarding is None or not brand.livemode:
        raise OnboardingRefused(_("Your company is not set up at the payment provider yet."))
    if onboarding.status == Status.REFUSED:
        raise OnboardingRefused(_("Adyen refused the verification; documents cannot change that."))
    try:
        with routed_for(livemode=True):
            return provider.onboarding_link_create(
                legal_entity_id=onboarding.legal_entity_id,
                redirect_url=redirect_url,
                language=language,
                theme_id=theme_id,
            )
    except PspError:
        logger.exception("no onboarding link for brand %s", brand.pk)
        raise OnboardingRefused(
            _("The payment provider did not give us the link just now; please try again in a minute.")
        ) from None


def onboarding_reminders_send(*, now=None) -> int:
    """Brands the provider still asks documents of, reminded every REMIND_EVERY (by their funders'
    messages, payouts.notifications)."""
    now = now or timezone.now()
    due = ProviderOnboarding.objects.filter(
        status=Status.DOCUMENTS_NEEDED, reminded_at__lte=now - REMIND_EVERY
    ).order_by("pk")
    sent = 0
    for onboarding in due:
        with transaction.atomic(durable=True):
            if ProviderOnboarding.objects.filter(
                pk=onboarding.pk, status=Status.DOCUMENTS_NEEDED, reminded_at=onboarding.reminded_at
            ).update(reminded_at=now):
                onboarding_notify(onboarding=onboarding, key=f"reminder:{now:%Y%m%d}")
                sent += 1
    return sent
