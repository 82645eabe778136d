"""Four eyes are two people, whatever the route: a payout an API key makes is its maker's, who cannot
approve it; nobody approves what a person they set up lately (or who set them up) proposed; money
permissions for staff need a second staff member; a returned payout made by hand is paid again only
through the manual payout's controls, never automatically.

Alice owns Alpaca and makes its API key; Fiona (finance) is the second person. Sam is platform staff
(a superuser for the attacks); Tara is the staff member who confirms what Sam asks for.
"""

import pytest
from django.contrib.auth.models import Permission
from django.db import IntegrityError, ProgrammingError, transaction
from django.urls import reverse

from campaigns.models import Role
from campaigns.services.brands import member_add
from joyback.api.keys import api_key_create
from joyback.ledger.models import Account, AccountKind
from joyback.users.four_eyes import SecondPersonRefused, staff_grant_confirm
from joyback.users.models import AccessChange, StaffGrant
from payouts.manual.services import payout_approve, payout_manual_enter, payout_retry
from payouts.models import Payout, ReconciliationException, SandboxBankPayment, StatementImport
from payouts.payees.services import payee_account_save, payee_onboard
from payouts.pipeline import payouts_due_process
from payouts.rails import iban_check
from payouts.reconciliation.exceptions import exception_resolve
from payouts.reconciliation.references import brand_deposit_reference
from payouts.reconciliation.rules import ReconciliationRefused
from payouts.reconciliation.statement_import import statement_import_approve, statement_import_create
from payouts.submission.states import PayoutRefused
from payouts.submission.sweeps import payouts_sweep
from tests.api.conftest import Api
from tests.conftest import fund, totp_enable
from tests.payouts.camt_fixtures import Ntry, camt053, camt054
from tests.payouts.conftest import IBANS, staff_user
from tests.verification.test_claim_races import race

pytestmark = pytest.mark.django_db

NEW_IBAN = "DE02120300000000202051"


def funding(brand) -> int:
    account = Account.objects.filter(
        kind=AccountKind.BRAND_FUNDING, brand_id=brand.pk, currency="EUR"
    ).first()
    return account.balance if account else 0


@pytest.fixture
def funded(alpaca):
    fund(alpaca, 5_000_00, "EUR", reference="DEP-4EYES")
    return alpaca


def api_payout(client, secret, amount=1_500_00, iban=NEW_IBAN):
    body = {
        "amount": amount,
        "currency": "EUR",
        "payee": {"name": "Mallory", "email": "m@example.com", "iban": iban},
    }
    response = Api(client, secret).post("payouts", body)
    assert response.status_code == 201, response.content
    return Payout.objects.get(pk=response.json()["id"])


def approve_in_dashboard(client, user, payout):
    client.force_login(user)
    response = client.post(
        reverse("payouts:payout_action", args=[payout.brand.slug, payout.pk]),
        {"action": "approve"},
        follow=True,
    )
    return response.content.decode()


# Finding 1: an owner approves the payout their own API key made.


def test_the_maker_of_an_api_key_cannot_approve_the_payout_it_made(
    client, funded, alice, fiona, django_capture_on_commit_callbacks
):
    client.force_login(alice)
    page = client.post("/brands/alpaca/developers/keys/", {"name": "erp", "scopes": ["read", "payouts"]})
    secret = page.context["new_secret"].secret
    payout = api_payout(client, secret)
    assert payout.status == "awaiting_approval"
    assert (payout.created_by, payout.api_key.created_by) == (alice, alice)
    before = funding(funded)

    with django_capture_on_commit_callbacks(execute=True):
        page = approve_in_dashboard(client, alice, payout)

    assert "A second person must approve a payout you made yourself." in page
    payout.refresh_from_db()
    assert (payout.status, payout.approved_by) == ("awaiting_approval", None)
    assert not SandboxBankPayment.objects.exists() and funding(funded) == before

    with django_capture_on_commit_callbacks(execute=True):
        approve_in_dashboard(client, fiona, payout)
    payout.refresh_from_db()
    assert (payout.status, payout.approved_by) == ("settled", fiona)


