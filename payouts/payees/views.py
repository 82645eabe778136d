"""The person's pages: the claim flow's payee details, their private status page with its payout
and name check, and their data requests."""

import json

import phonenumbers
from django.conf import settings
from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from campaigns.models import Trigger
from campaigns.selectors import campaign_public_cached, campaign_schedule_state
from joyback.ratelimit import client_address, rate_limit_hit
from payouts.audience.email_optin import email_optin_offer
from payouts.forms import CONSENT_VERSION, PayeeForm
from payouts.links import status_page_path
from payouts.models.payouts import OPEN_STATUSES, PayoutStatus
from payouts.models.privacy import PrivacyKind
from payouts.notifications import reason_text
from payouts.payees.changes import (
    ChangeRefused,
    contact_masked,
    payee_change_code_check,
    payee_change_code_send,
    payee_contact,
    payee_details_on_file,
)
from payouts.payees.services import payee_submission_accept
from payouts.privacy import (
    PrivacyRefused,
    privacy_request_confirm,
    privacy_request_get,
    privacy_request_start,
)
from payouts.rails import AccountInvalid, iban_check, rail_for
from payouts.selectors import (
    participant_latest_campaign,
    participant_on_hold,
    participant_owed,
    participant_paid_total,
    participant_payouts,
    payee_current,
    payee_submission_waiting,
    vop_latest,
)
from payouts.submission.states import PayoutRefused
from payouts.tax.selectors import tax_details_needed
from payouts.vop import vop_choose
from verification.selectors import consent_in_force, participant_claims, participant_get_by_token
from verification.sessions import browser_participant, browser_participant_id


def _public_campaign(slug):
    campaign = campaign_public_cached(slug=slug)
    if campaign is None:
        raise Http404("No such campaign")
    return campaign


def _payee_context(request, campaign, form):
    participant = browser_participant(request, campaign)
    on_file = payee_details_on_file(participant=participant)
    return {
        **_returning(campaign, participant, on_file=on_file),
        # Details on file are changed only with a code (payee_change): this browser may be one a
        # claim link was opened in, which is no proof of the person.
        "change_url": reverse("payouts:payee_change", args=[participant.token]) if on_file else "",
        "campaign": campaign,
        "form": form,
        "rail": rail_for(campaign.currency),
        "participant": participant,
        "has_rewards": participant is not None and participant.has_claims,
        "known_phone": _known_whatsapp(participant),
        "known_email": _known_email(participant),
        # The orders this page pays cashback for (the order mail's link leads here): which order,
        # how much, and when it is confirmed.
        "purchases": _purchases(campaign, participant),
        "headline": campaign.text("headline", get_language()) or campaign.name,
        # A cashback-only page has nothing to do on it: the purchase is the step, confirmed by the brand.
        "purchase_only": {rule.trigger for rule in campaign.rules.all()} == {Trigger.PURCHASE},
    }


def _known_whatsapp(participant) -> str:
    """The WhatsApp number the person proved by messaging us, written as people write it, to
    prefill the form (they may still change it)."""
    if participant is None:
        return ""
    identity = participant.identities.filter(provider="whatsapp").first()
    if identity is None or not identity.subject.isdigit():
        return ""
    try:
        number = phonenumbers.parse("+" + identity.subject, None)
    except phonenumbers.NumberParseException:
        return ""
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.INTERNATIONAL)


def _known_email(participant) -> str:
    """The email the shop gave with the order, to prefill the form (they may still change it)."""
    if participant is None:
        return ""
    for identity in participant.identities.filter(provider="brand"):
        if "@" in identity.display_name:
            return identity.display_name
    return ""


def _purchases(campaign, participant) -> list:
    if participant is None:
        return []
    return [
        claim
        for claim in participant_claims(participant=participant, campaign=campaign).select_related("purchase")
        if claim.purchase_id
    ]


def _returning(campaign, participant, *, on_file: bool) -> dict:
    """A person who comes back (this browser is theirs for the brand) sees where their money
    stands and the way to their status page, instead of an empty form to fill again."""
    if participant is None or not (on_file or participant.has_claims):
        return {"status_url": ""}
    payouts = participant_payouts(participant=participant, limit=20)
    paid = [payout for payout in payouts if payout.status == PayoutStatus.SETTLED]
    return {
        "status_url": status_page_path(slug=campaign.slug, token=participant.token),
        "paid_latest": paid[0] if paid else None,
        "paid_total": sum(payout.amount for payout in paid if payout.currency == paid[0].currency)
        if paid
        else 0,
        "on_the_way": next((payout for payout in payouts if payout.status in OPEN_STATUSES), None),
        "owed": [account for account in participant_owed(participant=participant) if account.balance > 0],
    }


