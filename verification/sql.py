"""Every SQL statement of verification that the ORM does not write, each with why it cannot."""

import json
from dataclasses import dataclass

from django.db import connection

from campaigns.models import ActionRule, Brand, Campaign
from joyback.api.models import WebhookEndpoint
from joyback.ledger.models import Account, AccountKind
from joyback.postgresql.prepared import (
    insert_statement,
    inserted,
    model_columns_sql,
    model_from_row,
    model_width,
    prepared_fetchall,
    prepared_insert,
    prepared_pipeline,
)
from verification.models import ActionClaim, Participant, ProviderEvent, TikTokPost

# Why raw: every page of the claim flow asks this, and plain SQL costs a fifth of the ORM's Exists()
# annotation.
_PARTICIPANT_WITH_CLAIMS = (
    f"SELECT p.*, EXISTS (SELECT 1 FROM {ActionClaim._meta.db_table} c WHERE c.participant_id = p.id) "  # noqa: S608
    f"AS has_claims FROM {Participant._meta.db_table} p WHERE p.id = %s AND p.brand_id = %s"
)


def participant_with_claims(*, participant_id: int, brand_id) -> Participant | None:
    """The participant, with `has_claims` (any action at all) in the same query."""
    return next(iter(Participant.objects.raw(_PARTICIPANT_WITH_CLAIMS, [participant_id, brand_id])), None)


def provider_events_insert(*, provider: str, events: list[tuple[str, dict]], now) -> list[int]:
    """Insert each (event_id, payload) unless already stored, in one statement; the new ids."""
    # Why raw: bulk_create(ignore_conflicts=True) does not say which rows went in, and the ORM
    # cannot prepare a statement (the busiest INSERT: prepared once per connection).
    values = ", ".join(["(%s, %s, %s::jsonb, %s)"] * len(events))
    statement = (
        f"INSERT INTO {ProviderEvent._meta.db_table} (provider, event_id, payload, received_at) "  # noqa: S608
        f"VALUES {values} ON CONFLICT (provider, event_id) DO NOTHING RETURNING id"
    )
    params = [value for key, payload in events for value in (provider, key, json.dumps(payload), now)]
    return sorted(row[0] for row in prepared_fetchall(statement, params))


# Why raw (both): advisory locks are PostgreSQL functions with no ORM counterpart.
def order_lock_take(order_key: str) -> None:
    """A session lock on one shop order, held until order_lock_release (not to the commit)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(hashtext(%s))", ["shop-order:" + order_key])


def order_lock_release(order_key: str) -> None:
    """The lock order_lock_take took, given back (an advisory lock: no ORM counterpart)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_unlock(hashtext(%s))", ["shop-order:" + order_key])


_CLAIMS, _POSTS = ActionClaim._meta.db_table, TikTokPost._meta.db_table
_CAMPAIGNS, _RULES = Campaign._meta.db_table, ActionRule._meta.db_table

