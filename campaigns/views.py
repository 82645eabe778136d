from decimal import Decimal

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.http import Http404, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.utils import timezone, translation
from django.utils.safestring import mark_safe
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from campaigns import roles
from campaigns.access import brand_member_required
from campaigns.brief import FIELDS as BRIEF_FIELDS
from campaigns.brief import BriefError, brief_clean, brief_lines
from campaigns.forms import (
    AllowanceForm,
    AmountForm,
    BrandCreateForm,
    CampaignForm,
    DryRunForm,
    LegalDetailsForm,
    LicenceForm,
    RuleForm,
)
from campaigns.invoices import brand_vies_said, vat_vies_needed
from campaigns.licence import licence_terms_current, licence_terms_publish
from campaigns.mode_views import brand_slug_in_chosen_mode
from campaigns.models import POSTING_TRIGGERS, ActionRule, CampaignStatus, VatIdCheck
from campaigns.overview import overview_window
from campaigns.overview_views import campaign_charts
from campaigns.selectors import (
    brand_balances,
    brand_owner_verified_email,
    brand_verification_missing,
    brands_for_user,
    campaign_budget,
    campaign_claimability,
    campaign_draft_for_member,
    campaign_dry_run,
    campaign_get_for_brand,
    campaign_public_cached,
    campaign_public_get,
    campaigns_for_brand,
    landing_page_cached,
)
from campaigns.services.brands import brand_allowance_set, brand_create, brand_legal_details_save
from campaigns.services.campaigns import campaign_create, campaign_transition, campaign_update
from campaigns.services.copies import campaign_copy_to_test
from campaigns.services.funding import brand_topup_sandbox, campaign_fund
from campaigns.services.refusals import CampaignError, campaign_launch_problems
from campaigns.services.rules import rule_delete, rule_save
from campaigns.starters import starters
from campaigns.tax import campaign_tax_check
from campaigns.visits import landing_visit_record, visit_is_counted
from joyback.ledger.selectors import account_entries, account_get_for_brand


@login_required
def brand_home(request):
    brands = list(brands_for_user(user=request.user))
    if len(brands) == 1:
        return redirect("brand_dashboard", brand_slug=brand_slug_in_chosen_mode(request, brands[0]))
    return render(request, "campaigns/brand_list.html", {"brands": brands, "form": BrandCreateForm()})


@login_required
def brand_new(request):
    form = BrandCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        brand = brand_create(
            name=form.cleaned_data["name"], owner=request.user, currency=form.cleaned_data["currency"]
        )
        return redirect("brand_dashboard", brand_slug=brand.slug)
    brands = list(brands_for_user(user=request.user))
    return render(request, "campaigns/brand_list.html", {"brands": brands, "form": form})


def _brand_context(request, **extra):
    return {"brand": request.brand, "membership": request.membership, "roles": roles, **extra}


def _legal_form(brand) -> LegalDetailsForm:
    return LegalDetailsForm(
        initial={
            "legal_name": brand.legal_name,
            "registration_number": brand.registration_number,
            "country": brand.country,
            "vat_id": brand.vat_id,
        }
    )


def _vies_words(brand) -> dict:
    """What the EU's VIES said of the brand's VAT number, in words, where it decides the VAT."""
    if not vat_vies_needed(country=brand.country, vat_id=brand.vat_id):
        return {}
    status = brand_vies_said(brand)
    return {"vies_status": status, "vies_words": VatIdCheck(status).label}


@brand_member_required()
def dashboard(request, legal_form=None, status=200):
    context = _brand_context(
        request,
        balances=brand_balances(brand=request.brand),
        campaigns=list(campaigns_for_brand(brand=request.brand)),
        window=overview_window(data=request.GET, brand=request.brand),
        topup_form=AmountForm(),
        allowance_form=AllowanceForm(initial={"person_allowance": _major(request.brand.person_allowance)}),
        verification_missing=[]
        if request.brand.verified
        else brand_verification_missing(brand=request.brand),
        legal_form=legal_form or _legal_form(request.brand),
        **_vies_words(request.brand),
        # Asked only until the owner has confirmed it: a reminder after the fact reads as a fault.
        email_unconfirmed=not request.brand.verified and not brand_owner_verified_email(brand=request.brand),
    )
    template = "campaigns/dashboard.html"
    if request.htmx:
        template += "#balances"
    return render(request, template, context, status=status)


