"""The audience a brand keeps: its consented people (page, filters, CSV export), its WhatsApp
template sends and its CRM sync. The consents are verification's ledger; this reads it, and sends
only through payouts.notifications."""
