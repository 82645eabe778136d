"""Referral cashback: a participant's personal code pays them for each sale it brings.

A code belongs to one participant in one campaign: short, in capitals from an alphabet without
lookalikes (no 0/O, 1/I/L), read case-insensitively, unique per campaign (the database's
constraint; a collision is drawn again). A buyer brings it to the shop by typing it at checkout (a
Shopify discount code, a WooCommerce coupon) or by opening the poster's link, whose landing
parameter the shop carries into the order (note attributes, meta data); the Cashback API takes it
as `referral_code`.

There is one lifecycle, the purchase's (verification.cashback): the order's referral reward is a
second claim on the same purchase, made in the purchase's own transaction, held on the budget
while the order may be returned, confirmed with the purchase when its return window closes, paid
through the same payout path, and taken back in proportion to what a refund takes back. Whatever
makes a referred sale look like the poster's own order (self-referral), a code spreading on
coupon sites, or a poster whose referred buyers return most of what they buy sends the reward to
the review queue with its reason, its money held.
"""

import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q, Sum
from django.utils import timezone
from django.utils.module_loading import import_string

from campaigns.limits import limit_value
from campaigns.models import ActionRule, Campaign, LimitKind, Trigger
from joyback.crypto import fingerprint
from joyback.emails import email_canonical
from verification.models import (
    ActionClaim,
    ClaimStatus,
    FraudSignal,
    Identity,
    Participant,
    Provider,
    Purchase,
    PurchaseStatus,
    ReferralClick,
    ReferralCode,
)
from verification.services.refusals import ClaimRefused
from verification.services.rewards import (
    claim_hold_reserve,
    claim_reward_post,
    person_caps_lock,
    rule_lock,
)

# Capitals and digits a reader cannot mistake for another: no 0/O, no 1/I/L.
ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
CODE_ATTEMPTS = 8
# Wrong codes one address may try an hour on a referral link: a person mistyping one tries a few; a
# script guessing the 887 million codes is stopped long before it finds one.
REFERRAL_MISSES_PER_HOUR = 30
COUNTED = [ClaimStatus.APPROVED, ClaimStatus.PENDING, ClaimStatus.NEEDS_REVIEW]
# Where a poster's own audience comes from: orders from there are the code working, not a leak.
POSTERS_OWN_SOURCES = ("tiktok.com",)


def referral_code_new() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def referral_code_normal(raw) -> str:
    """A code as typed (any case, spaces or dashes between groups) in its stored form; "" when it
    cannot be one of ours (a character outside the alphabet, the wrong length)."""
    code = "".join(str(raw or "").split()).replace("-", "").upper()
    if len(code) != CODE_LENGTH or any(char not in ALPHABET for char in code):
        return ""
    return code


def referral_rule(*, campaign: Campaign) -> ActionRule | None:
    return campaign.rules.filter(trigger=Trigger.REFERRAL).select_related("campaign__brand").first()


def _poster_identity(*, participant: Participant, campaign: Campaign) -> Identity | None:
    """The identity the poster is known by in the campaign: their TikTok account if they have one
    (what their video is posted as), else whichever they acted with."""
    claims = ActionClaim.objects.filter(participant=participant, campaign=campaign).exclude(
        status=ClaimStatus.REJECTED
    )
    identities = Identity.objects.filter(participant=participant, pk__in=claims.values("identity"))
    return identities.filter(provider=Provider.TIKTOK).first() or identities.order_by("pk").first()


def referral_code_for(*, participant: Participant, campaign: Campaign) -> ReferralCode | None:
    """The participant's code in the campaign, made on first use; None when the campaign pays no
    referrals or the person has not acted in it."""
    existing = ReferralCode.objects.filter(campaign=campaign, participant=participant).first()
    if existing is not None:
        return existing
    rule = referral_rule(campaign=campaign)
    if rule is None:
        return None
    identity = _poster_identity(participant=participant, campaign=campaign)
    if identity is None:
        return None
    for _attempt in range(CODE_ATTEMPTS):
        try:
            with transaction.atomic(durable=True):
                code = ReferralCode.objects.create(
                    campaign=campaign,
                    brand_id=campaign.brand_id,
                    participant=participant,
                    identity=identity,
                    code=referral_code_new(),
                )
                return code
        except IntegrityError:
            mine = ReferralCode.objects.filter(campaign=campaign, participant=participant).first()
            if mine is not None:  # made by another request at the same moment: that one is theirs
                return mine
            # Another person drew the same code: draw again.
    raise RuntimeError("no free referral code after several draws")


def referral_code_find(*, campaign: Campaign, raw) -> ReferralCode | None:
    """The code a buyer brought, in this campaign or, failing that, the brand's only campaign
    that has it (a code is unique per campaign; two campaigns' same code credit nobody)."""
    code = referral_code_normal(raw)
    if not code:
        return None
    codes = ReferralCode.objects.filter(code=code).select_related(
        "campaign__brand", "identity", "participant"
    )
    here = codes.filter(campaign=campaign).first()
    if here is not None:
        return here
    elsewhere = list(codes.filter(brand_id=campaign.brand_id)[:2])
    return elsewhere[0] if len(elsewhere) == 1 else None


