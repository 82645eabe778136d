"""pain.002.001.10 customer payment status reports: written by the sandbox bank, read by the payouts.

A status can be given for the whole file (GrpSts), a payment batch (PmtInfSts) or one transaction
(TxSts). For a transaction the lowest level present wins, except that a rejected file or batch
rejects everything in it, whatever a lower level says: nothing of a rejected file is executed.
"""

import datetime
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from lxml import etree

from payouts.iso20022.text import identifier_check, xml_escape
from payouts.iso20022.types import Iso20022Error, TxStatus
from payouts.iso20022.validate import hardened_parser, namespace, xsd_parse, xsd_validate

MESSAGE = "pain.002.001.10"
TRANSACTION_STATUSES = frozenset(
    {"RCVD", "ACTC", "ACCP", "ACFC", "ACSP", "ACWC", "ACWP", "ACSC", "ACCC", "PDNG", "RJCT", "BLCK"}
)
GROUP_STATUSES = TRANSACTION_STATUSES | {"PART"}
INFO_MAX = 105  # AddtlInf is Max105Text
NOT_PROVIDED = "NOTPROVIDED"


@dataclass(frozen=True)
class StatusReport:
    msg_id: str
    original_msg_id: str
    original_msg_name: str
    group_status: str  # "" when the report gives none
    group_reason: str
    group_info: str
    # PmtInfId -> (status, reason, info) for batches that carry a status of their own
    batch_statuses: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    # one per transaction the report names, its effective status already resolved
    transactions: list[TxStatus] = field(default_factory=list)
    # EndToEndId -> the PmtInfId the report filed it under
    batch_of: dict[str, str] = field(default_factory=dict)

    @cached_property
    def _by_end_to_end_id(self) -> dict[str, TxStatus]:
        # status_of is asked once per payout of the file: a dict, not a scan of every transaction.
        found: dict[str, TxStatus] = {}
        for status in self.transactions:
            found.setdefault(status.end_to_end_id, status)
        return found

    def status_of(self, end_to_end_id: str, pmt_inf_id: str = "") -> TxStatus | None:
        """The effective status of one transaction of the original file, or None if nothing is said.

        Also answers for transactions the report does not list, from their batch's or the group's
        status: a bank may reject a whole file with one GrpSts and no transaction lines.
        """
        status = self._by_end_to_end_id.get(end_to_end_id)
        if status is not None:
            return status
        batch = self.batch_statuses.get(pmt_inf_id)
        if self.group_status == "RJCT":
            return TxStatus(end_to_end_id, "RJCT", self.group_reason, self.group_info)
        if batch is not None and batch[0] not in ("", "PART"):
            return TxStatus(end_to_end_id, *batch)
        if self.group_status not in ("", "PART"):
            return TxStatus(end_to_end_id, self.group_status, self.group_reason, self.group_info)
        return None


def pain002_xml(
    *,
    msg_id: str,
    created_at: datetime.datetime,
    original_msg_id: str,
    transactions: Iterable[tuple[str, str, str, str]],
    original_pmt_inf_id: str | Mapping[str, str] = "",
    original_msg_name: str = "pain.001.001.09",
    group_status: str | None = None,
    group_reason: str = "",
    group_info: str = "",
    validate: bool = True,
) -> bytes:
    """A status report on `original_msg_id`: one (EndToEndId, status, reason, info) per transaction.

    `original_pmt_inf_id` is the PmtInfId of every transaction, or a mapping EndToEndId -> PmtInfId
    when the original file had several batches. `group_status` defaults to the transactions' common
    status, PART when they differ.
    """
    identifier_check(msg_id, gettext_lazy("the status report id"))
    identifier_check(original_msg_id, gettext_lazy("the original message id"))
    if not isinstance(created_at, datetime.datetime) or created_at.utcoffset() is None:
        raise Iso20022Error(_("created_at must be a timezone-aware datetime, not %r.") % (created_at,))
    items = [TxStatus(*item) for item in transactions]
    for item in items:
        _status_check(item.end_to_end_id, item.status, item.reason, TRANSACTION_STATUSES)
    if group_status is None:
        statuses = {item.status for item in items}
        group_status = statuses.pop() if len(statuses) == 1 else ("PART" if statuses else "")
    if group_status:
        _status_check(gettext_lazy("the group"), group_status, group_reason, GROUP_STATUSES)

    batches: dict[str, list[TxStatus]] = {}
    for item in items:
        if isinstance(original_pmt_inf_id, Mapping):
            pmt_inf_id = original_pmt_inf_id.get(item.end_to_end_id, "") or NOT_PROVIDED
        else:
            pmt_inf_id = original_pmt_inf_id or NOT_PROVIDED
        batches.setdefault(pmt_inf_id, []).append(item)

    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<Document xmlns="{namespace(MESSAGE)}"><CstmrPmtStsRpt>\n'
        f"<GrpHdr><MsgId>{msg_id}</MsgId><CreDtTm>{created_at.isoformat(timespec='seconds')}</CreDtTm>"
        "</GrpHdr>\n"
        f"<OrgnlGrpInfAndSts><OrgnlMsgId>{original_msg_id}</OrgnlMsgId>"
        f"<OrgnlMsgNmId>{xml_escape(original_msg_name)}</OrgnlMsgNmId>"
        + (f"<GrpSts>{group_status}</GrpSts>" if group_status else "")
        + _reason(group_reason, group_info)
        + "</OrgnlGrpInfAndSts>\n"
    ]
    number = 0
    for pmt_inf_id, batch in batches.items():
        parts.append(f"<OrgnlPmtInfAndSts><OrgnlPmtInfId>{xml_escape(pmt_inf_id)}</OrgnlPmtInfId>\n")
        for item in batch:
            number += 1
            parts.append(
                f"<TxInfAndSts><StsId>{msg_id[:28]}-{number}</StsId>"
                f"<OrgnlEndToEndId>{xml_escape(item.end_to_end_id)}</OrgnlEndToEndId>"
                f"<TxSts>{item.status}</TxSts>{_reason(item.reason, item.info)}</TxInfAndSts>\n"
            )
        parts.append("</OrgnlPmtInfAndSts>\n")
    parts.append("</CstmrPmtStsRpt></Document>\n")
    xml = "".join(parts).encode()
    if validate:
        xsd_validate(xml, MESSAGE)
    return xml


