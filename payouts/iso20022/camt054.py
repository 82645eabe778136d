"""camt.054.001.08 debit/credit notifications, as the sandbox bank sends them for booked payouts.

One notification per booking run: a single payout, a batch booking (one entry, its total, and one
TxDtls per payout) or a return (a credit entry, BkTxCd PMNT/ICDT/RRTN, with RtrInf). The element
choices follow the examples of the reference (Refs/EndToEndId, TxDtls/Amt + CdtDbtInd,
RltdPties/Cdtr/Pty/Nm, NtryDtls/Btch), which is what a statement parser built on it reads.
"""

import datetime
from collections.abc import Sequence

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from payouts.iso20022.pain001 import amount_text
from payouts.iso20022.text import identifier_check, sepa_iban, sepa_text, xml_escape
from payouts.iso20022.types import Entry, EntryDetail, Iso20022Error
from payouts.iso20022.validate import namespace, xsd_validate

MESSAGE = "camt.054.001.08"
RETURN_REASONS = frozenset(
    {
        "AC01",
        "AC04",
        "AC06",
        "AG01",
        "AG02",
        "AM05",
        "BE04",
        "CNOR",
        "ERIN",
        "FOCR",
        "MD07",
        "MS02",
        "MS03",
        "RC01",
        "RR01",
        "RR02",
        "RR03",
        "RR04",
    }
)
ENTRY_STATUSES = frozenset({"BOOK", "PDNG", "INFO", "FUTR"})
_BATCH_MSG_ID = gettext_lazy("the batch message id")
_BATCH_PMT_INF_ID = gettext_lazy("the batch PmtInfId")
_MSG_ID = gettext_lazy("the MsgId")
_PMT_INF_ID = gettext_lazy("the PmtInfId")
_INSTR_ID = gettext_lazy("the InstrId")
_NOTIFICATION_ID = gettext_lazy("the notification id")


def camt054_xml(
    *,
    msg_id: str,
    created_at: datetime.datetime,
    account_iban: str,
    entries: Sequence[Entry],
    notification_id: str = "",
    account_currency: str = "EUR",
    validate: bool = True,
) -> bytes:
    """A notification of `entries` on the platform account `account_iban`."""
    identifier_check(msg_id, gettext_lazy("the notification message id"))
    if not isinstance(created_at, datetime.datetime) or created_at.utcoffset() is None:
        raise Iso20022Error(_("created_at must be a timezone-aware datetime, not %r.") % (created_at,))
    iban = sepa_iban(account_iban, gettext_lazy("the account IBAN"))
    if not entries:
        raise Iso20022Error(_("A notification needs at least one entry."))
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<Document xmlns="{namespace(MESSAGE)}"><BkToCstmrDbtCdtNtfctn>\n'
        f"<GrpHdr><MsgId>{msg_id}</MsgId><CreDtTm>{created_at.isoformat(timespec='seconds')}</CreDtTm>"
        "</GrpHdr>\n"
        f"<Ntfctn><Id>{identifier_check(notification_id or msg_id, _NOTIFICATION_ID)}</Id>"
        f"<CreDtTm>{created_at.isoformat(timespec='seconds')}</CreDtTm>"
        f"<Acct><Id><IBAN>{iban}</IBAN></Id><Ccy>{xml_escape(account_currency)}</Ccy></Acct>\n"
    ]
    for position, entry in enumerate(entries, start=1):
        try:
            parts.append(_entry(entry))
        except Iso20022Error as error:
            raise Iso20022Error(_("Entry %(n)s: %(error)s") % {"n": position, "error": error}) from None
    parts.append("</Ntfctn></BkToCstmrDbtCdtNtfctn></Document>\n")
    xml = "".join(parts).encode()
    if validate:
        xsd_validate(xml, MESSAGE)
    return xml


