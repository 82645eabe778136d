"""The error catalogue: every code the Cashback API can answer with, its HTTP status and what to do.

Errors are {"error": {"code", "message", "field"}}: the code is stable and for programs, the
message for people. An event's refusal is not an HTTP status: POST /events answered 202, and the
refusal is on the event (GET /events/{id}, status "refused") and in its event.refused webhook.
The catalogue is served at /api/v1/docs/errors/ and written to docs/api-errors.md
(python manage.py api_errors); tests/api/test_error_catalogue.py finds every code the code base
can answer with and checks it is here.
"""

from dataclasses import dataclass

EVENT = None  # the status of a refusal reported on the event, not on the request


@dataclass(frozen=True)
class ErrorCode:
    code: str
    status: int | None
    meaning: str
    action: str


@dataclass(frozen=True)
class Section:
    title: str
    codes: tuple[ErrorCode, ...]


def _codes(*rows) -> tuple[ErrorCode, ...]:
    return tuple(ErrorCode(*row) for row in rows)


FIX_FIELD = "Fix the field named in `field` as the message says and send again."

CATALOGUE = (
    Section(
        "Authentication, access and limits",
        _codes(
            ("not_authenticated", 401, "No API key was sent.", "Send `Authorization: Bearer jb_…`."),
            (
                "authentication_failed",
                401,
                "The key is malformed, unknown, revoked or past its rotation's grace period.",
                "Use a live key from the dashboard's Developers page; rotate keys before they expire.",
            ),
            (
                "permission_denied",
                403,
                "The key lacks the scope this request needs (read, events or payouts).",
                "Make a key with that scope; keep each key's scopes as narrow as its use.",
            ),
            (
                "throttled",
                429,
                "The key sent more requests this minute than its limit.",
                "Wait the seconds in `Retry-After`, then send again (with the same Idempotency-Key).",
            ),
            (
                "version_unknown",
                400,
                "The `JoyBack-Version` header names no version of the API (or was sent empty).",
                "Send one of the dated versions in docs/api-changelog.md, or leave the header out.",
            ),
        ),
    ),
    Section(
        "Requests",
        _codes(
            (
                "not_found",
                404,
                "No such endpoint, or no such object of your brand.",
                "Check the path and id.",
            ),
            ("method_not_allowed", 405, "The endpoint does not take this method.", "See the API reference."),
            (
                "not_acceptable",
                406,
                "The `Accept` header asks for a format the API does not answer in.",
                "Accept `application/json`.",
            ),
            (
                "unsupported_media_type",
                415,
                "The body is not sent as JSON.",
                "Send `Content-Type: application/json`.",
            ),
            ("parse_error", 400, "The body is not valid JSON.", "Send one JSON object."),
            (
                "server_error",
                500,
                "Something failed on our side; nothing was changed.",
                "Send again later with the same Idempotency-Key.",
            ),
            (
                "unavailable",
                503,
                "The database could not be reached for a moment; nothing was changed.",
                "Send again after the `Retry-After` seconds, with the same Idempotency-Key.",
            ),
            (
                "error",
                400,
                "A refusal with no more specific code.",
                "Read the message; tell us if it does not say what to fix.",
            ),
        ),
    ),
    Section(
        "Idempotency",
        _codes(
            (
                "idempotency_key_invalid",
                400,
                "The Idempotency-Key is longer than 255 characters.",
                "Use a shorter key, such as a UUID.",
            ),
            (
                "idempotency_in_flight",
                409,
                "A request with this key is still being processed.",
                "Retry shortly with the same key; you will get its answer.",
            ),
            (
                "idempotency_key_reused",
                422,
                "This key was used with a different request within 24 hours.",
                "Use a new key for a new request; the same key only to retry the same request.",
            ),
        ),
    ),
    Section(
        "Validation of fields and parameters",
        _codes(
            ("invalid", 400, "A field or parameter has a wrong value or type.", FIX_FIELD),
            ("required", 400, "A required field is missing.", FIX_FIELD),
            ("null", 400, "A field that takes a value was null.", FIX_FIELD),
            ("blank", 400, "A text field was empty.", FIX_FIELD),
            ("empty", 400, "A list that needs an item was empty.", FIX_FIELD),
            ("not_a_list", 400, "A field that takes a list got something else.", FIX_FIELD),
            ("invalid_choice", 400, "A field is not one of its allowed values.", FIX_FIELD),
            ("max_length", 400, "A text is longer than the field allows.", FIX_FIELD),
            ("min_length", 400, "A text is shorter than the field needs.", FIX_FIELD),
            ("max_string_length", 400, "A number was sent as too long a string.", FIX_FIELD),
            ("max_value", 400, "A number is above the field's maximum.", FIX_FIELD),
            ("min_value", 400, "A number is below the field's minimum.", FIX_FIELD),
            ("overflow", 400, "A date is outside the range the API takes.", FIX_FIELD),
            (
                "date",
                400,
                "A date and time field got a date alone.",
                "Send a date and time like 2026-12-01T00:00:00Z.",
            ),
            ("make_aware", 400, "A date and time is not valid in its time zone.", "Send it in UTC (…Z)."),
            (
                "invalid_type",
                400,
                "An event's `type` is not one the API knows.",
                "Send purchase, action, refund, like or comment.",
            ),
            ("invalid_currency", 400, "The currency is not an ISO 4217 code.", "Send a code like EUR."),
            (
                "invalid_phone",
                400,
                "The customer's phone number is not in international form.",
                "Send it like +4915112345678.",
            ),
            (
                "customer_required",
                400,
                "The customer has no id, email or phone.",
                "Name the customer by one of them.",
            ),
        ),
    ),
    Section(
        "Events: refusals reported on the event",
        _codes(
            (
                "no_campaign",
                EVENT,
                "None of your live campaigns rewards this kind of event.",
                "Make a campaign live with a rule for it, or give `campaign_id`.",
            ),
            (
                "campaign_required",
                EVENT,
                "Several live campaigns reward this kind of event.",
                "Give `campaign_id`.",
            ),
            (
                "campaign_unknown",
                EVENT,
                "No campaign of yours with this id rewards this event.",
                "Check `campaign_id`.",
            ),
            (
                "currency_mismatch",
                EVENT,
                "The purchase is in another currency than the campaign.",
                "Report it in the campaign's currency.",
            ),
            (
                "no_cashback",
                EVENT,
                "The purchase is too small to earn cashback.",
                "Nothing to do: no cashback is owed.",
            ),
            (
                "order_conflict",
                EVENT,
                "This order id was reported before with another amount or currency.",
                "Report each order once, with its final amount; use a refund to take it back.",
            ),
            (
                "order_unknown",
                EVENT,
                "A refund names an order never reported.",
                "Report the purchase first, or check the order id.",
            ),
            (
                "rule_incomplete",
                EVENT,
                "The rule for likes or comments has no total cap or no TikTok login before it.",
                "Fix the rule in the dashboard.",
            ),
            (
                "login_first",
                EVENT,
                "This TikTok open_id has not logged in on the campaign yet.",
                "Nothing is owed before the login.",
            ),
            (
                "already_claimed",
                EVENT,
                "This person was rewarded under this rule already.",
                "Nothing to do: one reward per person.",
            ),
            (
                "prerequisite",
                EVENT,
                "The person has not done the step the rule needs first.",
                "Nothing is owed before it.",
            ),
            (
                "rule_cap",
                EVENT,
                "The rule's total cap is reached.",
                "Raise the cap in the dashboard if you want to pay more.",
            ),
            (
                "period_cap",
                EVENT,
                "The person reached the campaign's cap for this period.",
                "Nothing to do until the next period.",
            ),
            (
                "allowance",
                EVENT,
                "The person reached your brand's allowance per person.",
                "Raise the allowance in the dashboard.",
            ),
            (
                "fully_claimed",
                EVENT,
                "The campaign's budget does not hold this reward.",
                "Fund the campaign.",
            ),
            ("draft", EVENT, "The campaign is a draft.", "Make it live."),
            ("paused", EVENT, "The campaign is paused.", "Resume it."),
            (
                "not_started",
                EVENT,
                "The campaign's start date is still ahead.",
                "Report after it starts, or move the date.",
            ),
            ("ended", EVENT, "The campaign has ended.", "Report to a live campaign."),
        ),
    ),
    Section(
        "Payouts",
        _codes(
            (
                "insufficient_funds",
                400,
                "Your funding account does not hold enough for this payout.",
                "Transfer funds to your JoyBack account first.",
            ),
            (
                "brand_not_verified",
                403,
                "Payouts open once JoyBack's staff have verified your brand.",
                "Finish your brand's verification in the dashboard; people stay owed meanwhile.",
            ),
            (
                "currency_unsupported",
                400,
                "Payouts in this currency are not offered.",
                "Pay out in a supported currency.",
            ),
            (
                "payout_refused",
                409,
                "The payout cannot be made as asked (the message says why).",
                "Read the message.",
            ),
            (
                "payout_not_cancellable",
                409,
                "The payout is past the point where it can be cancelled.",
                "Nothing to do.",
            ),
        ),
    ),
)


def catalogue_codes() -> dict[str, ErrorCode]:
    return {entry.code: entry for section in CATALOGUE for entry in section.codes}


def status_text(entry: ErrorCode) -> str:
    return "on the event" if entry.status is None else str(entry.status)


def catalogue_markdown() -> str:
    lines = [
        "# Cashback API errors",
        "",
        'Every error is `{"error": {"code", "message", "field"}}`: `code` is stable (program',
        "against it), `message` is for people, `field` names the input it concerns (dotted) or is null.",
        "An event's refusal comes after its `202`: on the event (`GET /api/v1/events/{id}`, status",
        "`refused`) and in its `event.refused` webhook, with the same code, message and field.",
        "",
        "Written by `python manage.py api_errors` from joyback/api/errors.py; also served at",
        "`/api/v1/docs/errors/`.",
    ]
    for section in CATALOGUE:
        lines += [
            "",
            f"## {section.title}",
            "",
            "| Code | Status | What it means | What to do |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| `{entry.code}` | {status_text(entry)} | {entry.meaning} | {entry.action} |"
            for entry in section.codes
        ]
    return "\n".join(lines) + "\n"
