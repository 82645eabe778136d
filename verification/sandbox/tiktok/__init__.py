"""The sandbox TikTok, in TikTok's own wire formats, one module per API; only reachable while
settings.SANDBOX is on."""