def _status_check(what: str, status: str, reason: str, allowed: frozenset[str]) -> None:
    if status not in allowed:
        raise Iso20022Error(
            _("%(what)s: %(status)r is not a payment status code (one of %(codes)s).")
            % {"what": what, "status": status, "codes": ", ".join(sorted(allowed))}
        )
    if reason and not (len(reason) <= 4 and reason.isalnum() and reason.isupper()):
        raise Iso20022Error(
            _("%(what)s: %(reason)r is not a status reason code (four letters or digits such as AC01).")
            % {"what": what, "reason": reason}
        )


def _reason(reason: str, info: str) -> str:
    if not reason and not info:
        return ""
    info = " ".join(info.split())[:INFO_MAX]
    return (
        "<StsRsnInf>"
        + (f"<Rsn><Cd>{reason}</Cd></Rsn>" if reason else "")
        + (f"<AddtlInf>{xml_escape(info)}</AddtlInf>" if info else "")
        + "</StsRsnInf>"
    )


def pain002_parse(xml: bytes, *, validate: bool = True) -> StatusReport:
    """Read a status report (schema-checked unless `validate` is off) into a StatusReport."""
    if validate:
        root = xsd_parse(xml, MESSAGE)
    else:
        try:
            root = etree.fromstring(xml, hardened_parser())
        except etree.XMLSyntaxError as error:
            raise Iso20022Error(_("Not well-formed XML: %(error)s") % {"error": error}) from None
    ns = {"p": namespace(MESSAGE)}
    report = root.find("p:CstmrPmtStsRpt", ns)
    if report is None:
        raise Iso20022Error(_("Not a pain.002.001.10 customer payment status report."))

    def text(element, path: str) -> str:
        found = element.find(path, ns) if element is not None else None
        return (found.text or "").strip() if found is not None else ""

    def reason(element) -> tuple[str, str]:
        info = element.find("p:StsRsnInf", ns)
        if info is None:
            return "", ""
        code = text(info, "p:Rsn/p:Cd") or text(info, "p:Rsn/p:Prtry")
        extra = " ".join((line.text or "").strip() for line in info.findall("p:AddtlInf", ns))
        return code, extra.strip()

    group = report.find("p:OrgnlGrpInfAndSts", ns)
    group_status = text(group, "p:GrpSts")
    group_reason, group_info = reason(group)
    batch_statuses, transactions, batch_of = {}, [], {}
    for batch in report.findall("p:OrgnlPmtInfAndSts", ns):
        pmt_inf_id = text(batch, "p:OrgnlPmtInfId")
        batch_status = text(batch, "p:PmtInfSts")
        batch_reason, batch_info = reason(batch)
        if batch_status:
            batch_statuses[pmt_inf_id] = (batch_status, batch_reason, batch_info)
        for tx in batch.findall("p:TxInfAndSts", ns):
            e2e = text(tx, "p:OrgnlEndToEndId")
            status = text(tx, "p:TxSts")
            tx_reason, tx_info = reason(tx)
            if group_status == "RJCT":
                status, tx_reason, tx_info = "RJCT", tx_reason or group_reason, tx_info or group_info
            elif batch_status == "RJCT":
                status, tx_reason, tx_info = "RJCT", tx_reason or batch_reason, tx_info or batch_info
            elif not status:
                if batch_status and batch_status != "PART":
                    status, tx_reason, tx_info = batch_status, batch_reason, batch_info
                elif group_status != "PART":
                    status, tx_reason, tx_info = group_status, group_reason, group_info
            transactions.append(TxStatus(e2e, status, tx_reason, tx_info))
            batch_of[e2e] = pmt_inf_id
    return StatusReport(
        msg_id=text(report, "p:GrpHdr/p:MsgId"),
        original_msg_id=text(group, "p:OrgnlMsgId"),
        original_msg_name=text(group, "p:OrgnlMsgNmId"),
        group_status=group_status,
        group_reason=group_reason,
        group_info=group_info,
        batch_statuses=batch_statuses,
        transactions=transactions,
        batch_of=batch_of,
    )
