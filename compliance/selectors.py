"""Reads: the policies in force, verdicts (pure), cases and the decision trail."""

import copy
import functools
import hashlib
import json
from dataclasses import dataclass, field

from django.core.cache import cache
from django.db.models import Max, Q, QuerySet

from campaigns.models import ActionRule, Brand, Campaign
from compliance.checker import (
    CaptionVerdict,
    CompiledPolicy,
    caption_check,
    compiled,
    policies_for_countries,
    policies_from_source,
    wording_language,
)
from compliance.linter import instructions_unread, is_contest, rules_lint
from compliance.models import UNRESOLVED, ComplianceDecision, DecisionKind, Policy, RemediationCase
from compliance.sql import row_written
from joyback.remembered import Remembered

PLATFORM_LABELS = {
    "tiktok": "Paid partnership",
    "instagram": "Paid partnership",
    "youtube": "Includes paid promotion",
}


# The compiled policy versions this process has read, by their row and the row's version in
# PostgreSQL (xmin, new on every write): a check reads only which versions are in force, and a
# version's terms once. A version number alone does not name its terms: a flushed database holds
# other terms under the same numbers.
_READ: dict[tuple[int, str], CompiledPolicy] = {}
_READ_AT_MOST = 256


# Within `read_once()`, the policies in force and each campaign's decisions on its rules' words are
# read once: a page that asks of many rules (JoyBack's review queue) reads them together. Only for
# reads: what a write decides is read again inside its own transaction.
_READ_ONCE = Remembered("compliance_read_once")
read_once = _READ_ONCE.kept


def policies_current() -> list[CompiledPolicy]:
    """The policy versions in force; the readable source itself (as version 0) if the table is
    empty (a database flushed between tests), so a page never goes without its rules."""
    memo = _READ_ONCE.answers()
    if memo is None:
        return _policies_current_read()
    if "policies" not in memo:
        memo["policies"] = _policies_current_read()
    return memo["policies"]


def _policies_current_read() -> list[CompiledPolicy]:
    current = Policy.objects.filter(is_current=True).annotate(written=row_written())
    found = [_READ.get(key) for key in current.values_list("pk", "written")]
    if None in found:
        if len(_READ) > _READ_AT_MOST:
            _READ.clear()
        found = []  # as this second read finds them in force, should they differ from the first's
        for pk, written, code, version, data in current.values_list(
            "pk", "written", "code", "version", "data"
        ):
            found.append(compiled(code=code, version=version, data=data))
            _READ[(pk, written)] = found[-1]
    return found or [compiled(code=p["code"], version=0, data=p) for p in _source_policies()]


@functools.cache
def _source_policies() -> tuple[dict, ...]:
    return tuple(policies_from_source())


def campaign_policies(*, campaign: Campaign) -> list[CompiledPolicy]:
    current = policies_current()
    if not any("*" in policy.data.get("countries", []) for policy in current):
        # The catch-all was retired in the admin: the shipped one stands in (as version 0), so that
        # no country goes without rules and no caption passes for want of a policy.
        shipped = [p for p in _source_policies() if "*" in p.get("countries", [])]
        current = [*current, *(compiled(code=p["code"], version=0, data=p) for p in shipped)]
    return policies_for_countries(current, campaign.countries)


def _brief_decisions_read(campaign_ids) -> dict[int, list[tuple[dict, int | None]]]:
    """These campaigns' decisions on their rules' words: staff's, and the brand's proposals and
    appeals, oldest first, each with the staff member who decided (None for the brand's)."""
    found = {pk: [] for pk in campaign_ids}
    rows = (
        ComplianceDecision.objects.filter(campaign_id__in=campaign_ids, kind=DecisionKind.LAUNCH_LINT)
        .filter(
            Q(decided_by__isnull=False)
            | Q(evidence__has_key="proposed_instructions")
            | Q(evidence__has_key="appealed_instructions")
        )
        .order_by("seq")
        .values_list("campaign_id", "evidence", "decided_by_id")
    )
    for campaign_id, evidence, staff_id in rows:
        found[campaign_id].append((evidence, staff_id))
    return found


