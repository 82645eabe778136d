from allauth.account.admin import EmailAddressAdmin as BaseEmailAddressAdmin
from allauth.account.models import EmailAddress
from allauth.mfa.admin import AuthenticatorAdmin as BaseAuthenticatorAdmin
from allauth.mfa.models import Authenticator
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.contrib.auth.admin import GroupAdmin as BaseGroupAdmin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin
from django.contrib.auth.models import Group, Permission
from django.core.exceptions import PermissionDenied
from django_q.admin import ScheduleAdmin as BaseScheduleAdmin
from django_q.models import Schedule

from joyback.admin import ReadOnly
from joyback.users.four_eyes import (
    MONEY_PERMISSIONS,
    SecondPersonRefused,
    access_change_record,
    staff_grant_confirm,
    staff_grant_request,
)
from joyback.users.models import AccessChange, AccessChangeKind, StaffGrant, User


def _access_of(user) -> dict:
    if user is None or user.pk is None:
        return {"staff": False, "superuser": False, "permissions": set(), "groups": {}}
    fresh = User.objects.get(pk=user.pk)
    return {
        "staff": fresh.is_staff,
        "superuser": fresh.is_superuser,
        "permissions": {
            f"{app}.{codename}"
            for app, codename in fresh.user_permissions.values_list("content_type__app_label", "codename")
        },
        "groups": {group.name: group for group in fresh.groups.all()},
    }


def _group_moves_money(group) -> bool:
    return any(
        f"{app}.{codename}" in MONEY_PERMISSIONS
        for app, codename in group.permissions.values_list("content_type__app_label", "codename")
    )


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    """Every access change is recorded; a money permission, a group carrying one, or superuser
    status is only asked for here and given once a second staff member confirms it."""

    ordering = ["email"]
    list_display = ["email", "first_name", "last_name", "is_staff", "is_active", "date_joined"]
    search_fields = ["email", "first_name", "last_name"]
    fieldsets = (
        (None, {"fields": ("email", "password")}),
        ("Personal info", {"fields": ("first_name", "last_name")}),
        (
            "Permissions",
            {"fields": ("is_active", "is_staff", "is_superuser", "groups", "user_permissions")},
        ),
        ("Important dates", {"fields": ("last_login", "date_joined")}),
    )
    add_fieldsets = ((None, {"classes": ("wide",), "fields": ("email", "password1", "password2")}),)

    # Nobody takes over someone else's account here: whoever sets another's password or sign-in
    # address (a reset link then goes there) signs in as them, and would be the second person of
    # their own request under the other's name. People change their own password and address (the
    # sign-in page's reset link, their account page); staff change only their own here.
    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None and obj.pk != request.user.pk:
            fields.append("email")
        return fields

    def user_change_password(self, request, id, form_url=""):
        if str(request.user.pk) != unquote(id):
            raise PermissionDenied("Staff set no one else's password: the person resets it by email.")
        return super().user_change_password(request, id, form_url)

    def save_model(self, request, obj, form, change):
        before = _access_of(obj if change else None)
        request._access_before = before
        wants_superuser = obj.is_superuser and not before["superuser"]
        if wants_superuser:
            obj.is_superuser = False
        super().save_model(request, obj, form, change)
        if not change:
            access_change_record(actor=request.user, subject=obj, kind=AccessChangeKind.ACCOUNT)
        if wants_superuser:
            staff_grant_request(
                actor=request.user, subject=obj, kind=AccessChangeKind.SUPERUSER, value="superuser"
            )
            messages.warning(request, "Superuser status waits for a second staff member to confirm it.")
        if before["superuser"] and not obj.is_superuser:
            access_change_record(
                actor=request.user, subject=obj, kind=AccessChangeKind.SUPERUSER, detail="removed"
            )
        if before["staff"] != obj.is_staff:
            detail = "given" if obj.is_staff else "removed"
            access_change_record(actor=request.user, subject=obj, kind=AccessChangeKind.STAFF, detail=detail)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        user = form.instance
        before = getattr(request, "_access_before", _access_of(None))
        after = _access_of(user)
        for name in sorted(after["permissions"] - before["permissions"]):
            if name in MONEY_PERMISSIONS:
                app_label, codename = name.split(".", 1)
                user.user_permissions.remove(
                    Permission.objects.get(content_type__app_label=app_label, codename=codename)
                )
                staff_grant_request(
                    actor=request.user, subject=user, kind=AccessChangeKind.PERMISSION, value=name
                )
                messages.warning(request, f"{name} waits for a second staff member to confirm it.")
            else:
                access_change_record(
                    actor=request.user, subject=user, kind=AccessChangeKind.PERMISSION, detail=f"given {name}"
                )
        for name in sorted(before["permissions"] - after["permissions"]):
            access_change_record(
                actor=request.user, subject=user, kind=AccessChangeKind.PERMISSION, detail=f"removed {name}"
            )
        for name in sorted(set(after["groups"]) - set(before["groups"])):
            group = after["groups"][name]
            if _group_moves_money(group):
                user.groups.remove(group)
                staff_grant_request(actor=request.user, subject=user, kind=AccessChangeKind.GROUP, value=name)
                messages.warning(request, f"The group {name} waits for a second staff member to confirm it.")
            else:
                access_change_record(
                    actor=request.user, subject=user, kind=AccessChangeKind.GROUP, detail=f"joined {name}"
                )
        for name in sorted(set(before["groups"]) - set(after["groups"])):
            access_change_record(
                actor=request.user, subject=user, kind=AccessChangeKind.GROUP, detail=f"left {name}"
            )


