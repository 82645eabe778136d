"""HubSpot: a brand's consented audience written as communication-preference statuses with their
legal basis (Communication Preferences v4: statuses/batch/write, channel WHATSAPP or EMAIL, the
brand's subscription type), and unsubscribes read back (statuses/batch/read). A private app's
access token as the Bearer token."""

from payouts.providers.klaviyo import KlaviyoError as CrmError  # one error shape for every CRM
from payouts.providers.klaviyo import Subscriber
from verification.providers.loopback import http_client, provider_url

BATCH = 100  # HubSpot's batch endpoints take 100 inputs
CHANNELS = {"whatsapp": "WHATSAPP", "email": "EMAIL"}


def _headers(token: str) -> dict:
    return {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}


def _raise_for(response) -> None:
    if response.status_code in (200, 201, 204, 207):
        return
    try:
        detail = f"{response.json().get('category', '')}: {response.json().get('message', '')}"
    except ValueError:
        detail = response.text[:200]
    retry = response.status_code == 429 or response.status_code >= 500
    after = response.headers.get("Retry-After", "")
    raise CrmError(
        f"HubSpot {response.status_code} {detail}", retry=retry, after=int(after) if after.isdigit() else None
    )


def write_body(*, subscribers: list[Subscriber], subscription_id: str) -> dict:
    return {
        "inputs": [
            {
                "subscriberIdString": person.contact,
                "channel": CHANNELS[person.channel],
                "statusState": "SUBSCRIBED",
                "subscriptionId": int(subscription_id),
                "legalBasis": "CONSENT_WITH_NOTICE",
                "legalBasisExplanation": f"{person.source}, agreed at {person.consented_at.isoformat()}",
            }
            for person in subscribers
        ]
    }


def subscribers_push(*, api_key: str, subscribers: list[Subscriber], list_id: str = "") -> int:
    """POST /communication-preferences/v4/statuses/batch/write per 100 people."""
    sent = 0
    with http_client() as client:
        for start in range(0, len(subscribers), BATCH):
            chunk = subscribers[start : start + BATCH]
            response = client.post(
                f"{provider_url('HUBSPOT_API_BASE')}/communication-preferences/v4/statuses/batch/write",
                json=write_body(subscribers=chunk, subscription_id=list_id or "0"),
                headers=_headers(api_key),
            )
            _raise_for(response)
            sent += len(chunk)
    return sent


def unsubscribed_of(
    *, api_key: str, contacts: list[tuple[str, str]], list_id: str = ""
) -> list[tuple[str, str]]:
    """(channel, contact) of the given people with a NOT_SUBSCRIBED status on the channel, whichever
    subscription type it is for (a stop anywhere is honoured here): POST
    /communication-preferences/v4/statuses/batch/read per channel and 100."""
    found = []
    with http_client() as client:
        for channel, hubspot_channel in CHANNELS.items():
            ids = [contact for kind, contact in contacts if kind == channel]
            for start in range(0, len(ids), BATCH):
                response = client.post(
                    f"{provider_url('HUBSPOT_API_BASE')}/communication-preferences/v4/statuses/batch/read",
                    params={"channel": hubspot_channel},
                    json={"inputs": ids[start : start + BATCH]},
                    headers=_headers(api_key),
                )
                _raise_for(response)
                for result in response.json().get("results") or []:
                    for status in result.get("statuses") or []:
                        if status.get("status") == "NOT_SUBSCRIBED":
                            found.append((channel, str(result.get("subscriberIdString") or "")))
    return found


def key_check(*, api_key: str) -> None:
    """The token works: GET /communication-preferences/v4/definitions."""
    with http_client() as client:
        response = client.get(
            f"{provider_url('HUBSPOT_API_BASE')}/communication-preferences/v4/definitions",
            headers=_headers(api_key),
        )
    _raise_for(response)