def _brief_decisions(*, campaign: Campaign) -> list[tuple[dict, int | None]]:
    memo = _READ_ONCE.answers()
    if memo is None:
        return _brief_decisions_read([campaign.pk])[campaign.pk]
    decisions = memo.setdefault("decisions", {})
    if campaign.pk not in decisions:
        decisions.update(_brief_decisions_read([campaign.pk]))
    return decisions[campaign.pk]


def _instructions_decisions(*, campaign: Campaign) -> list[tuple[dict, int]]:
    """JoyBack staff's decisions on this campaign's rule instructions, oldest first, with who."""
    return [(evidence, staff_id) for evidence, staff_id in _brief_decisions(campaign=campaign) if staff_id]


@dataclass
class _Approval:
    who: set = field(default_factory=set)  # the staff who approved the words
    alone_enough: bool = False  # one of them said no second person was needed
    sure_who: set = field(default_factory=set)  # those who approved them as a sure refusal


def _approvals(*, campaign: Campaign) -> dict[str, _Approval]:
    """Words staff approved for this campaign's rules, with who approved them and how."""
    found = {}
    for evidence, staff_id in _instructions_decisions(campaign=campaign):
        words = evidence.get("approved_instructions")
        if words is None:
            continue
        approval = found.setdefault(words, _Approval())
        approval.who.add(staff_id)
        approval.alone_enough |= not evidence.get("second_needed")
        if evidence.get("sure_refusal"):
            approval.sure_who.add(staff_id)
    return found


def instructions_approved(*, campaign: Campaign) -> frozenset:
    """The rule instructions (exact words) JoyBack staff approved for this campaign. Words that hold
    an element of a blocked kind need two staff members: one alone never lets them go live."""
    approvals = _approvals(campaign=campaign).items()
    return frozenset(words for words, a in approvals if a.alone_enough or len(a.who) >= 2)


def instructions_sure_approved(*, campaign: Campaign) -> frozenset:
    """The rule instructions two staff members approved as words the patterns refuse for sure (on
    the brand's request): the only approvals that lift such a refusal."""
    return frozenset(words for words, a in _approvals(campaign=campaign).items() if len(a.sure_who) >= 2)


def instructions_first_approvals(*, campaign: Campaign) -> dict[str, tuple[int, str]]:
    """Words one staff member approved that wait for a second: words -> (the first's id, their note)."""
    approved = instructions_approved(campaign=campaign)
    waiting = {}
    for evidence, staff_id in _instructions_decisions(campaign=campaign):
        words = evidence.get("approved_instructions")
        if words is not None and words not in approved:
            waiting.setdefault(words, (staff_id, evidence.get("note", "")))
    return waiting


def instructions_sent_back(*, campaign: Campaign) -> dict[str, str]:
    """Words JoyBack staff sent back to the brand, with what they asked it to change."""
    approved = instructions_approved(campaign=campaign)
    return {
        evidence["sent_back_instructions"]: evidence.get("note", "")
        for evidence, _staff_id in _instructions_decisions(campaign=campaign)
        if "sent_back_instructions" in evidence and evidence["sent_back_instructions"] not in approved
    }


@dataclass(frozen=True)
class UnsureSentence:
    sentence: str
    kind: str  # the blocked kind the reading saw an element of, or "" (not understood)
    said: str


def instructions_unsure(*, rule: ActionRule, words: str | None = None) -> list[UnsureSentence]:
    """What JoyBack could not check on its own in a rule's free text (or in `words` proposed for it),
    sentence by sentence."""
    unread = instructions_unread(
        rule.instructions if words is None else words,
        campaign_policies(campaign=rule.campaign),
        brand=rule.campaign.brand.name,
        others=rule.campaign.brand.sponsor_names,
    )
    return [UnsureSentence(sentence, reading.kind, reading.said) for sentence, reading in unread]


