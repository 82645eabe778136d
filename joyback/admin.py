"""Admin actions shared by the apps' admins."""

from django.contrib import admin, messages
from django.db import transaction
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from joyback.queue import standing_work_retry


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
