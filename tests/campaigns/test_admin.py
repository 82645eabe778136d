"""Admins browse everything; the ledger is read-only in admin."""

import pytest
from django.urls import reverse

from joyback.ledger.models import Account, Entry, Hold, Transaction
from tests.conftest import fund, totp_enable

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client, django_user_model):
    admin = totp_enable(
        django_user_model.objects.create_superuser(email="root@joyback.example", password="x")
    )
    client.force_login(admin)
    return client


def test_every_admin_changelist_opens(admin_client, alpaca):
    fund(alpaca, 100_00, "EUR", reference="A-1")
    from django.contrib import admin

    for model in admin.site._registry:
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        assert admin_client.get(url).status_code == 200, url


@pytest.mark.parametrize("model", [Account, Transaction, Entry, Hold])
def test_the_ledger_cannot_be_added_changed_or_deleted_in_admin(admin_client, alpaca, model):
    fund(alpaca, 100_00, "EUR", reference="A-2")
    opts = model._meta
    assert admin_client.get(reverse(f"admin:{opts.app_label}_{opts.model_name}_add")).status_code == 403
    obj = model.objects.first()
    if obj is None:
        return
    change_url = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])
    page = admin_client.get(change_url)
    assert page.status_code == 200 and b'type="submit" value="Save"' not in page.content
    delete_url = reverse(f"admin:{opts.app_label}_{opts.model_name}_delete", args=[obj.pk])
    assert admin_client.post(delete_url, {"post": "yes"}).status_code == 403
    assert model.objects.filter(pk=obj.pk).exists()


def test_waiting_bank_details_are_listed_without_the_details(admin_client, client, summer):
    from payouts.models import PayeeSubmission
    from tests.conftest import rewarded_in_browser

    rewarded_in_browser(client, summer)
    details = {"name": "Pat Example", "email": "pat@example.com", "iban": "DE89370400440532013000"}
    client.post(reverse("payouts:payee", args=[summer.slug]), details | {"consent": "on"})  # kept, not stored
    submission = PayeeSubmission.objects.get()

    listing = admin_client.get(reverse("admin:payouts_payeesubmission_changelist")).content.decode()
    page = admin_client.get(reverse("admin:payouts_payeesubmission_change", args=[submission.pk]))

    assert str(submission.pk) in listing
    assert page.status_code == 200
    for secret in ("DE89", "pat@example.com", "Pat Example", submission.details[:20]):
        assert secret not in listing and secret not in page.content.decode()
