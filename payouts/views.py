from django.conf import settings
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from campaigns.access import brand_member_required
from campaigns.selectors import campaign_get_for_brand, campaign_public_cached, campaign_schedule_state
from joyback.queue import enqueue_on_commit
from joyback.ratelimit import client_address, rate_limit_hit
from payouts.forms import CONSENT_VERSION, PayeeForm
from payouts.rails import RAIL_FOR_CURRENCY, AccountInvalid, iban_check
from payouts.selectors import campaign_payout_readiness, participant_owed, payee_current
from payouts.services import payee_account_save
from verification.selectors import participant_get_by_token
from verification.sessions import session_participant


def _public_campaign(slug):
    campaign = campaign_public_cached(slug=slug)
    if campaign is None:
        raise Http404("No such campaign")
    return campaign


def _payee_context(request, campaign, form):
    participant = session_participant(request, campaign)
    return {
        "campaign": campaign,
        "form": form,
        "rail": RAIL_FOR_CURRENCY.get(campaign.currency),
        "participant": participant,
        "has_rewards": participant is not None and participant.has_claims,
    }


@sensitive_post_parameters("name", "email", "phone", "iban", "sort_code", "account_number", "routing_number")
@require_http_methods(["GET", "POST"])
def payee(request, slug):
    """The payee-details step of the claim flow (a fragment of the landing page)."""
    campaign = _public_campaign(slug)
    template = "payouts/_payee_form.html" if request.htmx else "payouts/payee_page.html"
    if request.method == "GET":
        return render(
            request, template, _payee_context(request, campaign, PayeeForm(currency=campaign.currency))
        )
    limit = settings.PAYEE_SUBMISSIONS_PER_MINUTE
    if rate_limit_hit(scope="payee", key=client_address(request), limit=limit, window_seconds=60):
        response = render(
            request,
            template,
            {
                **_payee_context(request, campaign, PayeeForm(currency=campaign.currency)),
                "refusal": _("Too many attempts from your connection. Please wait a minute and try again."),
            },
            status=429,
        )
        response["Retry-After"] = "60"
        return response
    form = PayeeForm(request.POST, currency=campaign.currency)
    context = _payee_context(request, campaign, form)
    participant = context["participant"]
    # Fully claimed is no reason to refuse: people who already earned a reward must still be paid.
    schedule = campaign_schedule_state(campaign=campaign)
    if participant is None or not context["has_rewards"]:
        context["refusal"] = _(
            "Complete at least one step above first: your details are for paying your reward."
        )
    elif not schedule.open:
        context["refusal"] = schedule.message
    if "refusal" in context or not form.is_valid():
        return render(request, template, context, status=400)
    payee_account = payee_account_save(
        participant=participant,
        name=form.cleaned_data["name"],
        email=form.cleaned_data["email"],
        phone=form.cleaned_data["phone"],
        bank_account=form.bank_account,
        currency=campaign.currency,
        consent_version=CONSENT_VERSION,
    )
    status_path = reverse("payouts:status_page", args=[campaign.slug, participant.token])
    status_url = request.build_absolute_uri(status_path)
    enqueue_on_commit(
        "payouts.tasks.status_link_send_task", payee_account.pk, status_url, campaign.name, get_language()
    )
    if request.htmx:
        response = HttpResponse(status=204)
        response["HX-Redirect"] = status_path
        return response
    return redirect(status_path)


@sensitive_post_parameters("iban")
@require_POST
def iban_feedback(request):
    """Live IBAN validation while the person types: bank name and BIC, or what is wrong."""
    raw = request.POST.get("iban", "")
    if len("".join(raw.split())) < 5:
        return render(request, "payouts/_iban_feedback.html", {})
    try:
        account = iban_check(raw)
    except AccountInvalid as invalid:
        return render(request, "payouts/_iban_feedback.html", {"error": invalid.message})
    return render(request, "payouts/_iban_feedback.html", {"account": account})


def _status_participant(token):
    participant = participant_get_by_token(token=token)
    if participant is None:
        raise Http404("No such claim")
    return participant


@require_GET
def status_page(request, slug, token):
    """The person's private status page: their actions (verification) and their payout (here)."""
    campaign = _public_campaign(slug)
    participant = _status_participant(token)
    if participant.brand_id != campaign.brand_id:
        raise Http404("No such claim")
    return render(
        request,
        "payouts/status_page.html",
        {"campaign": campaign, "token": token, **_payout_context(participant)},
    )


def _payout_context(participant):
    return {
        "payee": payee_current(participant=participant),
        "owed": participant_owed(participant=participant),
    }


@require_GET
def status_payout(request, token):
    participant = _status_participant(token)
    return render(request, "payouts/_status_payout.html", _payout_context(participant))


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
