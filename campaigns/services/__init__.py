"""Campaigns' writes, one module per concern (refusals, landing, funding, brands, rules, campaigns);
each imports only those before it in that list."""