def referral_click_record(*, code: ReferralCode, device: str, client_ip: str | None) -> ReferralClick:
    with transaction.atomic(durable=True):
        return ReferralClick.objects.create(
            code=code, brand_id=code.brand_id, device=device[:64], client_ip=client_ip
        )


@dataclass(frozen=True)
class Referral:
    """What an order says about a referral: the codes used at checkout or carried from the link
    (the first of ours wins), the link's click, and where the buyer came from (a host)."""

    codes: tuple = ()
    click: str = ""
    source: str = ""

    def __bool__(self) -> bool:
        return bool(self.codes)


@dataclass(frozen=True)
class Buyer:
    """What is compared with the poster: the buyer's own identity and details (never stored
    beyond the order's address hash)."""

    participant_id: int
    email: str = ""
    phone: str = ""
    address_hash: str = ""


def referral_amount(*, rule: ActionRule, order_amount: int) -> int:
    """The referral reward of one order before the person's and campaign's caps: a share of the
    order (rounded down) up to the rule's amount per order, or the fixed sum."""
    if rule.cashback_basis_points:
        return min(order_amount * rule.cashback_basis_points // 10_000, rule.reward_amount)
    return rule.reward_amount


def referral_reward_for_kept(*, at_order: int, order_amount: int, kept: int, now: int) -> int:
    """What a referred sale earns once part of the order came back: the reward at the order in
    proportion to what was kept (rounded down), never more than the claim is worth now, never
    below zero. So what is taken back never exceeds what was paid."""
    if kept <= 0 or order_amount <= 0:
        return 0
    return max(0, min(at_order * min(kept, order_amount) // order_amount, now))


def _earned(claims) -> int:
    return claims.filter(status__in=COUNTED).aggregate(total=Sum("amount"))["total"] or 0


def _capped(*, rule: ActionRule, code: ReferralCode, amount: int) -> int:
    referrals = ActionClaim.objects.filter(rule=rule, referred_purchase__isnull=False)
    if rule.referral_person_cap is not None:
        amount = min(
            amount, rule.referral_person_cap - _earned(referrals.filter(participant=code.participant))
        )
    if rule.referral_campaign_cap is not None:
        amount = min(amount, rule.referral_campaign_cap - _earned(referrals))
    allowance = rule.campaign.brand.person_allowance
    if allowance is not None:
        # The most one person may earn from the brand counts referrals too: under the person's lock.
        person_caps_lock(participant_id=code.participant_id)
        earned = _earned(
            ActionClaim.objects.filter(participant=code.participant, currency=rule.campaign.currency)
        )
        amount = min(amount, allowance - earned)
    return amount


def _self_referral(*, code: ReferralCode, buyer: Buyer, click: ReferralClick | None) -> list[tuple[str, str]]:
    """Does the order look like the poster's own? Each match is one reason."""
    poster = code.participant
    found = []
    if buyer.participant_id == poster.pk:
        found.append(("self_referral", "the buyer is the poster"))
    subjects = set(Identity.objects.filter(participant=poster).values_list("subject", flat=True))
    email = email_canonical(buyer.email) if buyer.email else ""
    if email and (f"email:{email}" in subjects or f"email:{buyer.email.strip().casefold()}" in subjects):
        found.append(("self_referral_email", "the buyer's email is one the poster is known by"))
    # A WhatsApp identity's subject is the bare number ("4915123456789"); a shop's, "phone:+49…".
    digits = "".join(ch for ch in buyer.phone if ch.isdigit()) if buyer.phone else ""
    if buyer.phone and (f"phone:{buyer.phone}" in subjects or (len(digits) >= 8 and digits in subjects)):
        found.append(("self_referral_phone", "the buyer's phone is one the poster is known by"))
    if buyer.address_hash:
        own = Purchase.objects.filter(
            identity__participant=poster, address_hash=buyer.address_hash, brand_id=code.brand_id
        )
        if own.exists():
            found.append(("self_referral_address", "the billing address of one of the poster's own orders"))
    if (
        click is not None
        and click.device
        and ActionClaim.objects.filter(participant=poster, device=click.device).exists()
    ):
        found.append(("self_referral_device", "the link was opened in the browser the poster claims from"))
    # The payee details people gave (their email, phone and bank account) are the payouts app's:
    # asked through its plug-in, by keyed hashes only.
    for path in settings.REFERRAL_PAYEE_MATCHES:
        found.extend(
            import_string(path)(
                poster_id=poster.pk,
                buyer_id=buyer.participant_id,
                email_fingerprint=fingerprint(email) if email else "",
                phone_fingerprint=fingerprint(buyer.phone) if buyer.phone else "",
            )
        )
    seen, unique = set(), []
    for code_, detail in found:
        if code_ not in seen:
            seen.add(code_)
            unique.append((code_, detail))
    return unique


def _limit(kind: str, rule: ActionRule) -> int:
    return limit_value(kind=kind, brand_id=rule.campaign.brand_id)


def _leak_and_ring(*, rule: ActionRule, code: ReferralCode, source: str) -> list[tuple[str, str]]:
    found = []
    now = timezone.now()
    if source and not any(source == own or source.endswith(f".{own}") for own in POSTERS_OWN_SOURCES):
        # A viral video brings many orders at once, typed in or from TikTok: that is the code
        # working. Many from one other site is the code on a coupon site.
        from_source = ActionClaim.objects.filter(
            referral_code=code, created_at__gte=now - timedelta(hours=1), evidence__source=source
        ).count()
        if from_source + 1 >= _limit(LimitKind.FRAUD_REFERRAL_ORDERS_PER_SOURCE_PER_HOUR, rule):
            found.append(("code_leaked", f"{from_source + 1} orders with this code from {source} in an hour"))
    mine = ActionClaim.objects.filter(
        rule__trigger=Trigger.REFERRAL, participant=code.participant, referred_purchase__isnull=False
    )
    total = mine.count()
    if total >= _limit(LimitKind.FRAUD_REFERRAL_REFUND_MIN_ORDERS, rule):
        refunded = mine.filter(
            Q(referred_purchase__status=PurchaseStatus.REFUNDED) | ~Q(referred_purchase__refunds={})
        ).count()
        if refunded * 100 >= total * _limit(LimitKind.FRAUD_REFERRAL_REFUND_PERCENT, rule):
            found.append(("refund_ring", f"{refunded} of {total} orders this poster referred came back"))
    return found


def _code_of(*, campaign: Campaign, referral: Referral) -> ReferralCode | None:
    return next(
        (found for raw in referral.codes if (found := referral_code_find(campaign=campaign, raw=raw))), None
    )


def referral_rule_lock(*, campaign: Campaign, referral: Referral) -> None:
    """Lock the rule the order's code pays by, if any (the caller's transaction): taken before the
    people's rows, so referred orders of two people who refer each other cannot deadlock."""
    code = _code_of(campaign=campaign, referral=referral)
    rule = referral_rule(campaign=code.campaign) if code is not None else None
    if rule is not None:
        rule_lock(rule)


def referral_claim_make(
    *, purchase: Purchase, campaign: Campaign, referral: Referral, buyer: Buyer, instant: bool
) -> tuple[ActionClaim | None, str]:
    """The poster's claim on a purchase their code brought, in the purchase's own transaction (a
    savepoint: a referral that cannot be paid never stops the buyer's cashback). (claim, outcome)."""
    code = _code_of(campaign=campaign, referral=referral)
    if code is None:
        return None, "code_unknown"
    rule = referral_rule(campaign=code.campaign)
    if rule is None:
        return None, "no_referral_rule"
    if rule.campaign.currency != purchase.currency:
        return None, "currency_mismatch"
    if rule.referral_min_order and purchase.amount < rule.referral_min_order:
        return None, "below_minimum"
    if (
        rule.referral_first_order_only
        and Purchase.objects.filter(brand_id=purchase.brand_id, identity=purchase.identity)
        .exclude(pk=purchase.pk)
        .exists()
    ):
        return None, "not_first_order"
    click = (
        ReferralClick.objects.filter(public_id=referral.click, code=code).first() if referral.click else None
    )
    try:
        with transaction.atomic():
            rule = rule_lock(rule)  # the campaign's and the person's caps count earlier referrals
            at_order = referral_amount(rule=rule, order_amount=purchase.amount)
            amount = _capped(rule=rule, code=code, amount=at_order)
            if amount <= 0:
                return None, "referral_cap"
            signals = _self_referral(code=code, buyer=buyer, click=click)
            signals += _leak_and_ring(rule=rule, code=code, source=referral.source)
            now = timezone.now()
            paid_now = instant and not signals
            claim = ActionClaim.objects.create(
                campaign=rule.campaign,
                brand_id=rule.campaign.brand_id,
                rule=rule,
                participant=code.participant,
                identity=code.identity,
                referred_purchase=purchase,
                referral_code=code,
                status=(
                    ClaimStatus.NEEDS_REVIEW
                    if signals
                    else ClaimStatus.APPROVED
                    if paid_now
                    else ClaimStatus.PENDING
                ),
                reason=signals[0][0] if signals else "purchase_confirmed" if paid_now else "return_window",
                amount=amount,
                currency=purchase.currency,
                evidence={
                    "order_amount": purchase.amount,
                    "reward_at_order": amount,
                    "source": referral.source or "direct",
                    "via": "link" if click is not None else "code",
                },
                check_at=None if instant else purchase.confirm_at,
                client_ip=click.client_ip if click else None,
                device=click.device if click else "",
                decided_at=now if paid_now else None,
            )
            if signals:
                FraudSignal.objects.bulk_create(
                    FraudSignal(claim=claim, brand_id=claim.brand_id, code=c, detail=d[:200])
                    for c, d in signals
                )
            if paid_now:
                claim_reward_post(claim)
            else:
                claim_hold_reserve(claim)  # last: the budget stays locked to the commit
    except ClaimRefused as refusal:
        return None, refusal.code
    return claim, "referred"
