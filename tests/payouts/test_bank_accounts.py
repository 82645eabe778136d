"""A person's bank account is one value (payouts.bank_accounts.BankAccount) from the form that checks
it to the provider's request: stored encrypted and read back as itself, and sent as the account
identification Adyen documents for its rail. Details stored in the previous format (the rail's
fields alone, the rail in its own column) are rewritten by the migration, and pay either way."""

import ast
import importlib
import json
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from schwifty import IBAN

from joyback.crypto import decrypt, encrypt
from payouts import psp
from payouts.bank_accounts import BankAccount, BankAccountField, BankAccountInvalid, Rail, account_from_stored
from payouts.models import PayeeAccount, Payout
from payouts.payees.services import payee_account_save, payee_submission_accept
from payouts.providers import adyen
from payouts.rails import iban_check, swift_account_check, uk_account_check, us_account_check
from payouts.submission.create import payout_for_participant
from tests.conftest import rewarded_in_browser
from tests.payouts.conftest import payee_details, submissions_process
from tests.payouts.test_adyen_requests import description_errors
from tests.payouts.test_adyen_transfers import TRANSFERS, spec_errors

pytestmark = pytest.mark.django_db

SCHEME = {Rail.SEPA: "sepa_instant", Rail.UK_FPS: "fps", Rail.US_ACH: "ach", Rail.SWIFT: "swift"}
ADDRESS = {
    "line1": "100 King Street West",
    "city": "Toronto",
    "postalCode": "M5X 1A9",
    "stateOrProvince": "ON",
    "country": "CA",
}
CURRENCY = {Rail.SEPA: "EUR", Rail.UK_FPS: "GBP", Rail.US_ACH: "USD", Rail.SWIFT: "CAD"}


def adyen_identification(account: BankAccount) -> dict:
    """Adyen's accountIdentification for each rail, as its TransferService-v4 documents it, written
    out here on its own rather than read from the adapter."""
    if account.rail == Rail.SEPA:
        return {"type": "iban", "iban": account.iban} | ({"bic": account.bic} if account.bic else {})
    if account.rail == Rail.UK_FPS:
        return {"type": "ukLocal", "sortCode": account.sort_code, "accountNumber": account.account_number}
    if account.rail == Rail.US_ACH:
        return {
            "type": "usLocal",
            "routingNumber": account.routing_number,
            "accountNumber": account.account_number,
        }
    return {"type": "numberAndBic", "bic": account.bic, "accountNumber": account.account_number}


def order_for(account: BankAccount, **changes) -> psp.PaymentOrder:
    fields = {
        "end_to_end_id": "JB0123456789ABCDEF0123456789ABCD",
        "scheme": SCHEME[account.rail],
        "amount": 2_00,
        "currency": CURRENCY[account.rail],
        "creditor_name": "Pat Example",
        "account": account,
        "beneficiary_reference": "JBK7M2P9Q4R8T3V",
        "address": ADDRESS if account.rail == Rail.SWIFT else None,
        "livemode": False,  # play money: a live order leaves only a brand's own balance account
    }
    return psp.PaymentOrder(**(fields | changes))


# What people type, with the spaces, dashes and small letters they type it with.


def _spaced(text: str, draw) -> str:
    cut = draw(st.sampled_from([0, 2, 4]))
    spaced = " ".join(text[i : i + cut] for i in range(0, len(text), cut)) if cut else text
    return spaced.lower() if draw(st.booleans()) else spaced


@st.composite
def typed_ibans(draw):
    # Commerzbank, ABN AMRO, and a bank schwifty's registry knows no BIC for.
    banks = [("DE", "37040044", 10), ("NL", "ABNA", 10), ("AT", "19043", 11)]
    country, bank, length = draw(st.sampled_from(banks))
    digits = draw(st.text("0123456789", min_size=length, max_size=length))
    return iban_check, (_spaced(str(IBAN.generate(country, bank_code=bank, account_code=digits)), draw),)


@st.composite
def typed_uk_accounts(draw):
    sort_code = draw(st.text("0123456789", min_size=6, max_size=6))
    account_number = draw(st.text("0123456789", min_size=8, max_size=8))
    written = f"{sort_code[:2]}-{sort_code[2:4]}-{sort_code[4:]}" if draw(st.booleans()) else sort_code
    return uk_account_check, (written, account_number)


