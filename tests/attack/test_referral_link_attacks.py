"""Guessing referral codes on `/v/c/<slug>/r/<code>/` as a stranger: a forged X-Forwarded-For, the
same code in other cases and with dashes, another campaign's slug all count against the one limit
(held); addresses of one IPv6 /64, each counted apart, share one limit too."""

import pytest

from tests.verification.test_referrals import code, creators, poster  # noqa: F401 - fixtures
from verification.referrals import REFERRAL_MISSES_PER_HOUR, ReferralClick

pytestmark = pytest.mark.django_db


def test_guesses_from_one_ipv6_prefix_share_one_limit(client, creators, code):  # noqa: F811
    """An IPv6 host holds a /64 (2^64 addresses): one guess from each walks the 887 million codes
    with no 429 ever. The limit should count the /64 (and a /48 more loosely), not each address."""
    answers = {
        client.get(f"/v/c/creators/r/NOPE{n:02d}/", REMOTE_ADDR=f"2001:db8:0:1::{n + 1:x}").status_code
        for n in range(REFERRAL_MISSES_PER_HOUR + 5)
    }
    right = client.get(f"/v/c/creators/r/{code.code}/", REMOTE_ADDR="2001:db8:0:1::ffff")

    assert 429 in answers or right.status_code == 429, "no guess from one /64 was ever refused"


# --- What held ------------------------------------------------------------------------------------


def test_forwarded_for_variants_and_other_slugs_count_against_the_same_limit(
    client,
    creators,  # noqa: F811
    code,  # noqa: F811
    make_live_campaign,
):
    make_live_campaign(slug="other", package="tiktok_only")
    for n in range(REFERRAL_MISSES_PER_HOUR + 1):
        slug = "creators" if n % 2 else "other"
        guess = f"no-p{n:02d}" if n % 3 else f"NOPE{n:02d}"  # lower case and dashes are normalised
        client.get(f"/v/c/{slug}/r/{guess}/", HTTP_X_FORWARDED_FOR=f"10.0.{n}.1")

    right = client.get(f"/v/c/creators/r/{code.code.lower()}/", HTTP_X_FORWARDED_FOR="192.0.2.200")
    assert right.status_code == 429
    assert not ReferralClick.objects.exists()
