"""The Django admin, signed in to through allauth: its second factor and login throttling apply, and
Django's own admin login form is never shown."""

from allauth.account.decorators import secure_admin_login
from django.contrib.admin import AdminSite

from joyback.mfa import mfa_enabled, mfa_setup_required


class JoyBackAdminSite(AdminSite):
    site_header = "JoyBack admin"
    site_title = "JoyBack admin"

    def login(self, request, extra_context=None):
        # Anonymous: to allauth's sign-in, which comes back here; signed in without staff: 403.
        return secure_admin_login(super().login)(request, extra_context)

    def admin_view(self, view, cacheable=False):
        inner = super().admin_view(view, cacheable)

        def view_with_second_factor(request, *args, **kwargs):
            # Staff read without a second factor, but change nothing (actions, saves) until it is set up.
            if (
                request.method == "POST"
                and request.user.is_authenticated
                and request.user.is_staff
                and not mfa_enabled(request.user)
            ):
                return mfa_setup_required(request)
            return inner(request, *args, **kwargs)

        view_with_second_factor.admin_site = self
        return view_with_second_factor
