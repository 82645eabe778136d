"""Compliance writes: decisions (with their evidence, in the caller's transaction), remediation
cases, brand reviews, launch checks and policy revisions."""

import json
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django_q.models import Schedule

from campaigns.models import ActionRule, Campaign, CampaignStatus, Membership
from campaigns.services.refusals import LaunchProblem
from compliance.checker import CHECKER_VERSION, NEEDS_REVIEW, CaptionVerdict
from compliance.linter import instructions_unread, rules_lint
from compliance.models import CaseStatus, ComplianceDecision, DecisionKind, Policy, RemediationCase
from compliance.selectors import (
    GENESIS,
    campaign_policies,
    decision_hash,
    disclosure_for,
    instructions_appealed,
    instructions_approved,
    instructions_first_approvals,
    instructions_proposals,
    instructions_sent_back,
    instructions_sure_approved,
    instructions_sure_refusals,
    instructions_under_review,
)
from compliance.sql import decision_chain_lock
from joyback.queue import enqueue_on_commit
from joyback.users.four_eyes import second_person_refusal

REMEDIATION_HOURS = 24  # TikTok's own clock for an undisclosed post before it leaves For You


class ComplianceError(Exception):
    """A refused compliance operation; the message is for the person who tried it."""


def decision_record(
    *,
    brand_id: int,
    kind: str,
    verdict: str,
    reasons=(),
    evidence: dict | None = None,
    policy_versions=(),
    checker_version: str = CHECKER_VERSION,
    campaign_id: int | None = None,
    case: RemediationCase | None = None,
    claim_id: int | None = None,
    decided_by=None,
) -> ComplianceDecision:
    """Append one decision to the brand's chain. Must run inside the transaction that makes the
    decision, so the decision and its record commit or vanish together."""
    if not connection.in_atomic_block:
        raise RuntimeError("decision_record must run inside the transaction of the decision it records")
    decision_chain_lock(brand_id=brand_id)
    last = (
        ComplianceDecision.objects.filter(brand_id=brand_id)
        .order_by("-seq")
        .values_list("seq", "row_hash")
        .first()
    )
    seq, prev_hash = (last[0] + 1, last[1]) if last else (1, GENESIS)
    fields = {
        "brand_id": brand_id,
        "seq": seq,
        "campaign_id": campaign_id,
        "case_id": case.pk if case else None,
        "claim_id": claim_id,
        "kind": DecisionKind(kind).value,
        "verdict": verdict,
        "reasons": list(reasons),
        # Stored as JSON reads it back, so the hash is the same before and after the round trip.
        "evidence": json.loads(json.dumps(evidence or {}, default=str)),
        "policy_versions": list(policy_versions),
        "checker_version": checker_version,
        "decided_by_id": getattr(decided_by, "pk", decided_by),
        "created_at": timezone.now(),
    }
    return ComplianceDecision.objects.create(
        **fields, prev_hash=prev_hash, row_hash=decision_hash(fields=fields, prev_hash=prev_hash)
    )


def caption_check_record(
    *,
    campaign: Campaign,
    verdict: CaptionVerdict,
    caption: str,
    claim_id: int,
    stage: str,
    platform: str = "tiktok",
    label_state: str = "unknown",
    case: RemediationCase | None = None,
) -> ComplianceDecision:
    return decision_record(
        brand_id=campaign.brand_id,
        kind=DecisionKind.CAPTION_CHECK,
        verdict=verdict.verdict,
        reasons=verdict.reasons,
        evidence={
            "stage": stage,
            "caption": caption,
            "platform": platform,
            "label_state": label_state,
            "advisories": list(verdict.advisories),
        },
        policy_versions=verdict.policies,
        checker_version=verdict.checker_version,
        campaign_id=campaign.pk,
        case=case,
        claim_id=claim_id,
    )


