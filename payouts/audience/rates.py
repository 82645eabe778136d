"""Meta's rates for a delivered marketing template, per market of the recipient's calling code: the
table with its date. Meta charges per delivered template since 1 July 2025, in USD; rates are kept
in USD millionths (micro-units), integers like every amount here."""

import phonenumbers

RATES_DATE = "2025-07-01"
RATES_SOURCE = "https://developers.facebook.com/docs/whatsapp/pricing"
RATES_CURRENCY = "USD"

# Marketing, USD per delivered message x 1,000,000: a reference table for the estimate shown
# before a send, NOT checked against Meta's published rate card. Meta's own card (the CSV linked
# from RATES_SOURCE) was not in the references available when this was written; the third-party
# copies found disagree with each other and with this table, so none was vendored in its place.
# Before relying on an estimate, replace these figures with Meta's card and its effective date.
RATES_VERIFIED = False
MARKETING_MICROS = {
    "AR": 61_800, "BR": 62_500, "CL": 88_900, "CO": 12_500, "EG": 107_300, "FR": 85_900, "DE": 136_500,
    "IN": 11_800, "ID": 41_100, "IL": 35_300, "IT": 69_100, "MY": 86_000, "MX": 30_500, "NL": 159_700,
    "NG": 51_600, "PK": 47_300, "PE": 70_300, "RU": 80_200, "SA": 45_500, "ZA": 37_900, "ES": 61_500,
    "TR": 10_900, "AE": 38_400, "GB": 52_900, "US": 25_000, "CA": 25_000,
}  # fmt: skip
# The markets Meta groups the other countries into.
REGION_MICROS = {
    "western_europe": 59_200,
    "central_eastern_europe": 86_000,
    "asia_pacific": 73_200,
    "latin_america": 74_000,
    "middle_east": 34_100,
    "africa": 22_500,
    "other": 60_400,
}
REGIONS = {
    "western_europe": "AT BE DK FI GR IE NO PT SE CH LU IS MT CY AD LI MC SM",
    "central_eastern_europe": "AL AM AZ BY BA BG HR CZ GE HU XK LV LT MK MD ME PL RO RS SK SI UA EE",
    "asia_pacific": "AF AU BD KH CN HK JP LA MN NP NZ PG PH SG LK TW TJ TH TM UZ VN",
    "latin_america": "BO CR DO EC SV GT HT HN JM NI PA PY PR UY VE AI AG AW BS BB BZ",
    "middle_east": "BH IQ JO KW LB OM QA YE",
    "africa": "DZ AO BJ BW BF BI CM TD CG ET GA GM GH GW CI KE LS LR LY MG MW ML MR MA MZ NA NE RW SN SL SO "
    "SS SD SZ TZ TG TN UG ZM ZW",
}
_REGION_OF = {country: region for region, countries in REGIONS.items() for country in countries.split()}


def country_of(wa_id: str) -> str:
    """The recipient's country by their number's calling code (how Meta prices), or ""."""
    try:
        number = phonenumbers.parse("+" + wa_id.lstrip("+"), None)
    except phonenumbers.NumberParseException:
        return ""
    return phonenumbers.region_code_for_number(number) or ""


def marketing_rate_micros(country: str) -> int:
    """What one delivered marketing template to a number of this country costs."""
    if country in MARKETING_MICROS:
        return MARKETING_MICROS[country]
    return REGION_MICROS[_REGION_OF.get(country, "other")]


def micros_to_cents(micros: int) -> int:
    """USD millionths to cents, rounded up: an estimate never shows less than Meta bills."""
    return -(-micros // 10_000)