def test_a_payout_by_a_key_whose_maker_is_unknown_cannot_be_approved_by_anyone(funded, client, alice, fiona):
    secret = api_key_create(brand_id=funded.pk, name="old", scopes=["payouts"]).secret
    payout = api_payout(client, secret)

    for person in (alice, fiona):
        with pytest.raises(PayoutRefused, match="made before JoyBack kept who made each key"):
            payout_approve(payout=payout, actor=person)

    payout.refresh_from_db()
    assert payout.status == "awaiting_approval" and not SandboxBankPayment.objects.exists()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_approvals_at_once_send_the_payout_once(funded, client, alice, fiona, make_user):
    owner = totp_enable(make_user("olga@alpaca.example"))
    member_add(brand=funded, user=owner, role=Role.OWNER)
    secret = api_key_create(brand_id=funded.pk, name="erp", scopes=["payouts"], created_by=alice).secret
    payout = api_payout(client, secret)
    approvers = [fiona, owner]

    results = race(2, lambda i: payout_approve(payout=Payout.objects.get(pk=payout.pk), actor=approvers[i]))

    refused = [r for r in results if isinstance(r, PayoutRefused)]
    assert len(refused) == 1 and "not waiting for approval" in refused[0].message, results
    payout.refresh_from_db()
    assert payout.approved_by in approvers and payout.events.filter(detail="approved").count() == 1
    assert SandboxBankPayment.objects.count() <= 1


# The cooling period: nobody approves for someone who set them up, or whom they set up, lately.


def test_a_finance_member_the_owner_just_added_cannot_approve_the_owners_payout(
    funded, alice, make_user, settings
):
    settings.PAYOUT_NEW_ACCOUNT_APPROVAL = True
    accomplice = totp_enable(make_user("acc@alpaca.example", first_name="Ace"))
    member_add(brand=funded, user=accomplice, role=Role.FINANCE, actor=alice)
    payout = payout_manual_enter(
        brand=funded,
        name="Mallory",
        email="m@example.com",
        phone="",
        bank_account=iban_check(NEW_IBAN),
        currency="EUR",
        amount=1_500_00,
        created_by=alice,
    )

    with pytest.raises(PayoutRefused, match="Alice gave Ace their access") as refused:
        payout_approve(payout=payout, actor=accomplice)
    assert "7 days" in refused.value.message
    payout.refresh_from_db()
    assert payout.status == "awaiting_approval"

    settings.FOUR_EYES_COOLING_DAYS = 0  # the period over: the same person may approve
    assert payout_approve(payout=payout, actor=accomplice).approved_by == accomplice


def test_every_membership_and_role_change_is_recorded_and_never_rewritten(alpaca, alice, fiona):
    member_add(brand=alpaca, user=fiona, role=Role.OWNER, actor=alice)
    member_add(brand=alpaca, user=fiona, role=Role.OWNER, actor=alice)  # no change, no row

    change = AccessChange.objects.filter(actor=alice, subject=fiona).get()
    assert (change.kind, change.brand_id, change.detail) == (
        "membership",
        alpaca.pk,
        "finance -> owner in alpaca",
    )
    with pytest.raises(ProgrammingError, match="append-only"), transaction.atomic():
        AccessChange.objects.filter(pk=change.pk).update(detail="nothing happened")
    with pytest.raises(ProgrammingError, match="append-only"), transaction.atomic():
        AccessChange.objects.filter(pk=change.pk).delete()


# Finding 2: a superuser makes their own second approver.


@pytest.fixture
def root(make_user):
    return totp_enable(
        type(make_user("x@x.example")).objects.create_superuser(
            email="root@joyback.example", password="x", first_name="Root"
        )
    )


@pytest.fixture
def tara(make_user):
    user = staff_user(make_user, "tara@joyback.example", "statement_approve")
    user.user_permissions.add(Permission.objects.get(codename="change_staffgrant"))
    return type(user).objects.get(pk=user.pk)