def case_open(
    *,
    campaign: Campaign,
    claim_id: int,
    participant_id: int,
    verdict: CaptionVerdict,
    caption: str,
    language: str = "en",
    platform: str = "tiktok",
    now=None,
) -> RemediationCase:
    """A failed disclosure: the 24-hour clock starts (or, for a doubtful one, the brand reviews it).
    Runs in the caller's transaction, with the claim it concerns."""
    now = now or timezone.now()
    review = verdict.verdict == NEEDS_REVIEW
    disclosure = disclosure_for(campaign=campaign, language=language, platform=platform)
    case = RemediationCase.objects.create(
        brand_id=campaign.brand_id,
        campaign=campaign,
        claim_id=claim_id,
        participant_id=participant_id,
        platform=platform,
        status=CaseStatus.REVIEW if review else CaseStatus.OPEN,
        reasons=list(verdict.reasons),
        caption=caption,
        wording=disclosure["wording"][:300],
        language=disclosure["language"],
        opened_at=now,
        deadline=None if review else now + timedelta(hours=REMEDIATION_HOURS),
    )
    decision_record(
        brand_id=campaign.brand_id,
        kind=DecisionKind.CASE_OPENED,
        verdict=verdict.verdict,
        reasons=verdict.reasons,
        evidence={"caption": caption, "platform": platform, "wording": case.wording, "status": case.status},
        policy_versions=verdict.policies,
        checker_version=verdict.checker_version,
        campaign_id=campaign.pk,
        case=case,
        claim_id=claim_id,
    )
    if not review:
        transaction.on_commit(lambda: remediation_schedule(case=case))
        # The person is told what to fix and by when; their contact is with their bank details,
        # in the payouts app, which this app reaches only by naming its task.
        enqueue_on_commit("payouts.tasks.disclosure_fix_notify_task", participant_id, case.pk)
    return case


def remediation_schedule(*, case: RemediationCase) -> None:
    """The re-check at the deadline; the claim's side of it belongs to the verification app."""
    Schedule.objects.update_or_create(
        name=f"remediation-recheck-{case.claim_id}",
        defaults={
            "func": "verification.tasks.remediation_recheck_task",
            "args": str(case.claim_id),
            "schedule_type": Schedule.ONCE,
            "next_run": case.deadline,
            "repeats": 1,
        },
    )


def case_recheck(
    *,
    case: RemediationCase,
    verdict: CaptionVerdict,
    caption: str,
    label_state: str = "unknown",
    now=None,
) -> str:
    """The person's post checked again: 'fixed', 'voided' (deadline passed, still failing),
    'review' (the brand decides) or 'open' (still failing, time left). In the caller's transaction,
    which also settles the claim."""
    now = now or timezone.now()
    case = RemediationCase.objects.select_for_update().get(pk=case.pk)
    if not case.unresolved:
        return case.status
    campaign = case.campaign
    caption_check_record(
        campaign=campaign,
        verdict=verdict,
        caption=caption,
        claim_id=case.claim_id,
        stage="remediation",
        platform=case.platform,
        label_state=label_state,
        case=case,
    )
    if verdict.passed:
        case.status, kind = CaseStatus.FIXED, DecisionKind.CASE_FIXED
    elif verdict.verdict == NEEDS_REVIEW:
        case.status, case.reasons = CaseStatus.REVIEW, list(verdict.reasons)
        case.save(update_fields=["status", "reasons"])
        return case.status
    elif case.deadline and case.deadline <= now:
        case.status, kind = CaseStatus.VOIDED, DecisionKind.CASE_VOIDED
    else:
        case.reasons = list(verdict.reasons)
        case.save(update_fields=["reasons"])
        return case.status
    case.resolved_at = now
    case.save(update_fields=["status", "resolved_at"])
    decision_record(
        brand_id=case.brand_id,
        kind=kind,
        verdict=verdict.verdict,
        reasons=verdict.reasons,
        evidence={"caption": caption, "deadline": case.deadline, "label_state": label_state},
        policy_versions=verdict.policies,
        checker_version=verdict.checker_version,
        campaign_id=campaign.pk,
        case=case,
        claim_id=case.claim_id,
    )
    return case.status