def _entry(entry: Entry) -> str:
    if (
        isinstance(entry.amount_minor, bool)
        or not isinstance(entry.amount_minor, int)
        or entry.amount_minor <= 0
    ):
        raise Iso20022Error(_("the amount must be a positive whole number of cents."))
    if entry.currency != "EUR":
        raise Iso20022Error(
            _("only EUR entries are written, not %(currency)r.") % {"currency": entry.currency}
        )
    if entry.status not in ENTRY_STATUSES:
        raise Iso20022Error(_("%(status)r is not an entry status.") % {"status": entry.status})
    if entry.details and sum(detail.amount_minor for detail in entry.details) != entry.amount_minor:
        raise Iso20022Error(_("the amounts of its transactions do not add up to the entry's amount."))
    identifier_check(entry.account_servicer_ref, gettext_lazy("the account servicer reference"))
    indicator = "CRDT" if entry.credit else "DBIT"
    sub_family = entry.sub_family or ("RRTN" if entry.credit else "ESCT")
    value_date = entry.value_date or entry.booking_date
    details = []
    if entry.batch_pmt_inf_id:
        batch_msg_id = identifier_check(entry.batch_msg_id, _BATCH_MSG_ID) if entry.batch_msg_id else ""
        batch_pmt_inf_id = identifier_check(entry.batch_pmt_inf_id, _BATCH_PMT_INF_ID)
        details.append(
            "<Btch>"
            + (f"<MsgId>{batch_msg_id}</MsgId>" if batch_msg_id else "")
            + f"<PmtInfId>{batch_pmt_inf_id}</PmtInfId><NbOfTxs>{len(entry.details)}</NbOfTxs>"
            f'<TtlAmt Ccy="EUR">{amount_text(entry.amount_minor)}</TtlAmt><CdtDbtInd>{indicator}</CdtDbtInd>'
            "</Btch>\n"
        )
    details.extend(_detail(detail, indicator) for detail in entry.details)
    info = sepa_text(entry.additional_info, 500) if entry.additional_info else ""
    return (
        f'<Ntry><Amt Ccy="EUR">{amount_text(entry.amount_minor)}</Amt><CdtDbtInd>{indicator}</CdtDbtInd>'
        f"<Sts><Cd>{entry.status}</Cd></Sts>"
        f"<BookgDt><Dt>{entry.booking_date.isoformat()}</Dt></BookgDt>"
        f"<ValDt><Dt>{value_date.isoformat()}</Dt></ValDt>"
        f"<AcctSvcrRef>{entry.account_servicer_ref}</AcctSvcrRef>"
        f"<BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>{xml_escape(entry.family)}</Cd>"
        f"<SubFmlyCd>{xml_escape(sub_family)}</SubFmlyCd></Fmly></Domn></BkTxCd>\n"
        + (f"<NtryDtls>{''.join(details)}</NtryDtls>" if details else "")
        + (f"<AddtlNtryInf>{xml_escape(info)}</AddtlNtryInf>" if info else "")
        + "</Ntry>\n"
    )


def _detail(detail: EntryDetail, indicator: str) -> str:
    e2e = identifier_check(detail.end_to_end_id, gettext_lazy("the EndToEndId"))
    if (
        isinstance(detail.amount_minor, bool)
        or not isinstance(detail.amount_minor, int)
        or detail.amount_minor <= 0
    ):
        raise Iso20022Error(_("%(id)s: the amount must be a positive whole number of cents.") % {"id": e2e})
    if detail.return_reason and detail.return_reason not in RETURN_REASONS:
        raise Iso20022Error(
            _("%(id)s: %(reason)r is not a SEPA return reason (one of %(codes)s).")
            % {"id": e2e, "reason": detail.return_reason, "codes": ", ".join(sorted(RETURN_REASONS))}
        )
    refs = "".join(
        f"<{tag}>{identifier_check(value, label)}</{tag}>"
        for tag, value, label in (
            ("MsgId", detail.msg_id, _MSG_ID),
            ("PmtInfId", detail.pmt_inf_id, _PMT_INF_ID),
            ("InstrId", detail.instr_id, _INSTR_ID),
        )
        if value
    )
    refs += f"<EndToEndId>{e2e}</EndToEndId>"
    name = sepa_text(detail.creditor_name, 70) if detail.creditor_name else ""
    iban = sepa_iban(detail.creditor_iban, gettext_lazy("the creditor IBAN")) if detail.creditor_iban else ""
    parties = (
        "<RltdPties>"
        + (f"<Cdtr><Pty><Nm>{xml_escape(name)}</Nm></Pty></Cdtr>" if name else "")
        + (f"<CdtrAcct><Id><IBAN>{iban}</IBAN></Id></CdtrAcct>" if iban else "")
        + "</RltdPties>"
        if name or iban
        else ""
    )
    remittance = sepa_text(detail.remittance, 140) if detail.remittance else ""
    return_info = " ".join(detail.return_info.split())[:105]
    returned = (
        "<RtrInf>"
        + (f"<Rsn><Cd>{detail.return_reason}</Cd></Rsn>" if detail.return_reason else "")
        + (f"<AddtlInf>{xml_escape(return_info)}</AddtlInf>" if return_info else "")
        + "</RtrInf>"
        if detail.return_reason or return_info
        else ""
    )
    return (
        f'<TxDtls><Refs>{refs}</Refs><Amt Ccy="EUR">{amount_text(detail.amount_minor)}</Amt>'
        f"<CdtDbtInd>{indicator}</CdtDbtInd>{parties}"
        + ("<LclInstrm><Cd>INST</Cd></LclInstrm>" if detail.instant else "")
        + (f"<RmtInf><Ustrd>{xml_escape(remittance)}</Ustrd></RmtInf>" if remittance else "")
        + f"{returned}</TxDtls>\n"
    )
