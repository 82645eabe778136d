"""pain.001.001.09 files for SEPA Credit Transfer and SEPA Instant (SCT Inst).

Written as text, one transaction a line, because a file of 100,000 payouts has to be made and
schema-validated well within a second or two; an element tree costs several times that. What goes
between the tags is safe by construction: names and remittance are transliterated to the SEPA set,
identifiers, IBANs and BICs are checked against it, and xml_escape() guards the rest.

Identifiers are derived from the content, never from the clock or a random source: making the same
batch twice (after a crash before upload, say) gives the same MsgId, so the bank refuses the second
upload as a duplicate instead of paying twice.
"""

import base64
import datetime
import hashlib
from collections.abc import Sequence

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from payouts.iso20022.text import (
    bic_check,
    country_check,
    identifier_check,
    name_text,
    sepa_iban,
    sepa_text,
    xml_escape,
)
from payouts.iso20022.types import CreditTransfer, Debtor, Iso20022Error, Pain001File
from payouts.iso20022.validate import xsd_validate

MESSAGE = "pain.001.001.09"
NAME_MAX = 70  # SEPA's limit; the schema allows 140
REMITTANCE_MAX = 140
ID_MAX = 35
AMOUNT_MAX_MINOR = 99_999_999_999  # EUR 999,999,999.99, the SCT scheme maximum
DIGEST_CHARS = 12  # base32: 60 bits
_END_TO_END_ID = gettext_lazy("the EndToEndId")
_CREDITOR_IBAN = gettext_lazy("the creditor IBAN")
_CREDITOR_BIC = gettext_lazy("the creditor BIC")
_CREDITOR_COUNTRY = gettext_lazy("the creditor country")


def amount_text(amount_minor: int) -> str:
    """EUR minor units as the file's decimal: 150 -> "1.50" (EUR is the only SEPA currency)."""
    units, cents = divmod(amount_minor, 100)
    return f"{units}.{cents:02d}"


