"""Verification's writes, one module per concern (refusals, participants, rewards, provider_events,
shares, review); each imports only those before it in that list."""
