import functools
from decimal import Decimal

import phonenumbers
from django import forms
from django.utils.translation import gettext_lazy as _

from joyback.money import from_major
from payouts.iso20022.text import name_latin
from payouts.models.payees import Rail
from payouts.rails import (
    AccountInvalid,
    iban_check,
    rail_for,
    swift_account_check,
    uk_account_check,
    us_account_check,
)

CONSENT_VERSION = "2026-11"
# The payee's address, asked for on the rails whose payee bank abroad needs it.
ADDRESS_FIELDS = ("address_line", "address_city", "address_postal_code", "address_region", "address_country")
# The bank details each rail needs (what the form asks for, by the campaign's currency).
BANK_FIELDS = {
    Rail.SEPA: ("iban",),
    Rail.UK_FPS: ("sort_code", "account_number"),
    Rail.US_ACH: ("routing_number", "account_number"),
    Rail.SWIFT: (
        "bic",
        "account_number",
        "address_line",
        "address_city",
        "address_postal_code",
        "address_region",
        "address_country",
    ),
}
ALL_BANK_FIELDS = {name for names in BANK_FIELDS.values() for name in names}


class SharedFields(dict):
    """A form's fields used as declared by every instance (Django deep-copies them per form, for
    forms that change a field, like its label, per instance): only for forms that never do."""

    def __deepcopy__(self, memo):
        return dict(self)


@functools.cache
def _rail_fields(form_class, rail) -> SharedFields:
    unused = ALL_BANK_FIELDS - set(BANK_FIELDS.get(rail, ()))
    return SharedFields({name: field for name, field in form_class.base_fields.items() if name not in unused})


