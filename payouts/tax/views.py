"""The person's tax details page, reached from their private status page (the link in the message
that their payout waits for them)."""

from django.http import Http404, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import get_language
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_http_methods

from payouts.links import status_page_path
from payouts.selectors import participant_latest_campaign
from payouts.tax.forms import TaxDetailsForm
from payouts.tax.selectors import tax_details_needed, tax_profile_current
from payouts.tax.services import tax_profile_save
from verification.selectors import participant_get_by_token


@sensitive_post_parameters("tin", "birth_date", "legal_name", "address_line1", "address_line2")
@require_http_methods(["GET", "POST"])
def tax_details(request, token):
    participant = participant_get_by_token(token=token)
    campaign = participant and participant_latest_campaign(participant=participant)
    if campaign is None:
        raise Http404("No such claim")
    if request.method == "POST":
        form = TaxDetailsForm(request.POST)
        if form.is_valid():
            tax_profile_save(participant=participant, details=form.details(language=get_language() or "en"))
            return HttpResponseRedirect(status_page_path(slug=campaign.slug, token=token) + "?tax=saved")
    else:
        # The country chosen so far (the select re-renders the form for it), else the bank's.
        country = request.GET.get("residence_country", "") or _payee_country(participant)
        typed = {name: request.GET[name] for name in TaxDetailsForm.base_fields if name in request.GET}
        form = TaxDetailsForm(initial={**typed, "residence_country": country.upper()}, country=country)
    context = {
        "campaign": campaign,
        "token": token,
        "form": form,
        "needed": tax_details_needed(participant_id=participant.pk),
        "on_file": tax_profile_current(participant_id=participant.pk) is not None,
        "form_url": reverse("payouts:tax_details", args=[token]),
    }
    template = (
        "payouts/_tax_form.html" if request.htmx and request.method == "GET" else "payouts/tax_details.html"
    )
    return render(request, template, context, status=400 if request.method == "POST" else 200)


def _payee_country(participant) -> str:
    payee = participant.payee_accounts.filter(replaced_at__isnull=True).first()
    return payee.country if payee else ""
