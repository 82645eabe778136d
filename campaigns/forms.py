from decimal import Decimal

from django import forms
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from campaigns.brief import FIELDS as BRIEF_FIELDS
from campaigns.brief import BriefError, brief_clean
from campaigns.models import Package, Role, Trigger, VerificationMode
from campaigns.reach import TiersInvalid, reach_tiers_parse

CURRENCIES = [("EUR", _("EUR — Euro")), ("GBP", _("GBP — Pound sterling")), ("USD", _("USD — US dollar"))]


class BrandCreateForm(forms.Form):
    name = forms.CharField(label=_("Brand name"), max_length=120, strip=True)
    currency = forms.ChoiceField(label=_("Currency you fund campaigns in"), choices=CURRENCIES)


SERVED_COUNTRIES = [
    ("AT", _("Austria")),
    ("BE", _("Belgium")),
    ("DE", _("Germany")),
    ("ES", _("Spain")),
    ("FI", _("Finland")),
    ("FR", _("France")),
    ("IE", _("Ireland")),
    ("IT", _("Italy")),
    ("LU", _("Luxembourg")),
    ("NL", _("Netherlands")),
    ("PT", _("Portugal")),
    ("GB", _("United Kingdom")),
    ("US", _("United States")),
    ("CN", _("China")),
]
LANGUAGE_CHOICES = [("en", "English"), ("de", "Deutsch"), ("es", "Español"), ("zh-hans", "简体中文")]


