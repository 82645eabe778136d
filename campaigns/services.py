from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import Min
from django.utils import timezone
from django.utils.module_loading import import_string
from django.utils.text import slugify
from django.utils.translation import gettext

from campaigns.models import (
    ActionRule,
    Brand,
    BrandVerification,
    Campaign,
    CampaignStatus,
    Membership,
    Package,
    Role,
    Trigger,
    VerificationMode,
)
from campaigns.selectors import (
    brand_owner_verified_email,
    brand_verification_missing,
    landing_pages_local_forget,
)
from joyback.ledger.models import Account, AccountKind, Transaction
from joyback.ledger.services import InsufficientFunds, account_get_or_create, platform_bank, transfer_post
from joyback.money import currency_check
from joyback.queue import enqueue_on_commit


def brand_funding_account(*, brand: Brand, currency: str) -> Account:
    return account_get_or_create(
        kind=AccountKind.BRAND_FUNDING,
        currency=currency,
        brand_id=brand.pk,
        name=f"{brand.name} funding",
    )


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
        brand = Brand.objects.create(name=name, slug=slug or _free_slug(name), default_currency=currency)
        Membership.objects.create(brand=brand, user=owner, role=Role.OWNER)
        brand_funding_account(brand=brand, currency=currency)
    return brand


class BrandNotVerified(Exception):
    """Money may not move for a brand platform staff have not verified yet."""


def brand_money_allowed_check(*, brand: Brand) -> None:
    """Funding and payouts open only once staff verified who the brand is; the rest (campaigns,
    the landing page, the sandbox flows, API keys) works before."""
    if not Brand.objects.filter(pk=brand.pk, verified_at__isnull=False).exists():
        raise BrandNotVerified(
            gettext(
                "Funding and payouts open once JoyBack's staff have verified the brand: its legal name, "
                "registration number, country and the owner's confirmed email. See the dashboard for "
                "what is still missing."
            )
        )


def brand_legal_details_save(
    *, brand: Brand, legal_name: str, registration_number: str, country: str
) -> Brand:
    """The owner says who the brand is in law. Changing it after verification withdraws the
    verification: staff verified the details as they were."""
    legal_name, registration_number = legal_name.strip(), registration_number.strip()
    country = country.strip().upper()
    if len(country) != 2 or not country.isalpha():
        raise CampaignError(gettext("Choose the country the company is registered in."))
    with transaction.atomic(durable=True):
        locked = Brand.objects.select_for_update().get(pk=brand.pk)
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


def member_add(*, brand: Brand, user, role: str) -> Membership:
    membership, _ = Membership.objects.update_or_create(brand=brand, user=user, defaults={"role": Role(role)})
    return membership


def brand_deposit_record(
    *, brand: Brand, amount: int, currency: str, bank_reference: str, receiving_account: str = ""
) -> Transaction:
    """Money the brand sent to the platform's bank account becomes the brand's funding balance.

    The booking is keyed by the account it arrived on and the bank's reference for it, and not by
    the brand: the same statement line booked twice counts once, whoever it is booked for, and a
    reference on one account never blocks the same reference on another.
    """
    account = (receiving_account or settings.PAYOUT_DEBTOR_IBAN or "platform").replace(" ", "").upper()
    with transaction.atomic(durable=True):
        return transfer_post(
            source=platform_bank(currency=currency, livemode=brand.livemode),
            destination=brand_funding_account(brand=brand, currency=currency),
            amount=amount,
            reason="deposit",
            idempotency_key=f"deposit:{account}:{currency}:{bank_reference}",
            reference=f"brand:{brand.pk}",
            description=f"Bank deposit {bank_reference}",
        )


class CampaignError(Exception):
    """A refused campaign operation; the message is for the person who tried it."""


@dataclass(frozen=True)
class LaunchProblem:
    """What a launch check found: a blocking one refuses going live, the rest are warnings."""

    code: str
    message: str
    blocking: bool = True
    rule_id: int | None = None


def campaign_launch_problems(*, campaign: Campaign, launching: bool = False) -> list[LaunchProblem]:
    """The checks of apps to the right (settings.CAMPAIGN_LAUNCH_CHECKS, dotted paths), which
    campaigns may not import: each returns its problems with the campaign as it stands."""
    problems: list[LaunchProblem] = []
    for path in getattr(settings, "CAMPAIGN_LAUNCH_CHECKS", []):
        problems += import_string(path)(campaign=campaign, launching=launching)
    return problems


