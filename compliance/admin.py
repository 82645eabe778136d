import json

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect
from django.urls import path, reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from compliance.linter import KIND_NAMES
from compliance.models import BriefReview, ComplianceDecision, Policy, RemediationCase
from compliance.selectors import (
    instructions_awaiting_review,
    instructions_first_approvals,
    instructions_sure_refusals,
    instructions_under_review,
    instructions_unsure,
    read_once,
)
from compliance.services import (
    ComplianceError,
    instructions_approve,
    instructions_send_back,
    policy_revise,
)


class PolicyForm(forms.ModelForm):
    class Meta:
        model = Policy
        fields = ["name", "countries", "notes", "data"]

    def clean_data(self):
        data = self.cleaned_data["data"]
        if not isinstance(data, dict) or "languages" not in data:
            raise forms.ValidationError("A policy needs its language tables (terms and wording).")
        json.dumps(data)
        return data


@admin.register(Policy)
class PolicyAdmin(admin.ModelAdmin):
    """Saving a policy makes its next version; the one it replaces stays, for the record."""

    form = PolicyForm
    list_display = ["code", "version", "name", "is_current", "created_at", "source"]
    list_filter = ["is_current", "code"]
    readonly_fields = ["code", "version", "is_current", "source", "created_at", "created_by"]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        revised = policy_revise(
            policy=Policy.objects.get(pk=obj.pk),
            data=form.cleaned_data["data"],
            name=form.cleaned_data["name"],
            countries=form.cleaned_data["countries"],
            notes=form.cleaned_data["notes"],
            user=request.user,
        )
        obj.pk = revised.pk  # the admin's "saved" message and redirect follow the new version


@admin.register(RemediationCase)
class RemediationCaseAdmin(admin.ModelAdmin):
    list_display = ["pk", "brand", "campaign", "claim_id", "status", "deadline"]
    list_filter = ["status"]
    readonly_fields = [field.name for field in RemediationCase._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(ComplianceDecision)
class ComplianceDecisionAdmin(admin.ModelAdmin):
    list_display = ["brand", "seq", "kind", "verdict", "claim_id", "created_at"]
    list_filter = ["kind", "verdict"]
    readonly_fields = [field.name for field in ComplianceDecision._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


def _rendered(response):
    """The response rendered now: its template asks the selectors while it renders."""
    return response.render() if hasattr(response, "render") else response


@admin.register(BriefReview)
class BriefReviewAdmin(admin.ModelAdmin):
    """The rules whose free text JoyBack could not read as allowed on its own: staff read the words
    and approve them (a second staff member too where the reading saw an element of a blocked kind)
    or send them back with what the brand must change."""

    list_display = ["pk", "brand_name", "campaign", "trigger", "words", "what_waits"]
    fields = ["campaign", "trigger", "instructions"]
    readonly_fields = fields
    change_form_template = "admin/compliance/briefreview/change_form.html"

    def get_queryset(self, request):
        waiting = [rule.pk for rule in instructions_awaiting_review()]
        return super().get_queryset(request).filter(pk__in=waiting).select_related("campaign__brand")

    @admin.display(description=gettext_lazy("Brand"))
    def brand_name(self, rule):
        return rule.campaign.brand.name

    @admin.display(description=gettext_lazy("Instructions"))
    def words(self, rule):
        waiting = instructions_under_review(rule=rule) or ""
        return waiting if len(waiting) <= 90 else waiting[:89] + "…"

    @admin.display(description=gettext_lazy("What waits"))
    def what_waits(self, rule):
        waiting = instructions_under_review(rule=rule) or ""
        kinds = {unsure.kind for unsure in instructions_unsure(rule=rule, words=waiting) if unsure.kind}
        if waiting in instructions_first_approvals(campaign=rule.campaign):
            return _("a second staff member's approval")
        if instructions_sure_refusals(rule=rule, words=waiting):
            return _("refused for sure; the brand asks for a reading (two approvals)")
        if kinds:
            return _("may be %(kinds)s") % {
                "kinds": ", ".join(str(KIND_NAMES.get(k, k)) for k in sorted(kinds))
            }
        return _("words JoyBack cannot read on its own")

    def _may_review(self, request) -> bool:
        return request.user.has_perm("compliance.review_brief")

    def has_view_permission(self, request, obj=None):
        return self._may_review(request)

    def has_module_permission(self, request):
        return self._may_review(request)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_urls(self):
        return [
            path(
                "<int:rule_id>/decide/",
                self.admin_site.admin_view(require_POST(self.decide_view)),
                name="compliance_briefreview_decide",
            ),
            *super().get_urls(),
        ]

    def changelist_view(self, request, extra_context=None):
        with read_once():  # each campaign's decisions and the policies read once for the whole list
            return _rendered(super().changelist_view(request, extra_context))

    def change_view(self, request, object_id, form_url="", extra_context=None):
        with read_once():
            return _rendered(self._change_view(request, object_id, form_url, extra_context))

    def _change_view(self, request, object_id, form_url="", extra_context=None):
        rule = self.get_object(request, object_id)
        waiting = instructions_under_review(rule=rule) if rule is not None else None
        if waiting is not None:
            first = instructions_first_approvals(campaign=rule.campaign).get(waiting)
            extra_context = {
                **(extra_context or {}),
                "unsure": [
                    {
                        "sentence": u.sentence,
                        "kind": KIND_NAMES.get(u.kind, u.kind),
                        # The words that made the kind, when the sentence holds more than them.
                        "said": "" if u.said == u.sentence else u.said,
                    }
                    for u in instructions_unsure(rule=rule, words=waiting)
                ],
                "first_approval": None
                if first is None
                else {"mine": first[0] == request.user.pk, "note": first[1]},
                "words": waiting,
                "refused": instructions_sure_refusals(rule=rule, words=waiting),
                # New words a running campaign's brand proposed, not the ones it runs with.
                "proposed": waiting != rule.instructions.strip(),
            }
        return super().change_view(request, object_id, form_url, extra_context)

    def decide_view(self, request, rule_id: int):
        if not self._may_review(request):
            raise PermissionDenied
        rule = get_object_or_404(BriefReview.objects.select_related("campaign__brand"), pk=rule_id)
        note, words = request.POST.get("note", "")[:500], request.POST.get("words", "")
        try:
            if request.POST.get("decision") == "approve":
                decision = instructions_approve(rule=rule, approved_by=request.user, note=note, words=words)
                done = (
                    _("Approved: a second staff member must approve these words too.")
                    if decision.evidence["second_needed"]
                    and rule.instructions.strip() in instructions_first_approvals(campaign=rule.campaign)
                    else _("Approved: the brand can take the campaign live with these words.")
                )
            elif request.POST.get("decision") == "send_back":
                instructions_send_back(rule=rule, decided_by=request.user, note=note, words=words)
                done = _("Sent back: the brand reads your note where it launches the campaign.")
            else:
                raise ComplianceError(_("Choose to approve the words or to send them back."))
        except ComplianceError as refused:
            messages.error(request, str(refused))
            return redirect(reverse("admin:compliance_briefreview_change", args=[rule_id]))
        messages.success(request, done)
        return redirect(reverse("admin:compliance_briefreview_changelist"))