@sensitive_post_parameters("name", "email", "phone", "iban", "sort_code", "account_number", "routing_number")
@require_http_methods(["GET", "POST"])
def payee(request, slug):
    """The payee-details step of the claim flow (a fragment of the landing page)."""
    campaign = _public_campaign(slug)
    htmx = bool(request.htmx)
    template = "payouts/_payee_form.html" if htmx else "payouts/payee_page.html"
    if request.method == "GET":
        context = _payee_context(request, campaign, None)
        initial = {"phone": context["known_phone"], "email": context["known_email"]}
        context["form"] = PayeeForm(currency=campaign.currency, initial=initial)
        return render(request, template, context)
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
    participant_id = browser_participant_id(request, campaign)
    form = PayeeForm(request.POST, currency=campaign.currency)
    # Fully claimed is no reason to refuse: people who already earned a reward must still be paid.
    schedule = campaign_schedule_state(campaign=campaign)
    token = None
    if form.is_valid() and schedule.open:
        # Details on file are refused by the statement that keeps new ones (first=True), so the
        # person who gives them for the first time, nearly everyone, costs one statement.
        token = payee_submission_accept(
            participant_id=participant_id,
            brand_id=campaign.brand_id,
            details=_submission_details(request, campaign, form),
            first=True,
        )
    if token is None:
        # Details on file come first, whatever else is wrong: they change only with a code.
        if payee_details_on_file(participant_id=participant_id):
            context = _payee_context(request, campaign, None)
            context["refusal"] = _(
                "Your bank details are on file. To change them, we first send a code to your email or "
                "WhatsApp."
            )
            return render(request, template, context, status=409)  # swapped by htmx, as 400 is
        return _payee_refused(request, template, campaign, form, schedule)
    status_path = status_page_path(slug=campaign.slug, token=token)
    if htmx:
        response = HttpResponse(status=204)
        response["HX-Redirect"] = status_path
        return response
    return HttpResponseRedirect(status_path)  # not redirect(), which first tries the path as a URL name


def _submission_details(request, campaign, form) -> dict:
    data = form.cleaned_data
    return {
        "name": data["name"],
        "name_latin": data.get("name_latin", ""),
        "address": form.address,
        "email": data["email"],
        "phone": data["phone"],
        "bank_account": form.bank_account.to_dict(),
        "currency": campaign.currency,
        "consent_version": CONSENT_VERSION,
        "language": get_language() or "en",
        "site": request.build_absolute_uri("/"),
        "campaign_slug": campaign.slug,
        "campaign_name": campaign.name,
    }


def _payee_refused(request, template, campaign, form, schedule):
    """The form again, with what is wrong: the details, the campaign's state, or no reward yet."""
    context = _payee_context(request, campaign, form)
    if (context["participant"] is None or not context["has_rewards"]) and context["purchase_only"]:
        context["refusal"] = _(
            "There is no confirmed purchase of yours yet: use the link we send you once it is confirmed."
        )
    elif context["participant"] is None or not context["has_rewards"]:
        context["refusal"] = _(
            "Complete at least one step above first: your details are for paying your reward."
        )
    elif not schedule.open:
        context["refusal"] = schedule.message
    return render(request, template, context, status=400)


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
    # The link shows the status; it does not make this browser the person (links get forwarded
    # and shared): changing their details takes a code sent to them (payee_change).
    # The brand's email news, offered while the person does not get it (never a condition of the
    # reward: the box starts unticked and the page says so).
    offer = None
    if not consent_in_force(participant_id=participant.pk, channel="email"):
        offer = email_optin_offer(campaign=campaign, language=(get_language() or "en").split("-")[0])
    return render(
        request,
        "payouts/status_page.html",
        {"campaign": campaign, "token": token, "email_offer": offer, **_payout_context(participant)},
    )


def _payout_context(participant):
    payee = payee_current(participant=participant)
    return {
        "payee": payee,
        "saving": payee_submission_waiting(participant=participant),
        "vop": vop_latest(payee=payee),
        "owed": [account for account in participant_owed(participant=participant) if account.balance > 0],
        "on_hold": participant_on_hold(participant=participant),
        "payouts": participant_payouts(participant=participant),
        "paid_total": participant_paid_total(participant=participant),
        "fix_reason": reason_text(payee.unusable_code) if payee and payee.unusable_code else "",
        "token": participant.token,
        "fix_url": reverse("payouts:payee_change", args=[participant.token]) if payee else "",
        # A reported reward (a service) is owed and the person's tax details are not given: their
        # payout waits, and this says why and how to unblock it.
        "tax_needed": tax_details_needed(participant_id=participant.pk),
        "tax_url": reverse("payouts:tax_details", args=[participant.token]),
    }


# Changing details on file: the form, a code sent to the contact on file, and the change once the
# code is right (payouts.payees.changes).