@dataclass(frozen=True)
class Proposal:
    words: str
    state: str  # "waiting", "approved" (not saved yet) or "sent_back"
    note: str = ""


def instructions_proposals(*, campaign: Campaign) -> dict[int, Proposal]:
    """Per rule, the latest new words a running campaign's brand proposed that the rule does not
    hold yet, with where JoyBack's review of them stands."""
    latest = {}
    for evidence, _staff_id in _brief_decisions(campaign=campaign):
        if "proposed_instructions" in evidence:
            latest[evidence["rule_id"]] = evidence["proposed_instructions"]
    if not latest:
        return {}
    current = dict(campaign.rules.filter(pk__in=latest).values_list("pk", "instructions"))
    approved, sent_back = instructions_approved(campaign=campaign), instructions_sent_back(campaign=campaign)
    found = {}
    for rule_id, words in latest.items():
        if rule_id not in current or words == current[rule_id].strip():
            continue
        if words in approved:
            found[rule_id] = Proposal(words, "approved")
        elif words in sent_back:
            found[rule_id] = Proposal(words, "sent_back", sent_back[words])
        else:
            found[rule_id] = Proposal(words, "waiting")
    return found


def instructions_sure_refusals(*, rule: ActionRule, words: str | None = None, policies=None) -> list[str]:
    """Why the patterns refuse a rule's words (or `words` as its instructions) for sure, whatever
    was approved: what the brand may ask JoyBack's team to read."""
    as_written = copy.copy(rule)
    if words is not None:
        as_written.instructions = words
    policies = policies if policies is not None else campaign_policies(campaign=rule.campaign)
    return [finding.message for finding in rules_lint([as_written], policies) if finding.appealable]


def instructions_appealed(*, campaign: Campaign) -> frozenset:
    """The rule instructions (exact words) the brand asked JoyBack's team to read although the
    patterns refused them for sure."""
    return frozenset(
        evidence["appealed_instructions"]
        for evidence, _staff_id in _brief_decisions(campaign=campaign)
        if "appealed_instructions" in evidence
    )


def instructions_under_review(*, rule: ActionRule) -> str | None:
    """The words of this rule that wait for JoyBack's review: its own, if the linter could not clear
    them (or refused them for sure and the brand asked for a reading) and they were not sent back,
    else new words its running campaign's brand proposed."""
    campaign = rule.campaign
    current = rule.instructions.strip()
    if current and current not in instructions_sent_back(campaign=campaign):
        policies = campaign_policies(campaign=campaign)
        approved = instructions_approved(campaign=campaign)
        sure_approved = instructions_sure_approved(campaign=campaign)
        findings = rules_lint([rule], policies, approved=approved, sure_approved=sure_approved)
        if any(f.reviewable for f in findings):
            return current
        if any(f.appealable for f in findings) and current in instructions_appealed(campaign=campaign):
            return current
    proposal = instructions_proposals(campaign=campaign).get(rule.pk)
    return proposal.words if proposal is not None and proposal.state == "waiting" else None


def instructions_awaiting_review() -> list:
    """Draft and running campaigns' rules whose words wait for JoyBack's review: not understood, or
    refused as a blocked kind the reading was not sure of, or refused for sure and read on the
    brand's request, or new words a running campaign's brand proposed. Words sent back wait for the
    brand."""
    proposed = set(
        ComplianceDecision.objects.filter(
            kind=DecisionKind.LAUNCH_LINT, evidence__has_key="proposed_instructions"
        ).values_list("campaign_id", flat=True)
    )
    rules = list(
        ActionRule.objects.exclude(campaign__status="ended")
        .filter(~Q(instructions="") | Q(campaign_id__in=proposed))
        .select_related("campaign__brand")
        .order_by("pk")
    )
    memo = _READ_ONCE.answers()
    if memo is not None:
        decisions = memo.setdefault("decisions", {})
        decisions.update(_brief_decisions_read({rule.campaign_id for rule in rules} - decisions.keys()))
    return [rule for rule in rules if instructions_under_review(rule=rule) is not None]


