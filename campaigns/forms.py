from django import forms
from django.utils.translation import gettext_lazy as _

CURRENCIES = [("EUR", "EUR — Euro"), ("GBP", "GBP — Pound sterling"), ("USD", "USD — US dollar")]


class BrandCreateForm(forms.Form):
    name = forms.CharField(label=_("Brand name"), max_length=120, strip=True)
    currency = forms.ChoiceField(label=_("Currency you fund campaigns in"), choices=CURRENCIES)