@sensitive_post_parameters(
    "name", "email", "phone", "iban", "sort_code", "account_number", "routing_number", "code"
)
@require_http_methods(["GET", "POST"])
def payee_change(request, token):
    participant = _status_participant(token)
    campaign = participant_latest_campaign(participant=participant)
    if campaign is None or not payee_details_on_file(participant=participant):
        raise Http404("No details to change")
    htmx = bool(request.htmx)
    template = "payouts/_payee_form.html" if htmx else "payouts/payee_change.html"
    context = {
        "campaign": campaign,
        "rail": rail_for(campaign.currency),
        "change": True,
        "form_url": reverse("payouts:payee_change", args=[token]),
        "contact": contact_masked(payee_contact(participant=participant)),
        "token": token,
    }
    if request.method == "GET":
        return render(request, template, {**context, "form": PayeeForm(currency=campaign.currency)})
    limit = settings.PAYEE_SUBMISSIONS_PER_MINUTE
    if rate_limit_hit(scope="payee_change", key=client_address(request), limit=limit, window_seconds=60):
        context["refusal"] = _("Too many attempts from your connection. Please wait a minute and try again.")
        response = render(request, template, {**context, "form": _form_kept(request, campaign)}, status=429)
        response["Retry-After"] = "60"
        return response
    if request.POST.get("action") == "send":
        try:
            context["code_sent"] = payee_change_code_send(participant=participant)
        except ChangeRefused as refused:
            context["code_error"] = refused.message
        status = 400 if "code_error" in context else 200
        return render(request, template, {**context, "form": _form_kept(request, campaign)}, status=status)
    form = PayeeForm(request.POST, currency=campaign.currency)
    if not form.is_valid():
        return render(request, template, {**context, "form": form}, status=400)
    try:
        proof = payee_change_code_check(participant=participant, code=request.POST.get("code", ""))
    except ChangeRefused as refused:
        context["code_error"] = refused.message
        context["code_asked"] = refused.code != "no_contact"
        return render(request, template, {**context, "form": _form_kept(request, campaign)}, status=400)
    details = {**_submission_details(request, campaign, form), "proof": proof}
    accepted = payee_submission_accept(
        participant_id=participant.pk, brand_id=participant.brand_id, details=details
    )
    if accepted is None:
        raise Http404("No such claim")
    status_path = status_page_path(slug=campaign.slug, token=token)
    if htmx:
        response = HttpResponse(status=204)
        response["HX-Redirect"] = status_path
        return response
    return HttpResponseRedirect(status_path)


def _form_kept(request, campaign):
    """What the person typed, shown again without marking it (a code was asked for or refused)."""
    kept = {name: request.POST.get(name, "") for name in PayeeForm.base_fields if name != "consent"}
    kept["consent"] = request.POST.get("consent") == "on"
    return PayeeForm(initial=kept, currency=campaign.currency)


@require_GET
def status_payout(request, token):
    participant = _status_participant(token)
    return render(request, "payouts/_status_payout.html", _payout_context(participant))


@require_POST
def status_vop_choose(request, token):
    """The person's answer when their bank knows the account under another name."""
    participant = _status_participant(token)
    check = vop_latest(payee=payee_current(participant=participant))
    context = _payout_context(participant)
    if check is None:
        raise Http404("Nothing to choose")
    try:
        vop_choose(check=check, choice=request.POST.get("choice", ""))
    except PayoutRefused as refused:
        return render(
            request, "payouts/_status_payout.html", {**context, "refusal": refused.message}, status=400
        )
    return render(request, "payouts/_status_payout.html", _payout_context(participant))


# The person's data: asked for on the status page, confirmed by the link sent to them.


@require_POST
def status_privacy(request, token):
    participant = _status_participant(token)
    kind = request.POST.get("kind", "")
    if kind not in PrivacyKind.values:
        raise Http404("No such request")

    def confirm_url_for(confirm_token):
        return request.build_absolute_uri(reverse("payouts:privacy_confirm", args=[confirm_token]))

    try:
        started = privacy_request_start(participant=participant, kind=kind, confirm_url_for=confirm_url_for)
    except PrivacyRefused as refused:
        return render(
            request, "payouts/privacy.html", {"state": "refused", "refusal": refused.message}, status=400
        )
    return render(request, "payouts/privacy.html", {"state": "sent", "privacy": started})


@require_http_methods(["GET", "POST"])
def privacy_confirm(request, token):
    """GET shows what will happen (a mail scanner opening the link changes nothing); POST does it."""
    privacy = privacy_request_get(token=token)
    if privacy is None:
        raise Http404("No such request")
    if request.method == "GET":
        return render(request, "payouts/privacy.html", {"state": "confirm", "privacy": privacy})
    try:
        data = privacy_request_confirm(request=privacy)
    except PrivacyRefused as refused:
        return render(
            request, "payouts/privacy.html", {"state": "refused", "refusal": refused.message}, status=400
        )
    if data is None:
        return render(request, "payouts/privacy.html", {"state": "erased"})
    response = HttpResponse(
        json.dumps(data, indent=2, ensure_ascii=False, default=str), content_type="application/json"
    )
    response["Content-Disposition"] = 'attachment; filename="joyback-my-data.json"'
    return response
