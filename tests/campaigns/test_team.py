"""A brand's team, run by its owners from the Team page: invitations by email, roles, removals.

Alice owns Alpaca. The attack these tests keep out: an owner who invites a second address of their
own as finance, or a friend, and approves their own payouts with it at once.
"""

import re
from datetime import timedelta

import pytest
from allauth.account.models import EmailAddress
from django.core import mail
from django.urls import reverse
from django.utils import timezone

from campaigns.models import Invitation, Membership, Role
from campaigns.services.refusals import CampaignError
from campaigns.services.team import (
    invitation_accept,
    invitation_create,
    invitation_link,
    invitation_revoke,
    member_remove,
    member_role_change,
)
from joyback.users.models import AccessChange
from payouts.models import Notification
from payouts.notifications import (
    invitation_notify,
    notification_backoff,
    notifications_due,
    notifications_send,
)
from tests.conftest import fund, totp_enable

pytestmark = pytest.mark.django_db


def sent_token(django_capture_on_commit_callbacks, **invite) -> str:
    with django_capture_on_commit_callbacks(execute=True):
        invitation_create(**invite)
    match = re.search(r"/invitations/([^/\s]+)/", mail.outbox[-1].body)
    return match.group(1)


def test_an_invitation_mails_a_link_only_to_the_invited_address_and_keeps_only_its_hash(
    alpaca, alice, django_capture_on_commit_callbacks
):
    token = sent_token(
        django_capture_on_commit_callbacks,
        brand=alpaca,
        email="mia@alpaca.example",
        role="marketer",
        invited_by=alice,
        language="en",
    )

    message = mail.outbox[-1]
    assert message.to == ["mia@alpaca.example"]
    assert "Alpaca Coffee" in message.subject and "Marketer" in message.body
    invitation = Invitation.objects.get()
    assert token not in invitation.token_hash and len(invitation.token_hash) == 64
    assert invitation.invited_by == alice and invitation.accepted_at is None


def test_accepting_makes_the_membership_given_by_the_inviter_and_confirms_the_address(
    alpaca, alice, make_user, django_capture_on_commit_callbacks
):
    token = sent_token(
        django_capture_on_commit_callbacks,
        brand=alpaca,
        email="mia@alpaca.example",
        role="marketer",
        invited_by=alice,
    )
    mia = make_user("mia@alpaca.example", first_name="Mia")

    membership = invitation_accept(token=token, user=mia)

    assert (membership.brand, membership.role, membership.approves_from) == (alpaca, Role.MARKETER, None)
    assert AccessChange.objects.filter(actor=alice, subject=mia, detail="none -> marketer in alpaca").exists()
    assert EmailAddress.objects.get(user=mia, email="mia@alpaca.example").verified
    invitation = Invitation.objects.get()
    assert invitation.accepted_by == mia and invitation.accepted_at is not None
    with pytest.raises(CampaignError, match="already been accepted"):
        invitation_accept(token=token, user=mia)


def test_an_owner_cannot_invite_an_address_of_their_own(alpaca, alice):
    for address in ("ALICE@alpaca.example", "alice+finance@alpaca.example"):
        with pytest.raises(CampaignError, match="address of your own"):
            invitation_create(brand=alpaca, email=address, role="finance", invited_by=alice)
    assert not Invitation.objects.exists()


def test_only_the_invited_address_accepts_and_never_the_inviter(
    alpaca, alice, make_user, django_capture_on_commit_callbacks
):
    token = sent_token(
        django_capture_on_commit_callbacks,
        brand=alpaca,
        email="mia@alpaca.example",
        role="viewer",
        invited_by=alice,
    )
    someone = make_user("someone@else.example")

    with pytest.raises(CampaignError, match=r"This invitation is for mia@alpaca\.example"):
        invitation_accept(token=token, user=someone)
    with pytest.raises(CampaignError, match="You sent this invitation"):
        invitation_accept(token=token, user=alice)
    with pytest.raises(CampaignError, match="not valid"):
        invitation_accept(token="guessed", user=someone)
    assert not Membership.objects.filter(user=someone).exists()


