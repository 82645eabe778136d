"""The error catalogue is a contract: every code the code base can answer with is listed, with its
status and what to do, on the served page and in docs/api-errors.md."""

import ast
import inspect
from pathlib import Path

import pytest
from rest_framework import exceptions, serializers

from joyback.api.errors import catalogue_codes, catalogue_markdown

ROOT = Path(__file__).resolve().parents[2]

# The modules behind the API's answers, and the engine's refusals that reach a reported event.
API_MODULES = [
    "joyback/api/auth.py",
    "joyback/api/exceptions.py",
    "joyback/api/idempotency.py",
    "joyback/api/views.py",
    "joyback/api/pagination.py",
    "joyback/api/versions.py",
    "verification/api.py",
    "verification/cashback.py",
    "verification/inbox.py",
    "campaigns/api.py",
    "payouts/api.py",
    "payouts/reconciliation/views.py",
]
# verification.services' refusals, but for the claim flow's and the review queue's own steps,
# which no API request reaches.
# share_video_id is share_submit's: a link pasted on the campaign page, never an API call.
NOT_REACHED_BY_THE_API = {"share_submit", "share_video_id", "claim_review"}
RAISERS = {"ApiError", "CashbackError", "ClaimRefused", "error_body", "_json_error", "Claimability"}


def _literal_codes(tree, skip_functions=()) -> set[str]:
    codes = set()
    skipped = {
        id(node)
        for fn in ast.walk(tree)
        if isinstance(fn, ast.FunctionDef) and fn.name in skip_functions
        for node in ast.walk(fn)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict) and id(node) not in skipped:  # {"code": "...", ...}
            pairs = zip(node.keys, node.values, strict=True)
            codes.update(
                value.value
                for key, value in pairs
                if isinstance(key, ast.Constant) and key.value == "code" and isinstance(value, ast.Constant)
            )
        if not isinstance(node, ast.Call) or id(node) in skipped:
            continue
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        strings = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        keyword = [
            k.value.value for k in node.keywords if k.arg == "code" and isinstance(k.value, ast.Constant)
        ]
        if name == "_json_error":
            codes.update(strings[:1])
        elif name == "Claimability":
            codes.update(strings[:1])  # Claimability(open, reason, message)
        elif name in RAISERS:
            codes.update(strings[:1])
        elif name == "ValidationError" and keyword:
            codes.update(keyword)
    return codes


def _source_codes() -> set[str]:
    codes = set()
    for module in API_MODULES:
        codes |= _literal_codes(ast.parse((ROOT / module).read_text()))
    for module in sorted((ROOT / "verification/services").glob("*.py")):
        codes |= _literal_codes(ast.parse(module.read_text()), skip_functions=NOT_REACHED_BY_THE_API)
    codes |= _literal_codes(ast.parse((ROOT / "campaigns/selectors.py").read_text()))
    return codes


def _campaign_closed_codes() -> set[str]:
    """Why a campaign takes no claim, as a reported event's refusal names it."""
    from datetime import timedelta

    from django.utils import timezone

    from campaigns.models import Campaign, CampaignStatus
    from campaigns.selectors import campaign_schedule_state

    now = timezone.now()
    campaigns = [Campaign(status=status) for status in CampaignStatus.values]
    campaigns += [
        Campaign(status=CampaignStatus.LIVE, starts_at=now + timedelta(days=1)),
        Campaign(status=CampaignStatus.LIVE, ends_at=now - timedelta(days=1)),
    ]
    states = [campaign_schedule_state(campaign=c, now=now) for c in campaigns]
    return {state.reason for state in states if not state.open}


def _field_codes() -> set[str]:
    """The error codes of every field of the API's serializers and of the payee form they use."""
    import campaigns.api
    import payouts.api
    import payouts.reconciliation.views
    import verification.api
    from payouts.forms import PayeeForm

    codes = set()

    def walk(serializer):
        codes.update(serializer.error_messages)
        for field in serializer.fields.values():
            codes.update(field.error_messages)
            child = getattr(field, "child", None)
            if isinstance(field, serializers.Serializer):
                walk(field)
            elif isinstance(child, serializers.Serializer):
                walk(child)
            elif child is not None:
                codes.update(child.error_messages)

    for module in (verification.api, campaigns.api, payouts.api, payouts.reconciliation.views):
        for obj in vars(module).values():
            if (
                inspect.isclass(obj)
                and issubclass(obj, serializers.Serializer)
                and obj.__module__ == module.__name__
            ):
                walk(obj())
    for field in PayeeForm(currency="EUR").fields.values():
        codes.update(field.error_messages)
    return codes


EXCEPTIONS = [
    exceptions.NotAuthenticated,
    exceptions.AuthenticationFailed,
    exceptions.PermissionDenied,
    exceptions.Throttled,
    exceptions.NotFound,
    exceptions.MethodNotAllowed,
    exceptions.NotAcceptable,
    exceptions.UnsupportedMediaType,
    exceptions.ParseError,
]


def test_the_scan_finds_the_codes_it_should():
    # The scan itself must see codes from each kind of source, or the next test proves nothing.
    found = _source_codes()
    assert {"idempotency_key_reused", "order_conflict", "rule_cap", "brand_not_verified"} <= found
    assert {"version_unknown", "not_found", "server_error", "invalid_phone", "fully_claimed"} <= found
    assert "review_reason" not in found  # a review-queue refusal, never an API answer


@pytest.mark.django_db
def test_every_code_the_api_can_answer_with_is_in_the_catalogue():
    emitted = _source_codes() | _campaign_closed_codes() | _field_codes()
    emitted |= {exc.default_code for exc in EXCEPTIONS} | {"error"}  # the handler's fallback
    missing = sorted(emitted - set(catalogue_codes()))
    assert missing == [], f"add these to joyback/api/errors.py: {missing}"


def test_every_entry_says_its_status_and_what_to_do():
    for entry in catalogue_codes().values():
        assert entry.status is None or 400 <= entry.status < 600, entry.code
        assert entry.meaning.strip() and entry.action.strip(), entry.code


def test_the_markdown_catalogue_is_in_step_with_the_code():
    committed = (ROOT / "docs" / "api-errors.md").read_text()
    assert committed == catalogue_markdown(), "docs/api-errors.md is stale: python manage.py api_errors"


def test_the_catalogue_page_is_served_with_the_api_docs(client):
    page = client.get("/api/v1/docs/errors/")
    assert page.status_code == 200
    html = page.content.decode()
    for code in catalogue_codes():
        assert f'id="{code}"' in html
    assert "<td>409</td>" in html and "on the event" in html
    assert "/api/v1/docs/errors/" in catalogue_markdown()


def test_the_page_shows_code_spans_as_code(client):
    html = client.get("/api/v1/docs/errors/").content.decode()
    assert "<code>Authorization: Bearer jb_…</code>" in html and "`" not in html