def _launch_problems_refuse(campaign: Campaign, *, launching: bool = False) -> None:
    blocking = [p for p in campaign_launch_problems(campaign=campaign, launching=launching) if p.blocking]
    if blocking:
        raise CampaignError(" ".join(problem.message for problem in blocking))


LOGIN_RULE = dict(trigger=Trigger.TIKTOK_LOGIN, reward_amount=1_00)
SHARE_RULE = dict(
    trigger=Trigger.UGC_SHARE,
    reward_amount=5_00,
    verification_mode=VerificationMode.ENGAGEMENT,
    window_hours=72,
    min_views=500,
)

PACKAGE_RULES = {
    Package.ALL_IN_ONE: [LOGIN_RULE, dict(trigger=Trigger.WHATSAPP_OPTIN, reward_amount=1_00), SHARE_RULE],
    Package.TIKTOK_ONLY: [LOGIN_RULE, SHARE_RULE],
    Package.WHATSAPP_REWARD: [dict(trigger=Trigger.WHATSAPP_OPTIN, reward_amount=2_00)],
    Package.CASHBACK: [dict(trigger=Trigger.PURCHASE, reward_amount=5_00, return_window_days=14)],
}

# Engagement on a post can only be measured once the post exists, and the post is tied to the
# TikTok identity: so every TikTok engagement action needs the login first.
NEEDS_TIKTOK_LOGIN = frozenset({Trigger.UGC_SHARE, Trigger.LIKE, Trigger.COMMENT, Trigger.VIEW_THRESHOLD})

# Likes and comments cost a bot nothing: they are only ever paid up to a cap the brand sets.
ALWAYS_CAPPED = frozenset({Trigger.LIKE, Trigger.COMMENT})

TRANSITIONS = {
    CampaignStatus.DRAFT: {CampaignStatus.LIVE, CampaignStatus.ENDED},
    CampaignStatus.LIVE: {CampaignStatus.PAUSED, CampaignStatus.ENDED},
    CampaignStatus.PAUSED: {CampaignStatus.LIVE, CampaignStatus.ENDED},
    CampaignStatus.ENDED: set(),
}


def campaign_budget_account(*, campaign: Campaign) -> Account:
    return account_get_or_create(
        kind=AccountKind.CAMPAIGN_BUDGET,
        currency=campaign.currency,
        brand_id=campaign.brand_id,
        subject=campaign.budget_subject,
        name=f"{campaign.name} budget",
    )


def _free_campaign_slug(name: str) -> str:
    base = slugify(name)[:50] or "campaign"
    slug, n = base, 1
    while Campaign.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    return slug


def campaign_create(
    *,
    brand: Brand,
    name: str,
    package: str,
    currency: str,
    countries: list[str],
    languages: list[str],
    headline: str = "",
    description: str = "",
    texts: dict | None = None,
    disclosure_text: str = "",
    starts_at=None,
    ends_at=None,
    per_identity_period_cap: int | None = None,
    per_identity_period_days: int | None = None,
    share_requires_purchase: bool = False,
    slug: str = "",
) -> Campaign:
    currency_check(currency)
    if starts_at and ends_at and ends_at <= starts_at:
        raise CampaignError(gettext("The campaign must end after it starts."))
    with transaction.atomic(durable=True):
        campaign = Campaign.objects.create(
            brand=brand,
            name=name,
            slug=slug or _free_campaign_slug(name),
            package=Package(package),
            currency=currency,
            countries=sorted(set(countries)),
            languages=list(dict.fromkeys(languages)),
            headline=headline,
            description=description,
            texts=texts or {},
            # Empty means the standard wording, shown in the visitor's language.
            disclosure_text=disclosure_text,
            starts_at=starts_at,
            ends_at=ends_at,
            per_identity_period_cap=per_identity_period_cap,
            per_identity_period_days=per_identity_period_days or 30,
            share_requires_purchase=share_requires_purchase,
        )
        campaign_budget_account(campaign=campaign)
        for position, rule in enumerate(PACKAGE_RULES[package]):
            _rule_write(campaign=campaign, position=position, **rule)
        campaign_launch_problems(campaign=campaign)  # a draft: its problems are shown, not refused
    return campaign


