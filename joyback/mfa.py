"""Second factors where money is: owners, finance members and staff sign in with a password alone,
but fund, approve, pay and change bank or API settings only once a second factor is set up."""

import time
from functools import wraps
from urllib.parse import urlencode, urlsplit

from allauth.account.authentication import get_authentication_records
from allauth.core.exceptions import ReauthenticationRequired
from allauth.mfa.models import Authenticator
from allauth.mfa.totp.internal.auth import TOTP
from django.conf import settings
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme

# A second factor proper; recovery codes are the way back in, not a factor of their own.
SECOND_FACTORS = [Authenticator.Type.TOTP, Authenticator.Type.WEBAUTHN]


def mfa_enabled(user) -> bool:
    return Authenticator.objects.filter(user=user, type__in=SECOND_FACTORS).exists()


def second_factor_code_valid(*, user, code: str) -> bool:
    """`code` is the one the person's authenticator app shows now, not used before: the person
    themselves is there (a command names a staff member by email; the email alone proves nothing)."""
    code = (code or "").strip()
    if not code:
        return False
    return any(
        TOTP(authenticator).validate_code(code)
        for authenticator in Authenticator.objects.filter(user=user, type=Authenticator.Type.TOTP)
    )


def mfa_setup_required(request):
    """The page that says what is missing and where to set it up, instead of the action. Where the
    person was (and the amount they typed) is kept, so the end of the setup leads back there with
    the amount filled in again."""
    back = _back_address(request)
    if back:
        request.session["mfa_next"] = back
    return render(request, "mfa_required.html", {"back": back}, status=403)


def _back_address(request) -> str:
    referer = request.META.get("HTTP_REFERER", "")
    if not url_has_allowed_host_and_scheme(referer, allowed_hosts={request.get_host()}):
        return ""
    parts = urlsplit(referer)
    amount = request.POST.get("amount", "").strip()[:20] if request.method == "POST" else ""
    query = urlencode({"amount": amount}) if amount else ""
    return parts.path + (f"?{query}" if query else "")


def recently_authenticated(request) -> bool:
    """Signed in, or asked again, within ACCOUNT_REAUTHENTICATION_TIMEOUT: a sign-in that just asked
    for the password and the second factor counts, so the first action after it does not ask again."""
    records = get_authentication_records(request, request.user)
    latest = max((record.get("at", 0) for record in records), default=0)
    return time.time() - latest < settings.ACCOUNT_REAUTHENTICATION_TIMEOUT


def reauthentication_required(view):
    """Before API keys, webhooks and approvals: the password or second factor again after a while.
    allauth's middleware keeps the request, asks, and then carries it out."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not request.user.is_authenticated or not recently_authenticated(request):
            raise ReauthenticationRequired()
        return view(request, *args, **kwargs)

    return wrapper