# Why raw: every check of a claim (verification.services.rewards.claim_allowed_check) and every
# fraud count (verification.fraud) in one prepared statement, read after the rule's and the
# person's locks: each was its own ORM query (a dozen round trips, each compiled, parsed and
# planned anew), while the rule's lock made every other claim of the rule wait. The person's claims
# and the identity's are read once each, by their own index (a MATERIALIZED CTE: a rule's claims are
# many, a person's few, whatever the statistics say). Each count a threshold is compared with stops
# at the threshold (LIMIT), which is all the check needs; a part whose check does not apply finds
# nothing at once (a LIMIT of 0, a NULL to compare with), so that the statement's one cached plan
# serves every claim instead of being planned again for each (as a CASE per part made it). The
# fraud windows end at the statement's own time (statement_timestamp()), which the planner also
# reads when it estimates them, so the statement's cached plan stays the one for a short window.
_CLAIM_FACTS = f"""
WITH mine AS MATERIALIZED (
  SELECT c.id, c.rule_id, c.identity_id, c.purchase_id, c.status, c.amount, c.currency, c.campaign_id,
         c.created_at
    FROM {_CLAIMS} c WHERE c.participant_id = %(person)s
), identity_rules AS MATERIALIZED (
  SELECT c.rule_id FROM {_CLAIMS} c WHERE c.identity_id = %(identity)s
)
SELECT
  EXISTS (SELECT 1 FROM identity_rules i WHERE i.rule_id = %(rule)s),
  (SELECT min(m.id) FROM mine m
    WHERE m.rule_id = %(rule)s AND m.purchase_id IS NULL AND m.identity_id <> %(identity)s),
  ARRAY(SELECT DISTINCT m.status FROM mine m WHERE m.rule_id = %(prerequisite)s::bigint),
  (SELECT count(*) FROM (SELECT 1 FROM {_CLAIMS} c
    WHERE c.rule_id = %(rule)s AND c.status = ANY(%(counted)s::varchar[]) LIMIT %(rule_cap)s) t)
  + (SELECT count(*) FROM (SELECT 1 FROM {_POSTS} p
      WHERE p.rule_id = %(rule)s AND p.status = ANY(%(under_way)s::varchar[]) LIMIT %(rule_cap)s) t),
  (SELECT count(*) FROM mine m
    WHERE m.campaign_id = %(campaign)s AND m.status = ANY(%(counted)s::varchar[])
      AND m.created_at >= %(period_since)s::timestamptz)
  + (SELECT count(*) FROM {_POSTS} p
      WHERE p.participant_id = %(person)s AND p.campaign_id = %(campaign)s
        AND p.status = ANY(%(under_way)s::varchar[]) AND %(period_since)s::timestamptz IS NOT NULL),
  (SELECT coalesce(sum(m.amount), 0) FROM mine m
    WHERE m.status = ANY(%(counted)s::varchar[]) AND m.currency = %(allowance_currency)s::varchar)
  + (SELECT coalesce(sum(r.reward_amount), 0) FROM {_POSTS} p
       JOIN {_CAMPAIGNS} k ON k.id = p.campaign_id JOIN {_RULES} r ON r.id = p.rule_id
      WHERE p.participant_id = %(person)s AND p.status = ANY(%(under_way)s::varchar[])
        AND k.currency = %(allowance_currency)s::varchar),
  (SELECT count(*) FROM (SELECT 1 FROM {_CLAIMS} c
    WHERE c.campaign_id = %(campaign)s AND c.client_ip = %(client_ip)s::inet
      AND c.created_at >= statement_timestamp() - interval '1 hour' LIMIT %(ip_limit)s) t),
  (SELECT count(DISTINCT c.participant_id) FROM {_CLAIMS} c
    WHERE c.campaign_id = %(campaign)s AND c.device = %(device)s::varchar AND c.device <> ''
      AND c.created_at >= statement_timestamp() - interval '1 day' AND c.participant_id <> %(person)s),
  %(device_new)s AND EXISTS (SELECT 1 FROM {_CLAIMS} c
    WHERE c.campaign_id = %(campaign)s AND c.client_ip = %(client_ip)s::inet
      AND c.created_at >= statement_timestamp() - interval '1 day' AND c.participant_id <> %(person)s),
  (SELECT count(*) FROM (SELECT 1 FROM {_CLAIMS} c
    WHERE c.campaign_id = %(campaign)s
      AND c.created_at >= statement_timestamp() - interval '1 minute' LIMIT %(minute_limit)s) t)
"""  # noqa: S608 (only the models' own table names are formatted in)


@dataclass(frozen=True)
class ClaimFacts:
    """What the checks of one claim read; a count whose check was not asked is 0."""

    claimed: bool  # this identity has a claim on the rule
    other_claim_id: int | None  # the person's first claim on the rule through another identity
    prerequisite_statuses: frozenset  # the person's claims' statuses on the rule's prerequisite
    rule_claims: int  # claims and videos under way counted against the rule's cap (to the cap)
    recent: int  # the person's in the campaign's period, videos under way included
    earned: int  # the person's rewards in the currency, videos under way included
    ip_recent: int  # claims of the campaign from the address in the last hour (to ip_limit)
    device_people: int  # other people who claimed the campaign from the browser today
    address_shared: bool  # someone else claimed the campaign from the address today
    per_minute: int  # claims of the campaign in the last minute (to minute_limit)
    fraud: bool  # the fraud signals' counts were asked


