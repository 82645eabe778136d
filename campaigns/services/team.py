"""A brand's team, run by its owners: invitations by email, roles, removals.

Money roles (owner, finance) are where one person could make their own second approver: an owner
invites a second address of their own as finance and approves their own payouts. So a money role
an owner gives goes only to a different person (not an address of the owner's, not the owner's
account) who proved the address (the invitation link reached it, or allauth confirmed it), who has
a second factor, and who may be a second approver only FOUR_EYES_COOLING_DAYS later
(Membership.approves_from). Every change is an AccessChange row in its own transaction, which the
four-eyes rule (joyback.users.four_eyes) also reads: whoever gave the role cannot be approved by
its holder within the period either.
"""

import hashlib
from datetime import UTC, timedelta

from allauth.account.models import EmailAddress
from django.conf import settings
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.crypto import salted_hmac
from django.utils.translation import gettext as _

from campaigns import roles
from campaigns.models import Brand, Invitation, Membership, Role
from campaigns.services.brands import membership_change_record, membership_remove_record
from campaigns.services.refusals import CampaignError
from joyback.emails import email_canonical
from joyback.mfa import mfa_enabled
from joyback.queue import enqueue_on_commit

INVITATION_DAYS = 7
INVITATION_KEY_SALT = "campaigns.invitation"


def invitation_token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _user_addresses(user) -> set[str]:
    """Every address the account is known by, in the form duplicates are matched on."""
    addresses = {user.email} | set(EmailAddress.objects.filter(user=user).values_list("email", flat=True))
    return {email_canonical(address) for address in addresses if address}


def _approves_from(role: str):
    if role in roles.FUND:
        return timezone.now() + timedelta(days=settings.FOUR_EYES_COOLING_DAYS)
    return None


def _role_name(role: str) -> str:
    return str(Role(role).label)


def invitation_create(*, brand: Brand, email: str, role: str, invited_by, language: str = "") -> Invitation:
    """The owner invites someone: the link goes by email to that address only (its token is not
    stored, nor shown to the owner), in `language` (the inviter's), else the brand's."""
    role = Role(role)
    email = email.strip()
    if email_canonical(email) in _user_addresses(invited_by):
        raise CampaignError(
            _(
                "You cannot invite an address of your own: the people on a team, the second approver "
                "of a payout above all, must be different people."
            )
        )
    if Membership.objects.filter(brand=brand, user__email__iexact=email).exists():
        raise CampaignError(
            _("%(email)s is already on the team; change their role below.") % {"email": email}
        )
    now = timezone.now()
    invitation = Invitation(
        brand=brand,
        email=email,
        role=role,
        invited_by=invited_by,
        created_at=now,
        expires_at=now + timedelta(days=INVITATION_DAYS),
    )
    invitation.token_hash = invitation_token_hash(invitation_token(invitation=invitation))
    try:
        with transaction.atomic(durable=True):
            invitation.save(force_insert=True)
            # The mail is a message to a person: the payouts app's notifications send it (and try
            # again when the mail server fails), reached by its task's name.
            enqueue_on_commit("payouts.tasks.invitation_notify_task", invitation.pk, language)
    except IntegrityError:
        raise CampaignError(
            _("%(email)s already has an open invitation; withdraw it first to send a new one.")
            % {"email": email}
        ) from None
    return invitation


def invitation_token(*, invitation: Invitation, secret: str | None = None) -> str:
    """The link's token, which only this server can make again from the row: a keyed hash of the
    invitation's brand, address and moment, so that neither the token nor anything it could be made
    from without the secret key is stored, and a message tried again later carries the same link."""
    moment = invitation.created_at.astimezone(UTC).isoformat()
    value = f"{invitation.brand_id}:{invitation.email.lower()}:{moment}"
    return salted_hmac(INVITATION_KEY_SALT, value, secret=secret, algorithm="sha256").hexdigest()


def invitation_link(*, invitation: Invitation) -> str:
    """The address of the invitation's page with its token, made with the key (current or an earlier
    one still accepted) its stored hash was made with; none fits: refused, nothing to send."""
    for secret in [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]:
        token = invitation_token(invitation=invitation, secret=secret)
        if invitation_token_hash(token) == invitation.token_hash:
            return settings.SITE_URL.rstrip("/") + reverse("invitation_accept", kwargs={"token": token})
    raise CampaignError(_("This invitation link is not valid. Ask the brand's owner to send a new one."))


def invitation_message(*, invitation: Invitation) -> tuple[str, str]:
    """The invitation mail's subject and body, in the active language."""
    inviter = invitation.invited_by.get_full_name() or invitation.invited_by.email
    subject = _("%(inviter)s invites you to %(brand)s on JoyBack") % {
        "inviter": inviter,
        "brand": invitation.brand.name,
    }
    body = _(
        "%(inviter)s invites you to join %(brand)s on JoyBack as %(role)s.\n\n"
        "Accept the invitation here (the link works for %(days)s days, for this address only):\n"
        "%(link)s\n\n"
        "If you did not expect this, ignore this mail: nothing happens without you."
    ) % {
        "inviter": inviter,
        "brand": invitation.brand.name,
        "role": _role_name(invitation.role),
        "days": INVITATION_DAYS,
        "link": invitation_link(invitation=invitation),
    }
    return subject, body


