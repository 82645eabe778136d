"""Outgoing webhooks: the endpoints brands register, the signed deliveries, and the pinned HTTP
transport that only reaches public addresses."""
