"""Rewards: the instant action's claim and its checks (caps, one per person, the rule's lock), posting a
reward, holds on the budget, the clawback, and marking a person due for a payout."""

from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial

from django.db import transaction
from django.utils import timezone

from campaigns.fees import fee_for_reward, fee_plan_for
from campaigns.models import ActionRule, Trigger
from campaigns.selectors import campaign_claimability
from campaigns.services.fees import reward_fee_charge, reward_fee_refund
from campaigns.services.funding import campaign_budget_leg
from campaigns.tax import campaign_reward_judge
from joyback.ledger.models import Account, Hold
from joyback.ledger.services import (
    InsufficientFunds,
    Posting,
    accounts_lock,
    accounts_lock_after,
    hold_commit,
    hold_reserve,
    hold_void,
    posting_post,
    transfer_post,
)
from joyback.queue import standing_work_soon
from verification.events import claim_event_emit
from verification.fraud import fraud_facts_query, fraud_signals_at_claim
from verification.models import (
    ActionClaim,
    ClaimStatus,
    FraudSignal,
    Identity,
    PostStatus,
)
from verification.services.participants import (
    participant_payable_account,
    participant_payable_open,
    participant_receivable_account,
    participants_flag,
)
from verification.services.refusals import ClaimRefused, SecondAccount
from verification.sql import (
    ClaimFacts,
    claim_approved_statements,
    claim_facts,
    claim_insert,
    claim_inserted,
    claim_posted,
    claim_posted_statement,
    payout_due_mark,
    person_lock,
    rule_locked,
)


def claim_clawback(*, claim: ActionClaim, reason: str) -> ActionClaim:
    """Take a reward back (a refunded purchase, a deleted post). Undecided: its hold is released.
    Approved: the money returns to the campaign budget from what the person is still owed, and
    whatever was already paid out becomes a debt netted against their next payout."""
    with transaction.atomic(durable=True):
        locked = ActionClaim.objects.select_for_update().select_related("campaign").get(pk=claim.pk)
        if locked.status in (ClaimStatus.REJECTED, ClaimStatus.CLAWED_BACK):
            return locked
        if locked.reach_paid and locked.status != ClaimStatus.APPROVED:
            # A reach share still counting: its hold goes back, and what its top-ups paid.
            claim_hold_release(locked)
            locked.amount = locked.reach_paid
            ActionClaim.objects.filter(pk=locked.pk).update(amount=locked.amount, next_check_at=None)
        if locked.ledger_transaction_id:
            claim_reward_take_back(locked, reason=reason, idempotency_key=f"clawback:{locked.pk}")
            ActionClaim.objects.filter(pk=locked.pk).update(
                status=ClaimStatus.CLAWED_BACK, reason=reason[:40]
            )
        else:
            claim_hold_release(locked)
            ActionClaim.objects.filter(pk=locked.pk).update(
                status=ClaimStatus.REJECTED, reason=reason[:40], decided_at=timezone.now()
            )
    claim.refresh_from_db()
    return claim


def claim_reward_take_back(
    claim: ActionClaim, *, reason: str, idempotency_key: str, amount: int | None = None
) -> None:
    """A posted reward back to its budget: from the person's payable while it is still there,
    the rest (already paid out) as a debt on their receivable. amount: only part of it (a
    partial refund), else the whole claim amount."""
    amount = claim.amount if amount is None else amount
    payable = participant_payable_account(participant=claim.participant, currency=claim.currency)
    receivable = participant_receivable_account(participant=claim.participant, currency=claim.currency)
    accounts = accounts_lock(account_ids=[payable.pk, receivable.pk])
    from_payable = min(max(accounts[payable.pk].balance, 0), amount)
    legs = [(campaign_budget_leg(campaign=claim.campaign), -amount)]
    if from_payable:
        legs.append((accounts[payable.pk], from_payable))
    if amount - from_payable:
        legs.append((accounts[receivable.pk], amount - from_payable))
    posting_post(
        posting=Posting(
            reason="clawback",
            legs=tuple(legs),
            idempotency_key=idempotency_key,
            reference=f"claim:{claim.pk}",
            description=f"Clawback: {reason}"[:200],
        )
    )
    # The platform's fee on it goes back in the same proportion, in the same transaction.
    reward_fee_refund(
        claim_id=claim.pk, campaign=claim.campaign, amount=amount, idempotency_key=idempotency_key
    )


# A video on its way to TikTok through JoyBack: its reward is held and its claim comes once it is
# public, so it counts against the caps as a claim would.
POSTS_UNDER_WAY = [PostStatus.STORED, PostStatus.UPLOADING, PostStatus.PROCESSING, PostStatus.PUBLISHED]


