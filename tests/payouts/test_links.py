"""The status page's path, built without the URLconf, is the one Django reverses, under any prefix."""

from django.urls import reverse, set_script_prefix
from hypothesis import given
from hypothesis import strategies as st

from payouts.links import status_page_path

slugs = st.from_regex(r"[-a-zA-Z0-9_]+", fullmatch=True)
tokens = st.from_regex(r"[-a-zA-Z0-9_]+", fullmatch=True)  # secrets.token_urlsafe's alphabet


@given(slug=slugs, token=tokens)
def test_the_status_path_is_what_django_reverses(slug, token):
    assert status_page_path(slug=slug, token=token) == reverse("payouts:status_page", args=[slug, token])


def test_the_status_path_follows_the_script_prefix():
    set_script_prefix("/joyback/")
    try:
        path = status_page_path(slug="summer-glow", token="tok_3n-x")
        assert path == reverse("payouts:status_page", args=["summer-glow", "tok_3n-x"])
        assert path.startswith("/joyback/c/summer-glow/")
    finally:
        set_script_prefix("/")
