"""Encryption at rest for payee details (IBANs, names, contacts).

Keys come from PAYEE_ENCRYPTION_KEYS (comma-separated Fernet keys, newest first, so keys rotate
without re-encrypting at once; `manage.py payee_data_reencrypt` then moves every row to the newest
key, after which the older ones can be removed). Duplicate-detection fingerprints are keyed with
their own PAYEE_FINGERPRINT_KEY, so rotating the encryption keys leaves them unchanged. Outside
production both are derived from SECRET_KEY.
"""

import hashlib
import hmac
from functools import cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.signals import setting_changed
from django.db import models
from django.dispatch import receiver


@cache
def _fernet() -> MultiFernet:
    return MultiFernet([Fernet(key) for key in settings.PAYEE_ENCRYPTION_KEYS])


@cache
def _newest() -> Fernet:
    return Fernet(settings.PAYEE_ENCRYPTION_KEYS[0])


@receiver(setting_changed)
def _keys_changed(*, setting, **kwargs):
    if setting == "PAYEE_ENCRYPTION_KEYS":
        _fernet.cache_clear()
        _newest.cache_clear()


def encrypt(value: str) -> str:
    return _fernet().encrypt(value.encode()).decode()


def decrypt(token: str) -> str:
    return _fernet().decrypt(token.encode()).decode()


def reencrypted(token: str) -> str | None:
    """The token under the newest key, or None when it already is (nothing to write)."""
    try:
        _newest().decrypt(token.encode())
        return None
    except InvalidToken:
        return _fernet().rotate(token.encode()).decode()


def fingerprint(value: str) -> str:
    """A keyed hash: equal values match (duplicate detection) without storing the value."""
    key = settings.PAYEE_FINGERPRINT_KEY.encode()
    return hmac.new(key, value.encode(), hashlib.sha256).hexdigest()


class EncryptedTextField(models.TextField):
    """Stores Fernet ciphertext; Python code sees plain text. Never filter or order by it."""

    def from_db_value(self, value, expression, connection):
        return None if value is None else decrypt(value)

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        return None if value is None else encrypt(value)