def person_caps_lock(*, participant_id: int) -> None:
    """The caps that count one person's claims across rules (the period cap over a campaign's rules,
    the allowance over the brand's campaigns): their claims take turns on the person's row, taken
    after the rule's lock (docs/design.md, lock order). Two claims on two rules hold two different
    rule locks, so the rule's lock alone would let both pass. NO KEY: rows that merely point at the
    person (their claims, their payee details) are still written meanwhile."""
    person_lock(participant_id=participant_id)


COUNTED = [ClaimStatus.APPROVED, ClaimStatus.PENDING, ClaimStatus.NEEDS_REVIEW]


def _person_capped(campaign) -> bool:
    """Whether a cap counts the person's claims across rules (person_caps_lock)."""
    return bool(campaign.per_identity_period_cap) or campaign.brand.person_allowance is not None


def claim_facts_read(
    *, rule: ActionRule, identity: Identity, fraud: dict | None = None, person_locked: bool = False
) -> ClaimFacts:
    """What the claim's checks read, in one statement (verification.sql.claim_facts): the one-person
    check, the prerequisite, the caps that apply and, with `fraud` (verification.fraud's
    fraud_facts_query), the fraud signals' counts. Read after the locks the checks need.
    person_locked: the person's lock (person_caps_lock) is taken first, in the same round trip."""
    campaign = rule.campaign
    now = timezone.now()
    return claim_facts(
        rule_id=rule.pk,
        identity_id=identity.pk,
        person_id=identity.participant_id,
        campaign_id=campaign.pk,
        prerequisite_id=rule.prerequisite_id,
        counted=COUNTED,
        under_way=POSTS_UNDER_WAY,
        rule_cap=rule.total_cap or 0,
        period_since=(
            now - timezone.timedelta(days=campaign.per_identity_period_days)
            if campaign.per_identity_period_cap
            else None
        ),
        allowance_currency=campaign.currency if campaign.brand.person_allowance is not None else None,
        person_locked=person_locked,
        **(fraud or {}),
    )


def claim_caps_check(*, rule: ActionRule, identity: Identity, facts: ClaimFacts | None = None) -> None:
    """The rule's cap, the campaign's period cap and the brand's allowance. facts: read already,
    under the person's lock (claim_allowed_check); else the lock is taken and they are read here."""
    campaign = rule.campaign
    if facts is None:
        facts = claim_facts_read(rule=rule, identity=identity, person_locked=_person_capped(campaign))
    if rule.total_cap is not None and facts.rule_claims >= rule.total_cap:
        raise ClaimRefused("rule_cap")
    if campaign.per_identity_period_cap and facts.recent >= campaign.per_identity_period_cap:
        raise ClaimRefused("period_cap")
    allowance = campaign.brand.person_allowance
    if allowance is not None and facts.earned + rule.reward_amount > allowance:
        raise ClaimRefused("allowance")


@dataclass(frozen=True)
class ClaimContext:
    """Where a claim came from: the network address, the hash of the browser's device cookie and
    whether that browser is new (verification/device.py)."""

    client_ip: str | None = None
    device: str = ""
    device_new: bool = False


@contextmanager
def second_accounts_flagged():
    """Put outside the claim's transaction: the refused claim rolls back first, then the person's
    earlier claims are flagged in a transaction of their own."""
    try:
        yield
    except SecondAccount as second:
        participants_flag(flags=[(second.participant_id, "second_account", second.detail)])
        raise


def rule_lock(rule: ActionRule) -> ActionRule:
    # One lock per rule serialises its caps; the unique constraint still guards the one reward.
    # Only the rule's row: FOR UPDATE would otherwise lock the joined campaign and brand rows too,
    # and every instant reward of the brand would wait on every other. What the campaign's
    # claimability reads of the budget, and whether the brand has webhook endpoints, come with it
    # (verification.sql.rule_locked: one prepared statement).
    locked = rule_locked(rule_id=rule.pk)
    campaign = locked.rule.campaign
    campaign.cheapest_reward, campaign.budget_available = locked.cheapest_reward, locked.budget_available
    locked.rule.webhooks_listening = locked.webhooks_listening
    return locked.rule


