"""What a payout's transfer request says to Adyen, against the rules Adyen writes in prose.

Adyen's published schema (tests/payouts/adyen/, MIT licence) does not enforce everything its field
descriptions document: referenceForBeneficiary takes letters and digits, 35 of them to an IBAN and
15 to any other account; a holder's name and an address line each have their own character set; a
cross-border transfer's payee bank needs the holder's address. Each request is checked against the
schema and against these rules. Names go out in each rail's set through the one transliteration
pain.001 uses too, and a name in another script is never sent as a reading guessed here.
"""

import re

import httpx
import pytest
from django.urls import reverse

from payouts import psp
from payouts.iso20022.text import rail_text
from payouts.models import PayeeAccount, Payout
from payouts.payees.services import payee_account_save
from payouts.providers import adyen
from payouts.rails import iban_check
from payouts.submission.submit import payout_payment_order
from tests.payouts.test_adyen_transfers import TRANSFERS, order, recording_client, spec_errors

pytestmark = pytest.mark.django_db

# Adyen's descriptions, as written in TransferInfo, PartyIdentification and Address.
REFERENCE_FOR_BENEFICIARY = re.compile(r"[a-zA-Z0-9]*")
FULL_NAME = re.compile(r"[a-zA-Z0-9,.;:\-\u2014/\\+&!?@()\"' ]*")
ADDRESS_LINE = re.compile(r"[a-zA-Z0-9.\-\u2014/#,\u2019\u00b0():;\[\]&\\| ]*")
POSTAL_CODE = re.compile(r"[a-zA-Z0-9 ]*")


def description_errors(request: dict) -> list[str]:
    """The rules of Adyen's field descriptions that its schema leaves out."""
    errors = []
    bank_account = request["counterparty"]["bankAccount"]
    kind = bank_account["accountIdentification"]["type"]
    beneficiary = request.get("referenceForBeneficiary", "")
    if not REFERENCE_FOR_BENEFICIARY.fullmatch(beneficiary):
        errors.append(f"referenceForBeneficiary {beneficiary!r}: letters and digits only")
    if len(beneficiary) > (35 if kind == "iban" else 15):
        errors.append(f"referenceForBeneficiary: {len(beneficiary)} characters to a {kind} account")
    holder = bank_account["accountHolder"]
    if not FULL_NAME.fullmatch(holder["fullName"]):
        errors.append(f"fullName {holder['fullName']!r}: characters Adyen does not support")
    address = holder.get("address")
    if request["priority"] in ("crossBorder", "wire") and not address:
        errors.append("a cross-border transfer without the holder's address")
    for field in ("line1", "line2", "city"):
        if address and not ADDRESS_LINE.fullmatch(address.get(field, "")):
            errors.append(f"address.{field} {address[field]!r}: characters Adyen does not support")
    if address and not POSTAL_CODE.fullmatch(address.get("postalCode", "")):
        errors.append(f"address.postalCode {address['postalCode']!r}")
    if address and address.get("country") in ("US", "CA") and not address.get("stateOrProvince"):
        errors.append("address.stateOrProvince is required for the US and Canada")
    return errors


def test_the_description_rules_refuse_what_adyen_would():
    """The rules are real: the request the adapter sent before breaks each of them."""
    before = {
        "amount": {"currency": "GBP", "value": 200},
        "balanceAccountId": "BA00000000000000000JOYBACK",
        "category": "bank",
        "priority": "crossBorder",
        "reference": "JB0123456789ABCDEF0123456789ABCD",
        "referenceForBeneficiary": "JB0123456789ABCDEF0123456789ABCD",
        "counterparty": {
            "bankAccount": {
                "accountHolder": {"fullName": "Zoë Łukasiewicz"},
                "accountIdentification": {"type": "numberAndBic", "accountNumber": "1", "bic": "ANZBAU3MXXX"},
            }
        },
    }
    assert spec_errors(TRANSFERS, "TransferInfo", before) == []  # the schema alone lets it through
    assert len(description_errors(before)) == 3


@pytest.mark.parametrize("scheme", ["sepa_instant", "fps", "ach", "swift"])
@pytest.mark.parametrize(
    "name", ["Zoë Łukasiewicz", "Renée Dürr", "Søren Ærø-Straße", "O'Brien & Co. (UK)", "José María Núñez"]
)
def test_every_rail_sends_what_adyens_schema_and_descriptions_accept(scheme, name):
    request = adyen.transfer_request(order(scheme, creditor_name=name))
    assert spec_errors(TRANSFERS, "TransferInfo", request) == []
    assert description_errors(request) == []


@pytest.mark.parametrize(
    ("scheme", "expected"),
    [
        ("sepa_instant", "JB0123456789ABCDEF0123456789ABCD"),  # to an IBAN: the EndToEndId
        ("fps", "JBK7M2P9Q4R8T3V"),
        ("ach", "JBK7M2P9Q4R8T3V"),
        ("swift", "JBK7M2P9Q4R8T3V"),
    ],
)
def test_the_beneficiary_reference_is_what_each_rail_takes_and_the_reference_stays_the_end_to_end_id(
    scheme, expected
):
    request = adyen.transfer_request(order(scheme))
    assert request["referenceForBeneficiary"] == expected
    assert request["reference"] == "JB0123456789ABCDEF0123456789ABCD"


