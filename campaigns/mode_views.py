"""The dashboard's switch between live data and test data.

The mode is in the address (/brands/<slug>/ or /brands/<slug>--test/), so every link on a page
keeps it; the session remembers the last choice per brand for the ways in that carry no address
(the brand list, signing in)."""

from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from campaigns.access import brand_member_required
from campaigns.modes import brand_test_twin, brand_test_twin_get

SESSION_KEY = "test_mode_brands"


def test_mode_chosen(request, brand) -> bool:
    return brand.pk in request.session.get(SESSION_KEY, [])


def brand_slug_in_chosen_mode(request, brand) -> str:
    """The address to send the member to: the test twin's if they last chose test data."""
    if test_mode_chosen(request, brand):
        twin = brand_test_twin_get(brand=brand)
        if twin is not None:
            return twin.slug
    return brand.slug


@brand_member_required()
@require_POST
def brand_mode_switch(request):
    live = request.live_brand
    chosen = set(request.session.get(SESSION_KEY, []))
    if request.POST.get("mode") == "test":
        # Any member may look at test data; the twin is made the first time someone does.
        target = brand_test_twin(brand=live).slug
        chosen.add(live.pk)
    else:
        target = live.slug
        chosen.discard(live.pk)
    request.session[SESSION_KEY] = sorted(chosen)
    return redirect("brand_dashboard", brand_slug=target)
