"""Olivia, the demo brand's owner, reads her brand's tables on a 375-pixel phone: payouts, manual
payouts and a payout's history, the claims and the review queue, the caption cases, funding, finance
and reconciliation. Each row is a card; nothing scrolls sideways, neither the page nor a box in it."""

import pytest
from django.core.management import call_command
from django.utils import timezone

from compliance.models import RemediationCase
from payouts.models import Payout
from tests.conftest import PASSWORD, totp_enable
from tests.e2e.conftest import SCREENSHOTS, sign_in
from verification.models import ActionClaim, FraudSignal

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PAGES = {
    "payouts": "/brands/demo/payouts/",
    "payouts-all": "/brands/demo/payouts/all/",
    "claims": "/brands/demo/claims/",
    "review": "/brands/demo/review/",
    "compliance": "/brands/demo/compliance/",
    "funding": "/brands/demo/funding/",
    "finance": "/brands/demo/finance/",
    "reconciliation": "/brands/demo/reconciliation/",
}
# Whatever is wider than its box and lets it be scrolled sideways, and the last thing sticking out.
SIDEWAYS = """() => [...document.querySelectorAll('body *')]
  .filter(e => e.scrollWidth > e.clientWidth + 1
    && ['auto', 'scroll'].includes(getComputedStyle(e).overflowX))
  .map(e => {
    const right = e.getBoundingClientRect().right;
    const past = [...e.querySelectorAll('*')].filter(c => c.getBoundingClientRect().right > right + 1);
    const what = past.length ? past[past.length - 1] : e;
    return `${e.tagName.toLowerCase()}.${e.className} ${e.scrollWidth}>${e.clientWidth}: `
      + `${what.tagName.toLowerCase()} "${what.textContent.trim().slice(0, 40)}"`;
  })"""


def _queues_filled():
    """A claim held back for review and a caption in doubt, so that those tables have a row."""
    claim = ActionClaim.objects.filter(campaign__brand__slug="demo").order_by("pk").first()
    ActionClaim.objects.filter(pk=claim.pk).update(status="needs_review")
    FraudSignal.objects.create(
        claim=claim, brand_id=claim.campaign.brand_id, code="second_account", detail="x"
    )
    RemediationCase.objects.create(
        brand_id=claim.campaign.brand_id,
        campaign=claim.campaign,
        claim_id=claim.pk,
        participant_id=claim.participant_id,
        status="review",
        reasons=["ambiguous_only"],
        caption="Loving my new summer look from @demobrand #ad #collab #summer #newin #sponsoredcontent",
        wording="Advertisement",
        opened_at=timezone.now(),
    )


def test_every_brand_table_reads_on_a_phone_without_sideways_scrolling(
    open_page, live_server, django_user_model
):
    call_command("demo")
    _queues_filled()
    owner = django_user_model.objects.get(email="owner@demo.localhost")
    owner.set_password(PASSWORD)
    owner.save()
    totp_enable(owner)

    page = open_page("phone")
    page.set_viewport_size({"width": 375, "height": 812})
    sign_in(page, live_server, owner.email)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    wide = {}
    payout = Payout.objects.filter(brand__slug="demo", reason_code__gt="").order_by("pk").first()
    pages = {**PAGES, "payout": f"/brands/demo/payouts/{payout.pk}/"}
    for name, path in pages.items():
        page.goto(live_server.url + path)
        assert page.locator("table.cards tbody tr").count() > 0, name
        tables = page.locator("section:has(table.cards)")
        for index in range(min(tables.count(), 3)):
            tables.nth(index).screenshot(path=str(SCREENSHOTS / f"phone-table-{name}-{index + 1}.png"))
        width = page.evaluate("document.documentElement.scrollWidth")
        inner = page.evaluate("window.innerWidth")
        boxes = page.evaluate(SIDEWAYS)
        if width > inner or boxes:
            wide[name] = (width, inner, boxes)

    assert not wide, "\n".join(f"{name}: page {w}px of {i}px; boxes {b}" for name, (w, i, b) in wide.items())
