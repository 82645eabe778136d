"""The plain values the ISO 20022 writers take and return."""

import datetime
from dataclasses import dataclass
from typing import NamedTuple


class Iso20022Error(ValueError):
    """Input a bank file cannot be made from; the message says which item and why."""


class SchemaError(Iso20022Error):
    """A message that does not validate against its official schema (or is not well-formed XML)."""

    def __init__(self, message: str, *, line: int | None = None, reason: str = ""):
        super().__init__(message)
        self.line = line
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Debtor:
    """The platform's own account, the one every payout is paid from."""

    name: str
    iban: str
    bic: str = ""


@dataclass(frozen=True, slots=True)
class CreditTransfer:
    end_to_end_id: str
    amount_minor: int
    currency: str
    creditor_name: str
    creditor_iban: str
    creditor_bic: str = ""
    remittance: str = ""
    creditor_country: str = ""


@dataclass(frozen=True, slots=True)
class Pain001File:
    msg_id: str
    pmt_inf_ids: tuple[str, ...]
    end_to_end_ids: tuple[str, ...]
    number_of_transactions: int
    control_sum_minor: int
    xml: bytes


class TxStatus(NamedTuple):
    """One transaction's status in a pain.002: ("PO-1", "RJCT", "AC01", "Creditor IBAN invalid")."""

    end_to_end_id: str
    status: str
    reason: str = ""
    info: str = ""


@dataclass(frozen=True, slots=True)
class EntryDetail:
    """One payout inside a camt.054 entry (a TxDtls); `return_reason` makes it a returned payout."""

    end_to_end_id: str
    amount_minor: int
    msg_id: str = ""
    pmt_inf_id: str = ""
    instr_id: str = ""
    creditor_name: str = ""
    creditor_iban: str = ""
    remittance: str = ""
    return_reason: str = ""  # AC01, AC04, MD07, MS03 ...
    return_info: str = ""
    instant: bool = False


@dataclass(frozen=True, slots=True)
class Entry:
    """One booking on the platform account (a Ntry): a payout, a batch of payouts, or a return.

    `credit` is False for money leaving (a payout debit) and True for money coming back (a return).
    With `batch_pmt_inf_id` the entry is a batch booking and carries NtryDtls/Btch.
    """

    amount_minor: int
    currency: str
    credit: bool
    booking_date: datetime.date
    account_servicer_ref: str
    details: tuple[EntryDetail, ...] = ()
    value_date: datetime.date | None = None
    status: str = "BOOK"
    family: str = "ICDT"
    sub_family: str = ""  # default: ESCT for a payout, RRTN for a return
    batch_msg_id: str = ""
    batch_pmt_inf_id: str = ""
    additional_info: str = ""
