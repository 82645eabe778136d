"""The Django admin, signed in to through allauth: its second factor and login throttling apply, and
Django's own admin login form is never shown."""

from allauth.account.decorators import secure_admin_login
from django.contrib import messages
from django.contrib.admin import AdminSite
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext

from joyback.mfa import mfa_enabled


class JoyBackAdminSite(AdminSite):
    site_header = "JoyBack admin"
    site_title = "JoyBack admin"

    def login(self, request, extra_context=None):
        # Anonymous: to allauth's sign-in, which comes back here; signed in without staff: 403.
        return secure_admin_login(super().login)(request, extra_context)

    def admin_view(self, view, cacheable=False):
        inner = super().admin_view(view, cacheable)

        def view_with_second_factor(request, *args, **kwargs):
            # Every admin page shows people's details, bank accounts or keys: staff read none of it
            # until a second factor is set up (signing out stays possible).
            if (
                request.user.is_authenticated
                and request.user.is_staff
                and not mfa_enabled(request.user)
                and request.path != reverse("admin:logout", current_app=self.name)
            ):
                return staff_mfa_setup_redirect(request)
            return inner(request, *args, **kwargs)

        view_with_second_factor.admin_site = self
        return view_with_second_factor


def staff_mfa_setup_redirect(request):
    messages.warning(
        request,
        gettext(
            "Set up two-factor authentication before you open the admin: it shows people's details, "
            "bank accounts and keys."
        ),
    )
    return redirect("mfa_index")
