"""Reading bank statements: camt.053 (end of day) and camt.054 (notifications), versions .001.02
and .001.08.

A file is read once, as a stream (lxml iterparse with the hardened settings and, where its official
schema is installed, validating as it goes), so a statement of 100,000 entries never becomes one
tree in memory. Each entry becomes one or more `Line`s: one per transaction (TxDtls) when the bank
broke the entry down, else the entry itself (a batch booking given only as its total). Nothing is
returned unless the whole file is good: a bad file raises SchemaError with its line and reason.

What differs between the versions (see the ISO 20022 reference, section 4.2): the entry status is
`<Sts>BOOK</Sts>` in .02 and `<Sts><Cd>BOOK</Cd></Sts>` in .08; a transaction's amount is
`TxDtls/Amt` in .08 and `TxDtls/AmtDtls/TxAmt|InstdAmt/Amt` in .02; a party's name is
`Cdtr/Pty/Nm` in .08 and `Cdtr/Nm` in .02.
"""

import datetime
import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import cache
from typing import NamedTuple

from babel.numbers import get_currency_precision
from django.conf import settings
from django.utils.translation import gettext as _
from lxml import etree

from joyback.money import KNOWN_CURRENCIES
from payouts.iso20022.types import SchemaError
from payouts.iso20022.validate import namespace, schema_for, xsd_parse

STATEMENT_MESSAGES = ("camt.053.001.02", "camt.053.001.08", "camt.054.001.02", "camt.054.001.08")
_NAMESPACE = re.compile(
    rb'xmlns(?::\w+)?\s*=\s*["\']urn:iso:std:iso:20022:tech:xsd:([a-z]{4}\.\d{3}\.\d{3}\.\d{2})'
)
DEFAULT_MAX_BYTES = 300 * 1024 * 1024


class Line(NamedTuple):
    """One booking: `credit` is money coming in (a deposit, a return), else money going out."""

    entry_ref: str  # AcctSvcrRef of the entry, "" when the bank gave none
    detail: str  # which transaction of the entry: its EndToEndId, else its position
    kind: str  # payout, batch, return, deposit, other
    credit: bool
    amount: int  # minor units, positive
    currency: str
    booking_date: datetime.date | None
    entry_status: str  # BOOK, PDNG, INFO, FUTR
    reversal: bool
    end_to_end_id: str
    batch_ref: str  # Btch/PmtInfId, else Btch/MsgId
    batch_msg_id: str
    return_reason: str
    reference: str  # remittance information and the entry's additional information
    counterparty: str
    source_line: int
    # The other side's account: the creditor's for money going out, the debtor's for money coming
    # in; "" when the bank gave none (a brand's own statement names its virtual IBAN here).
    counterparty_iban: str = ""


@dataclass
class StatementBlock:
    """One Stmt of a camt.053 or Ntfctn of a camt.054."""

    statement_id: str
    account: str
    currency: str = ""
    sequence: int | None = None
    opening_balance: int | None = None
    closing_balance: int | None = None
    closing_date: datetime.date | None = None
    lines: list[Line] = field(default_factory=list)
    # The booked entries' amounts, signed (credits in): what closing minus opening must be.
    booked_total: int = 0


@dataclass
class StatementFile:
    message: str
    msg_id: str
    statements: list[StatementBlock]

    @property
    def line_count(self) -> int:
        return sum(len(block.lines) for block in self.statements)


def message_detect(data: bytes) -> str:
    """The message of a file from its namespace, or SchemaError naming what is accepted."""
    found = _NAMESPACE.search(data[:4096])
    message = found.group(1).decode() if found else ""
    if message not in STATEMENT_MESSAGES:
        raise SchemaError(
            _("Not a bank statement this application reads (%(found)s); it reads %(known)s.")
            % {"found": message or _("no ISO 20022 namespace"), "known": ", ".join(STATEMENT_MESSAGES)},
            line=1,
            reason="unsupported message",
        )
    return message


def entry_count(data: bytes) -> int:
    """How many entries a file holds, counted without parsing (for a progress bar)."""
    return data.count(b"<Ntry>") + data.count(b"<Ntry ")


def _line_of(data: bytes, position: int) -> int:
    return data.count(b"\n", 0, position) + 1


def _refuse(message: str, line: int | None, reason: str):
    raise SchemaError(
        _("Not a valid %(message)s message: line %(line)s: %(reason)s")
        % {"message": message, "line": line if line is not None else "?", "reason": reason},
        line=line,
        reason=reason,
    )


@cache
def _exponent(currency: str) -> int:
    return get_currency_precision(currency)


