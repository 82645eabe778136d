"""Test mode and live mode.

A brand's test data lives under its test twin: a Brand row of its own (campaigns.modes), so every
brand scoping that already isolates one brand from another isolates test from live. The apps to
the left of campaigns (the ledger, the API) know a brand only by its id: they ask here which mode
that id is in, and campaigns answers (registered when the app is ready).
"""

import contextvars
from collections.abc import Callable
from contextlib import contextmanager

from django.conf import settings

_resolver: Callable[[int], bool | None] | None = None
# A brand's mode is fixed when the brand is made (test twins are made as such and never change):
# what this process learnt once stays true.
_known: dict[int, bool] = {}


def brand_livemode_resolver_register(resolver: Callable[[int], bool | None]) -> None:
    global _resolver
    _resolver = resolver


def brand_livemode(brand_id: int | None) -> bool:
    """Whether this brand's data is live; an unknown or missing brand counts as live, the stricter side."""
    if brand_id is None:
        return True
    known = _known.get(brand_id)
    if known is not None:
        return known
    livemode = _resolver(brand_id) if _resolver is not None else None
    if livemode is None:
        return True
    _known[brand_id] = livemode
    return livemode


def brand_livemode_forget() -> None:
    """Forget what was learnt: a brand rolled back (a test's) may leave its id to another."""
    _known.clear()


# Where a provider call goes is the mode's: a test brand's calls are answered by the sandbox
# providers inside this app on every deployment, whatever the live provider settings say. Set by
# provider_routed_for around a call made for a brand; read by the two HTTP clients the adapters use
# (payouts.psp.psp_client, verification.providers.loopback.http_client) and the base addresses.
_test_routed = contextvars.ContextVar("provider_test_routed", default=False)


@contextmanager
def provider_routed_for(*, livemode: bool):
    """Within: calls go where `livemode` says. Once inside a test brand's call, a nested live one
    stays in the sandbox: a test brand never reaches a live provider."""
    token = _test_routed.set(_test_routed.get() or not livemode)
    try:
        yield
    finally:
        _test_routed.reset(token)


def provider_test_routed() -> bool:
    """Inside a test brand's call: its provider requests go to the sandbox."""
    return _test_routed.get()


def provider_sandboxed() -> bool:
    """Provider requests go to the in-app sandbox: on a sandbox deployment, or for a test brand."""
    return settings.SANDBOX or _test_routed.get()
