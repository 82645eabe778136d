"""A person's bank account: one immutable value, its rail and that rail's fields, from the form that
checks it (payouts.rails) through its encrypted column (BankAccountField) and the payout's order
(payouts.psp.PaymentOrder) to the provider's request, whose adapter maps it by its rail.

Its stored form is to_json: the rail and its fields, snake_case, e.g.
{"rail": "sepa", "iban": "DE89370400440532013000", "bic": "COBADEFFXXX"}; details erased for
good (payouts.privacy) are {"erased": true}, read as None.
"""

import json
from dataclasses import dataclass, fields

from django.db import models
from schwifty import BIC, IBAN
from schwifty.exceptions import SchwiftyException

from joyback.crypto import EncryptedTextField, encrypt


class Rail(models.TextChoices):
    SEPA = "sepa", "SEPA credit transfer"
    UK_FPS = "uk_fps", "UK Faster Payments"
    US_ACH = "us_ach", "US ACH"
    SWIFT = "swift", "SWIFT"


# The fields of each rail's account, in the order a person gives them. A SEPA account's BIC is the
# one schwifty's bank registry gives for the IBAN, which may know no BIC for a bank: it may be empty.
RAIL_FIELDS: dict[str, tuple[str, ...]] = {
    Rail.SEPA: ("iban", "bic"),
    Rail.UK_FPS: ("sort_code", "account_number"),
    Rail.US_ACH: ("routing_number", "account_number"),
    Rail.SWIFT: ("bic", "account_number"),
}
OPTIONAL_FIELDS: dict[str, frozenset[str]] = {Rail.SEPA: frozenset({"bic"})}
ERASED_JSON = '{"erased": true}'


class BankAccountInvalid(ValueError):
    """Not an account of its rail: a field it needs is missing, or it has one of another rail."""


@dataclass(frozen=True)
class BankAccount:
    """Where a person's money goes. Checked for the person (with their words for what is wrong) by
    payouts.rails' checks, which make every account from what a person typed; built here from
    what was stored."""

    rail: Rail
    iban: str = ""
    bic: str = ""
    sort_code: str = ""
    account_number: str = ""
    routing_number: str = ""

    def __post_init__(self):
        try:
            rail = Rail(self.rail)
        except ValueError:
            raise BankAccountInvalid(f"no rail {self.rail!r}") from None
        object.__setattr__(self, "rail", rail)
        own = RAIL_FIELDS[rail]
        for name in ACCOUNT_FIELDS:
            value = getattr(self, name)
            if not isinstance(value, str):
                raise BankAccountInvalid(f"{name} of a {rail.value} account is {type(value).__name__}")
            if value and name not in own:
                raise BankAccountInvalid(f"a {rail.value} account has no {name}")
            if not value and name in own and name not in OPTIONAL_FIELDS.get(rail, ()):
                raise BankAccountInvalid(f"a {rail.value} account needs its {name}")

    @property
    def details(self) -> dict[str, str]:
        """The rail's fields by name (what the person's data export shows)."""
        return {name: getattr(self, name) for name in RAIL_FIELDS[self.rail]}

    @property
    def identity(self) -> str:
        """A stable string of the account, for duplicate detection: its keyed hash is the stored
        fingerprint, so this never changes for an account (the rail is not in it)."""
        details = self.details
        return "|".join(f"{key}={details[key]}" for key in sorted(details))

    @property
    def country(self) -> str:
        if self.rail == Rail.SEPA:
            return self.iban[:2]
        if self.rail == Rail.SWIFT:
            return self.bic[4:6]
        return {Rail.UK_FPS: "GB", Rail.US_ACH: "US"}[self.rail]

    @property
    def masked(self) -> str:
        """What pages, mails and the audit trail show of the account."""
        if self.rail == Rail.SEPA:
            return f"{self.country}•• •••• {self.iban[-4:]}"
        if self.rail == Rail.UK_FPS:
            return f"{self.sort_code[:2]}-••-•• ••••{self.account_number[-4:]}"
        if self.rail == Rail.US_ACH:
            return f"{self.routing_number[:4]}••••• ••••{self.account_number[-4:]}"
        return f"{self.bic[:6]}•• ••••{self.account_number[-4:]}"

    @property
    def bank_name(self) -> str:
        """The bank's name from schwifty's registry, where it knows the bank ("" otherwise)."""
        try:
            if self.rail == Rail.SEPA:
                return IBAN(self.iban).bank_name or ""
            if self.rail == Rail.SWIFT:
                return (BIC(self.bic).bank_names or [""])[0]
        except SchwiftyException:
            return ""
        return ""

    def to_dict(self) -> dict[str, str]:
        return {"rail": self.rail.value, **self.details}

    @classmethod
    def from_dict(cls, data: dict) -> "BankAccount":
        if not isinstance(data, dict) or "rail" not in data:
            raise BankAccountInvalid("a bank account names its rail")
        unknown = data.keys() - {"rail", *ACCOUNT_FIELDS}
        if unknown:
            raise BankAccountInvalid(f"a bank account has no {', '.join(sorted(unknown))}")
        return cls(**data)

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    @classmethod
    def from_json(cls, text: str) -> "BankAccount":
        return cls.from_dict(json.loads(text))


ACCOUNT_FIELDS = tuple(f.name for f in fields(BankAccount) if f.name != "rail")


def previous_format_read(data: dict, *, rail: str | None = None) -> BankAccount | None:
    """A stored account in the previous release's format: the rail's fields without the rail, which
    its row's rail column held (each rail's set of fields is its own). The data migration
    (payouts 0024) rewrote every such row with its rail column; a machine still on the previous
    release writes them during a rolling deploy, so they are read until its next release."""
    if data == {"erased": True}:
        return None
    if rail is None:
        names = set(data)
        found = [r for r, own in RAIL_FIELDS.items() if names == set(own)]
        if names == {"iban"}:
            found = [Rail.SEPA]
        if len(found) != 1:
            raise BankAccountInvalid(f"not a stored bank account: {sorted(names)}")
        rail = found[0]
    return BankAccount(rail=rail, **data)


def account_from_stored(text: str) -> BankAccount | None:
    """The account a column holds (None once erased), in this format or the previous one."""
    data = json.loads(text)
    if isinstance(data, dict) and "rail" not in data:
        return previous_format_read(data)
    return BankAccount.from_dict(data)


class BankAccountField(EncryptedTextField):
    """A BankAccount, stored as its to_json under Fernet (joyback.crypto); None is details erased
    for good. Never filter or order by it: the account_fingerprint column finds equal accounts."""

    description = "A bank account, encrypted"

    def from_db_value(self, value, expression, connection):
        text = super().from_db_value(value, expression, connection)
        return None if text is None else account_from_stored(text)

    def to_python(self, value):
        if value is None or isinstance(value, BankAccount):
            return value
        return account_from_stored(value)

    def get_prep_value(self, value):
        if not (value is None or isinstance(value, BankAccount)):
            raise TypeError(f"a bank account column takes a BankAccount, not {type(value).__name__}")
        return encrypt(ERASED_JSON if value is None else value.to_json())

    def value_to_string(self, obj):
        value = self.value_from_object(obj)
        return ERASED_JSON if value is None else value.to_json()