@brand_member_required(roles.MANAGE_MEMBERS)
@require_POST
def brand_legal_details(request):
    """The owner says who the brand is in law; platform staff verify it."""
    form = LegalDetailsForm(request.POST)
    if not form.is_valid():
        return dashboard.__wrapped__(request, legal_form=form, status=400)
    try:
        brand_legal_details_save(brand=request.brand, **form.cleaned_data)
    except CampaignError as error:
        form.add_error(None, str(error))
        return dashboard.__wrapped__(request, legal_form=form, status=400)
    messages.success(
        request, _("Saved. JoyBack's staff verify the brand; funding and payouts open once they have.")
    )
    return redirect("brand_dashboard", brand_slug=request.brand.slug)


# Test data's top ups are play money from the sandbox bank: no second factor for those.
@brand_member_required(roles.FUND, money="live")
@require_POST
def brand_topup(request):
    form = AmountForm(request.POST)
    if form.is_valid():
        try:
            brand_topup_sandbox(
                brand=request.brand,
                amount=form.cleaned_data["amount"],
                currency=request.brand.default_currency,
            )
            messages.success(
                request, _("The sandbox bank received your transfer and reported it: deposit booked.")
            )
        except CampaignError as error:
            messages.error(request, str(error))
    else:
        messages.error(request, _("Enter an amount of at least 0.01."))
    return redirect("brand_finance", brand_slug=request.brand.slug)


def _major(amount):
    return None if amount is None else Decimal(amount) / 100


@brand_member_required(roles.MANAGE_MEMBERS)
@require_POST
def brand_allowance(request):
    form = AllowanceForm(request.POST)
    if form.is_valid():
        brand_allowance_set(brand=request.brand, person_allowance=form.cleaned_data["person_allowance"])
        messages.success(request, _("Allowance saved."))
    else:
        messages.error(request, _("Enter an amount of at least 0.01, or leave it empty for no limit."))
    return redirect("brand_finance", brand_slug=request.brand.slug)


@brand_member_required()
def account_detail(request, account_id: int):
    account = account_get_for_brand(brand_id=request.brand.pk, account_id=account_id)
    if account is None:
        raise Http404("No such account")
    context = _brand_context(request, account=account, entries=account_entries(account=account))
    return render(request, "campaigns/account_detail.html", context)


@brand_member_required()
def campaign_list(request):
    context = _brand_context(request, campaigns=campaigns_for_brand(brand=request.brand), starters=starters())
    return render(request, "campaigns/campaign_list.html", context)


def _starter(package: str) -> dict:
    return next((starter for starter in starters() if starter["package"] == package), starters()[0])


def _campaign_new_page(request, form, *, status=200):
    package = form["package"].value() or ""
    context = _brand_context(request, form=form, starter=_starter(package))
    return render(request, "campaigns/campaign_new.html", context, status=status)


@brand_member_required(roles.EDIT_CAMPAIGNS)
@require_http_methods(["GET", "POST"])
def campaign_new(request):
    """The second step of a new campaign: the template chosen on the campaign list (step one)
    fills in the package and texts to start from."""
    if request.method == "GET":
        starter = _starter(request.GET.get("template", ""))
        form = CampaignForm(
            initial={
                "package": starter["package"],
                "currency": request.brand.default_currency,
                "languages": [get_language() if get_language() in ("en", "de", "es", "zh-hans") else "en"],
                "countries": [request.live_brand.country] if request.live_brand.country else [],
                "headline": starter["headline"],
                "description": starter["description"],
            }
        )
        return _campaign_new_page(request, form)
    form = CampaignForm(request.POST)
    if form.is_valid():
        try:
            campaign = campaign_create(brand=request.brand, **form.cleaned_data)
        except CampaignError as error:
            form.add_error(None, str(error))
        else:
            if request.membership.role in roles.FUND:
                created = _("Campaign created as a draft. Fund it, check the rules, then go live.")
            else:
                created = _(
                    "Campaign created as a draft. Check the rules; the owner or a finance member funds it; "
                    "then you take it live."
                )
            messages.success(request, created)
            return redirect("campaign_detail", brand_slug=request.brand.slug, campaign_id=campaign.pk)
    return _campaign_new_page(request, form, status=400)