class MoneyField(forms.DecimalField):
    """A decimal amount typed by a person, cleaned to integer minor units."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("min_value", Decimal("0.01"))
        kwargs.setdefault("max_digits", 12)
        kwargs.setdefault("decimal_places", 2)
        super().__init__(*args, **kwargs)

    def clean(self, value):
        amount = super().clean(value)
        return None if amount is None else int(amount * 100)


class CampaignForm(forms.Form):
    name = forms.CharField(label=_("Campaign name"), max_length=120)
    package = forms.ChoiceField(label=_("Package"), choices=Package.choices)
    currency = forms.ChoiceField(label=_("Currency"), choices=CURRENCIES)
    countries = forms.MultipleChoiceField(
        label=_("Countries served"), choices=SERVED_COUNTRIES, widget=forms.CheckboxSelectMultiple
    )
    languages = forms.MultipleChoiceField(
        label=_("Languages"), choices=LANGUAGE_CHOICES, widget=forms.CheckboxSelectMultiple, initial=["en"]
    )
    headline = forms.CharField(label=_("What people get, in one line"), max_length=160, required=False)
    description = forms.CharField(
        label=_("Details"), max_length=2000, required=False, widget=forms.Textarea(attrs={"rows": 3})
    )
    disclosure_text = forms.CharField(
        label=_("Disclosure wording"),
        max_length=300,
        required=False,
        help_text=_("Leave empty for the standard wording in each visitor's language."),
    )
    starts_at = forms.DateTimeField(
        label=_("Starts"), required=False, widget=forms.DateTimeInput(attrs={"type": "datetime-local"})
    )
    ends_at = forms.DateTimeField(
        label=_("Ends"), required=False, widget=forms.DateTimeInput(attrs={"type": "datetime-local"})
    )

    per_identity_period_cap = forms.IntegerField(
        label=_("Most rewards one person earns per period"), min_value=1, required=False
    )
    per_identity_period_days = forms.IntegerField(
        label=_("Period (days)"), min_value=1, max_value=365, initial=30, required=False
    )
    share_requires_purchase = forms.BooleanField(
        label=_("Shares only buyers can earn"),
        required=False,
        help_text=_("The video step opens once the person has a confirmed purchase from your shop."),
    )

    def clean(self):
        data = super().clean()
        if data.get("starts_at") and data.get("ends_at") and data["ends_at"] <= data["starts_at"]:
            self.add_error("ends_at", _("The campaign must end after it starts."))
        texts = {}
        for code, _name in TRANSLATED_LANGUAGES:
            written = {
                field: data.pop(f"{field}_{code.replace('-', '_')}", "").strip()
                for field in ("headline", "description")
            }
            if any(written.values()):
                texts[code] = {field: text for field, text in written.items() if text}
        data["texts"] = texts
        return data


# The languages a brand may write its own texts in, besides the main ones (the visitor's language
# picks them; a missing one falls back to the main text).
TRANSLATED_LANGUAGES = [code_name for code_name in LANGUAGE_CHOICES if code_name[0] != "en"]
for _code, _name in TRANSLATED_LANGUAGES:
    _suffix = _code.replace("-", "_")
    CampaignForm.base_fields[f"headline_{_suffix}"] = forms.CharField(
        label=format_lazy(_("Headline in {language}"), language=_name), max_length=160, required=False
    )
    CampaignForm.base_fields[f"description_{_suffix}"] = forms.CharField(
        label=format_lazy(_("Details in {language}"), language=_name),
        max_length=2000,
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
    )


class RuleForm(forms.Form):
    trigger = forms.ChoiceField(label=_("Action"), choices=Trigger.choices)
    reward = MoneyField(label=_("Reward"))
    verification_mode = forms.ChoiceField(label=_("Verification"), choices=VerificationMode.choices)
    window_hours = forms.IntegerField(label=_("Window (hours)"), min_value=0, max_value=24 * 30, initial=0)
    min_views = forms.IntegerField(label=_("Minimum views"), min_value=0, initial=0)
    min_likes = forms.IntegerField(label=_("Minimum likes"), min_value=0, initial=0)
    total_cap = forms.IntegerField(label=_("At most this many rewards"), min_value=1, required=False)
    instructions = forms.CharField(
        label=_("What people are asked to do"),
        max_length=1000,
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_("In your words. Checked before launch: a reward may never depend on a positive opinion."),
    )
    cashback_percent = forms.DecimalField(
        label=_("Cashback (percent of the purchase)"),
        min_value=Decimal("0.01"),
        max_value=100,
        decimal_places=2,
        required=False,
        help_text=_("Purchases only. Empty: a fixed reward; set: the reward is the most a purchase earns."),
    )
    return_window_days = forms.IntegerField(
        label=_("Return window (days)"),
        min_value=0,
        max_value=365,
        initial=0,
        required=False,
        help_text=_("Purchases only: the cashback is confirmed once the purchase can no longer be returned."),
    )

    reach_tiers = forms.CharField(
        label=_("Pay by views: tiers"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "1000 = 1.00\n10000 = 5.00"}),
        help_text=_(
            "Shares only. One per line: views = what the video has earned in all at that many views. "
            "The reward above is then the most one video earns."
        ),
    )
    reach_per_thousand = MoneyField(label=_("Pay by views: per 1,000 views"), required=False)
    reach_person_cap = MoneyField(label=_("Most one person earns by views in this campaign"), required=False)
    reach_campaign_cap = MoneyField(label=_("Most all videos together earn by views"), required=False)
    recheck_hours = forms.IntegerField(
        label=_("Read the views every (hours)"),
        min_value=1,
        max_value=24 * 30,
        required=False,
        help_text=_("Empty: four times over the window."),
    )
    product_rewards = forms.CharField(
        label=_("Reward by product bought"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "SKU-BEANS-1KG = 8.00"}),
        help_text=_("Shares of a buyers-only campaign. One per line: the product's SKU = the reward."),
    )

    referral_min_order = MoneyField(
        label=_("Smallest order that earns a referral"),
        required=False,
        help_text=_("Referred sales only: the poster earns on an order of at least this much."),
    )
    referral_person_cap = MoneyField(label=_("Most one poster earns by referred sales"), required=False)
    referral_campaign_cap = MoneyField(
        label=_("Most all referred sales of the campaign earn"), required=False
    )
    referral_first_order_only = forms.BooleanField(
        label=_("Only a buyer's first order"),
        required=False,
        help_text=_("Referred sales only: an order from a buyer who bought from you before earns nothing."),
    )
    # The brief as fields (campaigns.brief): what a brand may ask of a posted video, rendered to the
    # creator in their language; only the text above is free and checked by reading it.
    brief_show_product = forms.BooleanField(label=_("Show the product"), required=False)
    brief_show_within_seconds = forms.IntegerField(
        label=_("Show it within the first seconds"), min_value=1, max_value=60, required=False
    )
    brief_tag_handle = forms.CharField(
        label=_("Tag this account"),
        max_length=31,
        required=False,
        widget=forms.TextInput(attrs={"placeholder": "@"}),
    )
    brief_hashtags = forms.CharField(
        label=_("Hashtags to add"),
        max_length=600,
        required=False,
        help_text=_(
            "Separated by spaces. The disclosure (#ad, #Werbung, #publi, #广告) is added on its own."
        ),
    )
    brief_mention = forms.CharField(label=_("Name this flavour or product"), max_length=60, required=False)
    brief_label_on = forms.BooleanField(label=_("Switch on the paid-partnership label"), required=False)
    brief_post_within_hours = forms.IntegerField(
        label=_("Post within (hours)"), min_value=1, max_value=24 * 30, required=False
    )
    brief_keep_public_days = forms.IntegerField(
        label=_("Keep public for (days)"), min_value=1, max_value=365, required=False
    )
    brief_min_seconds = forms.IntegerField(
        label=_("Video at least (seconds)"), min_value=1, max_value=600, required=False
    )
    brief_max_seconds = forms.IntegerField(
        label=_("Video at most (seconds)"), min_value=1, max_value=600, required=False
    )
    brief_language = forms.ChoiceField(
        label=_("Language spoken"),
        required=False,
        choices=[
            ("", "—"),
            ("en", _("English")),
            ("de", _("German")),
            ("es", _("Spanish")),
            ("zh-hans", _("Chinese")),
        ],
    )
    brief_price_allowed = forms.BooleanField(label=_("The price may be mentioned"), required=False)

    # The fields an action uses, the rest hidden while another action is chosen (actions.js; the
    # server checks every field whatever the browser shows). A field not named here is for all.
    ENGAGEMENT = (Trigger.UGC_SHARE, Trigger.LIKE, Trigger.COMMENT, Trigger.VIEW_THRESHOLD, Trigger.CUSTOM)
    SHARES = (Trigger.UGC_SHARE, Trigger.VIEW_THRESHOLD)
    SHOWN_FOR = {
        "verification_mode": ENGAGEMENT,
        "window_hours": ENGAGEMENT,
        "min_views": SHARES,
        "min_likes": ENGAGEMENT,
        "cashback_percent": (Trigger.PURCHASE, Trigger.REFERRAL),
        "return_window_days": (Trigger.PURCHASE,),
        "reach_tiers": SHARES,
        "reach_per_thousand": SHARES,
        "reach_person_cap": SHARES,
        "reach_campaign_cap": SHARES,
        "recheck_hours": SHARES,
        "product_rewards": (Trigger.UGC_SHARE,),
        "referral_min_order": (Trigger.REFERRAL,),
        "referral_person_cap": (Trigger.REFERRAL,),
        "referral_campaign_cap": (Trigger.REFERRAL,),
        "referral_first_order_only": (Trigger.REFERRAL,),
        **dict.fromkeys((f"brief_{name}" for name in BRIEF_FIELDS), SHARES),
    }

    def brief(self) -> dict:
        """The brief's fields as campaigns.brief takes them (after is_valid)."""
        return {name: self.cleaned_data.get(f"brief_{name}") for name in BRIEF_FIELDS}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name, triggers in self.SHOWN_FOR.items():
            self.fields[name].show_for = " ".join(triggers)

    def clean_reach_tiers(self):
        try:
            return reach_tiers_parse(self.cleaned_data.get("reach_tiers", ""))
        except TiersInvalid as error:
            raise forms.ValidationError(str(error)) from None

    def clean_product_rewards(self):
        rewards = {}
        for number, line in enumerate((self.cleaned_data.get("product_rewards") or "").splitlines(), start=1):
            if not line.strip():
                continue
            sku, _sep, amount = line.rpartition("=")
            try:
                minor = int(Decimal(amount.strip().replace(",", ".")) * 100)
            except ArithmeticError:
                minor = 0
            if not sku.strip() or minor <= 0:
                raise forms.ValidationError(
                    _("Line %(line)s: write “SKU = reward”, for example “BEANS-1KG = 8.00”.")
                    % {"line": number}
                )
            rewards[sku.strip()[:80]] = minor
        return rewards

    def clean(self):
        data = super().clean()
        if data.get("verification_mode") == VerificationMode.ENGAGEMENT and not data.get("window_hours"):
            self.add_error("window_hours", _("An engagement rule needs a window of at least one hour."))
        reach = data.get("reach_tiers") or data.get("reach_per_thousand")
        if reach and data.get("trigger") not in (Trigger.UGC_SHARE, Trigger.VIEW_THRESHOLD):
            self.add_error("reach_tiers", _("Only a share can be paid by its views."))
        elif reach and data.get("verification_mode") != VerificationMode.ENGAGEMENT:
            self.add_error(
                "verification_mode", _("A share paid by views is checked over an engagement window.")
            )
        elif (
            reach
            and data.get("reward")
            and data["reach_tiers"]
            and data["reach_tiers"][-1][1] > data["reward"]
        ):
            self.add_error("reach_tiers", _("A tier pays more than the most one video earns (the reward)."))
        if not self.errors:
            try:
                brief = brief_clean(self.brief())
            except BriefError as error:
                self.add_error(None, str(error))
            else:
                if brief and data.get("trigger") not in (Trigger.UGC_SHARE, Trigger.VIEW_THRESHOLD):
                    self.add_error(None, _("Only a rule for a posted video has a brief."))
        return data


