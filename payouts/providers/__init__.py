"""The payment provider behind the payouts, chosen by PAYOUT_PROVIDER.

A provider module offers transfer_submit(order), transfer_find(end_to_end_id), webhook_verify(body,
headers) and webhook_status(payload); payouts/psp.py is the one caller.
"""

from importlib import import_module

from django.conf import settings

PROVIDERS = {"adyen": "payouts.providers.adyen"}


def provider():
    return import_module(PROVIDERS[settings.PAYOUT_PROVIDER])
