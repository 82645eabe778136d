"""Cashback: purchases, custom actions, likes and comments reported by a brand's system (the Cashback API).

A purchase is held on the campaign budget while it may still be returned, confirmed when its
return window closes, and then paid like any reward. A refund before that voids the hold; after
it, the reward is clawed back from what the person is owed.
"""

from dataclasses import dataclass
from datetime import timedelta

import phonenumbers
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from campaigns.models import ActionRule, Brand, CampaignStatus, Trigger
from campaigns.selectors import campaign_schedule_state
from joyback.queue import task_schedule_once
from verification.events import claim_event_emit
from verification.models import (
    ActionClaim,
    ClaimStatus,
    Identity,
    Participant,
    Provider,
    Purchase,
    PurchaseStatus,
)
from verification.referrals import (
    Buyer,
    Referral,
    referral_claim_make,
    referral_reward_for_kept,
    referral_rule_lock,
)
from verification.services.participants import participant_payable_account
from verification.services.refusals import ClaimRefused
from verification.services.rewards import (
    ClaimContext,
    action_reward,
    claim_caps_check,
    claim_clawback,
    claim_hold_reduce,
    claim_hold_release,
    claim_hold_reserve,
    claim_reward_post,
    claim_reward_take_back,
    rule_lock,
)


class CashbackError(Exception):
    """A report the brand must fix: a stable code, a message and the field it concerns."""

    def __init__(self, code: str, message, *, field: str | None = None, status: int = 422):
        super().__init__(code)
        self.code, self.message, self.field, self.status = code, str(message), field, status


INVALID_PHONE = _("Give the phone number in international form, like +4915112345678.")


def phone_e164(raw: str) -> str | None:
    """The number in E.164 form, or None if it is not a valid international number."""
    try:
        number = phonenumbers.parse(raw, None)
    except phonenumbers.NumberParseException:
        return None
    if not phonenumbers.is_valid_number(number):
        return None
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


@dataclass(frozen=True)
class Customer:
    """How the brand knows its customer: its own id, an email or a phone number (first given wins)."""

    id: str = ""
    email: str = ""
    phone: str = ""

    def subject(self) -> str:
        if self.id.strip():
            return f"id:{self.id.strip()}"
        if self.email.strip():
            return f"email:{self.email.strip().casefold()}"
        if self.phone.strip():
            e164 = phone_e164(self.phone)
            if e164 is None:
                raise CashbackError("invalid_phone", INVALID_PHONE, field="customer.phone")
            return "phone:" + e164
        raise CashbackError(
            "customer_required", _("Name the customer by id, email or phone."), field="customer"
        )

    def display_name(self) -> str:
        return self.email.strip() or self.phone.strip() or self.id.strip()


def customer_identity(*, brand: Brand, customer: Customer) -> Identity:
    """The customer's identity with provider "brand"; the first report makes the participant."""
    lookup = {"brand": brand, "provider": Provider.BRAND, "subject": customer.subject()}
    existing = Identity.objects.filter(**lookup).select_related("participant").first()
    if existing:
        return existing
    try:
        with transaction.atomic():
            participant = Participant.objects.create(brand=brand)
            return Identity.objects.create(
                participant=participant,
                display_name=customer.display_name()[:120],
                verified_at=timezone.now(),
                **lookup,
            )
    except IntegrityError:  # a report at the same moment made the customer: theirs is the one
        return Identity.objects.select_related("participant").get(**lookup)


def _rule_for(*, brand: Brand, trigger: str, campaign_id: int | None) -> ActionRule:
    rules = ActionRule.objects.filter(campaign__brand=brand, trigger=trigger).select_related(
        "campaign__brand"
    )
    if campaign_id is not None:
        rule = rules.filter(campaign_id=campaign_id).first()
        if rule is None:
            raise CashbackError(
                "campaign_unknown",
                _("No campaign of yours with this id rewards this event."),
                field="campaign_id",
                status=404,
            )
        return rule
    live = list(rules.filter(campaign__status=CampaignStatus.LIVE)[:2])
    if len(live) == 1:
        return live[0]
    if not live:
        raise CashbackError(
            "no_campaign", _("None of your live campaigns rewards this event."), field="campaign_id"
        )
    raise CashbackError(
        "campaign_required",
        _("Several live campaigns reward this event: give campaign_id."),
        field="campaign_id",
    )