def campaign_contest(*, campaign: Campaign, policies=None) -> bool:
    return is_contest(campaign.rules.all(), policies or campaign_policies(campaign=campaign))


def caption_verdict(
    *,
    campaign: Campaign,
    caption: str,
    platform: str = "tiktok",
    label_on: bool | None = None,
    label_read: bool = False,
) -> CaptionVerdict:
    policies = campaign_policies(campaign=campaign)
    return caption_check(
        caption,
        policies=policies,
        platform=platform,
        languages=campaign.languages or ["en"],
        brand=campaign.brand.name,
        brand_names=campaign.brand.sponsor_names,
        label_on=label_on,
        label_read=label_read,
        contest=campaign_contest(campaign=campaign, policies=policies),
    )


def disclosure_for(*, campaign: Campaign, language: str, platform: str = "tiktok") -> dict:
    """The wording to put first in a caption, in the visitor's language where every policy in force
    accepts it, naming the brand; a brand's own wording if it passes the checker."""
    policies = campaign_policies(campaign=campaign)
    contest = campaign_contest(campaign=campaign, policies=policies)
    language = wording_language(policies, languages=campaign.languages or ["en"], preferred=language)
    wording = policies[0].wording(language=language, brand=campaign.brand.name, contest=contest)
    if campaign.disclosure_text:
        own = caption_check(
            campaign.disclosure_text,
            policies=policies,
            platform=platform,
            languages=campaign.languages or ["en"],
            brand=campaign.brand.name,
            brand_names=campaign.brand.sponsor_names,
            contest=contest,
        )
        if own.passed:
            wording = campaign.disclosure_text
    return {
        "wording": wording,
        "language": language,
        "platform": platform,
        "label": PLATFORM_LABELS.get(platform, "Paid partnership"),
        "policies": [policy.label for policy in policies],
        "contest": contest,
    }


def case_for_claim(*, claim_id: int) -> RemediationCase | None:
    return RemediationCase.objects.filter(claim_id=claim_id).first()


def cases_for_claims(*, claim_ids) -> dict[int, RemediationCase]:
    return {case.claim_id: case for case in RemediationCase.objects.filter(claim_id__in=list(claim_ids))}


def compliance_queue_for_brand(*, brand: Brand) -> QuerySet:
    return (
        RemediationCase.objects.filter(brand=brand, status__in=UNRESOLVED)
        .select_related("campaign")
        .order_by("deadline", "opened_at")
    )


def cases_resolved_for_brand(*, brand: Brand, limit: int = 20) -> QuerySet:
    return (
        RemediationCase.objects.filter(brand=brand)
        .exclude(status__in=UNRESOLVED)
        .select_related("campaign")
        .order_by("-resolved_at")[:limit]
    )


def case_get_for_brand(*, brand: Brand, case_id: int) -> RemediationCase | None:
    return RemediationCase.objects.filter(brand=brand, pk=case_id).select_related("campaign").first()


def campaign_decisions(*, campaign: Campaign) -> QuerySet:
    return (
        ComplianceDecision.objects.filter(campaign=campaign)
        .select_related("decided_by", "case")
        .order_by("created_at", "seq")
    )


def campaign_compliance_summary(*, campaign: Campaign) -> dict:
    cases = RemediationCase.objects.filter(campaign=campaign)
    summary = {status: 0 for status in ("open", "review", "fixed", "cleared", "voided")}
    for status in cases.values_list("status", flat=True):
        summary[status] += 1
    checks = ComplianceDecision.objects.filter(campaign=campaign, kind="caption_check")
    summary["checks"] = checks.count()
    summary["passed"] = checks.filter(verdict="compliant").count()
    return summary