def _rule_write(*, campaign: Campaign, trigger: str, reward_amount: int, position: int = 0, **fields):
    if trigger in ALWAYS_CAPPED and not fields.get("total_cap"):
        raise CampaignError(gettext("Likes and comments are cheap to fake: give their rule a total cap."))
    if trigger in NEEDS_TIKTOK_LOGIN:
        login = campaign.rules.filter(trigger=Trigger.TIKTOK_LOGIN).first()
        if login is None:
            raise CampaignError(
                gettext("A %(action)s needs a TikTok login rule first.") % {"action": Trigger(trigger).label}
            )
        fields["prerequisite"] = login
    if fields.get("verification_mode", VerificationMode.INSTANT) == VerificationMode.INSTANT:
        fields["window_hours"] = 0
    elif not fields.get("window_hours"):
        raise CampaignError(gettext("An engagement rule needs a window of at least one hour."))
    rule, _ = ActionRule.objects.update_or_create(
        campaign=campaign,
        trigger=trigger,
        defaults={
            "reward_amount": reward_amount,
            "position": position,
            "brand_id": campaign.brand_id,
            **fields,
        },
    )
    return rule


def rule_save(*, campaign: Campaign, trigger: str, reward_amount: int, **fields) -> ActionRule:
    if campaign.status == CampaignStatus.ENDED:
        raise CampaignError(gettext("An ended campaign cannot change."))
    if reward_amount <= 0:
        raise CampaignError(gettext("A reward must be more than zero."))
    with transaction.atomic(durable=True):
        position = fields.pop("position", campaign.rules.count())
        rule = _rule_write(
            campaign=campaign, trigger=trigger, reward_amount=reward_amount, position=position, **fields
        )
        if campaign.status != CampaignStatus.DRAFT:
            # Launched already: a rule change must pass what the launch had to pass.
            _launch_problems_refuse(campaign)
        return rule


def rule_delete(*, rule: ActionRule) -> None:
    if rule.campaign.status != CampaignStatus.DRAFT:
        raise CampaignError(gettext("Rules can only be removed while the campaign is a draft."))
    if rule.dependants.exists():
        raise CampaignError(gettext("Remove the actions that need this one first."))
    rule.delete()


def brand_topup_sandbox(*, brand: Brand, amount: int, currency: str) -> None:
    """In the sandbox, a top up is the brand's transfer arriving at the sandbox bank: the bank
    reports it and its feed books it, as a real transfer would be (SANDBOX_BANK_TRANSFER, a dotted
    path into the payouts app, which campaigns may not import). A test twin's top up is the sandbox
    bank's test account receiving play money, on any deployment (SANDBOX_TEST_FUNDS)."""
    if not brand.livemode:
        import_string(settings.SANDBOX_TEST_FUNDS)(brand=brand, amount=amount)
        return
    if not settings.SANDBOX:
        raise CampaignError(
            gettext("Top ups are simulated only in the sandbox; send a bank transfer instead.")
        )
    if amount <= 0:
        raise CampaignError(gettext("A top up must be more than zero."))
    try:
        brand_money_allowed_check(brand=brand)
    except BrandNotVerified as refused:
        raise CampaignError(str(refused)) from None
    if currency != "EUR":
        raise CampaignError(gettext("The sandbox bank keeps a euro account only."))
    import_string(settings.SANDBOX_BANK_TRANSFER)(brand=brand, amount=amount)


def campaign_fund(*, campaign: Campaign, amount: int, idempotency_key: str | None = None) -> Transaction:
    """Move money from the brand's funding balance into the campaign's budget."""
    if campaign.status == CampaignStatus.ENDED:
        raise CampaignError(gettext("An ended campaign cannot be funded."))
    if amount <= 0:
        raise CampaignError(gettext("The amount must be more than zero."))
    try:
        brand_money_allowed_check(brand=campaign.brand)
    except BrandNotVerified as refused:
        raise CampaignError(str(refused)) from None
    with transaction.atomic(durable=True):
        transaction.on_commit(lambda: landing_cache_clear(campaign=campaign))
        try:
            return transfer_post(
                source=brand_funding_account(brand=campaign.brand, currency=campaign.currency),
                destination=campaign_budget_account(campaign=campaign),
                amount=amount,
                reason="campaign_funding",
                idempotency_key=idempotency_key,
                reference=campaign.budget_subject,
                description=f"Funding for {campaign.name}",
            )
        except InsufficientFunds:
            raise CampaignError(
                gettext(
                    "The brand's funding balance is too low for this amount; "
                    "top up or send a bank transfer first."
                )
            ) from None


