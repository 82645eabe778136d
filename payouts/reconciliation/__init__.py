"""Reconciliation: bank statements in, every line matched to what it pays, or an exception.

Only the platform's bank channel books money: the bank's own feed fetched on a schedule, the
folder the bank drops its files in, or a file platform staff upload that a second staff member
approves. A brand may hand in its own statement only to compare
(payouts.reconciliation.selectors.statement_compare), which writes nothing. Each camt.053 must follow on
from the one before it (sequence, opening = previous closing) and its entries must add up; the
ledger's platform bank is then compared with the bank's closing balance, and a difference is an
alert that pauses payouts above a set amount.

A statement file is read whole before anything is written (payouts.iso20022.camt): a bad file
imports nothing. Its lines are then written in one transaction, each keyed by the bank's entry
reference (or a hash of the booking where the bank gives none), so importing a file twice, or a
camt.054 after the camt.053 that holds the same bookings, adds nothing.

Matching goes through the payouts' own services (payout_settle, payout_return) and the brand's
deposit service, which are idempotent and conditional: a line matched twice, or a settlement the
PSP's feed reported first, books once. Those services open their own durable transactions, so
matching runs line by line outside any enclosing one; lines whose payout needs no transition (the
common case: the PSP already said it settled) are matched with one set-based UPDATE instead.

Where things live: statement_import (the channels, reading and writing statements), integrity
(the chain and the bank drift), matching (lines to payouts, batches and deposits), exceptions
(resolving them), references (brand funding references), rules (refusals and the payout states
matching reads), selectors (the brand's dashboard), bank_health (the checks and metrics), admin, views,
tasks.
"""
