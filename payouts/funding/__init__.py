"""Funding through the payment provider: each verified brand's virtual IBAN, the deposits its
signed webhooks report, and the reconciliation of the provider's transaction list with the ledger."""