def _campaign(request, campaign_id):
    campaign = campaign_get_for_brand(brand=request.brand, campaign_id=campaign_id)
    if campaign is None:
        raise Http404("No such campaign")
    return campaign


def _campaign_context(request, campaign, **extra):
    rules = list(campaign.rules.all())
    return _brand_context(
        request,
        campaign=campaign,
        rules=rules,
        launch_problems=campaign_launch_problems(campaign=campaign),
        # Beside the launch check: what each rewarded action is for tax (campaigns.tax), never blocking.
        tax_statements=campaign_tax_check(campaign=campaign),
        budget=campaign_budget(campaign=campaign, rules=rules),
        charts=campaign_charts(campaign=campaign, today=timezone.localdate()),
        claimability=campaign_claimability(campaign=campaign),
        dry_run=campaign_dry_run(campaign=campaign),
        rule_form=extra.pop("rule_form", None) or RuleForm(initial={"verification_mode": "instant"}),
        fund_form=extra.pop("fund_form", None) or AmountForm(),
        licence_form=extra.pop("licence_form", None) or licence_form_initial(campaign),
        licence_terms=licence_terms_current(campaign=campaign),
        edit_form=extra.pop("edit_form", None) or CampaignForm(initial=_campaign_initial(campaign)),
        **extra,
    )


def _campaign_initial(campaign):
    fields = [
        "name",
        "package",
        "currency",
        "countries",
        "languages",
        "headline",
        "description",
        "disclosure_text",
    ]
    written = {
        f"{field}_{code.replace('-', '_')}": text
        for code, texts in (campaign.texts or {}).items()
        for field, text in texts.items()
    }
    return (
        {field: getattr(campaign, field) for field in fields}
        | written
        | {
            "starts_at": campaign.starts_at,
            "ends_at": campaign.ends_at,
            "share_requires_purchase": campaign.share_requires_purchase,
        }
    )


def _rule_initial(rule: ActionRule) -> dict:
    """A rule as its row's Edit link opens it in the rule editor."""

    def major(amount):
        return None if amount is None else Decimal(amount).scaleb(-2)  # 500 -> 5.00, as typed

    return {
        "trigger": rule.trigger,
        "reward": major(rule.reward_amount),
        "verification_mode": rule.verification_mode,
        "window_hours": rule.window_hours,
        "min_views": rule.min_views,
        "min_likes": rule.min_likes,
        "total_cap": rule.total_cap,
        "instructions": rule.instructions,
        "cashback_percent": None
        if rule.cashback_basis_points is None
        else Decimal(rule.cashback_basis_points) / 100,
        "return_window_days": rule.return_window_days,
        "reach_tiers": "\n".join(
            f"{views} = {major(amount):.2f}" for views, amount in rule.reach_tiers or []
        ),
        "reach_per_thousand": major(rule.reach_per_thousand),
        "reach_person_cap": major(rule.reach_person_cap),
        "reach_campaign_cap": major(rule.reach_campaign_cap),
        "recheck_hours": rule.recheck_hours or None,
        "product_rewards": "\n".join(
            f"{sku} = {major(amount):.2f}" for sku, amount in (rule.product_rewards or {}).items()
        ),
        "referral_min_order": major(rule.referral_min_order),
        "referral_person_cap": major(rule.referral_person_cap),
        "referral_campaign_cap": major(rule.referral_campaign_cap),
        "referral_first_order_only": rule.referral_first_order_only,
        **{
            f"brief_{name}": " ".join(value) if isinstance(value, list) else value
            for name, value in (rule.brief or {}).items()
        },
    }


@brand_member_required()
def campaign_detail(request, campaign_id):
    campaign = _campaign(request, campaign_id)
    template = "campaigns/campaign_detail.html"
    if request.htmx:
        template += "#live"
    extra = {}
    rule_id = request.GET.get("rule", "")
    if rule_id.isdigit() and (rule := campaign.rules.filter(pk=int(rule_id)).first()) is not None:
        extra = {"rule_form": RuleForm(initial=_rule_initial(rule)), "editing_rule": rule}
    return render(request, template, _campaign_context(request, campaign, **extra))