def case_brand_decide(*, case: RemediationCase, decided_by, decision: str, note: str) -> RemediationCase:
    """A brand member settles a doubtful disclosure: clear it, or ask the person to fix it (the
    24-hour clock starts then)."""
    if decision not in ("clear", "require_fix"):
        raise ComplianceError(_("Choose “clear” or “ask for a fix”."))
    if not note.strip():
        raise ComplianceError(_("Say why: the note is kept with the decision."))
    with transaction.atomic(durable=True):
        locked = RemediationCase.objects.select_for_update().select_related("campaign").get(pk=case.pk)
        if locked.status != CaseStatus.REVIEW:
            raise ComplianceError(_("This case is not waiting for a review."))
        now = timezone.now()
        if decision == "clear":
            locked.status, locked.resolved_at = CaseStatus.CLEARED, now
            enqueue_on_commit("verification.tasks.compliance_cleared_task", locked.claim_id)
        else:
            locked.status, locked.deadline = CaseStatus.OPEN, now + timedelta(hours=REMEDIATION_HOURS)
            transaction.on_commit(lambda: remediation_schedule(case=locked))
        locked.save(update_fields=["status", "resolved_at", "deadline"])
        decision_record(
            brand_id=locked.brand_id,
            kind=DecisionKind.BRAND_REVIEW,
            verdict="compliant" if decision == "clear" else "non_compliant",
            reasons=locked.reasons,
            evidence={"decision": decision, "note": note[:300], "caption": locked.caption},
            policy_versions=[p.label for p in campaign_policies(campaign=locked.campaign)],
            campaign_id=locked.campaign_id,
            case=locked,
            claim_id=locked.claim_id,
            decided_by=decided_by,
        )
    return locked


def _rule_named(rules, rule_id) -> str:
    return next((str(rule.get_trigger_display()) for rule in rules if rule.pk == rule_id), "")


def _proposal_notice(*, rule: str, rule_id: int, proposal) -> LaunchProblem:
    """Where JoyBack's review of a running campaign's proposed words stands, for the brand."""
    if proposal.state == "approved":
        message = _(
            "JoyBack's team approved the new instructions you proposed for rule “%(rule)s”: save them "
            "again to use them."
        ) % {"rule": rule}
    elif proposal.state == "sent_back":
        message = _(
            "JoyBack's team read the new instructions you proposed for rule “%(rule)s” and asks you to "
            "change them: %(note)s The campaign runs with the ones it has."
        ) % {"rule": rule, "note": proposal.note}
    else:
        message = _(
            "JoyBack's team reviews the new instructions you proposed for rule “%(rule)s”; the campaign "
            "runs with the ones it has until then."
        ) % {"rule": rule}
    return LaunchProblem(code="instructions_proposed", message=message, blocking=False, rule_id=rule_id)


def campaign_lint(*, campaign: Campaign, launching: bool = False) -> list[LaunchProblem]:
    """The launch check the campaigns app runs (settings.CAMPAIGN_LAUNCH_CHECKS). At launch, a
    campaign that passes has that recorded, in the transaction that takes it live. Free text the
    linter cannot read as allowed blocks until JoyBack staff approved those exact words."""
    policies = campaign_policies(campaign=campaign)
    rules = list(campaign.rules.all())
    approved = instructions_approved(campaign=campaign)
    sure_approved = instructions_sure_approved(campaign=campaign)
    sent_back = instructions_sent_back(campaign=campaign)
    appealed = instructions_appealed(campaign=campaign)
    words = {rule.pk: rule.instructions.strip() for rule in rules}
    problems = []
    for finding in rules_lint(rules, policies, approved=approved, sure_approved=sure_approved):
        message, appealable = finding.message, finding.appealable
        rule_words = words.get(finding.rule_id)
        note = sent_back.get(rule_words) if finding.reviewable or finding.appealable else None
        if note is not None:
            message, appealable = (
                _(
                    "JoyBack's team read the instructions of rule “%(rule)s” and asks you to change them: "
                    "%(note)s Save the new words and they are read again."
                )
                % {"rule": _rule_named(rules, finding.rule_id), "note": note},
                False,
            )
        elif finding.appealable and rule_words in appealed:
            message, appealable = (
                _(
                    "%(refusal)s You asked JoyBack's team to read these words: they go live only once two "
                    "of them approve them."
                )
                % {"refusal": finding.message},
                False,
            )
        problems.append(
            LaunchProblem(
                code=finding.code,
                message=message,
                blocking=finding.blocking,
                rule_id=finding.rule_id,
                reviewable=finding.reviewable,
                appealable=appealable and campaign.status == CampaignStatus.DRAFT,
            )
        )
    for rule_id, proposal in instructions_proposals(campaign=campaign).items():
        problems.append(
            _proposal_notice(rule=_rule_named(rules, rule_id), rule_id=rule_id, proposal=proposal)
        )
    if campaign.disclosure_text:
        # disclosure_for falls back to the policy's wording when the brand's own fails the checker.
        wording = disclosure_for(campaign=campaign, language=(campaign.languages or ["en"])[0])["wording"]
        if wording != campaign.disclosure_text:
            message = _(
                "Your disclosure wording would fail the caption check here; people are shown “%(wording)s” "
                "instead."
            ) % {"wording": wording}
            problems.append(LaunchProblem(code="disclosure_wording", message=message, blocking=False))
    if launching and not any(problem.blocking for problem in problems):
        decision_record(
            brand_id=campaign.brand_id,
            kind=DecisionKind.LAUNCH_LINT,
            verdict="compliant",
            reasons=[problem.code for problem in problems],
            evidence={"rules": [{"trigger": r.trigger, "instructions": r.instructions} for r in rules]},
            policy_versions=[p.label for p in policies],
            campaign_id=campaign.pk,
        )
    return problems