def invitation_revoke(*, invitation: Invitation, actor) -> Invitation:
    with transaction.atomic(durable=True):
        locked = Invitation.objects.select_for_update().get(pk=invitation.pk)
        if locked.accepted_at is None and locked.revoked_at is None:
            locked.revoked_at, locked.revoked_by = timezone.now(), actor
            locked.save(update_fields=["revoked_at", "revoked_by"])
    return locked


def invitation_refusal(*, invitation: Invitation | None, user=None) -> str | None:
    """Why this person cannot accept this invitation now, in words; None when they can."""
    if invitation is None:
        return _("This invitation link is not valid. Ask the brand's owner to send a new one.")
    if invitation.revoked_at is not None:
        return _("This invitation was withdrawn. Ask the brand's owner to send a new one.")
    if invitation.accepted_at is not None:
        return _("This invitation has already been accepted.")
    if invitation.expires_at <= timezone.now():
        return _("This invitation has expired. Ask the brand's owner to send a new one.")
    if user is None:  # not signed in yet: only the invitation's own state is known
        return None
    if user.pk == invitation.invited_by_id:
        return _("You sent this invitation: it is for someone else.")
    if user.email.lower() != invitation.email.lower():
        return _(
            "This invitation is for %(email)s, and you are signed in as %(you)s. Sign out and sign in "
            "(or sign up) with %(email)s."
        ) % {"email": invitation.email, "you": user.email}
    if invitation.role in roles.FUND and not mfa_enabled(user):
        return _(
            "The %(role)s role moves money, so it needs a second factor: set up your authenticator app "
            "under Security first, then open this invitation link again."
        ) % {"role": _role_name(invitation.role)}
    return None


def invitation_accept(*, token: str, user) -> Membership:
    """The invited person joins: the membership is given by the owner who invited them (recorded
    so), the address counts as confirmed (the link reached it), and a money role approves only
    after the cooling period."""
    with transaction.atomic(durable=True):
        invitation = (
            Invitation.objects.select_for_update()
            .select_related("brand", "invited_by")
            .filter(token_hash=invitation_token_hash(token))
            .first()
        )
        refusal = invitation_refusal(invitation=invitation, user=user)
        if refusal:
            raise CampaignError(refusal)
        brand = Brand.objects.select_for_update().get(pk=invitation.brand_id)
        if Membership.objects.filter(brand=brand, user=user).exists():
            raise CampaignError(_("You are already on this team."))
        membership = Membership.objects.create(
            brand=brand, user=user, role=invitation.role, approves_from=_approves_from(invitation.role)
        )
        membership_change_record(membership=membership, actor=invitation.invited_by, before="none")
        invitation.accepted_at, invitation.accepted_by = timezone.now(), user
        invitation.save(update_fields=["accepted_at", "accepted_by"])
        address = EmailAddress.objects.filter(user=user, email__iexact=invitation.email).first()
        if address is None:
            EmailAddress.objects.create(
                user=user, email=invitation.email, verified=True, primary=not user.emailaddress_set.exists()
            )
        elif not address.verified:
            address.verified = True
            address.save(update_fields=["verified"])
    return membership


def _owners_left(brand: Brand, *, without: Membership) -> bool:
    return brand.memberships.filter(role=Role.OWNER).exclude(pk=without.pk).exists()


def member_role_change(*, membership: Membership, role: str, actor) -> Membership:
    """An owner gives a member another role. A money role goes only to someone with a second factor
    and approves only after the cooling period; the last owner stays an owner."""
    role = Role(role)
    with transaction.atomic(durable=True):
        Brand.objects.select_for_update().get(pk=membership.brand_id)
        locked = Membership.objects.select_for_update().select_related("user", "brand").get(pk=membership.pk)
        if locked.role == role:
            return locked
        if locked.role == Role.OWNER and not _owners_left(locked.brand, without=locked):
            raise CampaignError(_("A brand needs an owner: make someone else an owner first."))
        if role in roles.FUND and locked.user_id == actor.pk:
            raise CampaignError(_("Nobody gives themselves a role that moves money."))
        if role in roles.FUND and not mfa_enabled(locked.user):
            raise CampaignError(
                _(
                    "%(name)s has no second factor yet, and the %(role)s role moves money. Ask them to set "
                    "up their authenticator app under Security, then give the role again."
                )
                % {"name": locked.user.get_full_name() or locked.user.email, "role": _role_name(role)}
            )
        before = locked.role
        if role in roles.FUND and before not in roles.FUND:
            locked.approves_from = _approves_from(role)
        elif role not in roles.FUND:
            locked.approves_from = None
        locked.role = role
        locked.save(update_fields=["role", "approves_from"])
        membership_change_record(membership=locked, actor=actor, before=before)
    return locked


def member_remove(*, membership: Membership, actor) -> None:
    """An owner takes someone off the team (or a member leaves); the last owner cannot go."""
    with transaction.atomic(durable=True):
        Brand.objects.select_for_update().get(pk=membership.brand_id)
        locked = Membership.objects.select_for_update().select_related("user", "brand").get(pk=membership.pk)
        if locked.role == Role.OWNER and not _owners_left(locked.brand, without=locked):
            raise CampaignError(_("A brand needs an owner: make someone else an owner first."))
        membership_remove_record(membership=locked, actor=actor)
        locked.delete()