def test_a_payout_keeps_its_own_short_reference_and_sends_it(owed):
    owed()
    payout = Payout.objects.get()
    assert re.fullmatch(r"JB[A-Z0-9]{13}", payout.beneficiary_reference)
    assert payout_payment_order(payout).beneficiary_reference == payout.beneficiary_reference
    other = adyen.transfer_request(
        order("fps", end_to_end_id=payout.end_to_end_id, beneficiary_reference=payout.beneficiary_reference)
    )
    assert other["referenceForBeneficiary"] == payout.beneficiary_reference


def test_a_payout_made_before_gets_a_short_reference_of_its_own():
    derived = adyen.derived_beneficiary_reference("JB0123456789ABCDEF0123456789ABCD")
    request = adyen.transfer_request(order("ach", beneficiary_reference=""))
    assert request["referenceForBeneficiary"] == derived and len(derived) == 15


def test_pain001_and_adyen_spell_a_name_the_same_way():
    name = "Renée Dürr-Søgaard & Œuvre"
    spelled = adyen.transfer_request(order("fps", creditor_name=name))["counterparty"]["bankAccount"]
    xml = pain001_build(name)
    assert spelled["accountHolder"]["fullName"] == rail_text(name, 140) == "Renee Durr-Sogaard + OEuvre"
    assert "<Nm>Renee Durr-Sogaard + OEuvre</Nm>" in xml


def pain001_build(name: str) -> str:
    """One pain.001 file with one transfer to `name`, as the batch files are made."""
    import datetime

    from django.utils import timezone

    from payouts.iso20022.pain001 import pain001_files
    from payouts.iso20022.types import CreditTransfer, Debtor

    (made,) = pain001_files(
        debtor=Debtor(name="JoyBack GmbH", iban="DE89370400440532013000", bic="COBADEFFXXX"),
        transfers=[
            CreditTransfer(
                end_to_end_id="JB0123456789ABCDEF0123456789ABCD",
                amount_minor=200,
                currency="EUR",
                creditor_name=name,
                creditor_iban="DE89370400440532013000",
                remittance="JoyBack reward",
            )
        ],
        msg_id_prefix="MSG",
        created_at=timezone.now(),
        execution_date=datetime.date(2026, 12, 7),
        max_per_file=10,
    )
    return made.xml.decode()


@pytest.mark.parametrize("name", ["山田太郎", "Иван Петров", "김민준", "محمد"])
def test_a_name_in_another_script_is_never_sent_as_a_guessed_reading(monkeypatch, name):
    sent = recording_client(monkeypatch, lambda request: httpx.Response(202, json={}))
    with pytest.raises(adyen.TransferNotBuildable) as refused:
        psp.payment_submit(order("fps", creditor_name=name))
    assert refused.value.code == "name_not_latin" and sent == []
    from payouts.iso20022.types import Iso20022Error

    with pytest.raises(Iso20022Error, match="nothing left"):
        pain001_build(name)


def test_the_latin_spelling_the_bank_holds_is_what_goes(monkeypatch):
    request = adyen.transfer_request(order("fps", creditor_name="Yamada Taro"))
    assert request["counterparty"]["bankAccount"]["accountHolder"]["fullName"] == "Yamada Taro"


def test_a_cross_border_transfer_without_an_address_is_not_sent(monkeypatch):
    sent = recording_client(monkeypatch, lambda request: httpx.Response(202, json={}))
    for address in (None, {"country": "CA"}, {"line1": "1 Main St", "city": "Toronto", "country": "CA"}):
        with pytest.raises(adyen.TransferNotBuildable) as refused:
            psp.payment_submit(order("swift", address=address))
        assert refused.value.code == "address_missing"
    assert sent == []


def test_the_address_goes_in_adyens_sets():
    address = {"line1": "Königstraße 5+7", "city": "Zürich", "postalCode": "80-01", "country": "ch"}
    request = adyen.transfer_request(order("swift", address=address))
    sent = request["counterparty"]["bankAccount"]["accountHolder"]["address"]
    assert sent == {"line1": "Konigstrasse 5 7", "city": "Zurich", "postalCode": "80 01", "country": "CH"}
    assert description_errors(request) == [] and spec_errors(TRANSFERS, "TransferInfo", request) == []


# The payee form: the Latin spelling and, for international transfers, the address.


def test_a_name_not_in_latin_letters_is_asked_for_as_the_bank_writes_it(client, summer, owed):
    asked = client.post(
        reverse("payouts:payee", args=[summer.slug]),
        {"name": "山田太郎", "email": "taro@example.com", "iban": "DE89370400440532013000", "consent": "on"},
    )
    page = asked.content.decode()
    assert asked.status_code == 400 and 'name="name_latin"' in page
    assert "exactly as your bank writes it" in page and not PayeeAccount.objects.exists()

    owed(name="山田太郎", name_latin="YAMADA TARO")

    payee = PayeeAccount.objects.get()
    assert (payee.holder_name, payee.holder_name_latin, payee.unusable_code) == (
        "山田太郎",
        "YAMADA TARO",
        "",
    )
    payout = Payout.objects.get()
    assert payout_payment_order(payout).creditor_name == "YAMADA TARO"