def _minor(text: str | None, currency: str, message: str, line: int) -> int:
    if currency not in KNOWN_CURRENCIES:
        _refuse(message, line, _("%(currency)r is not an ISO 4217 currency.") % {"currency": currency})
    try:
        value = Decimal((text or "").strip())
    except InvalidOperation:
        _refuse(message, line, _("%(text)r is not an amount.") % {"text": text})
    if not value.is_finite():  # "Infinity" or "NaN", possible where no schema checks the file
        _refuse(message, line, _("%(text)r is not an amount.") % {"text": text})
    minor = value.scaleb(_exponent(currency))
    if minor != minor.to_integral_value() or minor < 0:
        _refuse(
            message,
            line,
            _("%(text)s %(currency)s is not a positive amount in whole minor units.")
            % {"text": text, "currency": currency},
        )
    return int(minor)


def _date(element) -> datetime.date | None:
    # BookgDt / ValDt / Bal/Dt are a choice of Dt and DtTm.
    if element is None:
        return None
    for child in element:
        text = (child.text or "").strip()
        try:
            return datetime.date.fromisoformat(text[:10])
        except ValueError:
            return None
    return None


def _children(element) -> dict[str, list]:
    """An element's children by tag, each list in document order."""
    children: dict[str, list] = {}
    for child in element:
        found = children.get(child.tag)
        if found is None:
            children[child.tag] = [child]
        else:
            found.append(child)
    return children


def _first(candidates, tags: tuple[str, ...]):
    # What ElementPath's find("a/b/c") returns: depth first, so the first match in document order.
    # Children are compared by tag here rather than by iterchildren(tag), whose tag matcher costs
    # more to set up than an element's few children cost to look at; this runs a few times for
    # each of 100,000 entries.
    tag, rest = tags[0], tags[1:]
    for element in candidates:
        for child in element:
            if child.tag == tag:
                if not rest:
                    return child
                found = _first((child,), rest)
                if found is not None:
                    return found
    return None


def _every(candidates, tags: tuple[str, ...]) -> list:
    if not tags:
        return list(candidates)
    return [found for element in candidates for found in _every(element.iterchildren(tags[0]), tags[1:])]