@brand_member_required(roles.EDIT_CAMPAIGNS)
@require_POST
def campaign_copy_to_test_view(request, campaign_id):
    """The campaign copied into the brand's test data, to try with play money."""
    campaign = _campaign(request, campaign_id)
    try:
        copy = campaign_copy_to_test(campaign=campaign)
    except CampaignError as error:
        messages.error(request, str(error))
        return redirect("campaign_detail", brand_slug=request.brand.slug, campaign_id=campaign.pk)
    messages.success(
        request,
        _(
            "Copied to your test data as a draft. Fund it with play money and take it live to try it: "
            "nothing here touches the live campaign or real money."
        ),
    )
    return redirect("campaign_detail", brand_slug=copy.brand.slug, campaign_id=copy.pk)


def _launch_problems_warn(request, campaign):
    """What the launch checks would say now, shown after every save."""
    for problem in campaign_launch_problems(campaign=campaign):
        if problem.blocking:
            messages.warning(request, _("Blocks going live: %(problem)s") % {"problem": problem.message})
        else:
            messages.warning(request, problem.message)


def _campaign_form_submit(request, campaign, form, *, form_name, action, success, error_field=None):
    """A form posted from the campaign page: on success back to the page with a message; on bad
    input or a refused operation the page again, with that form's errors, changing nothing."""
    if form.is_valid():
        try:
            action(form.cleaned_data)
        except CampaignError as error:
            form.add_error(error_field, str(error))
        else:
            messages.success(request, success)
            _launch_problems_warn(request, campaign)
            return redirect("campaign_detail", brand_slug=request.brand.slug, campaign_id=campaign.pk)
    context = _campaign_context(request, campaign, **{form_name: form})
    return render(request, "campaigns/campaign_detail.html", context, status=400)


@brand_member_required(roles.EDIT_CAMPAIGNS)
@require_POST
def campaign_edit(request, campaign_id):
    campaign = _campaign(request, campaign_id)
    return _campaign_form_submit(
        request,
        campaign,
        CampaignForm(request.POST),
        form_name="edit_form",
        action=lambda data: campaign_update(campaign=campaign, **data),
        success=_("Campaign saved."),
    )


@brand_member_required(roles.EDIT_CAMPAIGNS)
@require_POST
def campaign_rule_save(request, campaign_id):
    campaign = _campaign(request, campaign_id)

    def save(data):
        rule_save(
            campaign=campaign,
            trigger=data["trigger"],
            reward_amount=data["reward"],
            verification_mode=data["verification_mode"],
            window_hours=data["window_hours"] or 0,
            min_views=data["min_views"] or 0,
            min_likes=data["min_likes"] or 0,
            total_cap=data["total_cap"],
            instructions=data.get("instructions", ""),
            cashback_basis_points=(
                int(data["cashback_percent"] * 100) if data.get("cashback_percent") is not None else None
            ),
            return_window_days=data.get("return_window_days") or 0,
            reach_tiers=data.get("reach_tiers") or [],
            reach_per_thousand=data.get("reach_per_thousand"),
            reach_person_cap=data.get("reach_person_cap"),
            reach_campaign_cap=data.get("reach_campaign_cap"),
            recheck_hours=data.get("recheck_hours") or 0,
            product_rewards=data.get("product_rewards") or {},
            referral_min_order=data.get("referral_min_order"),
            referral_person_cap=data.get("referral_person_cap"),
            referral_campaign_cap=data.get("referral_campaign_cap"),
            referral_first_order_only=bool(data.get("referral_first_order_only")),
            brief={name: data.get(f"brief_{name}") for name in BRIEF_FIELDS},
        )

    return _campaign_form_submit(
        request,
        campaign,
        RuleForm(request.POST),
        form_name="rule_form",
        action=save,
        success=_("Rule saved."),
    )