def test_a_money_role_needs_a_second_factor_and_approves_only_after_the_cooling_period(
    alpaca, alice, make_user, settings, django_capture_on_commit_callbacks
):
    from campaigns.selectors import member_approver_refusal

    settings.FOUR_EYES_COOLING_DAYS = 7
    token = sent_token(
        django_capture_on_commit_callbacks,
        brand=alpaca,
        email="fin@alpaca.example",
        role="finance",
        invited_by=alice,
    )
    fin = make_user("fin@alpaca.example", first_name="Fin")

    with pytest.raises(CampaignError, match="second factor"):
        invitation_accept(token=token, user=fin)
    totp_enable(fin)
    membership = invitation_accept(token=token, user=fin)

    assert membership.role == Role.FINANCE and membership.approves_from is not None
    assert "approve payouts from" in member_approver_refusal(membership=membership)
    settings.FOUR_EYES_COOLING_DAYS = 0
    Membership.objects.filter(pk=membership.pk).update(approves_from=None)
    membership.refresh_from_db()
    assert member_approver_refusal(membership=membership) is None


def test_a_withdrawn_or_expired_invitation_is_refused(
    alpaca, alice, make_user, django_capture_on_commit_callbacks
):
    from django.utils import timezone

    token = sent_token(
        django_capture_on_commit_callbacks,
        brand=alpaca,
        email="mia@alpaca.example",
        role="viewer",
        invited_by=alice,
    )
    mia = make_user("mia@alpaca.example")
    invitation_revoke(invitation=Invitation.objects.get(), actor=alice)
    with pytest.raises(CampaignError, match="withdrawn"):
        invitation_accept(token=token, user=mia)

    token = sent_token(
        django_capture_on_commit_callbacks,
        brand=alpaca,
        email="mia@alpaca.example",
        role="viewer",
        invited_by=alice,
    )
    Invitation.objects.filter(revoked_at__isnull=True).update(expires_at=timezone.now())
    with pytest.raises(CampaignError, match="expired"):
        invitation_accept(token=token, user=mia)


def test_a_second_open_invitation_to_the_same_address_is_refused_in_words(alpaca, alice):
    invitation_create(brand=alpaca, email="mia@alpaca.example", role="viewer", invited_by=alice)
    with pytest.raises(CampaignError, match="already has an open invitation"):
        invitation_create(brand=alpaca, email="MIA@alpaca.example", role="finance", invited_by=alice)


def test_role_changes_keep_an_owner_need_a_second_factor_for_money_and_are_recorded(
    alpaca, alice, vic, make_user, settings
):
    settings.FOUR_EYES_COOLING_DAYS = 7
    vic_membership = Membership.objects.get(user=vic)
    with pytest.raises(CampaignError, match="no second factor yet"):
        member_role_change(membership=vic_membership, role="finance", actor=alice)

    totp_enable(vic)
    changed = member_role_change(membership=vic_membership, role="finance", actor=alice)
    assert changed.role == Role.FINANCE and changed.approves_from is not None
    assert AccessChange.objects.filter(
        actor=alice, subject=vic, detail="viewer -> finance in alpaca"
    ).exists()

    back = member_role_change(membership=changed, role="viewer", actor=alice)
    assert back.approves_from is None

    alice_membership = Membership.objects.get(user=alice)
    with pytest.raises(CampaignError, match="needs an owner"):
        member_role_change(membership=alice_membership, role="viewer", actor=alice)
    with pytest.raises(CampaignError, match="needs an owner"):
        member_remove(membership=alice_membership, actor=alice)


def test_removing_a_member_is_recorded(alpaca, alice, vic):
    member_remove(membership=Membership.objects.get(user=vic), actor=alice)
    assert not Membership.objects.filter(user=vic).exists()
    assert AccessChange.objects.filter(actor=alice, subject=vic, detail="viewer -> none in alpaca").exists()


def test_an_invited_finance_member_cannot_approve_any_payout_during_the_cooling_period(
    alpaca, alice, make_user, settings, django_capture_on_commit_callbacks
):
    """Two addresses of one owner, both invited: the second may not approve the first's payout
    although neither set the other up."""
    from payouts.manual.services import payout_approve, payout_manual_enter
    from payouts.rails import iban_check
    from payouts.submission.states import PayoutRefused

    settings.PAYOUT_NEW_ACCOUNT_APPROVAL = True
    settings.FOUR_EYES_COOLING_DAYS = 7
    fund(alpaca, 5_000_00, "EUR", reference="DEP-TEAM")
    socks = []
    for name in ("sock1", "sock2"):
        token = sent_token(
            django_capture_on_commit_callbacks,
            brand=alpaca,
            email=f"{name}@elsewhere.example",
            role="finance",
            invited_by=alice,
        )
        sock = totp_enable(make_user(f"{name}@elsewhere.example"))
        invitation_accept(token=token, user=sock)
        socks.append(sock)
    payout = payout_manual_enter(
        brand=alpaca,
        name="Mallory",
        email="m@example.com",
        phone="",
        bank_account=iban_check("DE02120300000000202051"),
        currency="EUR",
        amount=1_500_00,
        created_by=socks[0],
    )

    with pytest.raises(PayoutRefused, match="approve payouts from"):
        payout_approve(payout=payout, actor=socks[1])
    payout.refresh_from_db()
    assert payout.status == "awaiting_approval"


