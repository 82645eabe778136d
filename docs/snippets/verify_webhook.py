"""Verify a JoyBack webhook (Python 3, standard library only).

JoyBack-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>] where each v1 is
HMAC-SHA256(your endpoint's secret, "<t>." + the raw body). During a secret rotation there are two
v1 values: accept the request if any matches. Refuse old timestamps so a captured request cannot
be replayed later.
"""

import hashlib
import hmac
import time


def verify_webhook(body: bytes, header: str, secret: str, tolerance: int = 300) -> bool:
    parts = [item.split("=", 1) for item in header.split(",") if "=" in item]
    timestamps = [value for key, value in parts if key == "t"]
    if len(timestamps) != 1 or not timestamps[0].isdigit():
        return False
    timestamp = int(timestamps[0])
    if abs(time.time() - timestamp) > tolerance:
        return False
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return any(key == "v1" and hmac.compare_digest(value, expected) for key, value in parts)


if __name__ == "__main__":
    # python verify_webhook.py "<JoyBack-Signature header>" < body.json   (secret in JOYBACK_WEBHOOK_SECRET)
    import os
    import sys

    valid = verify_webhook(sys.stdin.buffer.read(), sys.argv[1], os.environ["JOYBACK_WEBHOOK_SECRET"])
    print("valid" if valid else "invalid")
    sys.exit(0 if valid else 1)