if admin.site.is_registered(Group):
    admin.site.unregister(Group)


@admin.register(Group)
class GroupAdmin(BaseGroupAdmin):
    """A money permission added to a group everybody in it would hold at once, past the second
    staff member each grant needs: it is refused while the group has members (people join a group
    carrying one through a confirmed grant)."""

    def save_related(self, request, form, formsets, change):
        before = set(form.instance.permissions.values_list("pk", flat=True)) if change else set()
        super().save_related(request, form, formsets, change)
        group = form.instance
        added = group.permissions.exclude(pk__in=before).select_related("content_type")
        money = [p for p in added if f"{p.content_type.app_label}.{p.codename}" in MONEY_PERMISSIONS]
        if money and group.user_set.exists():
            group.permissions.remove(*money)
            messages.error(
                request,
                "Money permissions are not added to a group that has members: "
                + ", ".join(p.codename for p in money)
                + ". Give them person by person (a second staff member confirms each).",
            )
        for permission in added:
            if permission not in money or not group.user_set.exists():
                for member in group.user_set.all():
                    access_change_record(
                        actor=request.user,
                        subject=member,
                        kind=AccessChangeKind.GROUP,
                        detail=f"{group.name} now gives {permission.codename}",
                    )


@admin.register(StaffGrant)
class StaffGrantAdmin(admin.ModelAdmin):
    """Money permissions one staff member asked for; a second confirms them here."""

    list_display = [
        "subject",
        "kind",
        "value",
        "requested_by",
        "requested_at",
        "confirmed_by",
        "confirmed_at",
    ]
    list_filter = ["kind", ("confirmed_at", admin.EmptyFieldListFilter)]
    actions = ["confirm"]

    def has_add_permission(self, request):
        return False  # asked for by changing the user

    def has_delete_permission(self, request, obj=None):
        return False

    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in StaffGrant._meta.fields]

    @admin.action(description="Confirm (a second staff member)")
    def confirm(self, request, queryset):
        for grant in queryset:
            try:
                staff_grant_confirm(grant_id=grant.pk, actor=request.user)
            except SecondPersonRefused as refused:
                messages.error(request, f"{grant}: {refused.message}")
            else:
                messages.success(request, f"{grant}: confirmed.")


@admin.register(AccessChange)
class AccessChangeAdmin(admin.ModelAdmin):
    """The append-only record of who gave whom which access."""

    list_display = ["at", "actor", "subject", "kind", "detail", "brand_id"]
    list_filter = ["kind"]
    search_fields = ["actor__email", "subject__email", "detail"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


# Other apps' admin pages through which one staff member would act as another: read-only here.

for _model in (Authenticator, EmailAddress, Schedule):
    if admin.site.is_registered(_model):
        admin.site.unregister(_model)


@admin.register(Authenticator)
class AuthenticatorAdmin(ReadOnly, BaseAuthenticatorAdmin):
    """People's second factors, shown only: one removed by staff lets whoever knows the password
    sign in as the person. Each person adds and removes their own (Security)."""


@admin.register(EmailAddress)
class EmailAddressAdmin(ReadOnly, BaseEmailAddressAdmin):
    """People's sign-in addresses, shown only: an address staff added or changed receives the
    person's password reset. Each person manages their own (their account's email page)."""


@admin.register(Schedule)
class ScheduleAdmin(ReadOnly, BaseScheduleAdmin):
    """The recurring tasks, shown only: they are declared in code (joyback.schedules, synced by
    manage.py schedules_sync). A schedule's function and arguments typed here would run any code in
    the worker, as nobody, past every check a service makes."""