def cashback_amount(*, rule: ActionRule, purchase_amount: int) -> int:
    """The rule's share of the purchase (rounded down), at most its reward amount; or the fixed sum."""
    if rule.cashback_basis_points:
        return min(purchase_amount * rule.cashback_basis_points // 10_000, rule.reward_amount)
    return rule.reward_amount


def _refusal(refusal: ClaimRefused) -> CashbackError:
    return CashbackError(refusal.code, refusal.message)


def purchase_record(
    *,
    brand: Brand,
    order_id: str,
    amount: int,
    currency: str,
    customer: Customer,
    campaign_id: int | None = None,
    context: ClaimContext | None = None,
    products: list[str] | None = None,
    referral: Referral | None = None,
    address_hash: str = "",
) -> tuple[ActionClaim, bool]:
    """A purchase's cashback claim, held on the budget until the return window closes.
    Reported again with the same order id, it is the same claim (created is False).

    referral: the code the order came with; the poster's reward is made with the purchase, in
    its transaction, and follows it (verification.referrals)."""
    existing = _purchase_claim(brand=brand, order_id=order_id, amount=amount, currency=currency)
    if existing is not None:
        return existing, False
    rule = _rule_for(brand=brand, trigger=Trigger.PURCHASE, campaign_id=campaign_id)
    if currency != rule.campaign.currency:
        raise CashbackError(
            "currency_mismatch",
            _("This campaign pays in %(currency)s.") % {"currency": rule.campaign.currency},
            field="currency",
        )
    reward = cashback_amount(rule=rule, purchase_amount=amount)
    if reward <= 0:
        raise CashbackError("no_cashback", _("This purchase is too small to earn cashback."), field="amount")
    identity = customer_identity(brand=brand, customer=customer)
    if rule.return_window_days == 0:
        # Paid at once: the person's account is made before the budget is locked, not under it.
        participant_payable_account(participant=identity.participant, currency=currency)
    context = context or ClaimContext()
    try:
        claim = _purchase_claim_create(
            rule=rule,
            identity=identity,
            order_id=order_id,
            amount=amount,
            reward=reward,
            context=context,
            products=products or [],
            referral=referral or Referral(),
            customer=customer,
            address_hash=address_hash,
        )
    except IntegrityError:
        # The same order reported twice at once: the other report made it.
        existing = _purchase_claim(brand=brand, order_id=order_id, amount=amount, currency=currency)
        if existing is None:
            raise
        return existing, False
    except ClaimRefused as refusal:
        raise _refusal(refusal) from None
    return claim, True


def _purchase_claim(*, brand, order_id, amount, currency) -> ActionClaim | None:
    purchase = Purchase.objects.filter(brand=brand, order_id=order_id).first()
    if purchase is None:
        return None
    if (purchase.amount, purchase.currency) != (amount, currency):
        raise CashbackError(
            "order_conflict",
            _("This order id was reported before with another amount or currency."),
            field="order_id",
            status=409,
        )
    return ActionClaim.objects.select_related("rule", "campaign", "purchase").get(purchase=purchase)


def _purchase_claim_create(
    *,
    rule,
    identity,
    order_id,
    amount,
    reward,
    context,
    products=(),
    referral: Referral | None = None,
    customer: Customer | None = None,
    address_hash: str = "",
) -> ActionClaim:
    now = timezone.now()
    referral, customer = referral or Referral(), customer or Customer()
    campaign = rule.campaign
    rule_capped = rule.total_cap is not None or bool(campaign.per_identity_period_cap)
    with transaction.atomic(durable=True):
        if rule_capped:
            # Caps count earlier claims: one rule lock at a time. Without caps the budget's own row
            # lock (taken last, by the hold) is the only point purchases wait for each other.
            rule = rule_lock(rule)
        if referral:
            # The referral rule's row next, before any person's: referred orders take turns on it
            # before they lock the buyer and then the poster (two people, always in this order).
            referral_rule_lock(campaign=campaign, referral=referral)
        if rule_capped:
            claim_caps_check(rule=rule, identity=identity)
        elif campaign.brand.person_allowance:
            # The per-person allowance (on by default) only counts this person's claims: their
            # purchases take turns on the person's row (claim_caps_check), other people's do not wait.
            claim_caps_check(rule=rule, identity=identity)
        # Open by status and dates; whether the budget suffices the hold itself says (fully_claimed).
        claimability = campaign_schedule_state(campaign=rule.campaign)
        if not claimability.open:
            raise ClaimRefused(claimability.reason)
        instant = rule.return_window_days == 0
        purchase = Purchase.objects.create(
            brand_id=rule.campaign.brand_id,
            order_id=order_id,
            amount=amount,
            currency=rule.campaign.currency,
            identity=identity,
            status=PurchaseStatus.CONFIRMED if instant else PurchaseStatus.PENDING,
            confirm_at=now + timedelta(days=rule.return_window_days),
            confirmed_at=now if instant else None,
            products=[str(product)[:80] for product in products][:50],
            address_hash=address_hash[:64],
        )
        claim = ActionClaim.objects.create(
            campaign=rule.campaign,
            brand_id=rule.campaign.brand_id,
            rule=rule,
            participant=identity.participant,
            identity=identity,
            purchase=purchase,
            status=ClaimStatus.APPROVED if instant else ClaimStatus.PENDING,
            reason="purchase_confirmed" if instant else "return_window",
            amount=reward,
            currency=rule.campaign.currency,
            evidence={"order_id": order_id, "purchase_amount": amount},
            check_at=None if instant else purchase.confirm_at,
            client_ip=context.client_ip,
            device=context.device,
            decided_at=now if instant else None,
        )
        if referral:
            # The poster's reward, before any ledger lock (the referral rule's row comes first).
            _referral, outcome = referral_claim_make(
                purchase=purchase,
                campaign=rule.campaign,
                referral=referral,
                buyer=Buyer(
                    participant_id=identity.participant_id,
                    email=customer.email.strip(),
                    phone=phone_e164(customer.phone) or "" if customer.phone.strip() else "",
                    address_hash=address_hash,
                ),
                instant=instant,
            )
            claim.evidence["referral"] = outcome
            ActionClaim.objects.filter(pk=claim.pk).update(evidence=claim.evidence)
        if instant:
            claim_event_emit(claim, "purchase.created", "purchase.confirmed", "reward.approved")
            claim_reward_post(claim, new_claim=True)
        else:
            claim_event_emit(claim, "purchase.created")
            transaction.on_commit(lambda: purchase_confirm_schedule(purchase=purchase))
            claim_hold_reserve(claim)  # last: the budget stays locked from here to the commit
    return claim


def purchase_confirm_schedule(*, purchase: Purchase) -> None:
    task_schedule_once(
        name=f"purchase-confirm-{purchase.pk}",
        func="verification.tasks.purchase_confirm_task",
        arg=purchase.pk,
        at=purchase.confirm_at,
    )


def purchase_confirm(*, purchase_id: int, now=None) -> ActionClaim:
    """The return window closed without a refund: the cashback is owed to the person."""
    now = now or timezone.now()
    with transaction.atomic(durable=True):
        purchase = Purchase.objects.select_for_update().get(pk=purchase_id)
        claim = ActionClaim.objects.select_related("rule", "campaign", "purchase").get(purchase=purchase)
        if purchase.status != PurchaseStatus.PENDING or purchase.confirm_at > now:
            return claim
        approved = claim.status == ClaimStatus.PENDING
        if approved:
            claim.status, claim.reason, claim.decided_at = ClaimStatus.APPROVED, "purchase_confirmed", now
            claim.save(update_fields=["status", "reason", "decided_at"])
            claim_reward_post(claim)
        purchase.status, purchase.confirmed_at = PurchaseStatus.CONFIRMED, now
        purchase.save(update_fields=["status", "confirmed_at"])
        # A claim rejected or held for review meanwhile is not approved by the window closing.
        claim_event_emit(claim, "purchase.confirmed", *(["reward.approved"] if approved else []))
        referral = _referral_claim(purchase)
        if referral is not None and referral.status == ClaimStatus.PENDING:
            # The poster's reward is confirmed with the purchase it came with, the same way.
            referral.status, referral.reason, referral.decided_at = (
                ClaimStatus.APPROVED,
                "purchase_confirmed",
                now,
            )
            referral.save(update_fields=["status", "reason", "decided_at"])
            claim_reward_post(referral)
            claim_event_emit(referral, "reward.approved")
    return claim


def _referral_claim(purchase: Purchase) -> ActionClaim | None:
    """The poster's claim on a referred purchase, locked (the purchase's lock is taken first)."""
    return (
        ActionClaim.objects.select_for_update(of=("self",))
        .select_related("rule", "campaign", "participant")
        .filter(referred_purchase=purchase)
        .first()
    )


def purchases_due(*, now=None) -> list[int]:
    """Purchases whose return window has closed: the sweep behind the one-off schedules."""
    now = now or timezone.now()
    return list(
        Purchase.objects.filter(status=PurchaseStatus.PENDING, confirm_at__lte=now).values_list(
            "pk", flat=True
        )[:500]
    )


def purchase_reward_for_kept(*, claim: ActionClaim, purchase: Purchase, kept: int) -> int:
    """What a purchase earns once part of it was refunded: what the amount kept would have earned
    (a share of it, or the fixed sum in proportion), never more than the claim is worth now."""
    if kept <= 0:
        return 0
    if claim.rule.cashback_basis_points:
        earned = cashback_amount(rule=claim.rule, purchase_amount=kept)
    else:
        earned = claim.rule.reward_amount * kept // purchase.amount
    return min(earned, claim.amount)


def purchase_refund(
    *, brand: Brand, order_id: str, reason: str = "", refunds: dict[str, int] | None = None
) -> ActionClaim:
    """The order came back. In the return window the held cashback is released; once confirmed,
    the reward is clawed back (netted against the person's next payout). Refunding twice is a no-op.

    refunds: part of it came back, {the shop's refund id: minor units}; reported again, a refund
    counts once. The cashback becomes what the amount kept earns: the hold shrinks, or the
    difference is clawed back; refunds adding up to the whole amount are the whole refund."""
    purchase = Purchase.objects.filter(brand=brand, order_id=order_id).first()
    if purchase is None:
        raise CashbackError(
            "order_unknown", _("No purchase with this order id."), field="order_id", status=404
        )
    reason = (reason or "refund")[:200]
    if refunds is not None:
        claim = _purchase_refund_part(purchase=purchase, refunds=refunds)
        if claim is not None:
            return claim
    with transaction.atomic(durable=True):
        locked = Purchase.objects.select_for_update().get(pk=purchase.pk)
        claim = ActionClaim.objects.select_related("rule", "campaign", "purchase").get(purchase=locked)
        if locked.status == PurchaseStatus.REFUNDED:
            return claim
        referral = _referral_claim(locked)
        if locked.status == PurchaseStatus.PENDING:
            for each in [claim] + (
                [referral] if referral is not None and not referral.ledger_transaction_id else []
            ):
                if each.status in (ClaimStatus.REJECTED, ClaimStatus.CLAWED_BACK):
                    continue
                claim_hold_release(each)
                each.status, each.reason, each.decided_at = ClaimStatus.REJECTED, "refunded", timezone.now()
                each.save(update_fields=["status", "reason", "decided_at"])
            _purchase_refunded(locked, reason)
            claim_event_emit(claim, "purchase.refunded", "claim.rejected")
            if referral is not None and referral.status == ClaimStatus.REJECTED:
                claim_event_emit(referral, "claim.rejected")
            if referral is None or referral.status == ClaimStatus.REJECTED:
                return claim
    # Confirmed (or a referral paid at once): the clawback is the ledger's own write, with its own
    # transaction.

    if referral is not None:
        claim_clawback(claim=referral, reason="refunded")
    if claim.status not in (ClaimStatus.REJECTED, ClaimStatus.CLAWED_BACK):
        claim = claim_clawback(claim=claim, reason="refunded")
    with transaction.atomic(durable=True):
        locked = Purchase.objects.select_for_update().get(pk=purchase.pk)
        if locked.status != PurchaseStatus.REFUNDED:
            _purchase_refunded(locked, reason)
            claim_event_emit(claim, "purchase.refunded")
    return claim


def _purchase_refund_part(*, purchase: Purchase, refunds: dict[str, int]) -> ActionClaim | None:
    """Record partial refunds and lower the cashback to what is kept; None when, together, they
    take back the whole purchase (the caller refunds it whole)."""
    with transaction.atomic(durable=True):
        locked = Purchase.objects.select_for_update().get(pk=purchase.pk)
        claim = ActionClaim.objects.select_related("rule", "campaign", "purchase").get(purchase=locked)
        if locked.status == PurchaseStatus.REFUNDED:
            return claim
        merged = {**locked.refunds, **{str(key): int(value) for key, value in refunds.items() if value > 0}}
        kept = locked.amount - sum(merged.values())
        reward = purchase_reward_for_kept(claim=claim, purchase=locked, kept=kept)
        if reward <= 0:
            return None
        if merged != locked.refunds:
            locked.refunds = merged
            locked.save(update_fields=["refunds"])
        claim = (
            ActionClaim.objects.select_for_update(of=("self",))
            .select_related("rule", "campaign")
            .get(pk=claim.pk)
        )
        referral = _referral_claim(locked)
        if referral is not None:
            # The poster's reward shrinks in proportion to what the buyer kept, the same way.
            _claim_lower(
                referral,
                reward=referral_reward_for_kept(
                    at_order=int(referral.evidence.get("reward_at_order", referral.amount)),
                    order_amount=locked.amount,
                    kept=kept,
                    now=referral.amount,
                ),
                kept=kept,
            )
        _claim_lower(claim, reward=reward, kept=kept)
    return claim


def _claim_lower(claim: ActionClaim, *, reward: int, kept: int) -> None:
    """A claim of a partly refunded purchase is now worth `reward`: the difference is taken back
    (posted already) or its hold shrinks (waiting). Within the caller's transaction, claim locked.
    At zero, a waiting claim is released and a posted one clawed back whole."""
    less = claim.amount - reward
    if less <= 0 or claim.status in (ClaimStatus.REJECTED, ClaimStatus.CLAWED_BACK):
        return
    if reward <= 0:
        if claim.ledger_transaction_id:
            claim_reward_take_back(
                claim, reason="partially refunded", idempotency_key=f"clawback:{claim.pk}:kept:{kept}"
            )
            ActionClaim.objects.filter(pk=claim.pk).update(status=ClaimStatus.CLAWED_BACK, reason="refunded")
        else:
            claim_hold_release(claim)
            ActionClaim.objects.filter(pk=claim.pk).update(
                status=ClaimStatus.REJECTED, reason="refunded", decided_at=timezone.now()
            )
        return
    if claim.ledger_transaction_id:
        # Paid or owed already: the difference goes back through the clawback's own posting.
        claim_reward_take_back(
            claim,
            reason="partially refunded",
            amount=less,
            idempotency_key=f"clawback:{claim.pk}:kept:{kept}",
        )
        ActionClaim.objects.filter(pk=claim.pk).update(amount=reward)
        claim.amount = reward
    elif claim.hold_id:
        claim_hold_reduce(claim, amount=reward)
    else:
        ActionClaim.objects.filter(pk=claim.pk).update(amount=reward)
        claim.amount = reward


def _purchase_refunded(purchase: Purchase, reason: str) -> None:
    purchase.status, purchase.refunded_at, purchase.refund_reason = (
        PurchaseStatus.REFUNDED,
        timezone.now(),
        reason,
    )
    purchase.save(update_fields=["status", "refunded_at", "refund_reason"])


def custom_action_record(
    *, brand: Brand, customer: Customer, campaign_id: int | None = None, reference: str = ""
) -> tuple[ActionClaim, bool]:
    """An action the brand's system verified (a sign-up, a review...): rewarded once per customer."""
    rule = _rule_for(brand=brand, trigger=Trigger.CUSTOM, campaign_id=campaign_id)
    identity = customer_identity(brand=brand, customer=customer)
    return _reward_once(rule=rule, identity=identity, reference=reference[:200])


def tiktok_engagement_record(
    *,
    brand: Brand,
    trigger: str,
    open_id: str,
    reference: dict,
    campaign_id: int | None = None,
) -> tuple[ActionClaim, bool]:
    """A like or comment the brand's own systems saw (TikTok's Business API names the commenter's
    open_id on the brand's videos). Rewarded once per identity and rule, only to a person who is
    already a verified TikTok identity of this brand and passed the rule's prerequisite (the
    login), under the rule's total cap and the usual fraud signals."""
    rule = _rule_for(brand=brand, trigger=trigger, campaign_id=campaign_id)
    if rule.total_cap is None or not rule.prerequisite_id:
        # The rule form refuses such a rule; one made another way is never paid on a brand's word.
        raise CashbackError(
            "rule_incomplete",
            _("Likes and comments are only rewarded by a rule with a total cap, after a TikTok login."),
            field="campaign_id",
        )
    identity = (
        Identity.objects.filter(brand=brand, provider=Provider.TIKTOK, subject=open_id)
        .select_related("participant")
        .first()
    )
    if identity is None:
        raise _login_first()
    try:
        return _reward_once(rule=rule, identity=identity, reference=reference)
    except CashbackError as error:
        if error.code == "prerequisite":
            raise _login_first() from None
        raise


def _reward_once(*, rule: ActionRule, identity: Identity, reference) -> tuple[ActionClaim, bool]:
    """The rule's reward for this identity, made at most once (created is False the second time)."""
    claims = ActionClaim.objects.filter(rule=rule, identity=identity).select_related("rule", "campaign")
    existing = claims.first()
    if existing is not None:
        return existing, False
    try:
        claim = action_reward(
            rule=rule, identity=identity, evidence={"reported_by": "api", "reference": reference}
        )
    except ClaimRefused as refusal:
        if refusal.code == "already_claimed":  # reported twice at once: the other report made it
            return claims.get(), False
        raise _refusal(refusal) from None
    return claim, True


def _login_first() -> CashbackError:
    return CashbackError(
        "login_first",
        _("This open_id has not logged in with TikTok on this campaign yet: it earns nothing before."),
        field="open_id",
    )
