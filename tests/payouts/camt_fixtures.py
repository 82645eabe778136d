"""Bank statements for tests, in the element structures of camt.053/camt.054 .001.02 and .001.08
(ISO 20022 reference, section 4): booked entries, batch bookings, returns, deposits."""

from dataclasses import dataclass, field
from decimal import Decimal

from django.utils import timezone

ACCOUNT = "DE02100100100006820101"


@dataclass
class Tx:
    end_to_end_id: str
    amount: int
    reason: str = ""  # a return reason makes it a returned payout
    name: str = "Pat Example"


@dataclass
class Ntry:
    amount: int
    credit: bool = False
    ref: str = ""
    txs: list[Tx] = field(default_factory=list)
    batch: str = ""  # Btch/PmtInfId and MsgId
    info: str = ""
    status: str = "BOOK"
    currency: str = "EUR"
    remittance: str = ""
    creditor_iban: str = ""  # where money going out was sent (the payer's statement names it)


def _amt(minor: int) -> str:
    return str(Decimal(minor).scaleb(-2))


def _tx(tx: Tx, version: str, credit: bool, currency: str) -> str:
    indicator = "CRDT" if credit else "DBIT"
    if version == "08":
        amount = f'<Amt Ccy="{currency}">{_amt(tx.amount)}</Amt><CdtDbtInd>{indicator}</CdtDbtInd>'
        party = f"<RltdPties><Cdtr><Pty><Nm>{tx.name}</Nm></Pty></Cdtr></RltdPties>"
    else:
        amount = f'<AmtDtls><TxAmt><Amt Ccy="{currency}">{_amt(tx.amount)}</Amt></TxAmt></AmtDtls>'
        party = f"<RltdPties><Cdtr><Nm>{tx.name}</Nm></Cdtr></RltdPties>"
    returned = f"<RtrInf><Rsn><Cd>{tx.reason}</Cd></Rsn></RtrInf>" if tx.reason else ""
    return (
        f"<TxDtls><Refs><EndToEndId>{tx.end_to_end_id}</EndToEndId></Refs>{amount}{party}{returned}</TxDtls>"
    )


def _entry(entry: Ntry, version: str, day: str) -> str:
    indicator = "CRDT" if entry.credit else "DBIT"
    status = f"<Sts><Cd>{entry.status}</Cd></Sts>" if version == "08" else f"<Sts>{entry.status}</Sts>"
    returned = any(tx.reason for tx in entry.txs)
    family, sub = ("ICDT", "RRTN") if returned else (("RCDT", "ESCT") if entry.credit else ("ICDT", "ESCT"))
    details = ""
    if entry.batch:
        details += (
            f"<Btch><MsgId>{entry.batch}</MsgId><PmtInfId>{entry.batch}</PmtInfId>"
            f"<NbOfTxs>{max(len(entry.txs), 1)}</NbOfTxs></Btch>"
        )
    details += "".join(_tx(tx, version, entry.credit, entry.currency) for tx in entry.txs)
    if entry.remittance or entry.creditor_iban:
        account = (
            f"<RltdPties><CdtrAcct><Id><IBAN>{entry.creditor_iban}</IBAN></Id></CdtrAcct></RltdPties>"
            if entry.creditor_iban
            else ""
        )
        remittance = f"<RmtInf><Ustrd>{entry.remittance}</Ustrd></RmtInf>" if entry.remittance else ""
        details += f"<TxDtls>{account}{remittance}</TxDtls>"
    return (
        f'<Ntry><Amt Ccy="{entry.currency}">{_amt(entry.amount)}</Amt><CdtDbtInd>{indicator}</CdtDbtInd>'
        f"{status}<BookgDt><Dt>{day}</Dt></BookgDt><ValDt><Dt>{day}</Dt></ValDt>"
        + (f"<AcctSvcrRef>{entry.ref}</AcctSvcrRef>" if entry.ref else "")
        + f"<BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>{family}</Cd>"
        + f"<SubFmlyCd>{sub}</SubFmlyCd></Fmly></Domn></BkTxCd>"
        + (f"<NtryDtls>{details}</NtryDtls>" if details else "")
        + (f"<AddtlNtryInf>{entry.info}</AddtlNtryInf>" if entry.info else "")
        + "</Ntry>\n"
    )


def camt053(
    entries,
    *,
    version="08",
    msg_id="STMT-1",
    opening=1_000_000,
    day=None,
    closing=None,
    seq=1,
    account=ACCOUNT,
) -> bytes:
    day = (day or timezone.localdate()).isoformat()
    if closing is None:
        closing = opening + sum(e.amount if e.credit else -e.amount for e in entries if e.status == "BOOK")

    def balance(code, value):
        return (
            f"<Bal><Tp><CdOrPrtry><Cd>{code}</Cd></CdOrPrtry></Tp>"
            f'<Amt Ccy="EUR">{_amt(abs(value))}</Amt>'
            f"<CdtDbtInd>{'CRDT' if value >= 0 else 'DBIT'}</CdtDbtInd>"
            f"<Dt><Dt>{day}</Dt></Dt></Bal>"
        )

    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.{version}"><BkToCstmrStmt>\n'
        f"<GrpHdr><MsgId>{msg_id}</MsgId><CreDtTm>{day}T22:00:00</CreDtTm></GrpHdr>\n"
        f"<Stmt><Id>{msg_id}-1</Id><ElctrncSeqNb>{seq}</ElctrncSeqNb><CreDtTm>{day}T22:00:00</CreDtTm>\n"
        f"<Acct><Id><IBAN>{account}</IBAN></Id><Ccy>EUR</Ccy></Acct>\n"
        + balance("OPBD", opening)
        + balance("CLBD", closing)
        + "\n"
        + "".join(_entry(e, version, day) for e in entries)
        + "</Stmt></BkToCstmrStmt></Document>\n"
    ).encode()


def camt054(entries, *, version="08", msg_id="NTF-1", day=None, account=ACCOUNT) -> bytes:
    day = (day or timezone.localdate()).isoformat()
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.{version}"><BkToCstmrDbtCdtNtfctn>\n'
        f"<GrpHdr><MsgId>{msg_id}</MsgId><CreDtTm>{day}T10:00:00</CreDtTm></GrpHdr>\n"
        f"<Ntfctn><Id>{msg_id}-1</Id>"
        + (f"<CreDtTm>{day}T10:00:00</CreDtTm>" if version == "02" else "")
        + f"<Acct><Id><IBAN>{account}</IBAN></Id></Acct>\n"
        + "".join(_entry(e, version, day) for e in entries)
        + "</Ntfctn></BkToCstmrDbtCdtNtfctn></Document>\n"
    ).encode()


def paid(payout, ref=None, **kw) -> Ntry:
    return Ntry(
        amount=payout.amount,
        ref=ref or f"REF-{payout.pk}",
        txs=[Tx(payout.end_to_end_id, payout.amount)],
        **kw,
    )


def returned(payout, reason, ref=None) -> Ntry:
    return Ntry(
        amount=payout.amount,
        credit=True,
        ref=ref or f"RET-{payout.pk}",
        txs=[Tx(payout.end_to_end_id, payout.amount, reason=reason)],
    )