def test_the_team_page_shows_members_to_everyone_and_controls_to_owners(client, alpaca, alice, vic):
    client.force_login(vic)
    page = client.get(reverse("brand_team", args=["alpaca"]))
    assert page.status_code == 200 and b"vic@alpaca.example" in page.content
    assert b"Send invitation" not in page.content
    refused = client.post(
        reverse("brand_team_invite", args=["alpaca"]), {"email": "x@y.example", "role": "viewer"}
    )
    assert refused.status_code == 403

    client.force_login(alice)
    page = client.get(reverse("brand_team", args=["alpaca"]))
    assert b"Send invitation" in page.content
    bad = client.post(
        reverse("brand_team_invite", args=["alpaca"]), {"email": "not an address", "role": "viewer"}
    )
    assert bad.status_code == 400 and not Invitation.objects.exists()


def test_the_invitation_page_asks_a_visitor_to_sign_in_or_up_with_the_invited_address(
    client, alpaca, alice, django_capture_on_commit_callbacks
):
    token = sent_token(
        django_capture_on_commit_callbacks,
        brand=alpaca,
        email="mia@alpaca.example",
        role="viewer",
        invited_by=alice,
    )
    page = client.get(reverse("invitation_accept", args=[token]))
    assert page.status_code == 200
    assert b"mia@alpaca.example" in page.content and b"/accounts/signup/?next=" in page.content
    assert client.get(reverse("invitation_accept", args=["nothing-like-it"])).status_code == 404


def test_the_invitation_is_a_notification_in_the_inviters_language_sent_once(
    alpaca, alice, make_user, django_capture_on_commit_callbacks
):
    token = sent_token(
        django_capture_on_commit_callbacks,
        brand=alpaca,
        email="mia@alpaca.example",
        role="viewer",
        invited_by=alice,
        language="es",
    )

    invitation = Invitation.objects.get()
    note = Notification.objects.get(kind="invitation")
    assert (note.channel, note.key, note.sent_at is not None) == (
        "email",
        f"invitation:{invitation.pk}:email",
        True,
    )
    assert note.context == {"invitation": invitation.pk, "language": "es"}  # no token, no address
    (message,) = mail.outbox
    assert message.to == ["mia@alpaca.example"] and "te invita" in message.subject
    assert token not in str(note.context)
    assert invitation_notify(invitation_id=invitation.pk, language="es") == []  # a repeated task
    assert len(mail.outbox) == 1
    assert invitation_accept(token=token, user=make_user("mia@alpaca.example")).brand == alpaca


def test_without_a_language_of_the_inviters_the_invitation_is_in_the_brands(
    alpaca, alice, django_capture_on_commit_callbacks
):
    sent_token(
        django_capture_on_commit_callbacks,
        brand=alpaca,
        email="mia@alpaca.example",
        role="viewer",
        invited_by=alice,
    )

    assert alpaca.country == "DE" and "lädt dich" in mail.outbox[-1].subject


def test_an_invitation_the_mail_server_refused_is_sent_again_with_the_same_link(
    alpaca, alice, make_user, monkeypatch, django_capture_on_commit_callbacks
):
    def down(*args, **kwargs):
        raise ConnectionRefusedError("mail server down")

    monkeypatch.setattr("django.core.mail.backends.locmem.EmailBackend.send_messages", down)
    with django_capture_on_commit_callbacks(execute=True):
        invitation_create(
            brand=alpaca, email="mia@alpaca.example", role="viewer", invited_by=alice, language="en"
        )

    note = Notification.objects.get(kind="invitation")  # the owner's invitation stands; the mail waits
    assert (note.sent_at, note.attempts) == (None, 1) and not mail.outbox
    later = timezone.now() + notification_backoff(1) + timedelta(seconds=1)
    assert notifications_due(now=later) == [note.pk]

    monkeypatch.undo()
    assert notifications_send(ids=notifications_due(now=later)) == 1
    note.refresh_from_db()
    assert note.sent_at is not None and note.attempts == 1
    token = re.search(r"/invitations/([^/\s]+)/", mail.outbox[-1].body).group(1)
    assert invitation_accept(token=token, user=make_user("mia@alpaca.example")).brand == alpaca


