"""Endpoints that machines call, declared where they are defined."""

from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csrf import csrf_exempt


def machine_endpoint(view):
    """For a view that Meta's or TikTok's servers, the PSP or a brand's backend call, authenticated by
    a signature or an API key, never by a browser: answered without the browser middleware
    (joyback.middleware.MachineEndpointsMiddleware finds these views in the URLconf), in the site's
    language, with no CSRF check and no frame header even where it is reached through the chain."""
    view = csrf_exempt(xframe_options_exempt(view))
    view.machine_endpoint = True
    return view


def is_machine_endpoint(view) -> bool:
    return getattr(view, "machine_endpoint", False)