def admin_makes_staff(client, root, email, *codenames):
    """What the superuser does in the admin: a new account, then staff with the given permissions."""
    client.force_login(root)
    client.post(
        "/admin/users/user/add/",
        {"email": email, "password1": "Long-pass-12345", "password2": "Long-pass-12345"},
    )
    user = type(root).objects.get(email=email)
    permissions = Permission.objects.filter(content_type__app_label="payouts", codename__in=codenames)
    response = client.post(
        f"/admin/users/user/{user.pk}/change/",
        {
            "email": email,
            "first_name": "Helper",
            "last_name": "",
            "is_active": "on",
            "is_staff": "on",
            "user_permissions": [p.pk for p in permissions],
            "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00",
        },
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    return totp_enable(type(root).objects.get(pk=user.pk))


def test_a_money_permission_one_staff_member_gives_waits_for_a_second(client, root, tara):
    helper = admin_makes_staff(client, root, "helper@joyback.example", "statement_approve")

    assert not helper.has_perm("payouts.statement_approve")
    grant = StaffGrant.objects.get(subject=helper)
    assert (grant.value, grant.requested_by, grant.confirmed_at) == ("payouts.statement_approve", root, None)
    assert set(AccessChange.objects.filter(actor=root, subject=helper).values_list("kind", flat=True)) == {
        "account",
        "staff",
        "grant_requested",
    }
    with pytest.raises(SecondPersonRefused, match="A second person"):
        staff_grant_confirm(grant_id=grant.pk, actor=root)
    with pytest.raises(IntegrityError), transaction.atomic():
        StaffGrant.objects.filter(pk=grant.pk).update(confirmed_by=root)

    staff_grant_confirm(grant_id=grant.pk, actor=tara)

    assert type(helper).objects.get(pk=helper.pk).has_perm("payouts.statement_approve")
    assert AccessChange.objects.filter(actor=tara, subject=helper, kind="grant_confirmed").exists()


def test_superuser_status_given_in_the_admin_waits_for_a_second_staff_member(client, root):
    client.force_login(root)
    client.post(
        "/admin/users/user/add/",
        {"email": "h@joyback.example", "password1": "Long-pass-12345", "password2": "Long-pass-12345"},
    )
    helper = type(root).objects.get(email="h@joyback.example")
    client.post(
        f"/admin/users/user/{helper.pk}/change/",
        {
            "email": helper.email,
            "is_active": "on",
            "is_staff": "on",
            "is_superuser": "on",
            "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00",
        },
    )

    helper.refresh_from_db()
    assert (helper.is_staff, helper.is_superuser) == (True, False)
    assert StaffGrant.objects.get(subject=helper).value == "superuser"


def test_a_superuser_cannot_approve_their_statement_through_an_approver_they_made(client, root, tara, alpaca):
    helper = admin_makes_staff(client, root, "helper@joyback.example", "statement_approve")
    staff_grant_confirm(grant_id=StaffGrant.objects.get(subject=helper).pk, actor=tara)
    helper = type(helper).objects.get(pk=helper.pk)
    root.user_permissions.add(Permission.objects.get(codename="statement_upload"))
    data = camt053(
        [Ntry(amount=1_000_000_00, credit=True, ref="BIG-1", remittance=brand_deposit_reference(alpaca))],
        opening=0,
    )
    job = statement_import_create(data=data, filename="s.xml", channel="staff", uploaded_by=root)

    with pytest.raises(ReconciliationRefused, match="Root gave Helper their access") as refused:
        statement_import_approve(import_id=job.pk, approver=helper)

    assert "7 days" in refused.value.message
    assert StatementImport.objects.get(pk=job.pk).status == "awaiting" and funding(alpaca) == 0
    done = statement_import_approve(import_id=job.pk, approver=tara)
    # Booked now: the line with the brand's reference on the platform's account is an exception.
    assert done.status == "done" and done.exceptions == 1 and funding(alpaca) == 0


def test_a_reconciliation_proposal_is_not_confirmed_by_someone_the_proposer_set_up(
    client, root, tara, alpaca, settings
):
    settings.RECONCILIATION_SECOND_APPROVAL_MINOR = 100_00  # a large suspense booking: two people
    helper = admin_makes_staff(client, root, "helper@joyback.example", "exception_resolve")
    staff_grant_confirm(grant_id=StaffGrant.objects.get(subject=helper).pk, actor=tara)
    helper = type(helper).objects.get(pk=helper.pk)
    statement_import_create(
        data=camt054([Ntry(amount=900_00, credit=True, ref="NOREF-9", remittance="Alpaca")]),
        filename="bank.xml",
        channel="feed",
    )
    exception = exception_resolve(
        exception=ReconciliationException.objects.get(),
        action="suspense",
        actor=root,
        note="nobody's we know",
    )

    with pytest.raises(ReconciliationRefused, match="Root gave Helper their access"):
        exception_resolve(exception=exception, action="suspense", actor=helper, note="agreed")

    exception.refresh_from_db()
    assert exception.status == "open" and funding(alpaca) == 0


# Finding 3: a returned manual payout is never paid again automatically.


def test_a_returned_manual_payout_is_paid_again_only_through_the_manual_controls(
    funded, fiona, alice, settings, django_capture_on_commit_callbacks
):
    settings.PAYOUT_NEW_ACCOUNT_APPROVAL = False
    with django_capture_on_commit_callbacks(execute=True):
        payout = payout_manual_enter(
            brand=funded,
            name="Mo Manual",
            email="mo@example.com",
            phone="",
            bank_account=iban_check(IBANS["return_AC04"]),
            currency="EUR",
            amount=300_00,
            created_by=fiona,
        )
    for _ in range(2):
        with django_capture_on_commit_callbacks(execute=True):
            payouts_sweep()
    payout.refresh_from_db()
    assert payout.status == "returned"
    settings.PAYOUT_NEW_ACCOUNT_APPROVAL = True

    # The person gives new details: what the return put back is owed again, and nothing pays it
    # by itself (the pipeline, the sweep, the reward's payout task).
    with django_capture_on_commit_callbacks(execute=True):
        payee = payee_account_save(
            participant=payout.participant,
            name="Mo Manual",
            email="mo@example.com",
            phone="",
            bank_account=iban_check(NEW_IBAN),
            currency="EUR",
            consent_version="manual",
            onboard=False,
        )
        payee_onboard(payee_id=payee.pk)
    with django_capture_on_commit_callbacks(execute=True):
        payouts_due_process()
        payouts_sweep()
    assert list(Payout.objects.values_list("pk", flat=True)) == [payout.pk]

    # Paying it again by hand passes the manual controls: a new account waits for a second person.
    with django_capture_on_commit_callbacks(execute=True):
        again = payout_retry(payout=payout, actor=fiona)
    assert (again.manual, again.status, again.hold_reasons, again.repays) == (
        True,
        "awaiting_approval",
        "new_account",
        payout,
    )
    with pytest.raises(PayoutRefused, match="second person"):
        payout_approve(payout=again, actor=fiona)
    with django_capture_on_commit_callbacks(execute=True):
        payout_approve(payout=again, actor=alice)
    again.refresh_from_db()
    assert again.status == "settled"


def test_a_money_permission_is_not_slipped_in_through_a_group_with_members(client, root, make_user):
    from django.contrib.auth.models import Group

    member = make_user("member@joyback.example", is_staff=True)
    group = Group.objects.create(name="support")
    member.groups.add(group)
    approve = Permission.objects.get(codename="statement_approve")
    client.force_login(root)

    response = client.post(
        f"/admin/auth/group/{group.pk}/change/", {"name": "support", "permissions": [approve.pk]}, follow=True
    )

    assert "Money permissions are not added to a group that has members" in response.content.decode()
    assert not group.permissions.exists()
    assert not type(member).objects.get(pk=member.pk).has_perm("payouts.statement_approve")


def test_the_admin_confirms_a_grant_only_from_a_second_staff_member(client, root, tara):
    helper = admin_makes_staff(client, root, "helper@joyback.example", "exception_resolve")
    grant = StaffGrant.objects.get(subject=helper)
    confirm = {"action": "confirm", "_selected_action": [grant.pk]}

    refused = client.post("/admin/users/staffgrant/", confirm, follow=True).content.decode()
    assert "A second person must approve what you made yourself." in refused
    assert StaffGrant.objects.get(pk=grant.pk).confirmed_at is None

    client.force_login(tara)
    client.post("/admin/users/staffgrant/", confirm, follow=True)
    assert StaffGrant.objects.get(pk=grant.pk).confirmed_by == tara
    assert type(helper).objects.get(pk=helper.pk).has_perm("payouts.exception_resolve")


# Found from outside after the above: a staff member allowed only to read payouts approved one from
# the admin, and one superuser alone made a stranger a brand's finance member who then approved.


def owners_payout(funded, alice):
    return payout_manual_enter(
        brand=funded,
        name="Mallory",
        email="m@example.com",
        phone="",
        bank_account=iban_check(NEW_IBAN),
        currency="EUR",
        amount=1_500_00,
        created_by=alice,
    )


def test_staff_who_may_only_read_payouts_cannot_approve_one_in_the_admin(client, funded, alice, make_user):
    payout = owners_payout(funded, alice)
    assert payout.status == "awaiting_approval"
    gina = staff_user(make_user, "gina@joyback.example", "view_payout")
    client.force_login(gina)

    page = client.get("/admin/payouts/payout/").content.decode()
    client.post("/admin/payouts/payout/", {"action": "approve", "_selected_action": [payout.pk]}, follow=True)

    assert 'value="approve"' not in page
    assert Payout.objects.get(pk=payout.pk).status == "awaiting_approval"
    with pytest.raises(PayoutRefused, match="Only the brand's owner or finance members"):
        payout_approve(payout=payout, actor=gina)


def test_one_superuser_cannot_make_a_stranger_a_finance_member_alone(
    client, funded, alice, root, tara, make_user
):
    payout = owners_payout(funded, alice)
    frank = totp_enable(make_user("frank@attacker.example"))
    client.force_login(root)

    client.post(
        "/admin/campaigns/membership/add/",
        {"user": frank.pk, "brand": funded.pk, "role": "finance"},
        follow=True,
    )

    assert not funded.memberships.filter(user=frank).exists()
    with pytest.raises(PayoutRefused):
        payout_approve(payout=payout, actor=frank)
    assert Payout.objects.get(pk=payout.pk).status == "awaiting_approval"
    grant = StaffGrant.objects.get(subject=frank, confirmed_at__isnull=True)
    with pytest.raises(SecondPersonRefused):
        staff_grant_confirm(grant_id=grant.pk, actor=root)

    staff_grant_confirm(grant_id=grant.pk, actor=tara)

    assert funded.memberships.get(user=frank).role == "finance"


def test_a_viewer_role_is_given_by_one_staff_member(client, funded, root, make_user):
    vera = make_user("vera@example.com")
    client.force_login(root)

    client.post("/admin/campaigns/membership/add/", {"user": vera.pk, "brand": funded.pk, "role": "viewer"})

    assert funded.memberships.get(user=vera).role == "viewer"


# Found by attacking it as one staff member alone: an approver one made, however long they wait, a
# staff account one signed up and made staff, another's password, address or second factor set in
# the admin, a task typed into the admin's schedules.


def test_an_approver_a_superuser_made_never_approves_their_statement_however_long_they_wait(
    client, root, tara, alpaca, settings
):
    """The maker of an account chose its address and first password: waiting out the cooling period
    does not make it someone else."""
    helper = admin_makes_staff(client, root, "helper@joyback.example", "statement_approve")
    staff_grant_confirm(grant_id=StaffGrant.objects.get(subject=helper).pk, actor=tara)
    helper = type(helper).objects.get(pk=helper.pk)
    root.user_permissions.add(Permission.objects.get(codename="statement_upload"))
    data = camt053(
        [Ntry(amount=1_000_000_00, credit=True, ref="BIG-2", remittance=brand_deposit_reference(alpaca))],
        opening=0,
    )
    job = statement_import_create(data=data, filename="s.xml", channel="staff", uploaded_by=root)
    settings.FOUR_EYES_COOLING_DAYS = 0  # the period over

    with pytest.raises(ReconciliationRefused, match="never its second person") as refused:
        statement_import_approve(import_id=job.pk, approver=helper)

    assert "Root set up Helper's account" in refused.value.message
    assert StatementImport.objects.get(pk=job.pk).status == "awaiting" and funding(alpaca) == 0
    assert statement_import_approve(import_id=job.pk, approver=tara).status == "done"


def test_an_account_one_signed_up_and_made_staff_never_confirms_ones_limit_change(
    client, root, tara, make_user, settings
):
    """No account made in the admin: one signs up a second address, makes it staff, has a colleague
    confirm it may confirm grants, waits, and asks for a limit it would confirm."""
    from campaigns.services.limits import limit_change_request

    alias = make_user("root.alias@joyback.example", first_name="Alias")  # signed up by root
    client.force_login(root)
    client.post(
        f"/admin/users/user/{alias.pk}/change/",
        {
            "email": alias.email,
            "first_name": "Alias",
            "is_active": "on",
            "is_staff": "on",
            "user_permissions": [Permission.objects.get(codename="change_staffgrant").pk],
            "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00",
        },
    )
    staff_grant_confirm(grant_id=StaffGrant.objects.get(subject=alias).pk, actor=tara)
    alias = totp_enable(type(alias).objects.get(pk=alias.pk))
    assert alias.is_staff and alias.has_perm("users.change_staffgrant")
    settings.FOUR_EYES_COOLING_DAYS = 0
    grant = limit_change_request(
        actor=root, kind="payout_approval_threshold", currency="EUR", brand=None, value=1_000_000_00
    )

    with pytest.raises(SecondPersonRefused, match="made it staff"):
        staff_grant_confirm(grant_id=grant.pk, actor=alias)

    assert StaffGrant.objects.get(pk=grant.pk).confirmed_at is None
    staff_grant_confirm(grant_id=grant.pk, actor=tara)


def test_confirming_tax_filings_is_given_only_by_two_staff_members(client, root, tara):
    helper = admin_makes_staff(client, root, "helper@joyback.example", "file_taxreport")

    assert not helper.has_perm("payouts.file_taxreport")
    grant = StaffGrant.objects.get(subject=helper)
    assert grant.value == "payouts.file_taxreport"
    staff_grant_confirm(grant_id=grant.pk, actor=tara)
    assert type(helper).objects.get(pk=helper.pk).has_perm("payouts.file_taxreport")


def test_staff_set_no_one_elses_password_address_or_second_factor_in_the_admin(client, root, tara):
    """Taking over a colleague who may confirm: their password set, or their address changed (the
    reset link goes there), and their second factor removed."""
    from allauth.account.models import EmailAddress
    from allauth.mfa.models import Authenticator

    EmailAddress.objects.create(user=tara, email=tara.email, verified=True, primary=True)
    client.force_login(root)

    response = client.post(
        f"/admin/users/user/{tara.pk}/password/",
        {"password1": "Root-knows-it-1", "password2": "Root-knows-it-1", "usable_password": "true"},
    )
    assert response.status_code == 403
    client.post(
        f"/admin/users/user/{tara.pk}/change/",
        {
            "email": "root.mailbox@attacker.example",
            "is_active": "on",
            "is_staff": "on",
            "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00",
        },
    )
    address = EmailAddress.objects.get(user=tara)
    client.post(f"/admin/account/emailaddress/{address.pk}/change/", {"email": "root@attacker.example"})
    client.post(
        "/admin/account/emailaddress/add/", {"user": tara.pk, "email": "r@attacker.example", "verified": "on"}
    )
    authenticator = Authenticator.objects.get(user=tara)
    deleted = client.post(f"/admin/mfa/authenticator/{authenticator.pk}/delete/", {"post": "yes"})

    tara = type(tara).objects.get(pk=tara.pk)
    assert tara.check_password("Root-knows-it-1") is False
    assert tara.email == "tara@joyback.example"
    assert list(EmailAddress.objects.filter(user=tara).values_list("email", flat=True)) == [tara.email]
    assert deleted.status_code == 403 and Authenticator.objects.filter(user=tara).exists()
    # Their own password is theirs to change.
    assert client.get(f"/admin/users/user/{root.pk}/password/").status_code == 200


def test_a_task_schedule_is_not_typed_in_the_admin(client, root):
    """A schedule's function and arguments run in the worker as nobody: call_command with
    custody_move's two halves, or any code."""
    from django_q.models import Schedule

    client.force_login(root)
    response = client.post(
        "/admin/django_q/schedule/add/",
        {
            "name": "mine",
            "func": "django.core.management.call_command",
            "args": "'custody_move', '--confirm', '1', '--staff', 'tara@joyback.example'",
            "schedule_type": "O",
            "repeats": "-1",
            "next_run_0": "2026-01-01",
            "next_run_1": "00:00:00",
        },
    )

    assert response.status_code == 403 and not Schedule.objects.filter(name="mine").exists()