class _Reader:
    def __init__(self, message: str):
        self.message = message
        ns = "{" + namespace(message) + "}"
        self.ns = ns
        self.v02 = message.endswith(".02")
        self.booked = 0  # the current statement's booked entries, signed

        def q(path: str) -> str:
            return "/".join(ns + part if part[0].isalpha() else part for part in path.split("/"))

        self.q = cache(q)
        self._tags: dict[str, tuple[str, ...]] = {}
        # path -> (its first tag, the tags after it): looked up some twenty times an entry.
        self._steps: dict[str, tuple[str, tuple[str, ...]]] = {}

    def text(self, element, path: str) -> str:
        found = element.find(self.q(path))
        return (found.text or "").strip() if found is not None and found.text else ""

    def find(self, element, path: str):
        return element.find(self.q(path))

    def findall(self, element, path: str):
        return element.findall(self.q(path))

    # An entry is read from a map of its children (and each transaction from its own), made in one
    # pass: a search per field costs as much as the map, and an entry has some fifteen fields.
    def tags(self, path: str) -> tuple[str, ...]:
        tags = self._tags.get(path)
        if tags is None:
            tags = self._tags[path] = tuple(self.ns + part for part in path.split("/"))
        return tags

    def first(self, children: dict, path: str):
        """children[...].find(path): the first match in document order, or None."""
        steps = self._steps.get(path)
        if steps is None:
            tags = self.tags(path)
            steps = self._steps[path] = (tags[0], tags[1:])
        candidates = children.get(steps[0])
        if candidates is None:
            return None
        return _first(candidates, steps[1]) if steps[1] else candidates[0]

    def first_text(self, children: dict, path: str) -> str:
        # first(), inlined: called ten times an entry.
        steps = self._steps.get(path)
        if steps is None:
            tags = self.tags(path)
            steps = self._steps[path] = (tags[0], tags[1:])
        candidates = children.get(steps[0])
        if candidates is None:
            return ""
        found = _first(candidates, steps[1]) if steps[1] else candidates[0]
        if found is None:
            return ""
        text = found.text
        return text.strip() if text else ""

    def every(self, children: dict, path: str) -> list:
        """findall(path): every match in document order."""
        tags = self.tags(path)
        return _every(children.get(tags[0], ()), tags[1:])

    def party_name(self, details: dict, role: str) -> str:
        return self.first_text(details, f"RltdPties/{role}/Pty/Nm") or self.first_text(
            details, f"RltdPties/{role}/Nm"
        )

    def entry(self, element) -> list[Line]:
        line_no = element.sourceline or 0
        children = _children(element)
        amount_element = self.first(children, "Amt")
        if amount_element is None:
            # The schema requires Amt; kept so a schema edit cannot turn a missing amount into zero.
            _refuse(self.message, line_no, _("an entry without an amount."))
        currency = amount_element.get("Ccy", "")
        amount = _minor(amount_element.text, currency, self.message, line_no)
        text = self.first_text
        credit = text(children, "CdtDbtInd") == "CRDT"
        reversal = text(children, "RvslInd").lower() in ("true", "1")
        status = text(children, "Sts/Cd") or text(children, "Sts") or text(children, "Sts/Prtry")
        booking_date = _date(self.first(children, "BookgDt"))
        entry_ref = text(children, "AcctSvcrRef")
        sub_family = text(children, "BkTxCd/Domn/Fmly/SubFmlyCd")
        entry_info = text(children, "AddtlNtryInf")
        if status == "BOOK":
            self.booked += amount if credit else -amount
        batch_msg_id = ""
        batch_pmt_inf_id = ""
        details = []
        for entry_details in children.get(self.tags("NtryDtls")[0], ()):
            batch = next(entry_details.iterchildren(self.tags("Btch")[0]), None)
            if batch is not None:
                batch_msg_id = batch_msg_id or self.text(batch, "MsgId")
                batch_pmt_inf_id = batch_pmt_inf_id or self.text(batch, "PmtInfId")
            details.extend(entry_details.iterchildren(self.tags("TxDtls")[0]))
        base = {
            "entry_ref": entry_ref,
            "credit": credit,
            "currency": currency,
            "booking_date": booking_date,
            "entry_status": status,
            "reversal": reversal,
            "batch_ref": batch_pmt_inf_id or batch_msg_id,
            "batch_msg_id": batch_msg_id,
        }
        lines = []
        detail_children = [_children(detail) for detail in details]
        amounts = [self._detail_amount(found, currency) for found in detail_children]
        if details and (len(details) == 1 or all(a is not None for a in amounts)):
            for position, (detail, found, detail_amount) in enumerate(
                zip(details, detail_children, amounts, strict=True), start=1
            ):
                e2e = text(found, "Refs/EndToEndId")
                if e2e == "NOTPROVIDED":
                    e2e = ""
                reason = text(found, "RtrInf/Rsn/Cd") or text(found, "RtrInf/Rsn/Prtry")
                returned = self.tags("RtrInf")[0] in found or sub_family == "RRTN"
                remittance = " ".join(
                    (u.text or "").strip() for u in self.every(found, "RmtInf/Ustrd") if u.text
                )
                lines.append(
                    Line(
                        **base,
                        detail=e2e or str(position),
                        kind=self._kind(credit, returned or (reversal and bool(e2e)), bool(e2e), False),
                        amount=detail_amount if detail_amount is not None else amount,
                        end_to_end_id=e2e[:35],
                        return_reason=reason[:4],
                        reference=" ".join(filter(None, [remittance, entry_info]))[:500],
                        counterparty=(self.party_name(found, "Cdtr") if credit and returned else "")
                        or self.party_name(found, "Dbtr" if credit else "Cdtr")[:140],
                        source_line=detail.sourceline or line_no,
                        counterparty_iban=self.first_text(
                            found, "RltdPties/DbtrAcct/Id/IBAN" if credit else "RltdPties/CdtrAcct/Id/IBAN"
                        )[:34],
                    )
                )
        else:
            is_batch = bool(base["batch_ref"]) or len(details) > 1
            lines.append(
                Line(
                    **base,
                    detail="0",
                    kind=self._kind(credit, sub_family == "RRTN", False, is_batch),
                    amount=amount,
                    end_to_end_id="",
                    return_reason="",
                    reference=entry_info[:500],
                    counterparty="",
                    source_line=line_no,
                )
            )
        return lines

    def _detail_amount(self, detail: dict, currency: str) -> int | None:
        found = self.first(detail, "Amt")
        if found is None:
            found = self.first(detail, "AmtDtls/TxAmt/Amt")
        if found is None:
            found = self.first(detail, "AmtDtls/InstdAmt/Amt")
        if found is None:
            return None
        detail_currency = found.get("Ccy", currency)
        return _minor(found.text, detail_currency, self.message, found.sourceline or 0)

    @staticmethod
    def _kind(credit: bool, returned: bool, has_e2e: bool, batch: bool) -> str:
        if credit:
            return "return" if returned else "deposit"
        if batch:
            return "batch"
        return "payout" if has_e2e else "other"

    def header(self, element, block: StatementBlock) -> None:
        """Id, account and balances of a Stmt/Ntfctn whose entries have been read already."""
        block.statement_id = self.text(element, "Id")
        block.account = self.text(element, "Acct/Id/IBAN") or self.text(element, "Acct/Id/Othr/Id")
        block.currency = self.text(element, "Acct/Ccy")
        sequence = self.text(element, "ElctrncSeqNb")
        block.sequence = int(sequence) if sequence.isdigit() else None
        for balance in self.findall(element, "Bal"):
            code = self.text(balance, "Tp/CdOrPrtry/Cd")
            amount_element = self.find(balance, "Amt")
            if amount_element is None:
                _refuse(self.message, balance.sourceline, _("a balance without an amount."))
            currency = amount_element.get("Ccy", "")
            block.currency = block.currency or currency
            value = _minor(amount_element.text, currency, self.message, balance.sourceline or 0)
            if self.text(balance, "CdtDbtInd") == "DBIT":
                value = -value
            if code in ("OPBD", "PRCD") and block.opening_balance is None:
                block.opening_balance = value
            elif code == "CLBD":
                block.closing_balance = value
                block.closing_date = _date(self.find(balance, "Dt"))


