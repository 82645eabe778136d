"""The brand's funding page: its virtual IBAN, who funds, and what arrived on it. Nothing here
books money: deposits are booked from the provider's signed webhooks only. In the sandbox, a
funding member may have the sandbox bank send money to the IBAN (the provider then reports it)."""

from django.conf import settings
from django.contrib import messages
from django.http import HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from campaigns import roles
from campaigns.access import brand_member_required
from campaigns.forms import AmountForm
from payouts.funding import selectors
from payouts.funding.onboarding import OnboardingRefused, onboarding_link_make
from payouts.funding.services import FundingRefused, virtual_account_request
from payouts.models.funding import VirtualAccountStatus
from payouts.providers.test_mode_bank import TEST_ACCOUNT_IBAN, deposit_simulate, funding_webhooks_deliver


def _context(request) -> dict:
    brand = request.brand
    if not brand.livemode:
        # Test data shows the sandbox bank's test account only: no account at the live provider.
        return {
            "brand": brand,
            "membership": request.membership,
            "test_account_iban": TEST_ACCOUNT_IBAN,
            "can_fund": request.membership.role in roles.FUND,
            "funders": selectors.funders_of(brand=brand),
            "deposits": [],
        }
    account = selectors.virtual_account_for_brand(brand=brand, currency=brand.default_currency)
    onboarding = selectors.onboarding_for_brand(brand=brand)
    if account is None and brand.verified:
        try:
            # Brands verified before virtual accounts existed get theirs on the first look.
            account = virtual_account_request(brand=brand, currency=brand.default_currency)
        except FundingRefused:
            account = None
    return {
        "brand": brand,
        "membership": request.membership,
        "account": account,
        "open": account is not None and account.status == VirtualAccountStatus.OPEN,
        "onboarding": onboarding,
        "asked": selectors.onboarding_problem_words(onboarding.problems) if onboarding else [],
        # Money moves once Adyen allows the account AND staff verified the brand (fail closed).
        "custody_allowed": bool(onboarding and onboarding.allowed and brand.verified),
        "can_fund": request.membership.role in roles.FUND,
        "funders": selectors.funders_of(brand=brand),
        "deposits": selectors.deposits_for_brand(brand=brand),
        "sandbox": settings.SANDBOX,
        "form": AmountForm(),
    }


@brand_member_required()
@require_GET
def funding_page(request):
    context = _context(request)
    if request.htmx and request.GET.get("part") == "deposits":
        return render(request, "payouts/funding/page.html#deposits", context)
    return render(request, "payouts/funding/page.html", context)


@brand_member_required(roles.FUND)
@require_POST
def sandbox_deposit(request):
    """The sandbox bank sends money from the brand's company account to its virtual IBAN; the
    provider's webhooks then report it, and only they book it."""
    form = AmountForm(request.POST)
    account = selectors.virtual_account_for_brand(
        brand=request.brand, currency=request.brand.default_currency
    )
    if not settings.SANDBOX:
        messages.error(request, _("Only the sandbox bank can send test money; send a bank transfer instead."))
    elif account is None or account.status != VirtualAccountStatus.OPEN:
        messages.error(request, _("The brand's virtual account is not open yet."))
    elif request.brand.pk in selectors.brands_custody_blocked(brand_ids=[request.brand.pk]):
        messages.error(request, _("Funding opens once Adyen has verified your company."))
    elif not form.is_valid():
        messages.error(request, _("Enter an amount of at least 0.01."))
    else:
        deposit_simulate(
            iban=account.iban,
            amount=form.cleaned_data["amount"],
            payer_name=request.brand.legal_name or request.brand.name,
        )
        funding_webhooks_deliver()
        messages.success(
            request, _("The sandbox bank sent the money; it is booked when the provider reports it.")
        )
    return redirect("payouts:funding", brand_slug=request.brand.slug)


@brand_member_required(roles.FUND)
@require_POST
def onboarding_link(request):
    """A fresh link to the payment provider's hosted onboarding page, for the documents it asks."""
    back = settings.SITE_URL + reverse("payouts:funding", args=[request.brand.slug])
    try:
        url = onboarding_link_make(
            brand=request.brand,
            language=translation.get_language() or "en",
            redirect_url=back,
            theme_id=settings.ADYEN_ONBOARDING_THEME_ID,
        )
    except OnboardingRefused as refused:
        messages.error(request, refused.message)
        return redirect("payouts:funding", brand_slug=request.brand.slug)
    return HttpResponseRedirect(url)


def brand_pages():
    """The funding pages, under a brand's prefix (payouts.urls)."""
    return [
        path("funding/", funding_page, name="funding"),
        path("funding/sandbox-deposit/", sandbox_deposit, name="funding_sandbox_deposit"),
        path("funding/onboarding-link/", onboarding_link, name="funding_onboarding_link"),
    ]