class AmountForm(forms.Form):
    amount = MoneyField(label=_("Amount"))


class DryRunForm(forms.Form):
    budget = MoneyField(label=_("Budget to simulate"), required=False)


class AllowanceForm(forms.Form):
    person_allowance = MoneyField(
        label=_("Most one person may earn across all your campaigns"),
        required=False,
        help_text=_("Leave empty for no limit."),
    )


class LegalDetailsForm(forms.Form):
    """Who the brand is in law, for platform staff to verify before funding and payouts open."""

    legal_name = forms.CharField(label=_("Company's legal name"), max_length=200)
    registration_number = forms.CharField(
        label=_("Registration number"),
        max_length=60,
        help_text=_("As in the company register, e.g. HRB 12345"),
    )
    country = forms.ChoiceField(label=_("Country of registration"), choices=[("", "—"), *SERVED_COUNTRIES])
    vat_id = forms.CharField(
        label=_("VAT number"),
        max_length=20,
        required=False,
        help_text=_("In the EU, e.g. FR12345678901: JoyBack's invoices to you are then reverse-charged."),
    )


class VatIdForm(forms.Form):
    """The brand's VAT number alone, which its owner may correct at any time."""

    vat_id = forms.CharField(
        label=_("VAT number"),
        max_length=20,
        required=False,
        help_text=_("In the EU, e.g. FR12345678901: JoyBack's invoices to you are then reverse-charged."),
    )


class LicenceForm(forms.Form):
    """The licence a participant grants with a share; saving a change makes a new version."""

    organic_reuse = forms.BooleanField(label=_("Repost on our own channels"), required=False)
    paid_ads = forms.BooleanField(label=_("Use in paid ads (Spark Ads on TikTok)"), required=False)
    duration_days = forms.IntegerField(
        label=_("For how many days"), min_value=1, max_value=5 * 365, initial=365
    )
    territories = forms.MultipleChoiceField(
        label=_("Countries (none: worldwide)"),
        choices=SERVED_COUNTRIES,
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )


class InvitationForm(forms.Form):
    email = forms.EmailField(label=_("Email address"), max_length=254)
    role = forms.ChoiceField(label=_("Role"), choices=Role.choices, initial=Role.MARKETER)


class MemberRoleForm(forms.Form):
    role = forms.ChoiceField(label=_("Role"), choices=Role.choices)
