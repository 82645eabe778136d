"""The access helper every brand-scoped view goes through.

A URL names its brand by slug; a member of another brand gets a 404 (the brand's existence is not
confirmed to outsiders), a member with too weak a role gets a 403.
"""

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404

from campaigns import roles
from campaigns.modes import brand_test_twin_get, slug_mode_split
from campaigns.roles import READ
from campaigns.selectors import membership_get
from joyback.mfa import mfa_enabled, mfa_setup_required

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def _second_factor_missing(request) -> bool:
    # Whoever moves money (a held reward released in review included) or changes bank or API
    # settings proves it is them twice, whatever their role.
    return not mfa_enabled(request.user)


def brand_member_required(capability=READ, *, money: bool | str | None = None):
    """money: the view moves money or changes bank or API settings (by default, the FUND and
    MANAGE_API capabilities): then a member without a second factor is shown how to set one up
    instead of the change. money="live": only on live data (a test twin's play money needs none)."""
    if money is None:
        money = capability in (roles.FUND, roles.MANAGE_API)

    def decorator(view):
        @wraps(view)
        def wrapper(request, brand_slug, *args, **kwargs):
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            live_slug, livemode = slug_mode_split(brand_slug)
            membership = membership_get(user=request.user, brand_slug=live_slug)
            if membership is None:
                raise Http404("No such brand")
            if membership.role not in capability:
                raise PermissionDenied("Your role in this brand does not allow this.")
            request.membership = membership
            # /brands/<slug>--test/: the same members and roles, the test twin's data.
            brand = membership.brand if livemode else brand_test_twin_get(brand=membership.brand)
            if brand is None:
                raise Http404("No test data yet")
            request.brand = brand
            request.live_brand = membership.brand
            moves_money = (money == "live" and brand.livemode) or money is True
            if moves_money and request.method not in SAFE_METHODS and _second_factor_missing(request):
                return mfa_setup_required(request)
            return view(request, *args, **kwargs)

        wrapper.brand_scoped = True
        return wrapper

    return decorator
