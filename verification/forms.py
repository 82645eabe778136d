import re

from django import forms
from django.utils.translation import gettext_lazy as _

from campaigns.models import Campaign, Trigger
from verification.models import ShopKind
from verification.providers.shop_auth import SHOPIFY_SHOP

HOSTNAME = re.compile(r"^(?=.{4,80}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")


class ShopConnectForm(forms.Form):
    kind = forms.ChoiceField(label=_("Shop"), choices=ShopKind.choices)
    domain = forms.CharField(
        label=_("Shop domain"),
        max_length=120,
        help_text=_(
            "Shopify: your-shop.myshopify.com. WooCommerce: your store's address, like shop.example.com."
        ),
    )
    webhook_secret = forms.CharField(
        label=_("Webhook secret"),
        max_length=200,
        widget=forms.PasswordInput(render_value=False),
        help_text=_(
            "Shopify: your app's client secret (it signs the webhooks). "
            "WooCommerce: the secret you give each webhook under Settings → Advanced → Webhooks."
        ),
    )
    campaign = forms.ModelChoiceField(label=_("Cashback campaign"), queryset=Campaign.objects.none())

    def __init__(self, *args, brand, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["campaign"].queryset = Campaign.objects.filter(
            brand=brand, rules__trigger=Trigger.PURCHASE
        ).distinct()

    def clean_domain(self):
        domain = self.cleaned_data["domain"].strip().lower()
        domain = re.sub(r"^https?://", "", domain).split("/")[0]
        if not HOSTNAME.match(domain):
            raise forms.ValidationError(_("Give the shop's domain name, like shop.example.com."))
        return domain

    def clean_webhook_secret(self):
        secret = self.cleaned_data["webhook_secret"].strip()
        if len(secret) < 8:
            raise forms.ValidationError(_("A webhook secret has at least 8 characters."))
        return secret

    def clean(self):
        data = super().clean()
        if data.get("kind") == ShopKind.SHOPIFY and not SHOPIFY_SHOP.match(data.get("domain", "")):
            self.add_error(
                "domain",
                _("Shopify names the shop by its myshopify.com domain, like your-shop.myshopify.com."),
            )
        return data
