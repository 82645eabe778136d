"""English dates day before month in the browser too, where the reader's time zone is applied."""

from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e]
SCRIPT = Path(__file__).resolve().parents[2] / "static" / "js" / "public.js"


def test_a_moment_the_browser_words_in_english_is_day_first(page):
    """The reader's own time zone is the browser's to apply (static/js/public.js): in English it too
    writes the day before the month."""
    page.set_content(
        '<html lang="en"><body><time datetime="2026-12-06T15:30:00Z" data-local="date">x</time></body></html>'
    )
    page.add_script_tag(path=str(SCRIPT))
    page.evaluate("document.dispatchEvent(new Event('DOMContentLoaded'))")

    assert page.locator("time").inner_text() == "6 December 2026"
