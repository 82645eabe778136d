"""The sandbox VIES, in the European Commission's REST API format (POST
/check-vat-number): in-process, deterministic, and failing as VIES fails.

As the Commission's own test service does, a number's last three digits pick the answer: 200 is
not valid, 201 INVALID_INPUT, 300 SERVICE_UNAVAILABLE, 301 MS_UNAVAILABLE, 302 TIMEOUT,
400 VAT_BLOCKED, 401 IP_BLOCKED, 500 GLOBAL_MAX_CONCURRENT_REQ, 501 GLOBAL_MAX_CONCURRENT_REQ_TIME,
600 MS_MAX_CONCURRENT_REQ, 601 MS_MAX_CONCURRENT_REQ_TIME; any other number of the form its member
state uses is valid. A country code VIES does not serve, or a number not of its form, is
INVALID_INPUT; a requester's number not of its form is INVALID_REQUESTER_INFO. A valid answer
carries a consultation number (requestIdentifier) only when the requester gave its own number, as
VIES's does. Errors are VIES's {"actionSucceed": false, "errorWrappers": [...]}.
"""

import json
import re
import secrets

from django.conf import settings
from django.http import Http404, JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

# The member states' codes in VIES (Greece as EL, Northern Ireland as XI).
MEMBER_STATES = frozenset(
    {"AT", "BE", "BG", "CY", "CZ", "DE", "DK", "EE", "EL", "ES", "FI", "FR", "HR", "HU", "IE"}
    | {"IT", "LT", "LU", "LV", "MT", "NL", "PL", "PT", "RO", "SE", "SI", "SK", "XI"}
)
NUMBER = re.compile(r"[0-9A-Za-z+*]{2,12}")
ERRORS = {
    "201": (400, "INVALID_INPUT"),
    "300": (500, "SERVICE_UNAVAILABLE"),
    "301": (200, "MS_UNAVAILABLE"),
    "302": (500, "TIMEOUT"),
    "400": (400, "VAT_BLOCKED"),
    "401": (400, "IP_BLOCKED"),
    "500": (200, "GLOBAL_MAX_CONCURRENT_REQ"),
    "501": (200, "GLOBAL_MAX_CONCURRENT_REQ_TIME"),
    "600": (200, "MS_MAX_CONCURRENT_REQ"),
    "601": (200, "MS_MAX_CONCURRENT_REQ_TIME"),
}
NOT_VALID = "200"


def _error(status: int, code: str) -> JsonResponse:
    return JsonResponse(
        {
            "actionSucceed": False,
            "errorWrappers": [{"error": code, "message": code.replace("_", " ").lower()}],
        },
        status=status,
    )


@csrf_exempt
@require_POST
def check_vat_number(request):
    if not (settings.SANDBOX or getattr(request, "loopback", False)):
        raise Http404("The sandbox is off")
    try:
        body = json.loads(request.body)
    except ValueError:
        body = None
    if not isinstance(body, dict):
        return _error(400, "INVALID_INPUT")
    country, number = body.get("countryCode"), body.get("vatNumber")
    if country not in MEMBER_STATES or not isinstance(number, str) or not NUMBER.fullmatch(number):
        return _error(400, "INVALID_INPUT")
    requester_country, requester = body.get("requesterMemberStateCode"), body.get("requesterNumber")
    asked_by = requester_country is not None or requester is not None
    if asked_by and (
        requester_country not in MEMBER_STATES
        or not isinstance(requester, str)
        or not NUMBER.fullmatch(requester)
    ):
        return _error(400, "INVALID_REQUESTER_INFO")
    if number[-3:] in ERRORS:
        return _error(*ERRORS[number[-3:]])
    valid = number[-3:] != NOT_VALID
    answer = {
        "countryCode": country,
        "vatNumber": number,
        "requestDate": timezone.now().isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "valid": valid,
        "name": f"SANDBOX COMPANY {country}{number}" if valid else "---",
        "address": "1 Sandbox Street\n10115 Sandbox" if valid else "---",
        "traderName": "",
        "traderStreet": "",
        "traderPostalCode": "",
        "traderCity": "",
        "traderCompanyType": "",
        "traderNameMatch": "NOT_PROCESSED",
        "traderStreetMatch": "NOT_PROCESSED",
        "traderPostalCodeMatch": "NOT_PROCESSED",
        "traderCityMatch": "NOT_PROCESSED",
        "traderCompanyTypeMatch": "NOT_PROCESSED",
    }
    if asked_by:
        answer["requestIdentifier"] = "WAPI" + secrets.token_hex(6).upper()
    return JsonResponse(answer)
