"""The campaign's consent wording: what people agree to when they opt in to hear from the brand
again, per channel and language; each save a new version. A fragment of the campaign page for
htmx, a page of its own without JavaScript."""

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from campaigns import roles
from campaigns.access import brand_member_required
from campaigns.consent import standard_wording, wordings_latest
from campaigns.models import ConsentChannel
from campaigns.selectors import campaign_get_for_brand
from campaigns.services.consent import LANGUAGES, consent_wording_save
from campaigns.services.refusals import CampaignError

LANGUAGE_NAMES = {"en": "English", "de": "Deutsch", "es": "Español", "zh-hans": "简体中文"}


class ConsentWordingForm(forms.Form):
    channel = forms.ChoiceField(label=gettext_lazy("Channel"), choices=ConsentChannel.choices)
    language = forms.ChoiceField(label=gettext_lazy("Language"), choices=list(LANGUAGE_NAMES.items()))
    text = forms.CharField(
        label=gettext_lazy("Wording"), max_length=600, widget=forms.Textarea(attrs={"rows": 3})
    )


@brand_member_required()
@require_http_methods(["GET", "POST"])
def campaign_consent(request, campaign_id):
    campaign = campaign_get_for_brand(brand=request.brand, campaign_id=campaign_id)
    if campaign is None:
        raise Http404("No such campaign")
    form = ConsentWordingForm(request.POST or None)
    if request.method == "POST":
        if request.membership.role not in roles.EDIT_CAMPAIGNS:
            raise PermissionDenied("Your role in this brand does not allow this.")
        if form.is_valid():
            try:
                consent_wording_save(campaign=campaign, user=request.user, **form.cleaned_data)
            except CampaignError as error:
                form.add_error("text", str(error))
            else:
                messages.success(
                    request, _("Consent wording saved. People who opt in from now on agree to it.")
                )
                return redirect("campaign_detail", brand_slug=request.brand.slug, campaign_id=campaign.pk)
    latest = {(w.channel, w.language): w for w in wordings_latest(campaign=campaign)}
    rows = [
        (
            ConsentChannel(channel).label,
            LANGUAGE_NAMES[language],
            latest.get((channel, language)),
            standard_wording(brand_name=campaign.brand.name, channel=channel, language=language),
        )
        for channel in ConsentChannel.values
        for language in LANGUAGES
    ]
    context = {
        "brand": request.brand,
        "membership": request.membership,
        "roles": roles,
        "campaign": campaign,
        "form": form,
        "rows": rows,
        "page": not request.htmx,
    }
    template = "campaigns/_consent_card.html" if request.htmx else "campaigns/consent_page.html"
    return render(request, template, context, status=400 if form.errors else 200)