def test_a_latin_name_is_not_asked_twice(client, summer):
    page = client.get(reverse("payouts:payee", args=[summer.slug])).content.decode()
    assert 'name="name_latin"' not in page and 'name="address_line"' not in page


def test_the_latin_spelling_must_be_latin(client, summer):
    refused = client.post(
        reverse("payouts:payee", args=[summer.slug]),
        {
            "name": "山田太郎",
            "name_latin": "やまだ",
            "email": "t@example.com",
            "iban": "DE89370400440532013000",
        },
    )
    assert refused.status_code == 400 and "Use Latin letters only" in refused.content.decode()


def test_an_international_transfer_asks_for_the_address(client, make_live_campaign):
    loonies = make_live_campaign(slug="ca-club", package="tiktok_only", currency="CAD")
    form = client.get(reverse("payouts:payee", args=[loonies.slug])).content.decode()
    assert 'name="address_line"' in form and 'name="address_country"' in form
    refused = client.post(
        reverse("payouts:payee", args=[loonies.slug]),
        {
            "name": "Pat",
            "email": "pat@example.com",
            "bic": "TDOMCATTTOR",
            "account_number": "0012345678",
            "address_country": "CA",
            "consent": "on",
        },
    )
    page = refused.content.decode()
    assert refused.status_code == 400 and "International transfers need your address" in page
    assert "state or province" in page and not PayeeAccount.objects.exists()


def test_details_the_bank_cannot_be_sent_wait_with_the_reason(client, summer, owed):
    """Details stored without the Latin spelling (not through the form): no payout is made, and the
    person's status page says what the bank needs."""
    from verification.models import Participant

    participant = Participant.objects.get()
    payee = payee_account_save(
        participant=participant,
        name="山田太郎",
        email="taro@example.com",
        phone="",
        bank_account=iban_check("DE89370400440532013000"),
        currency="EUR",
        consent_version="2026-11",
        onboard=False,
    )
    assert payee.unusable_code == "NAME"
    from payouts.submission.create import payout_for_participant

    assert payout_for_participant(participant_id=participant.pk, currency="EUR") is None
    page = client.get(reverse("payouts:status_page", args=[summer.slug, participant.token])).content.decode()
    assert "Latin letters" in page


def test_swift_payees_stored_before_the_address_was_asked_for_need_it(alpaca):
    """The migration's one UPDATE: a current SWIFT payee is marked as needing the address; other rails
    are left alone."""
    import importlib

    from django.db import connection
    from django.utils import timezone

    from payouts.rails import swift_account_check
    from verification.services.participants import participant_create

    accounts = {
        "swift": swift_account_check("ANZBAU3MXXX", "123456789"),
        "sepa": iban_check("DE89370400440532013000"),
    }

    def stored(rail):
        return PayeeAccount.objects.create(
            participant=participant_create(brand=alpaca),
            brand=alpaca,
            holder_name="Pat",
            rail=rail,
            currency="EUR",
            country="DE",
            account=accounts[rail],
            account_masked="x",
            account_fingerprint="f",
            consent_at=timezone.now(),
            consent_version="t",
        )

    migration = importlib.import_module("payouts.migrations.0022_swift_payees_need_an_address")
    swift, sepa = stored("swift"), stored("sepa")
    with connection.cursor() as cursor:
        cursor.execute(migration.MARK)
    swift.refresh_from_db()
    sepa.refresh_from_db()
    assert (swift.unusable_code, sepa.unusable_code) == ("BE04", "")


@pytest.mark.parametrize("path", ["pipeline", "one_payout"])
def test_details_stored_before_the_latin_spelling_was_asked_wait_with_the_reason(client, summer, owed, path):
    """A name in another script stored without its Latin spelling (as details were before): no payout
    is sent with a guessed reading; the details are marked and the person's status page asks."""
    from payouts.pipeline import payouts_due_process
    from payouts.submission.create import payout_for_participant
    from verification.models import Participant
    from verification.services.rewards import participant_payout_due

    participant = Participant.objects.get()
    payee = payee_account_save(
        participant=participant,
        name="山田太郎",
        email="taro@example.com",
        phone="",
        bank_account=iban_check("DE89370400440532013000"),
        currency="EUR",
        consent_version="2026-11",
        onboard=False,
    )
    PayeeAccount.objects.filter(pk=payee.pk).update(unusable_code="")  # as stored before the rule
    if path == "pipeline":
        participant_payout_due(participant_id=participant.pk)
        payouts_due_process()
    else:
        assert payout_for_participant(participant_id=participant.pk, currency="EUR") is None

    assert not Payout.objects.exists()
    payee.refresh_from_db()
    assert payee.unusable_code == "NAME"
    page = client.get(reverse("payouts:status_page", args=[summer.slug, participant.token])).content.decode()
    assert "Latin letters" in page