def claim_allowed_check(*, rule: ActionRule, identity: Identity, context=None) -> ClaimFacts:
    """May this identity claim the (locked) rule? ClaimRefused (SecondAccount) if not; else what the
    checks read, the fraud signals' counts too when the claim's `context` is given."""
    claimability = campaign_claimability(campaign=rule.campaign)
    if not claimability.open:
        raise ClaimRefused(claimability.reason)
    fraud = fraud_facts_query(campaign=rule.campaign, context=context) if context is not None else None
    facts = claim_facts_read(
        rule=rule, identity=identity, fraud=fraud, person_locked=_person_capped(rule.campaign)
    )
    if facts.claimed:
        raise ClaimRefused("already_claimed")
    if facts.other_claim_id is not None:
        first = ActionClaim.objects.select_related("identity", "rule").get(pk=facts.other_claim_id)
        raise SecondAccount(first=first, identity=identity)
    if rule.prerequisite_id and ClaimStatus.APPROVED not in facts.prerequisite_statuses:
        # A step done but held for review (a second account, a shared bank account) is not a
        # step left undone: say that it is being checked, not "do it first".
        raise ClaimRefused(
            "prerequisite_in_review"
            if ClaimStatus.NEEDS_REVIEW in facts.prerequisite_statuses
            else "prerequisite"
        )
    claim_caps_check(rule=rule, identity=identity, facts=facts)
    return facts


def action_reward(
    *,
    rule: ActionRule,
    identity: Identity,
    context: ClaimContext = ClaimContext(),
    evidence: dict | None = None,
) -> ActionClaim:
    """Instant verification: a verified identity's action is approved and paid at once, unless a
    fraud signal sends it to the review queue with its reward held on the budget."""
    with second_accounts_flagged(), transaction.atomic(durable=True):
        # Made before the rule's lock: creating the person's account (most people's first reward)
        # would otherwise queue every claimer. Made in the reward's transaction: one commit, and
        # its flush to disk, for both (a refused claim leaves no empty account behind).
        payable = participant_payable_open(participant=identity.participant, currency=rule.campaign.currency)
        rule = rule_lock(rule)
        facts = claim_allowed_check(rule=rule, identity=identity, context=context)
        signals = fraud_signals_at_claim(
            rule=rule, identity=identity, context=context, evidence=evidence or {}, facts=facts
        )
        claim = ActionClaim(
            campaign=rule.campaign,
            brand_id=rule.campaign.brand_id,
            rule=rule,
            participant=identity.participant,
            identity=identity,
            status=ClaimStatus.NEEDS_REVIEW if signals else ClaimStatus.APPROVED,
            reason=signals[0][0] if signals else "verified_identity",
            amount=rule.reward_amount,
            currency=rule.campaign.currency,
            evidence=evidence or {},
            client_ip=context.client_ip,
            device=context.device,
            decided_at=None if signals else timezone.now(),
        )
        # The brand's endpoints were asked with the rule's lock: none, none to read again.
        endpoints = None if rule.webhooks_listening else []
        if signals:
            claim_insert(claim)
            claim_hold_reserve(claim)
            FraudSignal.objects.bulk_create(
                FraudSignal(claim=claim, brand_id=claim.brand_id, code=c, detail=d) for c, d in signals
            )
            claim_event_emit(claim, "action.verified", endpoints=endpoints)
        else:
            # The claim, the mark that its person is due for a payout and the lock of the accounts
            # its reward moves money between, in this order (docs/design.md, lock order), sent in
            # one round trip while the rule's lock waits for them.
            budget = campaign_budget_leg(campaign=rule.campaign)
            (claim_rows, _marked), locked = accounts_lock_after(
                *claim_approved_statements(claim, due_since=timezone.now()),
                account_ids=[budget.pk, payable.pk],
            )
            claim_inserted(claim, claim_rows)
            standing_work_soon(PAYOUTS_DUE)
            claim_reward_post(claim, marked_due=True, payable=payable, new_claim=True, locked=locked)
            claim_event_emit(claim, "action.verified", "reward.approved", endpoints=endpoints)
    return claim


def claim_payable_account(claim: ActionClaim) -> Account:
    return participant_payable_account(participant=claim.participant, currency=claim.currency)


