"""Sign-in as JoyBack wants it: staff sessions end sooner than brand users' (two weeks)."""

from allauth.account.adapter import DefaultAccountAdapter
from allauth.account.forms import LoginForm as AllauthLoginForm
from django.conf import settings

from joyback.ratelimit import client_address


def _staff_session_shorten(request, user) -> None:
    if user is not None and user.is_staff:
        # Staff can change everything: a forgotten session stays open for hours, not weeks.
        request.session.set_expiry(settings.STAFF_SESSION_SECONDS)


class AccountAdapter(DefaultAccountAdapter):
    def get_client_ip(self, request):  # the login throttle counts per real client, as ours do
        return client_address(request)

    def format_email_subject(self, subject: str) -> str:
        # The product's name, not the site's host name (allauth's "[127.0.0.1:8300] ").
        return f"JoyBack: {subject}"

    def login(self, request, user):  # every way in: password, second factor, passkey
        super().login(request, user)
        _staff_session_shorten(request, user)


class LoginForm(AllauthLoginForm):
    def login(self, request, redirect_url=None):
        # allauth sets the "remember me" expiry after the login itself: shortened again here.
        response = super().login(request, redirect_url)
        _staff_session_shorten(request, getattr(self, "user", None))
        return response
