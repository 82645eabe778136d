"""Second factors where money is: owners, finance members and staff sign in with a password alone,
but fund, approve, pay and change bank or API settings only once a second factor is set up."""

from allauth.mfa.models import Authenticator
from django.shortcuts import render

# A second factor proper; recovery codes are the way back in, not a factor of their own.
SECOND_FACTORS = [Authenticator.Type.TOTP, Authenticator.Type.WEBAUTHN]


def mfa_enabled(user) -> bool:
    return Authenticator.objects.filter(user=user, type__in=SECOND_FACTORS).exists()


def mfa_setup_required(request):
    """The page that says what is missing and where to set it up, instead of the action."""
    return render(request, "mfa_required.html", status=403)
