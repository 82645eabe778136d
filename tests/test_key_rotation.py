"""Rotating the payee encryption keys: re-encrypt, retire the old key, and everything still reads;
the duplicate-detection fingerprints never change with the encryption keys."""

import pytest
from cryptography.fernet import Fernet, InvalidToken
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client, override_settings

from payouts.fingerprints import payee_fingerprints_recompute
from payouts.models import PayeeAccount
from tests.conftest import rewarded_in_browser
from tests.payouts.conftest import submissions_process
from verification.models import ActionClaim, TikTokToken

pytestmark = pytest.mark.django_db

OLD, NEW = Fernet.generate_key().decode(), Fernet.generate_key().decode()
DETAILS = {"name": "Pat Example", "email": "Pat@Example.com", "phone": "+4915123456789", "consent": "on"}


def give_details(client, campaign, iban="DE89370400440532013000", **changes):
    client.post(f"/p/c/{campaign.slug}/payee/", DETAILS | {"iban": iban} | changes)
    submissions_process()


def stored(model, column, pk):
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {column} FROM {model._meta.db_table} WHERE id = %s", [pk])
        return cursor.fetchone()[0]


def reencrypt(*args):
    call_command("payee_data_reencrypt", "--batch-size=1", *args, stdout=open("/dev/null", "w"))  # noqa: SIM115


@pytest.fixture
def pat_under_old_key(client, summer):
    with override_settings(PAYEE_ENCRYPTION_KEYS=[OLD]):
        rewarded_in_browser(client, summer)
        identity = ActionClaim.objects.get().identity
        TikTokToken.objects.create(
            identity=identity,
            brand_id=identity.brand_id,
            access_token="act.pat",
            refresh_token="rft.pat",
            scope="user.info.basic",
            access_expires_at="2030-01-01T00:00:00Z",
        )
        give_details(client, summer)
        return PayeeAccount.objects.get()


def test_a_retired_key_leaves_everything_readable_after_reencryption(pat_under_old_key):
    fingerprints = (pat_under_old_key.account_fingerprint, pat_under_old_key.email_fingerprint)

    with override_settings(PAYEE_ENCRYPTION_KEYS=[NEW, OLD]):
        with pytest.raises(CommandError, match="still need an older key"):
            reencrypt("--check")
        reencrypt()
        reencrypt("--check")  # nothing left under the old key

    with override_settings(PAYEE_ENCRYPTION_KEYS=[NEW]):
        payee = PayeeAccount.objects.get()
        assert (payee.holder_name, payee.email, payee.phone) == (
            "Pat Example",
            "Pat@Example.com",
            "+4915123456789",
        )
        assert payee.account.iban == "DE89370400440532013000"
        assert TikTokToken.objects.get().refresh_token == "rft.pat"
        assert (payee.account_fingerprint, payee.email_fingerprint) == fingerprints


def test_without_reencryption_retiring_the_key_would_lose_the_data(pat_under_old_key):
    with override_settings(PAYEE_ENCRYPTION_KEYS=[NEW]), pytest.raises(InvalidToken):
        PayeeAccount.objects.get().holder_name  # noqa: B018


def test_a_rerun_writes_nothing_already_done(pat_under_old_key):
    with override_settings(PAYEE_ENCRYPTION_KEYS=[NEW, OLD]):
        reencrypt()
        after_first = stored(PayeeAccount, "holder_name", pat_under_old_key.pk)
        reencrypt()

        assert stored(PayeeAccount, "holder_name", pat_under_old_key.pk) == after_first


def test_the_same_bank_account_is_still_recognised_under_a_new_key(pat_under_old_key, summer):
    sam = Client()
    with override_settings(PAYEE_ENCRYPTION_KEYS=[NEW, OLD]):
        reencrypt()
    with override_settings(PAYEE_ENCRYPTION_KEYS=[NEW]):
        rewarded_in_browser(sam, summer, subject="oid-sam")
        give_details(sam, summer, email="sam@example.com", phone="")

    codes = set(ActionClaim.objects.values_list("signals__code", flat=True))
    assert "payee_iban_shared" in codes


def test_a_new_fingerprint_key_is_taken_up_by_the_recompute(pat_under_old_key, summer):
    with override_settings(PAYEE_FINGERPRINT_KEY="another-key", PAYEE_ENCRYPTION_KEYS=[OLD]):
        assert payee_fingerprints_recompute(model=PayeeAccount) == 1
        assert payee_fingerprints_recompute(model=PayeeAccount) == 0
        sam = Client()
        rewarded_in_browser(sam, summer, subject="oid-sam")
        give_details(sam, summer, email="sam@example.com", phone="")

    assert "payee_iban_shared" in set(ActionClaim.objects.values_list("signals__code", flat=True))
