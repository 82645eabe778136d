import csv

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from campaigns import roles
from campaigns.access import brand_member_required
from campaigns.selectors import campaign_get_for_brand
from compliance.reasons import explain_texts, label_advice
from compliance.selectors import (
    audit_chain_problems_recent,
    campaign_compliance_summary,
    campaign_decisions,
    campaign_policies,
    case_get_for_brand,
    cases_resolved_for_brand,
    compliance_queue_for_brand,
)
from compliance.services import ComplianceError, case_brand_decide, instructions_appeal
from joyback.words import said


def _context(request, **extra):
    return {"brand": request.brand, "membership": request.membership, "roles": roles, **extra}


@brand_member_required()
@require_GET
def queue(request):
    """Shares whose disclosure failed or is in doubt: waiting for the person's fix, or for you."""
    context = _context(
        request,
        cases=compliance_queue_for_brand(brand=request.brand),
        resolved=cases_resolved_for_brand(brand=request.brand),
    )
    return render(request, "compliance/queue.html", context)


@brand_member_required(roles.REVIEW)
@require_POST
def case_decide(request, case_id):
    case = case_get_for_brand(brand=request.brand, case_id=case_id)
    if case is None:
        raise Http404("No such case")
    try:
        case_brand_decide(
            case=case,
            decided_by=request.user,
            decision=request.POST.get("decision", ""),
            note=request.POST.get("note", "")[:300],
        )
    except ComplianceError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, _("Decision recorded."))
    return redirect("compliance:queue", brand_slug=request.brand.slug)


def _campaign(request, campaign_id):
    campaign = campaign_get_for_brand(brand=request.brand, campaign_id=campaign_id)
    if campaign is None:
        raise Http404("No such campaign")
    return campaign


@brand_member_required(roles.EDIT_CAMPAIGNS)
@require_POST
def rule_appeal(request, campaign_id, rule_id):
    """The brand is sure the words refused for sure are lawful: JoyBack's team reads them."""
    campaign = _campaign(request, campaign_id)
    rule = campaign.rules.filter(pk=rule_id).first()
    if rule is None:
        raise Http404("No such rule")
    try:
        instructions_appeal(rule=rule, asked_by=request.user)
    except ComplianceError as error:
        messages.error(request, str(error))
    else:
        messages.success(
            request,
            _(
                "JoyBack's team reads these instructions. Two of them must approve the exact words before "
                "the campaign can go live; you get a mail when they have decided."
            ),
        )
    return redirect(reverse("campaign_detail", args=[request.brand.slug, campaign.pk]) + "#compliance")


@brand_member_required()
@require_GET
def report(request, campaign_id):
    """The campaign's compliance record, printable."""
    campaign = _campaign(request, campaign_id)
    context = _context(
        request,
        campaign=campaign,
        decisions=campaign_decisions(campaign=campaign),
        summary=campaign_compliance_summary(campaign=campaign),
        chain_problems=audit_chain_problems_recent(brand_id=request.brand.pk),
        label_rules=label_advice(
            policies=campaign_policies(campaign=campaign), language=get_language() or "en"
        ),
    )
    return render(request, "compliance/report.html", context)


CSV_COLUMNS = [
    "seq",
    "time",
    "kind",
    "verdict",
    "reasons",
    "explanation",
    "claim",
    "case",
    "caption",
    "label_state",
    "platform",
    "policy_versions",
    "checker_version",
    "decided_by",
    "row_hash",
    # The codes above are the decision record's own (its hashes cover them); people read these.
    "verdict_in_words",
    "label_in_words",
]


@brand_member_required()
@require_GET
def report_csv(request, campaign_id):
    campaign = _campaign(request, campaign_id)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="compliance-{campaign.slug}.csv"'
    writer = csv.writer(response)
    writer.writerow(CSV_COLUMNS)
    for decision in campaign_decisions(campaign=campaign):
        evidence = decision.evidence or {}
        writer.writerow(
            [
                decision.seq,
                decision.created_at.isoformat(),
                decision.kind,
                decision.verdict,
                " ".join(decision.reasons),
                " ".join(explain_texts(decision.reasons)),
                decision.claim_id or "",
                decision.case_id or "",
                _cell(evidence.get("caption", "")),
                evidence.get("label_state", ""),
                evidence.get("platform", ""),
                " ".join(decision.policy_versions),
                decision.checker_version,
                decision.decided_by.email if decision.decided_by else "",
                decision.row_hash,
                said("verdict", decision.verdict),
                said("label", evidence.get("label_state", "")),
            ]
        )
    return response


def _cell(text: str) -> str:
    """A caption is people's text: never let a spreadsheet read it as a formula."""
    text = str(text)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
