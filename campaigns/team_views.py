"""The team page: who is on the brand, in which role; owners invite, change roles and remove."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from campaigns import roles
from campaigns.access import brand_member_required
from campaigns.forms import InvitationForm, MemberRoleForm
from campaigns.models import Invitation, Membership, Role
from campaigns.roles import WHAT_YOU_CAN_DO
from campaigns.selectors import team_invitations_open, team_members
from campaigns.services.refusals import CampaignError
from campaigns.services.team import (
    INVITATION_DAYS,
    invitation_accept,
    invitation_create,
    invitation_refusal,
    invitation_revoke,
    invitation_token_hash,
    member_remove,
    member_role_change,
)
from joyback.mfa import mfa_enabled


def _team_page(request, *, invite_form=None, status=200):
    context = {
        "brand": request.brand,
        "membership": request.membership,
        "roles": roles,
        "members": team_members(brand=request.live_brand),
        "invitations": team_invitations_open(brand=request.live_brand),
        "invite_form": invite_form or InvitationForm(),
        "role_choices": Role.choices,
        "role_help": [(Role(value).label, WHAT_YOU_CAN_DO[Role(value)]) for value in Role.values],
        "cooling_days": settings.FOUR_EYES_COOLING_DAYS,
        "invitation_days": INVITATION_DAYS,
        "is_owner": request.membership.role in roles.MANAGE_MEMBERS,
        # The team is the live brand's, whichever data the page was opened on.
        "team_slug": request.live_brand.slug,
    }
    return render(request, "campaigns/team.html", context, status=status)


def _back(request):
    return redirect("brand_team", brand_slug=request.live_brand.slug)


@brand_member_required()
def team(request):
    return _team_page(request)


@brand_member_required(roles.MANAGE_MEMBERS, money=True)
@require_POST
def team_invite(request):
    form = InvitationForm(request.POST)
    if form.is_valid():
        try:
            invitation_create(
                brand=request.live_brand,
                invited_by=request.user,
                language=get_language(),
                **form.cleaned_data,
            )
        except CampaignError as error:
            form.add_error("email", str(error))
        else:
            messages.success(
                request,
                _("Invitation sent to %(email)s. The link in it works for %(days)s days.")
                % {"email": form.cleaned_data["email"], "days": INVITATION_DAYS},
            )
            return _back(request)
    return _team_page(request, invite_form=form, status=400)


@brand_member_required(roles.MANAGE_MEMBERS, money=True)
@require_POST
def team_invitation_revoke(request, invitation_id: int):
    # Members and invitations are the live brand's: under its test data's address there are none.
    invitation = Invitation.objects.filter(brand=request.brand, pk=invitation_id).first()
    if invitation is None:
        raise Http404("No such invitation")
    invitation_revoke(invitation=invitation, actor=request.user)
    messages.success(request, _("Invitation to %(email)s withdrawn.") % {"email": invitation.email})
    return _back(request)


def _member(request, membership_id: int) -> Membership:
    membership = (
        Membership.objects.filter(brand=request.brand, pk=membership_id).select_related("user").first()
    )
    if membership is None:
        raise Http404("No such member")
    return membership


@brand_member_required(roles.MANAGE_MEMBERS, money=True)
@require_POST
def team_member_role(request, membership_id: int):
    membership = _member(request, membership_id)
    form = MemberRoleForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Choose one of the roles."))
        return _back(request)
    try:
        changed = member_role_change(
            membership=membership, role=form.cleaned_data["role"], actor=request.user
        )
    except CampaignError as error:
        messages.error(request, str(error))
    else:
        messages.success(
            request,
            _("%(name)s is now %(role)s.")
            % {
                "name": changed.user.get_full_name() or changed.user.email,
                "role": changed.get_role_display(),
            },
        )
    return _back(request)


@brand_member_required(roles.MANAGE_MEMBERS, money=True)
@require_POST
def team_member_remove(request, membership_id: int):
    membership = _member(request, membership_id)
    try:
        member_remove(membership=membership, actor=request.user)
    except CampaignError as error:
        messages.error(request, str(error))
    else:
        messages.success(
            request,
            _("%(name)s is no longer on the team.")
            % {"name": membership.user.get_full_name() or membership.user.email},
        )
    return _back(request)


def invitation_page(request, token: str):
    """The link in the invitation mail: who invites, to which brand and role; accept when signed in
    with the invited address."""
    invitation = (
        Invitation.objects.select_related("brand", "invited_by")
        .filter(token_hash=invitation_token_hash(token))
        .first()
    )
    if not request.user.is_authenticated:
        if request.method == "POST":
            return redirect_to_login(request.get_full_path())
        refusal = invitation_refusal(invitation=invitation)
        return render(
            request,
            "campaigns/invitation.html",
            {"invitation": invitation, "refusal": refusal, "next": request.get_full_path()},
            status=404 if invitation is None else 200,
        )
    refusal, status = None, 404 if invitation is None else 200
    if request.method == "POST":
        try:
            membership = invitation_accept(token=token, user=request.user)
        except CampaignError as error:  # refused, nothing changed: said once, on the page
            refusal, status = str(error), 400
        else:
            messages.success(
                request,
                _("Welcome to %(brand)s. You joined as %(role)s.")
                % {"brand": membership.brand.name, "role": membership.get_role_display()},
            )
            return redirect("brand_dashboard", brand_slug=membership.brand.slug)
    refusal = refusal or invitation_refusal(invitation=invitation, user=request.user)
    needs_mfa = bool(
        refusal and invitation and invitation.role in roles.FUND and not mfa_enabled(request.user)
    )
    return render(
        request,
        "campaigns/invitation.html",
        {
            "invitation": invitation,
            "refusal": refusal,
            "needs_mfa": needs_mfa,
            "next": request.get_full_path(),
        },
        status=status,
    )
