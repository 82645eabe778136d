"""Production refuses to start unsafe: the sandbox, a secret published in the repository, a missing
webhook key or a site address that is not the site's are startup errors, not warnings.

The checks are Django system checks (`manage.py check`, `check --deploy`) and also run when every
process starts (`JoyBackConfig.ready`): gunicorn, the task cluster and the standing worker run no
system checks of their own, and a web process that served the sandbox's top up for a minute has
already minted money.

A required variable that is not set at all stops the settings before these run (config.env names
every one missing); these refuse what is set but unsafe, and stay as a guard for values changed
after loading."""

import base64
import hashlib
import ipaddress
from urllib.parse import urlsplit

from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0"}  # noqa: S104 - compared with, never bound


def _published_secret_keys() -> list[str]:
    # settings.py derives these from the SECRET_KEY it falls back to outside production.
    return [f"insecure-{env}-key-never-use-in-production" for env in ("development", "test", "production")]


def _published_payee_keys() -> set[str]:
    keys = set()
    for secret in _published_secret_keys():
        digest = hashlib.sha256(f"payee-data:{secret}".encode()).digest()
        keys.add(base64.urlsafe_b64encode(digest).decode())
        keys.add(hashlib.sha256(f"payee-fingerprints:{secret}".encode()).hexdigest())
    return keys


def _published(value: str, published: str) -> bool:
    return bool(value) and value.strip().lower() == published.lower()


def _error(msg: str, hint: str, number: int) -> checks.Error:
    return checks.Error(msg, hint=hint, id=f"joyback.E{number:03d}")


def _host_not_public(host: str) -> bool:
    """An address of this machine or of a private network: people's links would lead nowhere."""
    if host in LOCAL_HOSTS or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "." not in host  # a bare name ("joy") resolves only inside some network
    return not address.is_global


def _site_url_problem() -> checks.Error | None:
    url = settings.SITE_URL.strip()
    if not url:
        return _error(
            "SITE_URL is not set.",
            "Set SITE_URL to the address people reach the site at, e.g. https://joyback.example.",
            103,
        )
    parts = urlsplit(url)
    host = parts.hostname or ""
    if host and _host_not_public(host):
        return _error(
            f"SITE_URL is {url}, an address on this machine or a private network: links in messages "
            "would lead nowhere.",
            "Set SITE_URL to the address people reach the site at, e.g. https://joyback.example.",
            103,
        )
    if parts.scheme != "https" or not host:
        return _error(
            f"SITE_URL is {url}: it must be an https:// address (links in messages carry secrets).",
            "Set SITE_URL to the https address people reach the site at, e.g. https://joyback.example.",
            103,
        )
    return None


def production_problems() -> list[checks.Error]:
    """What makes this production process unsafe to run, each saying what to set."""
    if not settings.IS_PRODUCTION:
        return []
    problems = []
    if settings.SANDBOX:
        problems.append(
            _error(
                "SANDBOX is on in production: the sandbox bank's feed would book live money.",
                "Unset SANDBOX (or set SANDBOX=0): the sandbox is for JOYBACK_ENV=development or test.",
                101,
            )
        )
    if not settings.ADYEN_HMAC_KEYS:
        problems.append(
            _error(
                "ADYEN_HMAC_KEYS is not set: the payment provider's webhooks could not be verified.",
                "Set ADYEN_HMAC_KEYS to the webhook HMAC key(s) from the provider's Customer Area (hex, "
                "comma-separated while rotating).",
                102,
            )
        )
    site_url = _site_url_problem()
    if site_url:
        problems.append(site_url)
    for name, published in settings.SANDBOX_SECRETS.items():
        value = getattr(settings, name, "")
        values = value if isinstance(value, list | tuple) else [value]
        if any(_published(item, published) for item in values):
            problems.append(
                _error(
                    f"{name} is the sandbox's value, published in the repository.",
                    f"Set {name} to the provider's own secret for this installation.",
                    104,
                )
            )
    if settings.SECRET_KEY in _published_secret_keys():
        problems.append(
            _error(
                "SECRET_KEY is the one published in the repository.",
                "Set SECRET_KEY to a long random secret of this installation.",
                105,
            )
        )
    payee_keys = _published_payee_keys()
    for name, values in (
        ("PAYEE_ENCRYPTION_KEYS", settings.PAYEE_ENCRYPTION_KEYS),
        ("PAYEE_FINGERPRINT_KEY", [settings.PAYEE_FINGERPRINT_KEY]),
    ):
        if any(value in payee_keys for value in values):
            problems.append(
                _error(
                    f"{name} is derived from a SECRET_KEY published in the repository.",
                    f"Set {name} to a key of this installation (see the README on rotating keys).",
                    106,
                )
            )
    return problems


@checks.register(checks.Tags.security)
def production_safety_check(app_configs=None, **kwargs):
    # Not deploy-only: `check` (runserver, migrate) and `check --deploy` both report it.
    return production_problems()


def production_refuse_unsafe() -> None:
    """At every process's start: production with any of the problems above does not start."""
    problems = production_problems()
    if problems:
        lines = "\n".join(f"  {problem.id}: {problem.msg} {problem.hint}" for problem in problems)
        raise ImproperlyConfigured(f"JoyBack refuses to start in production:\n{lines}")


def sandbox_bank_live_refusal() -> str:
    """Why the sandbox bank's messages may not reach the live ledger here ('' when they may): in
    production, or once the platform's account is a real bank's, whatever SANDBOX says. Its credits
    are made up on demand; booked live they would be money nobody sent."""
    if settings.IS_PRODUCTION:
        return "the sandbox bank books no money in production"
    if settings.PAYOUT_DEBTOR_IBAN.replace(" ", "").upper() != settings.SANDBOX_BANK_IBAN:
        return "the platform's account is a real bank's, not the sandbox bank's"
    return ""