def _campaign_lock(campaign: Campaign) -> Campaign:
    return Campaign.objects.select_for_update().get(pk=campaign.pk)


def campaign_transition(*, campaign: Campaign, to: str) -> Campaign:
    to = CampaignStatus(to)
    with transaction.atomic(durable=True):
        locked = _campaign_lock(campaign)
        if to not in TRANSITIONS[CampaignStatus(locked.status)]:
            raise CampaignError(
                gettext("A %(current)s campaign cannot become %(target)s.")
                % {"current": locked.get_status_display().lower(), "target": to.label.lower()}
            )
        if to == CampaignStatus.LIVE:
            _campaign_ready_check(locked)
            _launch_problems_refuse(locked, launching=True)
        locked.status = to
        locked.status_changed_at = timezone.now()
        locked.save(update_fields=["status", "status_changed_at"])
        transaction.on_commit(lambda: landing_cache_clear(campaign=locked))
    return locked


def _campaign_ready_check(campaign: Campaign) -> None:
    cheapest = campaign.rules.aggregate(cheapest=Min("reward_amount"))["cheapest"]
    if cheapest is None:
        raise CampaignError(gettext("Add at least one rewarded action before going live."))
    if campaign.ends_at and campaign.ends_at <= timezone.now():
        raise CampaignError(gettext("The campaign's end date has passed."))
    if not campaign.countries:
        raise CampaignError(gettext("Choose at least one country the campaign serves."))
    if campaign_budget_account(campaign=campaign).available < cheapest:
        raise CampaignError(
            gettext("Fund the campaign's budget before going live: it cannot pay a single reward yet.")
        )


def campaign_update(*, campaign: Campaign, **fields) -> Campaign:
    """Change what a campaign says and where it runs; the money side is fixed once it has money."""
    if campaign.status == CampaignStatus.ENDED:
        raise CampaignError(gettext("An ended campaign cannot change."))
    if fields["currency"] != campaign.currency and campaign_budget_account(campaign=campaign).balance:
        raise CampaignError(gettext("The currency cannot change once the budget holds money."))
    if fields["package"] != campaign.package and campaign.status != CampaignStatus.DRAFT:
        raise CampaignError(gettext("The package can only change while the campaign is a draft."))
    currency_check(fields["currency"])
    fields["per_identity_period_days"] = fields.get("per_identity_period_days") or 30
    for name, value in fields.items():
        setattr(campaign, name, value)
    campaign.countries = sorted(set(campaign.countries))
    with transaction.atomic():
        campaign.save()
        if campaign.status != CampaignStatus.DRAFT:
            _launch_problems_refuse(campaign)
    landing_cache_clear(campaign=campaign)
    return campaign


def brand_allowance_set(*, brand: Brand, person_allowance: int | None) -> Brand:
    """The most one person may earn across all of the brand's campaigns (None: no limit)."""
    if person_allowance is not None and person_allowance <= 0:
        raise CampaignError("The allowance must be more than zero, or empty for no limit.")
    brand.person_allowance = person_allowance
    brand.save(update_fields=["person_allowance"])
    return brand


def landing_cache_clear(*, campaign: Campaign) -> None:
    """Forget the cached public page, so a change the brand makes shows at once (with Redis, within
    LANDING_LOCAL_SECONDS in the other web processes)."""
    keys = [f"landing:{campaign.slug}:{code}" for code, _name in settings.LANGUAGES]
    pages = [f"landing-page:{campaign.slug}:{code}" for code, _name in settings.LANGUAGES]
    cache.delete_many([*keys, *pages, f"campaign:{campaign.slug}"])
    landing_pages_local_forget(page_keys=pages)
