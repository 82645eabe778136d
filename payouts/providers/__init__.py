"""The payment providers' adapters behind the payouts (payouts.psp is their port, PayoutProvider).

An adapter imports the port; the port knows an adapter only by the name it is registered under
here, once at start-up (payouts.apps), and PAYOUT_PROVIDER picks one at runtime.
"""

from payouts import psp


def providers_register() -> None:
    from payouts.providers import adyen  # deferred: the package is imported by its adapters too

    psp.provider_register(name="adyen", adapter=adyen)
