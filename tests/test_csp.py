"""Content-Security-Policy: every page says where scripts may come from, and no page carries a script
or handler the policy would refuse (inline ones only with this response's nonce)."""

import json
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

pytestmark = pytest.mark.django_db

TEMPLATES = Path(settings.BASE_DIR) / "templates"
HANDLER = re.compile(r"\son[a-z]+\s*=", re.IGNORECASE)
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>", re.IGNORECASE)


def policy(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    return {part.split()[0]: part.split()[1:] for part in header.split(";") if part.strip()}


def test_no_template_has_an_inline_handler_or_script_without_a_nonce():
    offenders = []
    for template in TEMPLATES.rglob("*.html"):
        text = template.read_text()
        offenders += [f"{template.name}: {m.group(0)}" for m in HANDLER.finditer(text)]
        offenders += [
            f"{template.name}: {m.group(0)}"
            for m in INLINE_SCRIPT.finditer(text)
            if "csp_nonce" not in m.group(0)
        ]
        offenders += [f"{template.name}: javascript: URL" for _ in re.finditer(r"javascript:", text)]
    assert offenders == []


@pytest.mark.parametrize("template", ["base.html", "public_base.html"])
def test_htmx_is_told_not_to_add_its_indicator_styles_the_policy_would_refuse(template):
    html = (TEMPLATES / template).read_text()

    # htmx reads the first htmx-config meta alone: a second one is never read.
    configs = re.findall(r'<meta name="htmx-config" content=\'([^\']+)\'', html)
    assert json.loads(configs[0])["includeIndicatorStyles"] is False
    assert len(configs) == 1


def test_a_brand_page_sends_a_strict_policy(client, alice, alpaca):
    client.force_login(alice)

    response = client.get(reverse("brand_dashboard", args=["alpaca"]))
    directives = policy(response)

    assert (
        "'unsafe-inline'" not in directives["script-src"] and "'unsafe-eval'" not in directives["script-src"]
    )
    assert directives["script-src"][0] == "'self'" and directives["object-src"] == ["'none'"]
    assert directives["frame-ancestors"] == ["'none'"]
    html = response.content.decode()
    assert not HANDLER.search(html) and not INLINE_SCRIPT.search(html)


def test_the_public_landing_page_sends_the_policy_and_no_inline_script(client, summer):
    response = client.get(f"/c/{summer.slug}/")

    assert "script-src 'self'" in response["Content-Security-Policy"]
    html = response.content.decode()
    assert not HANDLER.search(html) and not INLINE_SCRIPT.search(html)


def test_the_admin_and_sign_in_pages_send_the_policy(client):
    for url in [reverse("account_login"), "/admin/login/"]:
        assert "default-src 'self'" in client.get(url, follow=True)["Content-Security-Policy"]
