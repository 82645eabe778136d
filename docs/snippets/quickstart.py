"""The 5-minute quickstart in Python (pip install httpx): report a purchase, read it back, and see
that sending it again with the same Idempotency-Key changes nothing.

JOYBACK_URL=https://joyback.example JOYBACK_KEY=jb_… python quickstart.py
"""

import os
import time
import uuid

import httpx

api = httpx.Client(
    base_url=os.environ["JOYBACK_URL"] + "/api/v1",
    headers={"Authorization": f"Bearer {os.environ['JOYBACK_KEY']}", "JoyBack-Version": "2026-12-01"},
    timeout=10,
)

# 1. Report a purchase. Keep the Idempotency-Key with the order: a retry after a timeout sends the
#    same key and gets the first answer, never a second purchase.
purchase = {
    "type": "purchase",
    "order_id": os.environ.get("ORDER_ID", "A-1001"),
    "amount": 4000,  # minor units: 40.00 EUR
    "currency": "EUR",
    "customer": {"email": "kim@example.com"},
}
key = str(uuid.uuid4())
accepted = api.post("/events", json=purchase, headers={"Idempotency-Key": key})
accepted.raise_for_status()
event_id = accepted.json()["id"]
print("accepted", accepted.status_code, event_id)

# 2. Read it back: "received" until a worker makes the claim, moments later.
for _ in range(20):
    event = api.get(f"/events/{event_id}").json()
    if event["status"] != "received":
        break
    time.sleep(0.5)
print("event", event["status"], "claim", event["claim"] and event["claim"]["status"])

# 3. The same request with the same key is answered as the first time.
replay = api.post("/events", json=purchase, headers={"Idempotency-Key": key})
print("replayed", replay.headers.get("Idempotent-Replayed"), replay.json()["id"] == event_id)
