"""The European Commission's VIES, through its REST API: is this EU VAT number registered?

POST {VIES_API_BASE}/check-vat-number with {countryCode, vatNumber} and, so that VIES gives a
consultation number (requestIdentifier) the tax office accepts as evidence of the check, the
requester's own number (requesterMemberStateCode, requesterNumber: the platform's
INVOICE_ISSUER_VAT_ID). VIES answers {countryCode, vatNumber, requestDate, valid,
requestIdentifier, name, address, ...}; "---" stands for what a member state does not give.

VIES asks each member state's register as it is asked, and says when it cannot:
{"actionSucceed": false, "errorWrappers": [{"error": "MS_UNAVAILABLE", "message": ...}]}, with an
HTTP status that is not always an error one, so the body is read whatever the status. Errors that a
later question may not meet (the member state, VIES, the service's load, a timeout; our own address
or requester refused) are `ViesUnavailable`; INVALID_INPUT and VAT_BLOCKED say the number itself
is not one VIES confirms, and read as not valid.
"""

from dataclasses import dataclass

import httpx
from django.conf import settings

from verification.providers.loopback import http_client, provider_url

# VIES's errors that say nothing of the number: asked again later.
RETRY_LATER = frozenset(
    {
        "SERVICE_UNAVAILABLE",
        "MS_UNAVAILABLE",
        "TIMEOUT",
        "GLOBAL_MAX_CONCURRENT_REQ",
        "GLOBAL_MAX_CONCURRENT_REQ_TIME",
        "MS_MAX_CONCURRENT_REQ",
        "MS_MAX_CONCURRENT_REQ_TIME",
        # Ours to fix, not the brand's: the platform's requester number or address was refused.
        "INVALID_REQUESTER_INFO",
        "IP_BLOCKED",
    }
)
NOT_VALID = frozenset({"INVALID_INPUT", "VAT_BLOCKED"})


@dataclass(frozen=True)
class ViesAnswer:
    valid: bool
    request_date: str = ""
    request_identifier: str = ""
    name: str = ""
    address: str = ""
    error: str = ""  # INVALID_INPUT or VAT_BLOCKED when VIES refused the number itself


class ViesUnavailable(Exception):
    """VIES gave no answer about the number; ask again later. `code` is VIES's error, or what
    went wrong on the way."""

    def __init__(self, code: str, message: str = ""):
        self.code = code
        super().__init__(f"VIES {code} {message}".strip()[:300])


def check_request(*, vat_id: str) -> dict:
    """The request body for a number with its country prefix (e.g. "FR12345678901")."""
    body = {"countryCode": vat_id[:2], "vatNumber": vat_id[2:]}
    requester = (settings.INVOICE_ISSUER_VAT_ID or "").replace(" ", "").upper()
    if len(requester) > 2:
        body.update(requesterMemberStateCode=requester[:2], requesterNumber=requester[2:])
    return body


def vat_number_check(*, vat_id: str) -> ViesAnswer:
    """VIES's word on one number; ViesUnavailable when it has none to give now."""
    try:
        with http_client() as client:
            response = client.post(
                f"{provider_url('VIES_API_BASE')}/check-vat-number",
                json=check_request(vat_id=vat_id),
                headers={"Accept": "application/json"},
            )
    except (httpx.TimeoutException, httpx.TransportError) as error:
        raise ViesUnavailable("NETWORK", type(error).__name__) from None
    try:
        body = response.json()
    except ValueError:
        raise ViesUnavailable(f"HTTP_{response.status_code}", response.text[:100]) from None
    if not isinstance(body, dict):
        raise ViesUnavailable(f"HTTP_{response.status_code}", "not a JSON object")
    errors = [item for item in body.get("errorWrappers") or [] if isinstance(item, dict)]
    if errors or body.get("actionSucceed") is False:
        code = str((errors[0] if errors else {}).get("error") or f"HTTP_{response.status_code}")
        if code in NOT_VALID:
            return ViesAnswer(valid=False, error=code)
        raise ViesUnavailable(code, str((errors[0] if errors else {}).get("message") or ""))
    if response.status_code != 200 or not isinstance(body.get("valid"), bool):
        raise ViesUnavailable(f"HTTP_{response.status_code}", "no answer in the body")
    return ViesAnswer(
        valid=body["valid"],
        request_date=str(body.get("requestDate") or "")[:40],
        request_identifier=str(body.get("requestIdentifier") or "")[:40],
        name=str(body.get("name") or "")[:200],
        address=str(body.get("address") or "")[:300],
    )
