from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render

from campaigns.access import brand_member_required
from campaigns.forms import BrandCreateForm
from campaigns.selectors import brand_balances, brands_for_user
from campaigns.services import brand_create
from joyback.ledger.selectors import account_entries, account_get_for_brand, transactions_for_brand


@login_required
def brand_home(request):
    brands = list(brands_for_user(user=request.user))
    if len(brands) == 1:
        return redirect("brand_dashboard", brand_slug=brands[0].slug)
    return render(request, "campaigns/brand_list.html", {"brands": brands, "form": BrandCreateForm()})


@login_required
def brand_new(request):
    form = BrandCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        brand = brand_create(
            name=form.cleaned_data["name"],
            owner=request.user,
            currency=form.cleaned_data["currency"],
        )
        return redirect("brand_dashboard", brand_slug=brand.slug)
    brands = list(brands_for_user(user=request.user))
    return render(request, "campaigns/brand_list.html", {"brands": brands, "form": form})


@brand_member_required()
def dashboard(request):
    context = {
        "brand": request.brand,
        "membership": request.membership,
        "balances": brand_balances(brand=request.brand),
        "transactions": transactions_for_brand(brand_id=request.brand.pk),
    }
    template = "campaigns/dashboard.html"
    if request.htmx:
        template += "#balances"
    return render(request, template, context)


@brand_member_required()
def account_detail(request, account_id: int):
    account = account_get_for_brand(brand_id=request.brand.pk, account_id=account_id)
    if account is None:
        raise Http404("No such account")
    context = {
        "brand": request.brand,
        "membership": request.membership,
        "account": account,
        "entries": account_entries(account=account),
    }
    return render(request, "campaigns/account_detail.html", context)
