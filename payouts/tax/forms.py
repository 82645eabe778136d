"""The person's tax details form: what DAC7, the UK's platform rules and the IRS ask of a person
paid for a service (name, date of birth, address, tax number and where it was issued, and for the
US whether they are a US person), checked per country before anything is stored."""

import re
from datetime import date

from babel import Locale
from django import forms
from django.utils import timezone
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from campaigns.tax import EU
from payouts.models.tax import TinKind, UsStatus
from payouts.tax.services import TaxDetails
from payouts.tax.tins import EXAMPLES, TinRefused, tin_check

# Where a TIN must be given: the reporting jurisdictions (DAC7, the UK) and every US person.
TIN_REQUIRED = EU | {"GB", "US"}
# The field's label per country, in the words of the country's own tax office.
TIN_LABELS = {
    "DE": _("Tax identification number (Steuer-IdNr, 11 digits)"),
    "ES": _("NIF or NIE"),
    "GB": _("Unique Taxpayer Reference (UTR) or National Insurance number"),
    "US": _("Social Security number (SSN) or ITIN"),
}


def country_choices(language: str | None = None) -> list[tuple[str, str]]:
    """Every country by its name in the person's language, sorted by it (babel's CLDR names)."""
    locale = Locale.parse((language or get_language() or "en").replace("-", "_"), sep="_")
    names = {code: name for code, name in locale.territories.items() if len(code) == 2 and code.isalpha()}
    for gone in ("ZZ", "EU", "EZ", "UN", "QO", "XA", "XB", "XK"):
        names.pop(gone, None)
    return [("", "—"), *sorted(names.items(), key=lambda pair: pair[1])]


def tin_kind_of(*, country: str, number: str, us_person: bool) -> str:
    """The kind of number given, read from its shape in the country that issued it: the person
    types one number, not its scheme's name."""
    compact = re.sub(r"[\s./-]", "", number or "").upper()
    if not compact:
        return TinKind.NONE
    if us_person:
        return TinKind.US_ITIN if compact.startswith("9") else TinKind.US_SSN
    if country == "DE":
        return TinKind.DE_IDNR
    if country == "ES":
        return TinKind.ES_NIE if compact[:1] in ("X", "Y", "Z") else TinKind.ES_NIF
    if country == "GB":
        return TinKind.GB_UTR if compact.isdigit() else TinKind.GB_NINO
    return TinKind.OTHER


class TaxDetailsForm(forms.Form):
    residence_country = forms.ChoiceField(label=_("Country where you live and pay tax"), choices=())
    us_person = forms.TypedChoiceField(
        label=_("Are you a US citizen or a US resident for tax purposes?"),
        choices=(("no", _("No")), ("yes", _("Yes"))),
        coerce=lambda value: value == "yes",
        # Not asked of a US resident (who is a US person): its absence is "no".
        required=False,
        empty_value=False,
        initial="no",
        widget=forms.RadioSelect,
    )
    legal_name = forms.CharField(label=_("Full legal name"), max_length=140, strip=True)
    birth_date = forms.DateField(label=_("Date of birth"), widget=forms.DateInput(attrs={"type": "date"}))
    address_line1 = forms.CharField(label=_("Street and number"), max_length=70, strip=True)
    address_line2 = forms.CharField(
        label=_("Address line 2 (optional)"), max_length=70, strip=True, required=False
    )
    postal_code = forms.CharField(label=_("Postal code"), max_length=12, strip=True)
    city = forms.CharField(label=_("City"), max_length=70, strip=True)
    region = forms.CharField(label=_("State or region"), max_length=40, strip=True, required=False)
    tin = forms.CharField(label=_("Tax identification number"), max_length=30, strip=True, required=False)
    certify = forms.BooleanField(required=True)

    def __init__(self, *args, country: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["residence_country"].choices = country_choices()
        self.country = (self.data.get("residence_country") if self.is_bound else country) or country or ""
        self.country = self.country.upper()
        self.fields["tin"].label = TIN_LABELS.get(self.country, _("Tax identification number"))
        self.fields["tin"].required = self.country in TIN_REQUIRED
        if self.country == "US":
            self.fields["postal_code"].label = _("ZIP code")
            self.fields["region"].label = _("State (two letters)")
        self.fields["certify"].error_messages["required"] = _("Please confirm the statement above.")

    @property
    def tin_example(self) -> str:
        kinds = {"DE": TinKind.DE_IDNR, "ES": TinKind.ES_NIF, "GB": TinKind.GB_UTR, "US": TinKind.US_SSN}
        return EXAMPLES.get(kinds.get(self.country, ""), "")

    @property
    def us_status(self) -> str:
        answer = self.data.get("us_person") if self.is_bound else self.initial.get("us_person")
        us_person = self.country == "US" or answer == "yes"
        return UsStatus.W9 if us_person else UsStatus.W8BEN

    def clean_birth_date(self):
        born = self.cleaned_data["birth_date"]
        today = timezone.localdate()
        if not date(1900, 1, 1) <= born <= today.replace(year=today.year - 16):
            raise forms.ValidationError(_("Please enter your real date of birth."))
        return born

    def clean(self):
        data = super().clean()
        country = (data.get("residence_country") or "").upper()
        us_person = country == "US" or bool(data.get("us_person"))
        data["us_status"] = UsStatus.W9 if us_person else UsStatus.W8BEN
        if country == "US" and not re.fullmatch(r"[A-Z]{2}", (data.get("region") or "").upper()):
            self.add_error("region", _("Enter your state's two-letter code, e.g. NY."))
        number = data.get("tin") or ""
        if (country in TIN_REQUIRED or us_person) and not number:
            self.add_error("tin", _("Please enter your tax identification number."))
            return data
        issuer = "US" if us_person else country
        kind = tin_kind_of(country=issuer, number=number, us_person=us_person)
        try:
            checked = tin_check(number=number, kind=kind, country=issuer)
        except TinRefused as refused:
            self.add_error("tin", refused.message)
            return data
        data["checked_tin"] = checked
        return data

    def details(self, *, language: str) -> TaxDetails:
        data = self.cleaned_data
        country = data["residence_country"].upper()
        checked = data["checked_tin"]
        return TaxDetails(
            legal_name=data["legal_name"],
            birth_date=data["birth_date"],
            address={
                "line1": data["address_line1"],
                "line2": data.get("address_line2", ""),
                "postal_code": data["postal_code"].upper() if country == "GB" else data["postal_code"],
                "city": data["city"],
                "region": (data.get("region") or "").upper() if country == "US" else data.get("region", ""),
                "country": country,
            },
            residence_country=country,
            tin=checked.number,
            tin_kind=checked.kind,
            tin_country=checked.country if checked.number else "",
            us_status=data["us_status"],
            language=language,
        )