# The languages a creator may read a brief in, each by its own name.
BRIEF_LANGUAGES = (("en", "English"), ("de", "Deutsch"), ("es", "Español"), ("zh-hans", "中文"))


@brand_member_required(roles.EDIT_CAMPAIGNS)
def campaign_rule_brief_preview(request, campaign_id):
    """The brief's fields as the creator will read them, in each of the four languages (the rule
    editor asks for it with htmx as the brand fills the fields); a field it cannot take, said so."""
    campaign = _campaign(request, campaign_id)
    form = RuleForm(request.GET)
    form.is_valid()  # the brief's own fields are read from cleaned_data; the rest does not matter here
    data = {name: form.cleaned_data.get(f"brief_{name}") for name in BRIEF_FIELDS}
    error, previews = "", []
    wrong = [e for name in BRIEF_FIELDS for e in form.errors.get(f"brief_{name}", [])]
    try:
        if wrong:
            raise BriefError(wrong[0])
        brief = brief_clean(data)
    except BriefError as refused:
        error = str(refused)
    else:
        for code, name in BRIEF_LANGUAGES:
            with translation.override(code):
                previews.append({"code": code, "name": name, "lines": brief_lines(brief)})
    return render(
        request,
        "campaigns/_brief_preview.html",
        {"campaign": campaign, "previews": previews, "error": error},
    )


@brand_member_required(roles.EDIT_CAMPAIGNS)
@require_POST
def campaign_rule_delete(request, campaign_id, rule_id):
    campaign = _campaign(request, campaign_id)
    rule = ActionRule.objects.filter(campaign=campaign, pk=rule_id).first()
    if rule is None:
        raise Http404("No such rule")
    try:
        rule_delete(rule=rule)
        messages.success(request, _("Rule removed."))
    except CampaignError as error:
        messages.error(request, str(error))
    return redirect("campaign_detail", brand_slug=request.brand.slug, campaign_id=campaign.pk)


@brand_member_required(roles.FUND)
@require_POST
def campaign_fund_view(request, campaign_id):
    campaign = _campaign(request, campaign_id)
    return _campaign_form_submit(
        request,
        campaign,
        AmountForm(request.POST),
        form_name="fund_form",
        action=lambda data: campaign_fund(campaign=campaign, amount=data["amount"]),
        success=_("Budget funded."),
        error_field="amount",
    )


@brand_member_required(roles.EDIT_CAMPAIGNS)
@require_POST
def campaign_status(request, campaign_id):
    campaign = _campaign(request, campaign_id)
    target = request.POST.get("to", "")
    if target not in CampaignStatus.values:
        messages.error(request, _("Unknown status."))
    else:
        try:
            campaign_transition(campaign=campaign, to=target)
            messages.success(
                request,
                _("The campaign is now %(status)s.") % {"status": CampaignStatus(target).label.lower()},
            )
        except CampaignError as error:
            messages.error(request, str(error))
    return redirect("campaign_detail", brand_slug=request.brand.slug, campaign_id=campaign.pk)


@brand_member_required()
@require_GET
def campaign_dry_run_view(request, campaign_id):
    campaign = _campaign(request, campaign_id)
    form = DryRunForm(request.GET)
    budget = form.cleaned_data["budget"] if form.is_valid() else None
    context = _brand_context(
        request,
        campaign=campaign,
        dry_run=campaign_dry_run(campaign=campaign, budget=budget),
        dry_run_form=form,
    )
    return render(request, "campaigns/campaign_detail.html#dry-run", context)


