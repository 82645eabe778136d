"""No secret of a link in a log line: a person's status link, a data request's confirmation, a
shop's claim link and the sign-in keys carry a secret in their path, and OAuth answers (code,
state) in their query string. Whoever reads the logs (an operator, a log service, a support
ticket with a pasted line) must not be able to open them. Imports nothing of Django: gunicorn's
access log uses it too (deploy/gunicorn.conf.py)."""

import logging
import re

HIDDEN = "…"
# The segment after these prefixes is the secret; the route around it stays readable.
_SECRET_SEGMENT = re.compile(r"(/status/|/privacy/|/confirm-email/|/password/reset/key/)[^/\s\"'?#]+")
_SHOP_CLAIM = re.compile(r"(/claim/)[^/\s\"'?#]+/[^/\s\"'?#]+")
_QUERY = re.compile(r"(/[^\s\"'?]*\?)[^\s\"'#]+")


def secrets_redact(text: str) -> str:
    """`text` with the secret path segments and every query string replaced by …"""
    if "/" not in text:
        return text
    text = _SECRET_SEGMENT.sub(rf"\1{HIDDEN}", text)
    text = _SHOP_CLAIM.sub(rf"\1{HIDDEN}/{HIDDEN}", text)
    return _QUERY.sub(rf"\1{HIDDEN}", text)


class SecretsRedactFilter(logging.Filter):
    """On a handler: every record it writes, whichever logger made it (runserver's request lines,
    Django's "Not Found: <path>", a library's URL), has its secrets replaced."""

    def filter(self, record):
        message = record.getMessage()
        redacted = secrets_redact(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


def gunicorn_logger_class():
    """gunicorn's logger with the access log's request line, path, query and referer redacted."""
    from gunicorn.glogging import (
        Logger,  # deferred: only gunicorn's config calls this; other processes never load gunicorn
    )

    class RedactingLogger(Logger):
        def atoms(self, resp, req, environ, request_time):
            atoms = super().atoms(resp, req, environ, request_time)
            for key in ("r", "U", "f", "{referer}i", "{raw_uri}e", "{path_info}e", "{http_referer}e"):
                if isinstance(atoms.get(key), str):
                    atoms[key] = secrets_redact(atoms[key])
            for key in ("q", "{query_string}e"):
                if atoms.get(key):
                    atoms[key] = HIDDEN
            return atoms

    return RedactingLogger