def pain001_files(
    *,
    debtor: Debtor,
    transfers: Sequence[CreditTransfer],
    msg_id_prefix: str,
    created_at: datetime.datetime,
    execution_date: datetime.date,
    instant: bool = False,
    max_per_file: int,
    max_per_batch: int | None = None,
    validate: bool = True,
) -> list[Pain001File]:
    """The transfers as pain.001 files of at most `max_per_file` transactions each, in input order.

    Each file holds one PmtInf (payment batch) per `max_per_batch` transactions (one per file when
    None). `instant` asks for SCT Inst: SvcLvl SEPA with LclInstrm INST and one booking per
    transaction. Bad input raises Iso20022Error naming the transfer; `validate` checks each file
    against the official schema before it is returned.
    """
    if not transfers:
        raise Iso20022Error(_("A pain.001 file needs at least one credit transfer."))
    if isinstance(max_per_file, bool) or not isinstance(max_per_file, int) or max_per_file < 1:
        raise Iso20022Error(_("max_per_file must be a positive whole number, not %r.") % (max_per_file,))
    if max_per_batch is not None and (
        isinstance(max_per_batch, bool) or not isinstance(max_per_batch, int) or max_per_batch < 1
    ):
        raise Iso20022Error(_("max_per_batch must be a positive whole number, not %r.") % (max_per_batch,))
    if not isinstance(created_at, datetime.datetime) or created_at.utcoffset() is None:
        raise Iso20022Error(_("created_at must be a timezone-aware datetime, not %r.") % (created_at,))
    if isinstance(execution_date, datetime.datetime) or not isinstance(execution_date, datetime.date):
        raise Iso20022Error(_("execution_date must be a date, not %r.") % (execution_date,))
    identifier_check(msg_id_prefix, gettext_lazy("the message id prefix"))

    debtor_name = sepa_text(debtor.name, NAME_MAX)
    if not debtor_name:
        raise Iso20022Error(_("The debtor needs a name."))
    debtor_iban = sepa_iban(debtor.iban, gettext_lazy("the debtor IBAN"))
    bic_check(debtor.bic, gettext_lazy("the debtor BIC"))

    rows, amounts, ids, content = _transactions(transfers)
    batch_size = max_per_batch or max_per_file
    # Everything that shapes the files is in the digest, the creation time is not: see the docstring.
    content.update(
        f"{debtor_name}\x1f{debtor_iban}\x1f{debtor.bic}\x1f{execution_date.isoformat()}\x1f{instant:d}"
        f"\x1f{max_per_file}\x1f{batch_size}".encode()
    )
    digest = base64.b32encode(content.digest()).decode()[:DIGEST_CHARS]
    files_count = -(-len(rows) // max_per_file)
    batches_per_file = -(-min(max_per_file, len(rows)) // batch_size)
    base = f"{msg_id_prefix}-{digest}"
    longest_pmt_inf_id = len(f"{base}-{files_count}-{batches_per_file}")
    if longest_pmt_inf_id > ID_MAX:
        raise Iso20022Error(
            _(
                "The message id prefix %(prefix)r is too long: with it the payment information ids "
                "would have %(length)s characters, SEPA allows %(max)s. Use at most %(fit)s characters."
            )
            % {
                "prefix": msg_id_prefix,
                "length": longest_pmt_inf_id,
                "max": ID_MAX,
                "fit": len(msg_id_prefix) - (longest_pmt_inf_id - ID_MAX),
            }
        )

    header = _payment_header(
        debtor_name=xml_escape(debtor_name),
        debtor_iban=debtor_iban,
        debtor_bic=debtor.bic,
        execution_date=execution_date.isoformat(),
        instant=instant,
    )
    created = created_at.isoformat(timespec="seconds")
    files = []
    for file_no, start in enumerate(range(0, len(rows), max_per_file), start=1):
        stop = min(start + max_per_file, len(rows))
        msg_id = f"{base}-{file_no}"
        pmt_inf_ids, parts = [], []
        for batch_no, batch_start in enumerate(range(start, stop, batch_size), start=1):
            batch_stop = min(batch_start + batch_size, stop)
            pmt_inf_id = f"{msg_id}-{batch_no}"
            pmt_inf_ids.append(pmt_inf_id)
            parts.append(
                f"<PmtInf><PmtInfId>{pmt_inf_id}</PmtInfId><PmtMtd>TRF</PmtMtd>{header[0]}"
                f"<NbOfTxs>{batch_stop - batch_start}</NbOfTxs>"
                f"<CtrlSum>{amount_text(sum(amounts[batch_start:batch_stop]))}</CtrlSum>{header[1]}\n"
            )
            parts.extend(rows[batch_start:batch_stop])
            parts.append("</PmtInf>\n")
        control_sum = sum(amounts[start:stop])
        head = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<Document xmlns="urn:iso:std:iso:20022:tech:xsd:{MESSAGE}"><CstmrCdtTrfInitn>\n'
            f"<GrpHdr><MsgId>{msg_id}</MsgId><CreDtTm>{created}</CreDtTm>"
            f"<NbOfTxs>{stop - start}</NbOfTxs><CtrlSum>{amount_text(control_sum)}</CtrlSum>"
            f"<InitgPty><Nm>{xml_escape(debtor_name)}</Nm></InitgPty></GrpHdr>\n"
        )
        xml = (head + "".join(parts) + "</CstmrCdtTrfInitn></Document>\n").encode()
        if validate:
            xsd_validate(xml, MESSAGE)
        files.append(
            Pain001File(
                msg_id=msg_id,
                pmt_inf_ids=tuple(pmt_inf_ids),
                end_to_end_ids=tuple(ids[start:stop]),
                number_of_transactions=stop - start,
                control_sum_minor=control_sum,
                xml=xml,
            )
        )
    return files


def _payment_header(*, debtor_name, debtor_iban, debtor_bic, execution_date, instant) -> tuple[str, str]:
    """The PmtInf elements before and after NbOfTxs/CtrlSum, the same for every batch."""
    # Instant payouts are booked one by one: a batch booking would hide which payout failed.
    booking = "false" if instant else "true"
    local = "<LclInstrm><Cd>INST</Cd></LclInstrm>" if instant else ""
    agent = f"<BICFI>{debtor_bic}</BICFI>" if debtor_bic else "<Othr><Id>NOTPROVIDED</Id></Othr>"
    return (
        f"<BtchBookg>{booking}</BtchBookg>",
        f"<PmtTpInf><SvcLvl><Cd>SEPA</Cd></SvcLvl>{local}</PmtTpInf>"
        f"<ReqdExctnDt><Dt>{execution_date}</Dt></ReqdExctnDt>"
        f"<Dbtr><Nm>{debtor_name}</Nm></Dbtr>"
        f"<DbtrAcct><Id><IBAN>{debtor_iban}</IBAN></Id></DbtrAcct>"
        f"<DbtrAgt><FinInstnId>{agent}</FinInstnId></DbtrAgt><ChrgBr>SLEV</ChrgBr>",
    )


def _transactions(transfers: Sequence[CreditTransfer]):
    """(one CdtTrfTxInf line each, amounts, EndToEndIds, content digest), refusing bad transfers."""
    rows, amounts, ids, seen = [], [], [], set()
    for position, transfer in enumerate(transfers, start=1):
        try:
            row, amount, e2e = _transaction(transfer, seen)
        except Iso20022Error as error:
            raise Iso20022Error(
                _("Transfer %(n)s (EndToEndId %(id)r): %(error)s")
                % {"n": position, "id": transfer.end_to_end_id, "error": error}
            ) from None
        seen.add(e2e)
        rows.append(row)
        amounts.append(amount)
        ids.append(e2e)
    # A row holds every field of its transfer as written, so hashing the rows hashes the content.
    return rows, amounts, ids, hashlib.sha256("".join(rows).encode())


def _transaction(transfer: CreditTransfer, seen: set[str]) -> tuple[str, int, str]:
    e2e = identifier_check(transfer.end_to_end_id, _END_TO_END_ID)
    if e2e in seen:
        raise Iso20022Error(_("it appears twice in this batch; every payout needs its own EndToEndId."))
    if transfer.currency != "EUR":
        raise Iso20022Error(
            _("it is in %(currency)r: SEPA credit transfers are in EUR only.")
            % {"currency": transfer.currency}
        )
    amount = transfer.amount_minor
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise Iso20022Error(
            _("the amount must be a whole number of cents, not %(amount)r.") % {"amount": amount}
        )
    if not 0 < amount <= AMOUNT_MAX_MINOR:
        raise Iso20022Error(
            _("the amount must be between 0.01 and 999999999.99 EUR, not %(amount)s cents.")
            % {"amount": amount}
        )
    name = name_text(transfer.creditor_name, NAME_MAX) if isinstance(transfer.creditor_name, str) else ""
    if not name:
        raise Iso20022Error(
            _("the creditor name %(name)r has nothing left in the SEPA character set.")
            % {"name": transfer.creditor_name}
        )
    iban = sepa_iban(transfer.creditor_iban, _CREDITOR_IBAN)
    bic = bic_check(transfer.creditor_bic, _CREDITOR_BIC)
    country = country_check(transfer.creditor_country, _CREDITOR_COUNTRY)
    if not isinstance(transfer.remittance, str):
        raise Iso20022Error(_("the remittance information must be text."))
    remittance = sepa_text(transfer.remittance, REMITTANCE_MAX) if transfer.remittance else ""
    row = (
        f"<CdtTrfTxInf><PmtId><InstrId>{e2e}</InstrId><EndToEndId>{e2e}</EndToEndId></PmtId>"
        f'<Amt><InstdAmt Ccy="EUR">{amount_text(amount)}</InstdAmt></Amt>'
        + (f"<CdtrAgt><FinInstnId><BICFI>{bic}</BICFI></FinInstnId></CdtrAgt>" if bic else "")
        + f"<Cdtr><Nm>{xml_escape(name)}</Nm>"
        + (f"<PstlAdr><Ctry>{country}</Ctry></PstlAdr>" if country else "")
        + f"</Cdtr><CdtrAcct><Id><IBAN>{iban}</IBAN></Id></CdtrAcct>"
        + (f"<RmtInf><Ustrd>{xml_escape(remittance)}</Ustrd></RmtInf>" if remittance else "")
        + "</CdtTrfTxInf>\n"
    )
    return row, amount, e2e
