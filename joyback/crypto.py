"""Encryption at rest for payee details (IBANs, names, contacts).

Keys come from PAYEE_ENCRYPTION_KEYS (comma-separated Fernet keys, newest first, so keys rotate
without re-encrypting at once). Outside production a key is derived from SECRET_KEY.
"""

import hashlib
import hmac
from functools import cache

from cryptography.fernet import Fernet, MultiFernet
from django.conf import settings
from django.db import models


@cache
def _fernet() -> MultiFernet:
    return MultiFernet([Fernet(key) for key in settings.PAYEE_ENCRYPTION_KEYS])


def encrypt(value: str) -> str:
    return _fernet().encrypt(value.encode()).decode()


def decrypt(token: str) -> str:
    return _fernet().decrypt(token.encode()).decode()


def fingerprint(value: str) -> str:
    """A keyed hash: equal values match (duplicate detection) without storing the value."""
    key = settings.PAYEE_ENCRYPTION_KEYS[-1].encode()
    return hmac.new(key, value.encode(), hashlib.sha256).hexdigest()


def mask(value: str, *, keep: int = 4) -> str:
    """Shows only the last characters: DE89370400440532013000 -> •••• 3000."""
    compact = "".join(value.split())
    return f"•••• {compact[-keep:]}" if len(compact) > keep else "••••"


class EncryptedTextField(models.TextField):
    """Stores Fernet ciphertext; Python code sees plain text. Never filter or order by it."""

    def from_db_value(self, value, expression, connection):
        return None if value is None else decrypt(value)

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        return None if value is None else encrypt(value)
