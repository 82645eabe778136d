"""A person ends a consent: on their status page, or by an email's unsubscribe link (one click, RFC
8058: a POST that needs no sign-in and no page). Either ends sending at once and keeps the reward."""

from django.contrib import messages
from django.core import signing
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from campaigns.models import ConsentChannel
from verification.models import ConsentSource, Participant
from verification.selectors import participant_get_by_token
from verification.services.consent import consent_withdraw

UNSUBSCRIBE_SALT = "joyback.unsubscribe"


def unsubscribe_token(*, participant_id: int, channel: str = ConsentChannel.EMAIL) -> str:
    """The signed part of an unsubscribe link: whom it is for and which channel; never expires (a
    mail read a year later must still unsubscribe)."""
    return signing.dumps({"p": participant_id, "c": channel}, salt=UNSUBSCRIBE_SALT, compress=True)


def unsubscribe_headers(*, participant_id: int, site_url: str) -> dict[str, str]:
    """The headers a marketing mail carries (RFC 2369 and RFC 8058): mail clients show an
    unsubscribe button that POSTs once, without opening a page."""
    url = site_url + reverse(
        "verification:unsubscribe", args=[unsubscribe_token(participant_id=participant_id)]
    )
    return {"List-Unsubscribe": f"<{url}>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}


def _token_read(token: str) -> tuple[int, str]:
    try:
        found = signing.loads(token, salt=UNSUBSCRIBE_SALT)
        participant_id, channel = int(found["p"]), ConsentChannel(found["c"])
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        raise Http404("No such link") from None
    if not Participant.objects.filter(pk=participant_id).exists():
        raise Http404("No such link")
    return participant_id, channel


@csrf_exempt  # RFC 8058: the mail client POSTs "List-Unsubscribe=One-Click" with no page and no cookie
@require_http_methods(["GET", "POST"])
def unsubscribe(request, token):
    """GET shows a button (a link scanner's GET must not unsubscribe anyone); POST unsubscribes."""
    participant_id, channel = _token_read(token)
    if request.method == "POST":
        consent_withdraw(
            participant_id=participant_id,
            channel=channel,
            source=ConsentSource.EMAIL_UNSUBSCRIBE,
            proof=token[-60:],
        )
        if request.POST.get("List-Unsubscribe") == "One-Click":
            return HttpResponse(status=200)
        return render(request, "verification/unsubscribe.html", {"done": True, "token": token})
    return render(request, "verification/unsubscribe.html", {"done": False, "token": token})


@require_POST
def status_consent_withdraw(request, token, channel):
    """From the person's status page: no more messages from the brand on this channel."""
    participant = participant_get_by_token(token=token)
    if participant is None or channel not in ConsentChannel.values:
        raise Http404("No such claim")
    ended = consent_withdraw(
        participant_id=participant.pk,
        channel=channel,
        source=ConsentSource.STATUS_PAGE,
        proof=f"status:{request.POST.get('shown', '')[:40]}",
    )
    if ended is not None:
        messages.success(
            request, _("Done: the brand sends you no more messages there. Your rewards stay yours.")
        )
    back = request.POST.get("back", "")
    if back and url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        return redirect(back)
    return redirect("verification:status_actions", token=token)