def claim_facts(
    *,
    rule_id: int,
    identity_id: int,
    person_id: int,
    campaign_id: int,
    prerequisite_id: int | None,
    counted: list[str],
    under_way: list[str],
    rule_cap: int = 0,
    period_since=None,
    allowance_currency: str | None = None,
    fraud: bool = False,
    client_ip: str | None = None,
    device: str = "",
    device_new: bool = False,
    ip_limit: int = 0,
    minute_limit: int = 0,
    person_locked: bool = False,
) -> ClaimFacts:
    """Every check's facts about one claim, in one statement (see _CLAIM_FACTS). rule_cap: the
    rule's cap (0: none to count against). person_locked: the person's row is locked first
    (person_lock), in the same round trip; the facts are read after the lock is granted."""
    facts = (
        _CLAIM_FACTS,
        {
            "rule": rule_id,
            "identity": identity_id,
            "person": person_id,
            "campaign": campaign_id,
            "prerequisite": prerequisite_id,
            "counted": list(counted),
            "under_way": list(under_way),
            "rule_cap": rule_cap,
            "period_since": period_since,
            "allowance_currency": allowance_currency,
            "client_ip": client_ip if fraud else None,
            "device": device if fraud else "",
            "device_new": bool(device_new and fraud),
            "ip_limit": ip_limit if fraud and client_ip else 0,
            "minute_limit": minute_limit if fraud else 0,
        },
    )
    if person_locked:
        _locked, (row,) = prepared_pipeline((_PERSON_LOCK, [person_id]), facts)
    else:
        (row,) = prepared_fetchall(*facts)
    claimed, other, statuses, rule_claims, recent, earned, ip_recent, people, shared, per_minute = row
    return ClaimFacts(
        claimed=claimed,
        other_claim_id=other,
        prerequisite_statuses=frozenset(statuses),
        rule_claims=rule_claims,
        recent=recent,
        earned=earned,
        ip_recent=ip_recent,
        device_people=people,
        address_shared=bool(shared),
        per_minute=per_minute,
        fraud=fraud,
    )


# Why raw (both): the two writes of the person's row an approval makes, prepared once per connection
# instead of compiled by the ORM on every reward while the rule's lock is held. NO KEY: rows that
# merely point at the person (their claims, their payee details) are still written meanwhile.
_PERSON_LOCK = f"SELECT id FROM {Participant._meta.db_table} WHERE id = %s FOR NO KEY UPDATE"  # noqa: S608
# Why raw: the same, for the mark that the people are due (an earlier mark waiting is kept).
_PAYOUT_DUE = (
    f"UPDATE {Participant._meta.db_table} SET payout_due_at = coalesce(payout_due_at, %s) "  # noqa: S608
    "WHERE id = ANY(%s::bigint[]) RETURNING id"
)


def person_lock(*, participant_id: int) -> None:
    """The person's row locked FOR NO KEY UPDATE to the end of the transaction."""
    prepared_fetchall(_PERSON_LOCK, [participant_id])


def payout_due_mark(*, participant_ids: list[int], now) -> None:
    """The people marked due for a payout since `now`, unless an earlier mark waits already."""
    prepared_fetchall(_PAYOUT_DUE, [now, participant_ids])


# Why raw: the rule's lock (FOR UPDATE of the rule's row only) with its campaign and brand, what
# the campaign's claimability reads of the budget (the cheapest reward, the budget's available
# amount, as campaigns.selectors.campaign_claimability_fields and the ledger's
# account_available_subquery read them) and whether the brand has an enabled webhook endpoint, in
# one prepared statement: built by the ORM it was the costliest part of an instant reward, compiled
# anew on every call while every other claim of the rule waited for the lock.
_RULE_LOCK = f"""
SELECT {model_columns_sql(ActionRule, "r")}, {model_columns_sql(Campaign, "c")},
  {model_columns_sql(Brand, "b")},
  (SELECT o.reward_amount FROM {_RULES} o WHERE o.campaign_id = r.campaign_id
    ORDER BY o.reward_amount LIMIT 1),
  (SELECT a.balance - a.held FROM {Account._meta.db_table} a
    WHERE a.kind = %(budget)s AND a.brand_id = c.brand_id AND a.subject = 'campaign:' || c.id::varchar
      AND a.currency = c.currency LIMIT 1),
  EXISTS (SELECT 1 FROM {WebhookEndpoint._meta.db_table} w WHERE w.brand_id = c.brand_id AND w.enabled)
FROM {_RULES} r JOIN {_CAMPAIGNS} c ON c.id = r.campaign_id JOIN {Brand._meta.db_table} b ON b.id = c.brand_id
WHERE r.id = %(rule)s
FOR UPDATE OF r
"""  # noqa: S608 (only the models' own table and column names are formatted in)