class PayeeForm(forms.Form):
    """Name, a contact (email or WhatsApp number) and the bank details the campaign's rail needs.
    Its fields are shared by every instance (SharedFields): change them by declaring new ones."""

    name = forms.CharField(
        label=_("Full name, as your bank knows it"),
        max_length=140,
        strip=True,
        error_messages={"required": _("Enter your name as your bank knows it.")},
    )
    email = forms.EmailField(label=_("Email"), required=False, max_length=254)
    phone = forms.CharField(label=_("WhatsApp number"), required=False, max_length=32)
    iban = forms.CharField(label=_("IBAN"), required=False, max_length=42)
    sort_code = forms.CharField(label=_("Sort code"), required=False, max_length=10)
    account_number = forms.CharField(label=_("Account number"), required=False, max_length=34)
    routing_number = forms.CharField(label=_("Routing number"), required=False, max_length=12)
    bic = forms.CharField(label=_("BIC (SWIFT code) of your bank"), required=False, max_length=11)
    # A name not written in Latin letters goes to the bank as the person's bank spells it, never as
    # a reading guessed here; asked for only when the name needs it.
    name_latin = forms.CharField(
        label=_("Your name as your bank writes it (Latin letters)"),
        required=False,
        max_length=140,
        strip=True,
    )
    # International transfers (SWIFT) need the payee's address; the other rails do not ask for it.
    address_line = forms.CharField(label=_("Street and number"), required=False, max_length=70, strip=True)
    address_city = forms.CharField(label=_("City"), required=False, max_length=70, strip=True)
    address_postal_code = forms.CharField(label=_("Postal code"), required=False, max_length=10, strip=True)
    address_region = forms.CharField(
        label=_("State or province (two letters, US and Canada)"), required=False, max_length=3, strip=True
    )
    address_country = forms.CharField(
        label=_("Country (two letters)"), required=False, max_length=2, strip=True
    )
    consent = forms.BooleanField(
        label=_("I agree that JoyBack processes these details to pay me, under the campaign's terms."),
        error_messages={"required": _("Please agree to the terms so that we can pay you.")},
    )

    def __init__(self, *args, currency: str, **kwargs):
        self.rail = rail_for(currency)
        # Only the rail's bank fields are bound and cleaned, and the fields are used as declared:
        # no instance changes them, so the per-form deep copy (a tenth of a claim's work) is saved.
        self.base_fields = _rail_fields(type(self), self.rail)
        super().__init__(*args, **kwargs)
        self.bank_account = None
        self.phone_e164 = None

    def clean_phone(self):
        raw = self.cleaned_data["phone"].strip()
        if not raw:
            return ""
        try:
            number = phonenumbers.parse(raw, None)
        except phonenumbers.NumberParseException:
            raise forms.ValidationError(
                _("Enter the number with its country code, like +49 151 23456789.")
            ) from None
        if not phonenumbers.is_valid_number(number):
            raise forms.ValidationError(_("This is not a valid phone number."))
        self.phone_e164 = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
        return self.phone_e164

    def clean(self):
        data = super().clean()
        if not data.get("email") and not data.get("phone") and not self.errors.keys() & {"email", "phone"}:
            # The bank details are still checked: every problem at once. (The page shows this one under
            # the contact fields; the API names no field for it, as before.)
            self.add_error(
                None, _("Give an email address or a WhatsApp number, so we can tell you when it is paid.")
            )
        if self.rail is None:
            raise forms.ValidationError(_("Payouts in this campaign's currency are not offered yet."))
        try:
            if self.rail == Rail.SEPA:
                self.bank_account = iban_check(data.get("iban", ""))
            elif self.rail == Rail.UK_FPS:
                self.bank_account = uk_account_check(
                    data.get("sort_code", ""), data.get("account_number", "")
                )
            elif self.rail == Rail.US_ACH:
                self.bank_account = us_account_check(
                    data.get("routing_number", ""), data.get("account_number", "")
                )
            else:
                self.bank_account = swift_account_check(data.get("bic", ""), data.get("account_number", ""))
        except AccountInvalid as invalid:
            self.add_error(invalid.field, invalid.message)
        self._name_latin_check(data)
        if self.rail == Rail.SWIFT:
            self._address_check(data)
        return data

    @property
    def name_latin_shown(self) -> bool:
        """The Latin spelling is asked for once the name needs it (or was given)."""
        name = str(self.data.get("name", "")) if self.is_bound else ""
        return bool(name and not name_latin(name)) or bool(self.data.get("name_latin"))

    def _name_latin_check(self, data):
        name, spelled = data.get("name") or "", data.get("name_latin") or ""
        if spelled and not name_latin(spelled):
            self.add_error(
                "name_latin", _("Use Latin letters only (A to Z, with accents if your bank uses them).")
            )
        elif name and not name_latin(name) and not spelled:
            self.add_error(
                "name_latin",
                _(
                    "Banks send payments with names in Latin letters: enter your name exactly as your bank "
                    "writes it."
                ),
            )

    def _address_check(self, data):
        """What a bank abroad needs to pay an international transfer (Adyen refuses one without)."""
        country = (data.get("address_country") or "").upper()
        data["address_country"] = country
        data["address_region"] = (data.get("address_region") or "").upper()
        for field in ("address_line", "address_city"):
            if not data.get(field):
                self.add_error(field, _("International transfers need your address."))
        if len(country) != 2 or not country.isalpha():
            self.add_error("address_country", _("Enter your country's two-letter code, e.g. CA."))
        if country in ("US", "CA") and not data["address_region"]:
            self.add_error("address_region", _("Enter your state or province's two-letter code."))

    @property
    def address(self) -> dict | None:
        if self.rail != Rail.SWIFT:
            return None
        data = self.cleaned_data
        return {
            "line1": data.get("address_line", ""),
            "city": data.get("address_city", ""),
            "postalCode": data.get("address_postal_code", ""),
            "stateOrProvince": data.get("address_region", ""),
            "country": data.get("address_country", ""),
        }


class ManualPayoutForm(PayeeForm):
    """A payout a finance member makes by hand: the payee's details and an amount."""

    name = forms.CharField(label=_("Payee's full name, as their bank knows it"), max_length=140, strip=True)
    email = forms.EmailField(label=_("Payee's email"), required=False, max_length=254)
    amount = forms.DecimalField(label=_("Amount"), min_value=Decimal("0.01"), max_digits=12, decimal_places=2)
    consent = forms.BooleanField(
        label=_("The payee agreed to be paid and to these details being kept for it."),
        error_messages={"required": _("Confirm that the payee agreed.")},
    )

    def __init__(self, *args, currency: str, **kwargs):
        super().__init__(*args, currency=currency, **kwargs)
        self.currency = currency

    def amount_minor(self) -> int:
        return from_major(self.cleaned_data["amount"], self.currency)

    def _name_latin_check(self, data):
        # Staff enter the name as the payee's bank knows it: in Latin letters, never a guess of ours.
        if data.get("name") and not name_latin(data["name"]):
            self.add_error("name", _("Enter the payee's name in Latin letters, as their bank writes it."))