def _instructions_decidable(*, rule, staff, words: str | None) -> str:
    """The words of the rule that wait for review, if `staff` may decide on them now."""
    if not getattr(staff, "is_staff", False):
        raise ComplianceError(_("Only JoyBack staff approve a rule's instructions."))
    waiting = instructions_under_review(rule=rule)
    if waiting is None:
        raise ComplianceError(
            _("Nothing of this rule waits for review: the brand changed it, or it was decided.")
        )
    if words is not None and words.strip() != waiting:
        raise ComplianceError(
            _("The brand changed these words since you read them: read them again before you decide.")
        )
    return waiting


def instructions_approve(*, rule, approved_by, note: str, words: str | None = None) -> ComplianceDecision:
    """JoyBack staff read a rule's free text the linter could not (its own, or new words its running
    campaign's brand proposed) and found it lawful: those exact words may go live. Recorded with who
    approved it and why; different words need a new approval. `words`: what the reviewer read,
    refused if something else waits by now. Words in which the reading saw an element of a blocked
    kind go live only once a second staff member approves them too; a member of the brand's own
    team never approves its words."""
    approved_words = _instructions_decidable(rule=rule, staff=approved_by, words=words)
    if not note.strip():
        raise ComplianceError(_("Say why: the note is kept with the decision."))
    campaign = rule.campaign
    if Membership.objects.filter(brand_id=campaign.brand_id, user=approved_by).exists():
        raise ComplianceError(
            _("You are on this brand's team: another JoyBack staff member reviews its instructions.")
        )
    policies = campaign_policies(campaign=campaign)
    first = instructions_first_approvals(campaign=campaign).get(approved_words)
    if first is not None and first[0] == approved_by.pk:
        raise ComplianceError(_("You approved these words already: a second staff member must approve them."))
    if first is not None:
        # Two people, not two accounts: the project's one four-eyes rule (who set up whom).
        refusal = second_person_refusal(first=get_user_model().objects.get(pk=first[0]), second=approved_by)
        if refusal:
            raise ComplianceError(refusal)
    unread = instructions_unread(
        approved_words, policies, brand=campaign.brand.name, others=campaign.brand.sponsor_names
    )
    kinds = sorted({reading.kind for _sentence, reading in unread if reading.kind})
    # Refused for sure by the patterns and read on the brand's request: two people, always.
    sure_refusal = bool(instructions_sure_refusals(rule=rule, words=approved_words, policies=policies))
    if sure_refusal:
        kinds.append("sure_refusal")
    with transaction.atomic(durable=True):
        decision = decision_record(
            brand_id=campaign.brand_id,
            kind=DecisionKind.LAUNCH_LINT,
            verdict="compliant",
            reasons=["instructions_review", *kinds],
            evidence={
                "rule_id": rule.pk,
                "approved_instructions": approved_words,
                "note": note[:300],
                "second_needed": bool(kinds),
                **({"sure_refusal": True} if sure_refusal else {}),
            },
            policy_versions=[p.label for p in policies],
            campaign_id=campaign.pk,
            decided_by=approved_by,
        )
        # Read after the decision joined the chain (its lock orders two approvals at once): the
        # brand hears once, when the words are approved for good.
        final = instructions_sure_approved if sure_refusal else instructions_approved
        if approved_words in final(campaign=campaign):
            enqueue_on_commit("payouts.tasks.brief_reviewed_notify_task", decision.pk)
        return decision


