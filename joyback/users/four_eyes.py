"""Four eyes are two people, whatever the route: the second approver of a payout, a statement or a
reconciliation step must be someone else than the first, and not someone the first set up (or who
set the first up) lately.

The rule (FOUR_EYES_COOLING_DAYS, 7 by default): the second person is refused when, within the
cooling period, either of the two gave the other a brand membership or a new role, granted or
confirmed the other a permission, a group or superuser status; and at any time when either made the
other's account or gave the other staff status (LASTING): who made an account chose the address it
signs in with and its first password, and who made someone staff may have made staff an account
they opened themselves, so that pair stays two accounts of possibly one person however long it
waits. The record is AccessChange, written in the same transaction as every such change. An
account's or a second factor's age alone is not a refusal (a new colleague is approved by someone
who did not set them up); money permissions for staff need a second staff member's confirmation
(StaffGrant), so no one person makes an approver; and nobody takes over another's account in the
admin (joyback.users.admin: no password, sign-in address or second factor of someone else is set
there).
"""

from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import Group, Permission
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import gettext as _

from joyback.users.models import AccessChange, AccessChangeKind, StaffGrant

# The permissions that move or book money, or approve what does: granting one needs two staff.
MONEY_PERMISSIONS = frozenset(
    {
        "payouts.statement_upload",
        "payouts.statement_approve",
        "payouts.exception_resolve",
        "payouts.add_payout",
        "payouts.change_payout",
        "payouts.delete_payout",
        # Marking a tax report filed, or confirming another's filing, is one of two people's word
        # to a tax authority: a second confirmer given by one staff member would be theirs.
        "payouts.file_taxreport",
        "ledger.add_transaction",
        "ledger.change_transaction",
        "ledger.add_entry",
        "ledger.change_entry",
        "ledger.change_account",
        "campaigns.change_brand",
        "campaigns.change_membership",
        "campaigns.add_membership",
        "campaigns.add_limit",
        "campaigns.change_limit",
        "campaigns.add_feeplan",
        "campaigns.change_feeplan",
        "users.change_user",
        "users.add_user",
        "users.change_staffgrant",
    }
)


# Grants that give nobody access (a limit staff change through the same two steps): recorded under
# their own kind, and no link between the two people for the cooling period.
NOT_ACCESS = frozenset({AccessChangeKind.LIMIT, AccessChangeKind.FEE_PLAN, AccessChangeKind.CUSTODY_MOVE})


# Links that never lapse: an account made, staff status given (see the module).
LASTING = frozenset({AccessChangeKind.ACCOUNT, AccessChangeKind.STAFF})