def camt_read(data: bytes, *, progress: Callable[[int], None] | None = None) -> StatementFile:
    """Every line of a camt.053/camt.054 file, or SchemaError (line and reason) for a bad file."""
    max_bytes = getattr(settings, "STATEMENT_MAX_BYTES", DEFAULT_MAX_BYTES)
    if len(data) > max_bytes:
        raise SchemaError(
            _("The file is %(size)s MB; statements of at most %(max)s MB are accepted.")
            % {"size": len(data) // 2**20, "max": max_bytes // 2**20},
            line=None,
            reason="too large",
        )
    if not data.strip():
        raise SchemaError(_("The file is empty."), line=None, reason="empty")
    message = message_detect(data)
    # ISO 20022 messages have no DTD: one in a bank file can only be an entity trick (a "billion
    # laughs" bomb or an external entity), refused before the parser sees it.
    for marker in (b"<!DOCTYPE", b"<!ENTITY"):
        position = data.find(marker)
        if position >= 0:
            _refuse(message, _line_of(data, position), _("a document type declaration (DTD) is not allowed."))
    # Every version read is validated against its official schema: a file the schema refuses is
    # refused, and a version whose schema is missing cannot be read at all (schema_for says so).
    schema = schema_for(message)
    reader = _Reader(message)
    ns = reader.ns
    statement_tag = ns + ("Stmt" if message.startswith("camt.053") else "Ntfctn")
    entry_tag, root_tag, msg_id_tag = ns + "Ntry", ns + "Document", ns + "MsgId"
    blocks: list[StatementBlock] = []
    msg_id = ""
    ended = False
    read = 0
    try:
        events = etree.iterparse(
            io.BytesIO(data),
            events=("end",),
            tag=(entry_tag, statement_tag, root_tag, msg_id_tag),
            schema=schema,
            resolve_entities=False,
            no_network=True,
            load_dtd=False,
            huge_tree=False,
            remove_comments=True,
            remove_pis=True,
        )
        # Only the elements named here reach Python: an entry's lines wait in `pending` until the
        # end of the statement holding them.
        pending: list[Line] = []
        for _event, element in events:
            tag = element.tag
            if tag == entry_tag:
                pending.extend(reader.entry(element))
                read += 1
                if progress is not None and read % 2000 == 0:
                    progress(read)
                # Entries are done with once read: keep memory flat whatever the file's size.
                element.clear(keep_tail=False)
                parent = element.getparent()
                while element.getprevious() is not None and element.getprevious().tag == entry_tag:
                    parent.remove(element.getprevious())
            elif tag == statement_tag:
                blocks.append(
                    StatementBlock(statement_id="", account="", lines=pending, booked_total=reader.booked)
                )
                pending = []
                reader.booked = 0
                reader.header(element, blocks[-1])
                element.clear(keep_tail=False)
            elif tag == msg_id_tag and not msg_id and element.getparent().tag == ns + "GrpHdr":
                msg_id = (element.text or "").strip()
            elif tag == root_tag:
                ended = True
    except etree.XMLSyntaxError as error:
        if error.lineno in (0, None):
            # The streaming validator gives no line number: read the bad file again, as a tree, for it.
            xsd_parse(data, message)
        _refuse(message, error.lineno, (error.msg or str(error)).replace(ns[:-1] + "}", ""))
    if not ended:
        _refuse(message, _line_of(data, len(data)), _("the file ends before the message does (truncated)."))
    if not blocks:
        _refuse(message, None, _("no statement or notification in the file."))
    for block in blocks:
        if not block.account:
            _refuse(message, None, _("a statement without an account."))
    if progress is not None:
        progress(read)
    return StatementFile(message=message, msg_id=msg_id, statements=blocks)
