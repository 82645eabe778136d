"""Admin actions shared by the apps' admins."""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.db import transaction
from django.utils.translation import get_language, ngettext
from django.utils.translation import gettext_lazy as _

from joyback.money import money_format
from joyback.queue import standing_work_retry


def admin_money(amount, currency) -> str:
    """An amount as people read it ("€10,000.00"), never raw minor units (1000000)."""
    if amount is None or not currency:
        return "-"
    return money_format(amount, currency, get_language() or "en")


class ReadOnly:
    """Mixed into an admin that only shows: nothing is added, changed or deleted there (the
    services write, with their checks and audit rows)."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ProductMadeAdmin(admin.ModelAdmin):
    """Rows only the product creates, through its services (which check, sign and book what a bare
    form would skip): the admin shows them, and has no "Add"."""

    def has_add_permission(self, request, obj=None):
        return False


class ReasonActionForm(ActionForm):
    """The admin's action bar with a reason: an action that touches money says why, for the record."""

    reason = forms.CharField(
        required=False,
        max_length=300,
        label=_("Reason"),
        widget=forms.TextInput(attrs={"size": 40, "placeholder": _("Why (recorded with your name)")}),
    )


def action_reason(modeladmin, request) -> str:
    """The reason typed next to the action, or "" after telling the admin one is needed."""
    reason = request.POST.get("reason", "").strip()[:300]
    if not reason:
        modeladmin.message_user(
            request,
            _("Give a reason: actions that touch money are recorded with who and why."),
            messages.ERROR,
        )
    return reason


def action_record(modeladmin, request, obj, *, action: str, reason: str) -> None:
    """The admin's history row (LogEntry): who did what to which row, and why."""
    modeladmin.log_change(request, obj, f"{action}. Reason: {reason}")


@admin.action(description=_("Try again: rows the worker gave up on"), permissions=["retry"])
def standing_work_retry_action(modeladmin, request, queryset):
    with transaction.atomic(durable=True):
        retried = standing_work_retry(rows=queryset)
        for row in queryset.model.objects.filter(pk__in=retried):  # in the admin's history, with who
            modeladmin.log_change(
                request, row, "Given its attempts back: the standing worker tries it again."
            )
    skipped = queryset.count() - len(retried)
    modeladmin.message_user(
        request,
        ngettext(
            "%(count)d row will be tried again by the standing worker.",
            "%(count)d rows will be tried again by the standing worker.",
            len(retried),
        )
        % {"count": len(retried)}
        + (" " + _("The others were done or still being tried.") if skipped else ""),
        messages.SUCCESS if retried else messages.WARNING,
    )


class StandingWorkAdmin(admin.ModelAdmin):
    """Read-only rows of standing work; whoever may change them may have given-up rows tried again."""

    actions = [standing_work_retry_action]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_retry_permission(self, request):
        opts = self.opts
        return request.user.has_perm(f"{opts.app_label}.change_{opts.model_name}")