def instructions_appeal(*, rule, asked_by) -> ComplianceDecision:
    """The brand is sure the words the patterns refused are lawful and asks JoyBack's team to read
    them: they wait in the review queue, where two staff members approving those exact words let
    them go live (instructions_approve); changed words need a new request."""
    campaign = rule.campaign
    words = rule.instructions.strip()
    policies = campaign_policies(campaign=campaign)
    if campaign.status != CampaignStatus.DRAFT:
        # A running campaign's words passed its checks; new ones refused for sure are never stored.
        raise ComplianceError(
            _("Only a draft campaign's instructions can be sent to JoyBack's team this way.")
        )
    if not instructions_sure_refusals(rule=rule, policies=policies):
        raise ComplianceError(
            _("Nothing in these instructions was refused for sure: there is nothing to ask.")
        )
    sent_back = instructions_sent_back(campaign=campaign).get(words)
    if sent_back is not None:
        raise ComplianceError(
            _("JoyBack's team read these words and asks you to change them: %(note)s") % {"note": sent_back}
        )
    if instructions_under_review(rule=rule) == words:
        raise ComplianceError(_("JoyBack's team has these words to read already."))
    with transaction.atomic(durable=True):
        return decision_record(
            brand_id=campaign.brand_id,
            kind=DecisionKind.LAUNCH_LINT,
            verdict="needs_review",
            reasons=["instructions_appeal"],
            evidence={"rule_id": rule.pk, "appealed_instructions": words, "asked_by": asked_by.pk},
            policy_versions=[p.label for p in policies],
            campaign_id=campaign.pk,
        )


def instructions_send_back(*, rule, decided_by, note: str, words: str | None = None) -> ComplianceDecision:
    """JoyBack staff read a rule's free text and found something the brand must change: those words
    do not go live, and the brand reads `note` on its campaign's page and in a mail."""
    waiting = _instructions_decidable(rule=rule, staff=decided_by, words=words)
    if not note.strip():
        raise ComplianceError(_("Say what the brand must change: it reads your note."))
    campaign = rule.campaign
    with transaction.atomic(durable=True):
        decision = decision_record(
            brand_id=campaign.brand_id,
            kind=DecisionKind.LAUNCH_LINT,
            verdict="non_compliant",
            reasons=["instructions_review"],
            evidence={"rule_id": rule.pk, "sent_back_instructions": waiting, "note": note[:500]},
            policy_versions=[p.label for p in campaign_policies(campaign=campaign)],
            campaign_id=campaign.pk,
            decided_by=decided_by,
        )
        enqueue_on_commit("payouts.tasks.brief_reviewed_notify_task", decision.pk)
        return decision


def instructions_propose(*, rule_id: int, words: str) -> None:
    """A running campaign's brand saved new rule words only JoyBack's review can clear
    (settings.CAMPAIGN_WORDS_PROPOSED): they wait for staff, recorded once, while the campaign runs
    with its words."""
    rule = ActionRule.objects.select_related("campaign__brand").get(pk=rule_id)
    proposal = instructions_proposals(campaign=rule.campaign).get(rule.pk)
    if proposal is not None and proposal.words == words:
        return
    campaign = rule.campaign
    with transaction.atomic(durable=True):
        decision_record(
            brand_id=campaign.brand_id,
            kind=DecisionKind.LAUNCH_LINT,
            verdict="needs_review",
            reasons=["instructions_review"],
            evidence={"rule_id": rule.pk, "proposed_instructions": words},
            policy_versions=[p.label for p in campaign_policies(campaign=campaign)],
            campaign_id=campaign.pk,
        )


def policy_revise(*, policy: Policy, data: dict, name: str, countries: list, notes: str, user) -> Policy:
    """An edit of a policy is its next version; the one in force until now stays for the record."""
    with transaction.atomic():
        current = Policy.objects.select_for_update().get(pk=policy.pk)
        latest = Policy.objects.filter(code=current.code).order_by("-version").first()
        Policy.objects.filter(code=current.code, is_current=True).update(is_current=False)
        return Policy.objects.create(
            code=current.code,
            version=latest.version + 1,
            name=name,
            countries=countries,
            data={**data, "countries": countries},
            notes=notes,
            is_current=True,
            source="admin",
            created_by=user,
        )


def participant_cases_erase(*, participant_id: int) -> int:
    """After an erased person's retention period: the captions kept on their remediation cases go.
    The decisions' own evidence stays: it is append-only and hash-chained, the brand's proof of
    disclosure, and holds the caption only, never a name or contact."""
    return (
        RemediationCase.objects.filter(participant_id=participant_id).exclude(caption="").update(caption="")
    )