@require_GET
def landing(request, slug):
    """The public page of a campaign: the brand, the reward, the disclosure, and the steps.

    The most visited page of a viral campaign, and the same for every visitor in a language: its
    body is cached for LANDING_CACHE_SECONDS, and so is the whole page for visitors with nothing
    of their own to show (no session, no pending message). A claim always checks the live state.
    """
    get_token(request)  # the page carries no token; the cookie set with this response does
    # The cheap look at the headers first: bots and prefetches cost the cached page nothing more.
    if visit_is_counted(request) and (visited := campaign_public_cached(slug=slug)) is not None:
        landing_visit_record(request=request, campaign_id=visited.pk)
    language = get_language()
    personal = bool(
        request.GET or settings.SESSION_COOKIE_NAME in request.COOKIES or "messages" in request.COOKIES
    )
    page_key = f"landing-page:{slug}:{language}"
    if not personal and (html := landing_page_cached(page_key=page_key)) is not None:
        return HttpResponse(html)
    try:
        page = _landing_body(slug=slug, language=language)
    except Http404:
        preview = _draft_preview(request, slug=slug, language=language)
        if preview is None:
            raise
        return preview
    body = mark_safe(page["body"])  # noqa: S308 - rendered from our own template, autoescaped
    response = render(request, "campaigns/landing.html", {"title": page["title"], "body": body})
    if not personal:
        cache.set(page_key, response.content, settings.LANDING_CACHE_SECONDS)
    return response


def _draft_preview(request, *, slug: str, language: str):
    """A draft's page as people will see it, for the brand's own members only (everyone else gets
    the 404 a missing campaign gets): never cached, counted or indexed, and nothing on it claims."""
    campaign = campaign_draft_for_member(slug=slug, user=request.user)
    if campaign is None:
        return None
    rules = list(campaign.rules.all())
    context = {
        "campaign": campaign,
        "rules": rules,
        "total_reward": sum(rule.reward_amount for rule in rules),
        "posts": any(rule.trigger in POSTING_TRIGGERS for rule in rules),
        "claimability": {"open": True},
        "headline": campaign.text("headline", language),
        "description": campaign.text("description", language),
        "preview": True,
        "preview_brand_slug": campaign.brand.slug,
    }
    body = render_to_string("campaigns/_landing_body.html", context, request=request)
    title = f"{context['headline'] or campaign.name} · {campaign.brand.name}"
    response = render(
        request,
        "campaigns/landing.html",
        {"title": title, "body": mark_safe(body)},  # noqa: S308 - our own template, autoescaped
    )
    response["Cache-Control"] = "private, no-store"
    response["X-Robots-Tag"] = "noindex"
    return response


def _landing_body(*, slug: str, language: str) -> dict:
    key = f"landing:{slug}:{language}"
    page = cache.get(key)
    if page is None:
        campaign = campaign_public_get(slug=slug)
        if campaign is None:
            raise Http404("No such campaign")
        rules = list(campaign.rules.all())
        context = {
            "campaign": campaign,
            "rules": rules,
            "total_reward": sum(rule.reward_amount for rule in rules),
            # The posting instructions (disclosure, paid-partnership label) only where a step is a post.
            "posts": any(rule.trigger in POSTING_TRIGGERS for rule in rules),
            "claimability": campaign_claimability(campaign=campaign),
            # A cashback page pays per order, again on each one: "up to" the sum would contradict it.
            "per_order": len(rules) == 1 and rules[0].trigger == "purchase",
            "per_order_percent": Decimal(rules[0].cashback_basis_points) / 100
            if len(rules) == 1 and rules[0].cashback_basis_points
            else None,
        }
        context["headline"] = campaign.text("headline", language)
        context["description"] = campaign.text("description", language)
        page = {
            "title": f"{context['headline'] or campaign.name} · {campaign.brand.name}",
            "body": render_to_string("campaigns/_landing_body.html", context),
        }
        cache.set(key, page, settings.LANDING_CACHE_SECONDS)
    return page


def licence_form_initial(campaign) -> LicenceForm:
    terms = licence_terms_current(campaign=campaign)
    if terms is None:
        return LicenceForm(initial={"organic_reuse": True, "duration_days": 365})
    return LicenceForm(
        initial={
            "organic_reuse": terms.organic_reuse,
            "paid_ads": terms.paid_ads,
            "duration_days": terms.duration_days,
            "territories": terms.territories,
        }
    )


@brand_member_required(roles.EDIT_CAMPAIGNS)
@require_POST
def campaign_licence_save(request, campaign_id):
    campaign = _campaign(request, campaign_id)
    return _campaign_form_submit(
        request,
        campaign,
        LicenceForm(request.POST),
        form_name="licence_form",
        action=lambda data: licence_terms_publish(campaign=campaign, created_by=request.user, **data),
        success=_("Licence saved. People who share from now on grant this version."),
    )