# The decision trail's hash chain.

HASHED_FIELDS = (
    "brand_id",
    "seq",
    "campaign_id",
    "case_id",
    "claim_id",
    "kind",
    "verdict",
    "reasons",
    "evidence",
    "policy_versions",
    "checker_version",
    "decided_by_id",
    "created_at",
)


def decision_hash(*, fields: dict, prev_hash: str) -> str:
    content = {name: fields[name] for name in HASHED_FIELDS}
    content["created_at"] = fields["created_at"].isoformat()
    canonical = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256((prev_hash + "\n" + canonical).encode()).hexdigest()


GENESIS = "0" * 64


def audit_chain_problems(*, brand_id: int | None = None) -> list[str]:
    """Every break in the decision chains: a row whose hash does not match its content, a link to
    a previous row that is not the one before it, or a gap in the sequence. Empty: intact."""
    rows = ComplianceDecision.objects.order_by("brand_id", "seq")
    if brand_id is not None:
        rows = rows.filter(brand_id=brand_id)
    problems: list[str] = []
    previous_brand, previous_hash, expected_seq = None, GENESIS, 1
    for row in rows.values(*HASHED_FIELDS, "pk", "prev_hash", "row_hash").iterator():
        if row["brand_id"] != previous_brand:
            previous_brand, previous_hash, expected_seq = row["brand_id"], GENESIS, 1
        label = f"brand {row['brand_id']} decision #{row['seq']} (id {row['pk']})"
        if row["seq"] != expected_seq:
            problems.append(f"{label}: expected #{expected_seq}, a row is missing")
        if row["prev_hash"] != previous_hash:
            problems.append(f"{label}: does not link to the row before it")
        if decision_hash(fields=row, prev_hash=row["prev_hash"]) != row["row_hash"]:
            problems.append(f"{label}: its content does not match its hash (edited)")
        previous_hash, expected_seq = row["row_hash"], row["seq"] + 1
    return problems


def audit_chain_problems_recent(*, brand_id: int) -> list[str]:
    """audit_chain_problems of one brand, for pages: re-verified when the brand's chain grows and
    at least every AUDIT_CHAIN_RECHECK_SECONDS (an edit made behind the database's back shows
    within that time; `manage.py compliance_audit_check` verifies everything at once)."""
    last = ComplianceDecision.objects.filter(brand_id=brand_id).aggregate(last=Max("seq"))["last"] or 0
    key = f"audit-chain:{brand_id}:{last}"
    problems = cache.get(key)
    if problems is None:
        problems = audit_chain_problems(brand_id=brand_id)
        cache.set(key, problems, AUDIT_CHAIN_RECHECK_SECONDS)
    return problems


AUDIT_CHAIN_RECHECK_SECONDS = 600


def unresolved_claim_ids() -> QuerySet:
    """Claims whose disclosure is still being remediated or reviewed (a subquery)."""
    return RemediationCase.objects.filter(status__in=UNRESOLVED).values("claim_id")


def disclosure_status_for_claims(*, claim_ids) -> dict[int, dict]:
    """Per claim, its latest caption check as recorded: the verdict, the label's state and when;
    an open remediation case says so too ("fixing" or "brand_review")."""
    latest = {}
    for decision in (
        ComplianceDecision.objects.filter(claim_id__in=list(claim_ids), kind=DecisionKind.CAPTION_CHECK)
        .order_by("claim_id", "seq")
        .only("claim_id", "verdict", "evidence", "created_at")
    ):
        latest[decision.claim_id] = {
            "verdict": decision.verdict,
            "label_state": (decision.evidence or {}).get("label_state", "unknown"),
            "at": decision.created_at,
        }
    for case in RemediationCase.objects.filter(claim_id__in=list(claim_ids)):
        if case.unresolved:
            latest.setdefault(case.claim_id, {"verdict": "", "label_state": "unknown", "at": None})
            latest[case.claim_id]["case"] = case.status
    return latest
