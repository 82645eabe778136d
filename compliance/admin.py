import json

from django import forms
from django.contrib import admin

from compliance.models import ComplianceDecision, Policy, RemediationCase
from compliance.services import policy_revise


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