@dataclass(frozen=True)
class LockedRule:
    rule: ActionRule  # its campaign and the campaign's brand loaded with it
    cheapest_reward: int | None
    budget_available: int | None
    webhooks_listening: bool


def rule_locked(*, rule_id: int) -> LockedRule:
    """The rule locked FOR UPDATE (its row only) to the end of the transaction, read with its
    campaign and brand and what a claim's checks read of the budget (see _RULE_LOCK)."""
    rows = prepared_fetchall(_RULE_LOCK, {"rule": rule_id, "budget": AccountKind.CAMPAIGN_BUDGET.value})
    if not rows:
        raise ActionRule.DoesNotExist(f"No rule {rule_id}.")
    row = rows[0]
    first, second = model_width(ActionRule), model_width(ActionRule) + model_width(Campaign)
    third = second + model_width(Brand)
    rule = model_from_row(ActionRule, row[:first])
    campaign = model_from_row(Campaign, row[first:second])
    campaign.brand = model_from_row(Brand, row[second:third])
    rule.campaign = campaign
    cheapest, available, listening = row[third:]
    return LockedRule(
        rule=rule, cheapest_reward=cheapest, budget_available=available, webhooks_listening=listening
    )


# Why raw (both): an instant reward's claim written, and its posting noted on it, by prepared
# statements: the ORM compiled both anew on every reward while the rule's lock was held.
# The reward's tax class is recorded with its first booking (campaigns.tax), in the same statement.
_CLAIM_POSTED = (
    f"UPDATE {_CLAIMS} SET ledger_transaction_id = %s, "  # noqa: S608
    "tax_class = CASE WHEN tax_class = '' THEN %s ELSE tax_class END, "
    "tax_country = CASE WHEN tax_class = '' THEN %s ELSE tax_country END, "
    "tax_table = CASE WHEN tax_class = '' THEN %s ELSE tax_table END "
    "WHERE id = %s RETURNING id"
)


def claim_insert(claim: ActionClaim) -> None:
    """The new claim saved as ActionClaim.save() would (the model has no save() of its own)."""
    prepared_insert(claim)


def claim_approved_statements(claim: ActionClaim, *, due_since) -> list[tuple[str, list]]:
    """The new claim's INSERT (claim_insert's) and the mark that its person is due for a payout
    (payout_due_mark's), for the caller to send in one round trip with what follows them (the
    ledger's lock of the reward's accounts); claim_inserted with the first one's rows after."""
    return [insert_statement(claim), (_PAYOUT_DUE, [due_since, [claim.participant_id]])]


def claim_inserted(claim: ActionClaim, rows: list[tuple]) -> None:
    (row,) = rows
    inserted(claim, row)


def claim_posted(*, claim_id: int, transaction_id: int, tax) -> None:
    """tax: the reward's campaigns.tax.TaxJudgement, kept if the claim has one already."""
    prepared_fetchall(_CLAIM_POSTED, [transaction_id, tax.tax_class, tax.country, tax.version, claim_id])


# Why raw: the same, sent in one round trip with the posting itself (the ledger's `after`), so the
# posting is named by its idempotency key: its id is not known on the client yet.
_CLAIM_POSTED_AS = _CLAIM_POSTED.replace(
    "ledger_transaction_id = %s",
    "ledger_transaction_id = (SELECT t.id FROM ledger_transaction t WHERE t.idempotency_key = %s)",
)


def claim_posted_statement(*, claim_id: int, idempotency_key: str, tax) -> tuple[str, list]:
    """claim_posted's statement for the posting of this key, to send right after it."""
    return _CLAIM_POSTED_AS, [idempotency_key, tax.tax_class, tax.country, tax.version, claim_id]
