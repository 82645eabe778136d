"""The brand's payout pages: a campaign's readiness, what needs a finance member, each payout's
history, manual payouts and the actions on a payout."""

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_GET, require_POST

from campaigns import roles
from campaigns.access import brand_member_required
from campaigns.limits import limit_value
from campaigns.models import LimitKind
from campaigns.selectors import campaign_get_for_brand
from joyback.mfa import reauthentication_required
from joyback.money import money_format
from payouts.forms import ManualPayoutForm
from payouts.manual.services import payout_approve, payout_cancel, payout_manual_enter, payout_retry
from payouts.notifications import reason_text
from payouts.selectors import (
    campaign_payout_readiness,
    payout_get_for_brand,
    payout_history,
    payouts_needing_attention,
    payouts_recent,
    vop_latest,
)
from payouts.submission.states import PayoutRefused
from payouts.vop import vop_choose


@brand_member_required()
def campaign_payouts(request, campaign_id):
    campaign = campaign_get_for_brand(brand=request.brand, campaign_id=campaign_id)
    if campaign is None:
        raise Http404("No such campaign")
    return render(
        request,
        "payouts/_campaign_payouts.html",
        {"campaign": campaign, **campaign_payout_readiness(campaign=campaign)},
    )


# The brand's payouts: what needs a finance member, each payout's history, and manual payouts.


def _payouts_page(request, form=None, status=200):
    currency = request.brand.default_currency
    context = {
        "brand": request.brand,
        "membership": request.membership,
        "roles": roles,
        "attention": payouts_needing_attention(brand=request.brand),
        "recent": payouts_recent(brand=request.brand),
        "form": form or ManualPayoutForm(currency=currency),
        "threshold": money_format(
            limit_value(
                kind=LimitKind.PAYOUT_APPROVAL_THRESHOLD, currency=currency, brand_id=request.brand.pk
            ),
            currency,
            get_language() or "en",
        ),
    }
    return render(request, "payouts/payout_list.html", context, status=status)


@brand_member_required()
@require_GET
def payout_list(request):
    return _payouts_page(request)


@sensitive_post_parameters("name", "email", "phone", "iban", "sort_code", "account_number", "routing_number")
@brand_member_required(roles.FUND)
@require_POST
def payout_manual(request):
    currency = request.brand.default_currency
    form = ManualPayoutForm(request.POST, currency=currency)
    if not form.is_valid():
        return _payouts_page(request, form=form, status=400)
    try:
        payout = payout_manual_enter(
            brand=request.brand,
            name=form.cleaned_data["name"],
            email=form.cleaned_data["email"],
            phone=form.cleaned_data["phone"],
            bank_account=form.bank_account,
            currency=currency,
            amount=form.amount_minor(),
            created_by=request.user,
        )
    except PayoutRefused as refused:
        form.add_error(None, refused.message)
        return _payouts_page(request, form=form, status=400)
    return redirect("payouts:payout_detail", request.brand.slug, payout.pk)


@brand_member_required()
@require_GET
def payout_detail(request, payout_id):
    payout = payout_get_for_brand(brand=request.brand, payout_id=payout_id)
    if payout is None:
        raise Http404("No such payout")
    context = {
        "brand": request.brand,
        "membership": request.membership,
        "roles": roles,
        "payout": payout,
        "history": payout_history(payout=payout),
        "vop": vop_latest(payee=payout.payee),
        "reason": reason_text(payout.reason_code) if payout.reason_code not in ("", "VOP") else "",
    }
    return render(request, "payouts/payout_detail.html", context)


PAYOUT_ACTIONS = {
    "approve": lambda payout, user: payout_approve(payout=payout, actor=user),
    "cancel": lambda payout, user: payout_cancel(payout=payout, actor=user),
    "retry": lambda payout, user: payout_retry(payout=payout, actor=user),
}


@brand_member_required(roles.FUND)
@require_POST
@reauthentication_required  # approving, cancelling or paying again: the password or second factor again
def payout_action(request, payout_id):
    payout = payout_get_for_brand(brand=request.brand, payout_id=payout_id)
    if payout is None:
        raise Http404("No such payout")
    action = PAYOUT_ACTIONS.get(request.POST.get("action", ""))
    try:
        if request.POST.get("vop_choice"):
            check = vop_latest(payee=payout.payee)
            if check is None:
                raise PayoutRefused(_("There is no name check to answer."))
            vop_choose(check=check, choice=request.POST["vop_choice"])
        elif action is None:
            raise PayoutRefused(_("Unknown action."))
        else:
            result = action(payout, request.user)
            if result.pk != payout.pk:
                messages.success(request, _("A new payout was made."))
                return redirect("payouts:payout_detail", request.brand.slug, result.pk)
    except PayoutRefused as refused:
        messages.error(request, refused.message)
    return redirect("payouts:payout_detail", request.brand.slug, payout.pk)