@st.composite
def typed_us_accounts(draw):
    first = [int(d) for d in draw(st.text("0123456789", min_size=8, max_size=8))]
    check = -sum(w * d for w, d in zip([3, 7, 1, 3, 7, 1, 3, 7], first, strict=True)) % 10
    routing = "".join(map(str, first)) + str(check)
    return us_account_check, (routing, draw(st.text("0123456789", min_size=4, max_size=17)))


@st.composite
def typed_swift_accounts(draw):
    bic = draw(st.sampled_from(["TDOMCATTTOR", "ANZBAU3MXXX", "DBSSSGSG", "HSBCHKHHHKH"]))
    account_number = draw(st.text("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=4, max_size=34))
    return swift_account_check, (_spaced(bic, draw).upper(), account_number)


typed_accounts = st.one_of(typed_ibans(), typed_uk_accounts(), typed_us_accounts(), typed_swift_accounts())


@hypothesis_settings(max_examples=120, deadline=None)
@given(typed=typed_accounts)
def test_an_account_is_itself_from_the_check_through_its_column_to_adyens_request(typed):
    check, raw = typed
    account = check(*raw)
    field = BankAccountField()

    stored = field.get_prep_value(account)
    assert json.loads(decrypt(stored)) == {"rail": account.rail.value, **account.details}
    assert field.from_db_value(stored, None, connection) == account
    assert BankAccount.from_json(account.to_json()) == account

    request = adyen.transfer_request(order_for(account))
    assert request["counterparty"]["bankAccount"]["accountIdentification"] == adyen_identification(account)
    assert spec_errors(TRANSFERS, "TransferInfo", request) == []
    assert description_errors(request) == []


# Through the form, the stored details and a payout, for each rail.

RAILS = {
    "sepa": (
        "EUR",
        {"iban": "de89 3704 0044 0532 0130 00"},
        BankAccount(rail=Rail.SEPA, iban="DE89370400440532013000", bic="COBADEFFXXX"),
        ("DE", "DE•• •••• 3000", "Commerzbank"),
    ),
    "uk_fps": (
        "GBP",
        {"sort_code": "12-34-56", "account_number": "12345678"},
        BankAccount(rail=Rail.UK_FPS, sort_code="123456", account_number="12345678"),
        ("GB", "12-••-•• ••••5678", ""),
    ),
    "us_ach": (
        "USD",
        {"routing_number": "011000015", "account_number": "000123456789"},
        BankAccount(rail=Rail.US_ACH, routing_number="011000015", account_number="000123456789"),
        ("US", "0110••••• ••••6789", ""),
    ),
    "swift": (
        "CAD",
        {
            "bic": "tdomcatttor",
            "account_number": "0012345678",
            "address_line": "100 King Street West",
            "address_city": "Toronto",
            "address_postal_code": "M5X 1A9",
            "address_region": "ON",
            "address_country": "ca",
        },
        BankAccount(rail=Rail.SWIFT, bic="TDOMCATTTOR", account_number="0012345678"),
        ("CA", "TDOMCA•• ••••5678", ""),
    ),
}


@pytest.fixture
def sent(monkeypatch):
    """Every transfer request the adapter builds, as it goes to the sandbox bank."""
    requests = []
    build = adyen.transfer_request

    def recorded(order):
        requests.append(build(order))
        return requests[-1]

    monkeypatch.setattr(adyen, "transfer_request", recorded)
    return requests


@pytest.mark.parametrize("rail", sorted(RAILS))
def test_the_account_a_person_types_is_the_one_stored_and_the_one_sent(
    rail, make_live_campaign, sent, django_capture_on_commit_callbacks
):
    currency, typed, account, (country, masked, bank_name) = RAILS[rail]
    campaign = make_live_campaign(
        slug=f"{rail.replace('_', '-')}-club", package="tiktok_only", currency=currency
    )
    browser = Client()
    rewarded_in_browser(browser, campaign)

    with django_capture_on_commit_callbacks(execute=True):
        payee_details(browser, campaign, **({"iban": ""} | typed))

    payee = PayeeAccount.objects.get()
    assert payee.account == account
    assert (payee.rail, payee.country, payee.account_masked, payee.bank_name) == (
        rail,
        country,
        masked,
        bank_name,
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT account FROM payouts_payeeaccount WHERE id = %s", [payee.pk])
        assert json.loads(decrypt(cursor.fetchone()[0])) == {"rail": rail, **account.details}
    (request,) = sent
    assert request["counterparty"]["bankAccount"]["accountIdentification"] == adyen_identification(account)
    assert spec_errors(TRANSFERS, "TransferInfo", request) == []
    assert description_errors(request) == []
    assert Payout.objects.get().status in ("settled", "accepted")


# Details stored before: the rail's fields alone, the rail in its own column.

PREVIOUS = {
    Rail.SEPA: {"iban": "DE89370400440532013000", "bic": "COBADEFFXXX"},
    Rail.UK_FPS: {"sort_code": "123456", "account_number": "12345678"},
    Rail.US_ACH: {"routing_number": "011000015", "account_number": "000123456789"},
    Rail.SWIFT: {"bic": "TDOMCATTTOR", "account_number": "0012345678"},
}


@pytest.mark.parametrize("rail", list(PREVIOUS))
def test_each_rails_previous_format_reads_as_its_account(rail):
    assert account_from_stored(json.dumps(PREVIOUS[rail])) == BankAccount(rail=rail, **PREVIOUS[rail])


def test_details_erased_for_good_read_as_no_account_in_either_format():
    field = BankAccountField()
    assert account_from_stored('{"erased": true}') is None
    assert field.from_db_value(field.get_prep_value(None), None, connection) is None


def previous_format_store(payee: PayeeAccount) -> None:
    """The payee's column as the previous release wrote it."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE payouts_payeeaccount SET account = %s WHERE id = %s",
            [encrypt(json.dumps(payee.account.details)), payee.pk],
        )


def stored_json(payee: PayeeAccount) -> dict:
    with connection.cursor() as cursor:
        cursor.execute("SELECT account FROM payouts_payeeaccount WHERE id = %s", [payee.pk])
        return json.loads(decrypt(cursor.fetchone()[0]))


MIGRATION = "0024_payee_account_names_its_rail"


def migration_run(direction: str = "forwards") -> None:
    """The data migration, run with the model as it stood before it (the column read as text)."""
    module = importlib.import_module(f"payouts.migrations.{MIGRATION}")
    (before,) = module.Migration.dependencies
    state = MigrationExecutor(connection).loader.project_state(before)
    getattr(module, direction)(state.apps, None)


@pytest.mark.parametrize("migrated", [True, False], ids=["migrated", "written-during-a-rolling-deploy"])
def test_details_stored_in_the_previous_format_still_pay(client, summer, migrated):
    person = rewarded_in_browser(client, summer)
    payee = payee_account_save(
        participant=person,
        name="Pat Example",
        email="pat@example.com",
        phone="",
        bank_account=iban_check("DE89370400440532013000"),
        currency="EUR",
        consent_version="2026-11",
        onboard=False,
    )
    previous_format_store(payee)
    assert stored_json(payee) == PREVIOUS[Rail.SEPA]
    if migrated:
        migration_run()
        assert stored_json(payee) == {"rail": "sepa", **PREVIOUS[Rail.SEPA]}

    payout = payout_for_participant(participant_id=person.pk, currency="EUR", send_now=True)

    payout.refresh_from_db()
    assert payout.status == "settled"
    assert PayeeAccount.objects.get().account == iban_check("DE89370400440532013000")


def test_the_migration_rewrites_every_rail_leaves_erased_and_new_rows_and_goes_back(alpaca):
    from django.utils import timezone

    from verification.services.participants import participant_create

    def payee(account):
        return PayeeAccount.objects.create(
            participant=participant_create(brand=alpaca),
            brand=alpaca,
            holder_name="Pat",
            rail=account.rail if account else Rail.SEPA,
            currency="EUR",
            country="DE",
            account=account,
            account_masked="x",
            account_fingerprint="f",
            consent_at=timezone.now(),
            consent_version="t",
        )

    previous = [payee(BankAccount(rail=rail, **details)) for rail, details in PREVIOUS.items()]
    for row in previous:
        previous_format_store(row)
    current, erased = (
        payee(BankAccount(rail=Rail.UK_FPS, sort_code="654321", account_number="87654321")),
        payee(None),
    )
    untouched = {row.pk: _ciphertext(row) for row in (current, erased)}

    migration_run()
    migration_run()  # a rerun writes nothing

    assert [stored_json(row) for row in previous] == [
        {"rail": rail.value, **details} for rail, details in PREVIOUS.items()
    ]
    assert {row.pk: _ciphertext(row) for row in (current, erased)} == untouched
    assert [row.account for row in PayeeAccount.objects.order_by("pk")] == [
        *(BankAccount(rail=rail, **details) for rail, details in PREVIOUS.items()),
        current.account,
        None,
    ]

    migration_run("backwards")
    assert [stored_json(row) for row in previous] == list(PREVIOUS.values())


def _ciphertext(payee: PayeeAccount) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT account FROM payouts_payeeaccount WHERE id = %s", [payee.pk])
        return cursor.fetchone()[0]


def test_details_a_previous_release_accepted_are_still_stored(client, summer):
    """A submission the previous release's form kept (its check's whole result) before this one's
    worker takes it, during a rolling deploy."""
    person = rewarded_in_browser(client, summer)
    payee_submission_accept(
        participant_id=person.pk,
        brand_id=person.brand_id,
        details={
            "name": "Pat Example",
            "name_latin": "",
            "address": None,
            "email": "pat@example.com",
            "phone": "",
            "bank_account": {
                "rail": "sepa",
                "country": "DE",
                "details": {"iban": "DE89370400440532013000", "bic": "COBADEFFXXX"},
                "masked": "DE•• •••• 3000",
                "bank_name": "Commerzbank",
                "bic": "COBADEFFXXX",
            },
            "currency": "EUR",
            "consent_version": "2026-11",
            "language": "en",
            "site": "http://testserver/",
            "campaign_slug": summer.slug,
            "campaign_name": summer.name,
        },
    )
    submissions_process()

    assert PayeeAccount.objects.get().account == iban_check("DE89370400440532013000")


# The value's own rules.


def test_duplicate_detection_hashes_the_same_identity_as_before():
    """The stored fingerprints of details given earlier still match the same account given again."""
    assert iban_check("DE89370400440532013000").identity == "bic=COBADEFFXXX|iban=DE89370400440532013000"
    assert uk_account_check("12-34-56", "12345678").identity == "account_number=12345678|sort_code=123456"
    assert iban_check("AT891904311111111111").identity == "bic=|iban=AT891904311111111111"


@pytest.mark.parametrize(
    "fields",
    [
        {"rail": "sepa", "bic": "COBADEFFXXX"},  # no IBAN
        {"rail": "sepa", "iban": "DE89370400440532013000", "account_number": "1"},  # another rail's field
        {"rail": "uk_fps", "sort_code": "123456"},
        {"rail": "us_ach", "account_number": "1234"},
        {"rail": "swift", "account_number": "1234"},
        {"rail": "sepa", "iban": 1234},
        {"rail": "bacs", "account_number": "1234"},
    ],
)
def test_an_account_missing_its_rails_fields_or_carrying_anothers_is_refused(fields):
    with pytest.raises(BankAccountInvalid):
        BankAccount(**fields)


def test_a_stored_account_with_fields_no_rail_has_is_refused():
    with pytest.raises(BankAccountInvalid):
        BankAccount.from_dict({"rail": "sepa", "iban": "DE89370400440532013000", "sortCode": "1"})
    with pytest.raises(BankAccountInvalid):
        account_from_stored('{"iban": "DE89370400440532013000", "sort_code": "123456"}')


def test_the_column_takes_only_an_account():
    with pytest.raises(TypeError):
        BankAccountField().get_prep_value('{"iban": "DE89370400440532013000"}')


# The port and its adapters.


def test_the_port_imports_no_adapter():
    source = (Path(django_settings.BASE_DIR) / "payouts" / "psp.py").read_text()
    imported = {
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert not {name for name in imported if name and name.startswith("payouts.providers")}


def test_the_configured_provider_is_the_registered_adapter(settings):
    assert psp.provider() is adyen
    settings.PAYOUT_PROVIDER = "nobody"
    with pytest.raises(LookupError, match="nobody"):
        psp.provider()