class SecondPersonRefused(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def access_change_record(*, actor, subject, kind: str, detail: str = "", brand_id: int | None = None) -> None:
    """One row of who gave whom what, in the caller's transaction."""
    AccessChange.objects.create(
        actor=actor if actor is not None and actor.pk else None,
        subject=subject,
        kind=kind,
        detail=detail[:200],
        brand_id=brand_id,
    )


def _name(user) -> str:
    return user.get_full_name() or user.get_username()


def second_person_refusal(*, first, second) -> str | None:
    """Why `second` may not approve what `first` proposed, in words; None when they may."""
    if first is None:
        return _("Nobody is recorded as having made this, so nobody can be its second person.")
    if second is None or first.pk == second.pk:
        return _("A second person must approve what you made yourself.")
    since = timezone.now() - timedelta(days=settings.FOUR_EYES_COOLING_DAYS)
    link = (
        AccessChange.objects.filter(Q(at__gte=since) | Q(kind__in=LASTING))
        .filter(Q(actor=first, subject=second) | Q(actor=second, subject=first))
        .exclude(kind__in=NOT_ACCESS)
        .select_related("actor", "subject")
        .order_by("-at")
        .first()
    )
    if link is None:
        return None
    if link.kind in LASTING and link.at < since:
        return _(
            "%(second)s cannot be the second person here: %(actor)s set up %(subject)s's account "
            "(%(what)s) on %(date)s. Whoever made an account or made it staff is never its second "
            "person, nor it theirs: the approval must come from someone else."
        ) % {
            "second": _name(second),
            "actor": _name(link.actor),
            "subject": _name(link.subject),
            "what": link.get_kind_display(),
            "date": date_format(timezone.localtime(link.at), "SHORT_DATETIME_FORMAT"),
        }
    return _(
        "%(second)s cannot be the second person here: %(actor)s gave %(subject)s their access "
        "(%(what)s) on %(date)s. For %(days)s days after one person sets up another, the second "
        "approval must come from someone else."
    ) % {
        "second": _name(second),
        "actor": _name(link.actor),
        "subject": _name(link.subject),
        "what": link.get_kind_display(),
        "date": date_format(timezone.localtime(link.at), "SHORT_DATETIME_FORMAT"),
        "days": settings.FOUR_EYES_COOLING_DAYS,
    }


def second_person_check(*, first, second) -> None:
    refusal = second_person_refusal(first=first, second=second)
    if refusal:
        raise SecondPersonRefused(refusal)


# Grants the apps to the right give effect to themselves (a brand's owner or finance role: campaigns
# knows memberships, this module does not), registered at start by kind.
_grant_appliers: dict = {}


def staff_grant_applier_register(kind: str, apply) -> None:
    """apply(subject=..., value=..., actor=...) gives what a confirmed grant of `kind` asked for."""
    _grant_appliers[kind] = apply


def staff_grant_request(*, actor, subject, kind: str, value: str) -> StaffGrant:
    """A money permission asked for: recorded, and nothing given until a second person confirms."""
    with transaction.atomic():
        grant, _created = StaffGrant.objects.get_or_create(
            subject=subject,
            kind=kind,
            value=value,
            confirmed_at__isnull=True,
            defaults={"requested_by": actor},
        )
        access_change_record(
            actor=actor,
            subject=subject,
            kind=kind if kind in NOT_ACCESS else AccessChangeKind.GRANT_REQUESTED,
            detail=f"{kind} {value}",
        )
    return grant


def staff_grant_confirm(*, grant_id: int, actor) -> StaffGrant:
    """The second staff member gives what the first asked for: never the one who asked, never the
    person it is for, and not someone either of them set up within the cooling period."""
    with transaction.atomic(durable=True):
        grant = (
            StaffGrant.objects.select_for_update().select_related("subject", "requested_by").get(pk=grant_id)
        )
        if grant.confirmed_at is not None:
            raise SecondPersonRefused(_("This grant has already been confirmed."))
        if not (actor.is_active and actor.is_staff and actor.has_perm("users.change_staffgrant")):
            raise SecondPersonRefused(_("Only staff who may confirm grants can confirm this one."))
        if actor.pk == grant.subject_id:
            raise SecondPersonRefused(_("Nobody confirms a permission for themselves."))
        second_person_check(first=grant.requested_by, second=actor)
        subject = grant.subject
        if grant.kind in _grant_appliers:
            _grant_appliers[grant.kind](subject=subject, value=grant.value, actor=actor)
        elif grant.kind == AccessChangeKind.SUPERUSER:
            type(subject).objects.filter(pk=subject.pk).update(is_superuser=True, is_staff=True)
        elif grant.kind == AccessChangeKind.GROUP:
            subject.groups.add(Group.objects.get(name=grant.value))
        else:
            app_label, codename = grant.value.split(".", 1)
            subject.user_permissions.add(
                Permission.objects.get(content_type__app_label=app_label, codename=codename)
            )
        grant.confirmed_by = actor
        grant.confirmed_at = timezone.now()
        grant.save(update_fields=["confirmed_by", "confirmed_at"])
        access_change_record(
            actor=actor,
            subject=subject,
            kind=grant.kind if grant.kind in NOT_ACCESS else AccessChangeKind.GRANT_CONFIRMED,
            detail=f"{grant.kind} {grant.value}, asked by {grant.requested_by.get_username()}",
        )
    return grant
