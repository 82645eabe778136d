"""Schema validation of ISO 20022 messages, and the one XML parser setting for bank files.

Files from a bank are untrusted input: `hardened_parser()` resolves no entities, loads no DTD,
touches no network and keeps libxml2's size limits on (no huge_tree), so an entity bomb or an
external reference fails instead of eating memory or phoning out. The statement importer parses
with it too.
"""

import threading
from pathlib import Path

from django.utils.translation import gettext as _
from lxml import etree

from payouts.iso20022.types import SchemaError

XSD_DIR = Path(__file__).resolve().parent / "xsd"
MESSAGES = (
    "pain.001.001.09",
    "pain.002.001.10",
    "camt.053.001.02",
    "camt.053.001.08",
    "camt.054.001.02",
    "camt.054.001.08",
)

# lxml schemas and parsers must not be shared between threads; each thread parses a schema once.
_local = threading.local()


def hardened_parser(*, schema: etree.XMLSchema | None = None, remove_blank_text: bool = False):
    """A new lxml parser safe for bank files (a parser is not thread-safe: make one per use)."""
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
        remove_blank_text=remove_blank_text,
        schema=schema,
    )


def namespace(message: str) -> str:
    return f"urn:iso:std:iso:20022:tech:xsd:{message}"


def schema_for(message: str) -> etree.XMLSchema:
    cache = getattr(_local, "schemas", None)
    if cache is None:
        cache = _local.schemas = {}
    schema = cache.get(message)
    if schema is None:
        path = XSD_DIR / f"{message}.xsd"
        if message not in MESSAGES:
            raise SchemaError(
                _("%(message)s is not a message this application validates (it knows %(known)s).")
                % {"message": message, "known": ", ".join(MESSAGES)}
            )
        if not path.is_file():
            raise SchemaError(
                _("The official schema of %(message)s is not installed (%(path)s).")
                % {"message": message, "path": path}
            )
        schema = cache[message] = etree.XMLSchema(etree.parse(str(path), hardened_parser()))
    return schema


def xsd_parse(xml: bytes, message: str) -> etree._Element:
    """Parse and validate; the root element, or SchemaError with the first problem's line and reason."""
    schema = schema_for(message)
    try:
        # Validating while parsing is the fast path (one pass, no second walk over the tree) ...
        root = etree.fromstring(xml, hardened_parser(schema=schema))
    except (etree.XMLSyntaxError, ValueError):
        pass
    else:
        _doctype_refuse(root, message)
        return root
    # ... but libxml2's streaming validator reports no line numbers, so a bad file is read again.
    try:
        root = etree.fromstring(xml, hardened_parser())
    except etree.XMLSyntaxError as error:
        _refuse(message, error.lineno, error.msg or str(error))
    except ValueError as error:  # a str with an encoding declaration, and the like
        _refuse(message, None, str(error))
    _doctype_refuse(root, message)
    if schema.validate(root):  # pragma: no cover - the first pass said otherwise
        return root
    entry = schema.error_log[0]
    _refuse(message, entry.line, entry.message)


def _doctype_refuse(root: etree._Element, message: str) -> None:
    # ISO 20022 messages have no DTD; one in a bank file can only be an entity trick.
    if root.getroottree().docinfo.doctype:
        _refuse(message, 1, _("a document type declaration (DTD) is not allowed in a bank file."))


def _refuse(message: str, line: int | None, reason: str):
    reason = reason.replace(f"{{{namespace(message)}}}", "").strip()
    raise SchemaError(
        _("Not a valid %(message)s message: line %(line)s: %(reason)s")
        % {"message": message, "line": line if line is not None else "?", "reason": reason},
        line=line,
        reason=reason,
    )


def xsd_validate(xml: bytes, message: str) -> None:
    """Raise SchemaError ("line 12: Element 'X': ...") unless `xml` is a valid `message`."""
    xsd_parse(xml, message)