def test_a_withdrawn_invitation_is_not_mailed_and_a_link_made_with_another_key_is_refused(
    alpaca, alice, settings
):
    invitation = invitation_create(brand=alpaca, email="mia@alpaca.example", role="viewer", invited_by=alice)
    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = "a-new-key-" * 5, [settings.SECRET_KEY]
    assert "/invitations/" in invitation_link(invitation=invitation)  # an earlier key still accepted
    settings.SECRET_KEY_FALLBACKS = []
    with pytest.raises(CampaignError, match="not valid"):
        invitation_link(invitation=invitation)

    invitation_revoke(invitation=invitation, actor=alice)
    assert invitation_notify(invitation_id=invitation.pk) == []


def test_an_invitation_withdrawn_before_its_retry_is_not_mailed(
    alpaca, alice, monkeypatch, django_capture_on_commit_callbacks
):
    def down(*args, **kwargs):
        raise ConnectionRefusedError("mail server down")

    monkeypatch.setattr("django.core.mail.backends.locmem.EmailBackend.send_messages", down)
    with django_capture_on_commit_callbacks(execute=True):
        invitation = invitation_create(
            brand=alpaca, email="mia@alpaca.example", role="viewer", invited_by=alice, language="en"
        )
    monkeypatch.undo()
    invitation_revoke(invitation=invitation, actor=alice)

    note = Notification.objects.get(kind="invitation")
    assert notifications_send(ids=[note.pk]) == 0
    note.refresh_from_db()
    assert note.sent_at is not None and not mail.outbox  # done, and nothing sent


def _state():
    """Everything accepting an invitation could change."""
    return (
        sorted(Membership.objects.values_list("brand__slug", "user__email", "role")),
        AccessChange.objects.count(),
        sorted(Invitation.objects.values_list("pk", "accepted_at", "accepted_by", "revoked_at")),
        sorted(EmailAddress.objects.values_list("email", "verified")),
    )


def test_an_invitation_of_one_brand_joins_that_brand_only_and_shows_nothing_of_another(
    client, alpaca, bison, alice, bob, make_user, django_capture_on_commit_callbacks
):
    """Mia is invited by both brands: Alpaca's link makes her a member of Alpaca, Bison's
    invitation stays open, and nothing of Bison is hers."""
    alpacas = sent_token(
        django_capture_on_commit_callbacks,
        brand=alpaca,
        email="mia@both.example",
        role="viewer",
        invited_by=alice,
    )
    sent_token(
        django_capture_on_commit_callbacks,
        brand=bison,
        email="mia@both.example",
        role="marketer",
        invited_by=bob,
    )
    mia = make_user("mia@both.example")
    client.force_login(mia)

    page = client.get(reverse("invitation_accept", args=[alpacas]))
    assert b"Alpaca Coffee" in page.content and b"Bison" not in page.content and b"bob@" not in page.content
    joined = client.post(reverse("invitation_accept", args=[alpacas]))

    assert joined.status_code == 302 and joined["Location"] == reverse("brand_dashboard", args=["alpaca"])
    assert list(Membership.objects.filter(user=mia).values_list("brand__slug", "role")) == [
        ("alpaca", "viewer")
    ]
    assert Invitation.objects.get(brand=bison).accepted_at is None
    assert client.get(reverse("brand_dashboard", args=["bison"])).status_code == 404
    assert client.get(reverse("brand_team", args=["bison"])).status_code == 404


@pytest.mark.parametrize("how", ["accepted", "expired", "withdrawn"])
def test_a_used_expired_or_withdrawn_link_is_refused_in_words_and_changes_nothing(
    client, alpaca, alice, make_user, django_capture_on_commit_callbacks, how
):
    token = sent_token(
        django_capture_on_commit_callbacks,
        brand=alpaca,
        email="mia@alpaca.example",
        role="viewer",
        invited_by=alice,
    )
    mia = make_user("mia@alpaca.example")
    words = {
        "accepted": "already been accepted",
        "expired": "has expired",
        "withdrawn": "was withdrawn",
    }[how]
    if how == "accepted":
        invitation_accept(token=token, user=mia)
        Membership.objects.filter(user=mia).delete()  # she left; the link does not bring her back
    elif how == "expired":
        Invitation.objects.update(expires_at=timezone.now())
    else:
        invitation_revoke(invitation=Invitation.objects.get(), actor=alice)
    before = _state()
    client.force_login(mia)

    refused = client.post(reverse("invitation_accept", args=[token]))

    assert refused.status_code == 400
    assert refused.content.decode().count(words) == 1
    assert b"Accept the invitation" not in refused.content
    assert _state() == before
    with pytest.raises(CampaignError, match=words):
        invitation_accept(token=token, user=mia)
    assert _state() == before