def claim_reward_post(
    claim: ActionClaim,
    *,
    due_now: bool = False,
    marked_due: bool = False,
    payable: Account | None = None,
    new_claim: bool = False,
    locked: dict[int, Account] | None = None,
) -> None:
    """Budget -> the person's payable: committed from the claim's hold if it has one.

    due_now: the caller holds no lock that comes after the person's in the lock order (a claim's),
    so the person is marked due for a payout in this transaction, before the ledger's locks.
    marked_due: the caller has marked them so already, in this transaction, before the ledger's
    locks (claim_approved_statements).
    payable: the person's payable account when the caller has it already (the posting locks and
    reads it fresh, or takes it from `locked`), instead of looking it up again.
    new_claim: the claim was made in the caller's transaction, so no posting can hold its key yet
    (the ledger does not look for one; the key's unique index still refuses a second).
    locked: the budget and the payable as the caller locked and read them in this transaction
    (accounts_lock_after), for a claim without a hold: the posting does not lock them again.

    Posted without a savepoint: every caller lets a database error roll its whole transaction
    back, and a refusal (InsufficientFunds) leaves nothing written."""
    payable = payable or claim_payable_account(claim)
    if due_now and not marked_due:
        participant_payout_due(participant_id=claim.participant_id)
    elif not marked_due:
        transaction.on_commit(partial(participant_payout_due, participant_id=claim.participant_id))
    description = f"{Trigger(claim.rule.trigger).label} reward, {claim.campaign.name}"
    tax = campaign_reward_judge(campaign=claim.campaign, trigger=claim.rule.trigger)
    noted = False
    try:
        if claim.hold_id:
            reward = hold_commit(
                hold=Hold.objects.get(pk=claim.hold_id),
                destination=payable,
                # The reward only: the rest of the hold (its fee, claim_hold_amount) is freed for it.
                amount=claim.amount,
                reason="reward",
                reference=f"claim:{claim.pk}",
                description=description,
            )
        else:
            key = f"reward:{claim.pk}"
            # A new claim's posting is written in one statement: the claim notes it in the same
            # round trip, while the rule's lock waits for the commit.
            noted = new_claim
            reward = transfer_post(
                source=campaign_budget_leg(campaign=claim.campaign),
                destination=payable,
                amount=claim.amount,
                reason="reward",
                idempotency_key=key,
                reference=f"claim:{claim.pk}",
                description=description,
                savepoint=False,
                fresh_key=new_claim,
                locked=locked,
                after=[claim_posted_statement(claim_id=claim.pk, idempotency_key=key, tax=tax)]
                if noted
                else (),
            )
        # The platform's fee on it, in the same transaction: a budget covers rewards and fees.
        reward_fee_charge(claim_id=claim.pk, campaign=claim.campaign, amount=claim.amount, reward=reward)
    except InsufficientFunds:
        raise ClaimRefused("fully_claimed") from None
    if not noted:
        claim_posted(claim_id=claim.pk, transaction_id=reward.pk, tax=tax)
    claim.ledger_transaction_id = reward.pk
    if not claim.tax_class:
        claim.tax_class, claim.tax_country, claim.tax_table = tax.tax_class, tax.country, tax.version


PAYOUTS_DUE = "payouts due"  # a kind of standing work (joyback/background.py), done by the payouts app


def participant_payout_due(*, participant_id: int) -> None:
    """Money is owed to the person: the payout pipeline takes them in its next batch. One statement
    on the person's row (in the caller's transaction, or on its own), not a queued task per reward;
    an earlier mark not yet taken is kept, so the oldest wait is what the pipeline sees.

    Always a write, never skipped when a mark is there: a batch that holds the person and has
    cleared their mark is waited for, so this reward is marked again rather than left to the sweep."""
    participants_payout_due(participant_ids=[participant_id])


def participants_payout_due(*, participant_ids) -> None:
    """participant_payout_due for many people, in one statement."""
    payout_due_mark(participant_ids=list(participant_ids), now=timezone.now())
    standing_work_soon(PAYOUTS_DUE)


def claim_hold_reserve(claim: ActionClaim) -> None:
    """Reserve the reward on the budget while the claim waits, so the budget is never oversold."""
    try:
        hold = hold_reserve(
            account=campaign_budget_leg(campaign=claim.campaign),
            amount=claim_hold_amount(claim, amount=claim.amount),
            idempotency_key=f"claim-hold:{claim.pk}",
            reference=f"claim:{claim.pk}",
        )
    except InsufficientFunds:
        raise ClaimRefused("fully_claimed") from None
    ActionClaim.objects.filter(pk=claim.pk).update(hold_id=hold.pk)
    claim.hold_id = hold.pk


def claim_hold_reduce(claim: ActionClaim, *, amount: int) -> None:
    """The waiting claim is now worth less (a partial refund): its hold is swapped for one of the
    new amount, in the caller's transaction (the budget is never short in between)."""
    claim_hold_release(claim)
    hold = hold_reserve(
        account=campaign_budget_leg(campaign=claim.campaign),
        amount=claim_hold_amount(claim, amount=amount),
        idempotency_key=f"claim-hold:{claim.pk}:{amount}",
        reference=f"claim:{claim.pk}",
    )
    ActionClaim.objects.filter(pk=claim.pk).update(hold_id=hold.pk, amount=amount)
    claim.hold_id, claim.amount = hold.pk, amount


def claim_hold_amount(claim: ActionClaim, *, amount: int) -> int:
    """What a waiting reward of `amount` holds on the budget: the reward and the platform's fee on
    it, so the fee is there when the reward is committed (a hold's commit frees the rest)."""
    return amount + fee_for_reward(
        plan=fee_plan_for(brand=claim.campaign.brand, currency=claim.currency), amount=amount
    )


def claim_hold_release(claim: ActionClaim) -> None:
    if claim.hold_id:
        hold = Hold.objects.get(pk=claim.hold_id)
        if hold.status == "reserved":
            hold_void(hold=hold)
