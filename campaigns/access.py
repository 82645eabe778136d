"""The access helper every brand-scoped view goes through.

A URL names its brand by slug; a member of another brand gets a 404 (the brand's existence is not
confirmed to outsiders), a member with too weak a role gets a 403.
"""

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404

from campaigns.roles import READ
from campaigns.selectors import membership_get


def brand_member_required(capability=READ):
    def decorator(view):
        @wraps(view)
        def wrapper(request, brand_slug, *args, **kwargs):
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            membership = membership_get(user=request.user, brand_slug=brand_slug)
            if membership is None:
                raise Http404("No such brand")
            if membership.role not in capability:
                raise PermissionDenied("Your role in this brand does not allow this.")
            request.membership = membership
            request.brand = membership.brand
            return view(request, *args, **kwargs)

        wrapper.brand_scoped = True
        return wrapper

    return decorator
