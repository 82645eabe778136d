"""JoyBack's review of a brief in the admin: staff read what the linter could not, approve the
exact words (two of them where the reading saw an element of a blocked kind) or send them back, and
the brand reads the note where it launches."""

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management import call_command
from django.db import transaction
from django.urls import reverse

from campaigns.management.commands.demo_seed import ADMIN_EMAIL, STAFF_EMAIL
from campaigns.models import ActionRule, Campaign, Membership
from campaigns.services.campaigns import campaign_transition
from campaigns.services.refusals import CampaignError, campaign_launch_problems
from compliance.models import ComplianceDecision, DecisionKind
from compliance.selectors import instructions_awaiting_review
from compliance.services import decision_record
from joyback.users.four_eyes import access_change_record
from joyback.users.models import AccessChangeKind
from tests.compliance.conftest import RATING_IS_YOURS, share_instructions
from tests.conftest import SignedInClient, totp_enable

pytestmark = pytest.mark.django_db

HONEST = "Tell a story about your grandmother's kitchen while the coffee brews"
# Lawful (the brand forbids health claims), but the reading sees a health claim it cannot place.
LOOKALIKE = "Keep it about taste please, health or energy promises are not our thing"


def reviewer(make_user, email, *, may_review=True):
    user = totp_enable(make_user(email, is_staff=True, first_name=email.split("@")[0].title()))
    if may_review:
        user.user_permissions.add(Permission.objects.get(codename="review_brief"))
    return type(user).objects.get(pk=user.pk)


@pytest.fixture
def sam(make_user):
    return reviewer(make_user, "sam@joyback.example")


@pytest.fixture
def tara(make_user):
    return reviewer(make_user, "tara@joyback.example")


def signed_in(user):
    client = SignedInClient()
    client.force_login(user)
    return client


def decide(user, rule, decision, note, words=None):
    return signed_in(user).post(
        reverse("admin:compliance_briefreview_decide", args=[rule.pk]),
        {"decision": decision, "note": note, "words": rule.instructions if words is None else words},
        follow=True,
    )


def launch_messages(campaign) -> str:
    return " ".join(problem.message for problem in campaign_launch_problems(campaign=campaign))


def test_staff_see_the_waiting_brief_and_what_could_not_be_checked(draft, sam):
    rule = share_instructions(draft, HONEST)

    listed = signed_in(sam).get(reverse("admin:compliance_briefreview_changelist")).content.decode()
    page = signed_in(sam).get(reverse("admin:compliance_briefreview_change", args=[rule.pk])).content.decode()

    assert "Alpaca Coffee" in listed and "grandmother" in listed
    assert "words JoyBack cannot read on its own" in listed
    assert "What JoyBack could not check on its own" in page and "not understood" in page
    assert "Approve these words" in page and "Send back to the brand" in page


def test_approving_the_words_in_the_admin_lets_the_brand_go_live(draft, sam):
    rule = share_instructions(draft, HONEST)

    answer = decide(sam, rule, "approve", "A story brief: nothing bought, nothing scripted")
    campaign_transition(campaign=draft, to="live")

    assert "the brand can take the campaign live" in answer.content.decode()
    approval = ComplianceDecision.objects.get(campaign=draft, decided_by=sam)
    assert approval.evidence["approved_instructions"] == HONEST
    assert approval.evidence["second_needed"] is False
    assert instructions_awaiting_review() == []


def test_sent_back_words_show_the_note_to_the_brand_and_keep_the_campaign_off(client, alice, draft, sam):
    rule = share_instructions(draft, HONEST)

    decide(sam, rule, "send_back", "Say which coffee is shown, and keep family stories optional.")
    client.force_login(alice)
    page = client.post(reverse("campaign_status", args=["alpaca", draft.pk]), {"to": "live"}, follow=True)

    assert "keep family stories optional" in page.content.decode()
    assert Campaign.objects.get(pk=draft.pk).status == "draft"
    assert instructions_awaiting_review() == []  # it waits for the brand now, not for staff


def test_new_words_after_a_send_back_are_read_again(draft, sam):
    rule = share_instructions(draft, HONEST)
    decide(sam, rule, "send_back", "Name the blend you show.")

    share_instructions(draft, HONEST + " with the Andes blend in shot")

    assert [waiting.pk for waiting in instructions_awaiting_review()] == [rule.pk]
    assert "Name the blend you show" not in launch_messages(draft)


def test_words_with_an_element_of_a_blocked_kind_need_a_second_staff_member(draft, sam, tara):
    rule = share_instructions(draft, LOOKALIKE)
    page = signed_in(sam).get(reverse("admin:compliance_briefreview_change", args=[rule.pk])).content.decode()

    first = decide(sam, rule, "approve", "It forbids health claims").content.decode()
    with pytest.raises(CampaignError):
        campaign_transition(campaign=draft, to="live")
    again = decide(sam, rule, "approve", "Still fine").content.decode()
    decide(tara, rule, "approve", "Agreed: it forbids claims")
    campaign_transition(campaign=draft, to="live")

    assert "may be a testimony that is not the creator" in page
    assert "a second staff member must approve these words too" in first
    assert "You approved these words already" in again
    assert ComplianceDecision.objects.filter(campaign=draft, decided_by__isnull=False).count() == 2
    assert Campaign.objects.get(pk=draft.pk).status == "live"


def test_a_disclosure_asked_for_with_a_limit_needs_a_second_staff_member(draft, sam, tara):
    rule = share_instructions(draft, "Put #ad at the start of the caption for the first hour.")
    told = launch_messages(draft)
    listed = signed_in(sam).get(reverse("admin:compliance_briefreview_changelist")).content.decode()

    first = decide(sam, rule, "approve", "An hour is what the client asked").content.decode()
    with pytest.raises(CampaignError):
        campaign_transition(campaign=draft, to="live")
    decide(tara, rule, "approve", "Read it: the client keeps the label, we confirmed by phone")
    campaign_transition(campaign=draft, to="live")

    assert "asks for the disclosure with more than where it stands" in told and "first hour" in told
    assert "may be a disclosure asked for with more than where it stands" in listed
    assert "a second staff member must approve these words too" in first
    assert Campaign.objects.get(pk=draft.pk).status == "live"


def test_a_staff_member_on_the_brands_team_cannot_approve_its_words(draft, sam, alpaca):
    rule = share_instructions(draft, HONEST)
    Membership.objects.create(brand=alpaca, user=sam, role="editor")

    answer = decide(sam, rule, "approve", "Looks fine to me").content.decode()

    assert "another JoyBack staff member reviews its instructions" in answer
    assert not ComplianceDecision.objects.filter(campaign=draft, decided_by=sam).exists()
    assert [waiting.pk for waiting in instructions_awaiting_review()] == [rule.pk]


def test_words_the_brand_changed_since_the_page_was_read_are_not_approved(draft, sam):
    rule = share_instructions(draft, HONEST)
    read = rule.instructions
    share_instructions(draft, HONEST + " in the garden")

    answer = decide(sam, rule, "approve", "Read it, fine", words=read).content.decode()

    assert "The brand changed these words since you read them" in answer
    assert not ComplianceDecision.objects.filter(campaign=draft, decided_by=sam).exists()


@pytest.mark.parametrize(
    ("decision", "message"),
    [
        ("approve", "Say why: the note is kept with the decision."),
        ("send_back", "Say what the brand must change: it reads your note."),
        ("launch", "Choose to approve the words or to send them back."),
    ],
)
def test_a_decision_without_its_note_or_kind_is_refused_and_nothing_recorded(draft, sam, decision, message):
    rule = share_instructions(draft, HONEST)

    answer = decide(sam, rule, decision, "   ").content.decode()

    assert message.replace("'", "&#x27;") in answer
    assert not ComplianceDecision.objects.filter(campaign=draft, decided_by=sam).exists()


def test_staff_without_the_review_permission_and_brand_owners_are_refused(draft, make_user, alice):
    rule = share_instructions(draft, HONEST)
    vera = reviewer(make_user, "vera@joyback.example", may_review=False)

    listed = signed_in(vera).get(reverse("admin:compliance_briefreview_changelist"))
    decided = decide(vera, rule, "approve", "I think it is fine")
    owner = signed_in(alice).post(
        reverse("admin:compliance_briefreview_decide", args=[rule.pk]),
        {"decision": "approve", "note": "mine is fine", "words": rule.instructions},
    )

    assert listed.status_code == 403 and decided.status_code == 403
    assert owner.status_code == 302 and owner["Location"].startswith(reverse("admin:login"))
    assert not ComplianceDecision.objects.filter(campaign=draft, decided_by__isnull=False).exists()


def notices(campaign) -> list[str]:
    return [
        p.message for p in campaign_launch_problems(campaign=campaign) if p.code == "instructions_proposed"
    ]


def test_new_words_for_a_running_campaign_wait_for_review_while_it_runs_with_its_own(summer, sam):
    rule = summer.rules.get(trigger="ugc_share")

    with pytest.raises(CampaignError, match="the campaign runs with the ones it has"):
        share_instructions(summer, HONEST)
    page = signed_in(sam).get(reverse("admin:compliance_briefreview_change", args=[rule.pk])).content.decode()
    waiting_notice = notices(summer)
    decide(sam, rule, "approve", "A story brief", words=HONEST)
    approved_notice = notices(summer)
    share_instructions(summer, HONEST)

    rule.refresh_from_db()
    assert "New words the brand proposed" in page and "grandmother" in page
    assert "reviews the new instructions you proposed" in waiting_notice[0]
    assert "approved the new instructions you proposed" in approved_notice[0]
    assert rule.instructions == HONEST and notices(summer) == []
    assert Campaign.objects.get(pk=summer.pk).status == "live"


def test_proposed_words_sent_back_reach_the_brand_and_the_campaign_keeps_its_words(summer, sam):
    rule = summer.rules.get(trigger="ugc_share")
    for _attempt in range(2):  # saved twice, proposed once
        with pytest.raises(CampaignError):
            share_instructions(summer, HONEST)

    decide(sam, rule, "send_back", "Name the blend you show.", words=HONEST)

    rule.refresh_from_db()
    assert (
        ComplianceDecision.objects.filter(campaign=summer, evidence__has_key="proposed_instructions").count()
        == 1
    )
    assert "asks you to change them: Name the blend you show." in notices(summer)[0]
    assert rule.instructions == "" and instructions_awaiting_review() == []


def test_a_running_campaigns_words_the_patterns_are_sure_of_are_refused_not_proposed(summer):
    with pytest.raises(CampaignError, match="fake or bought engagement"):
        share_instructions(summer, "Buy 1000 likes for your video before you post")

    assert not ComplianceDecision.objects.filter(
        campaign=summer, evidence__has_key="proposed_instructions"
    ).exists()
    assert instructions_awaiting_review() == []


def test_the_brands_editors_are_mailed_what_review_decided_once_it_is_final(
    draft, sam, tara, alice, make_user, mailoutbox, django_capture_on_commit_callbacks
):
    bookkeeper = make_user("finn@alpaca.example")
    Membership.objects.create(brand=draft.brand, user=bookkeeper, role="finance")
    rule = share_instructions(draft, HONEST)
    with django_capture_on_commit_callbacks(execute=True):
        decide(sam, rule, "send_back", "Name the blend you show.")
    rule = share_instructions(draft, LOOKALIKE)
    with django_capture_on_commit_callbacks(execute=True):
        decide(sam, rule, "approve", "It forbids health claims")  # a second must approve too
    sent_back = [(mail.to, mail.subject, mail.body) for mail in mailoutbox]
    with django_capture_on_commit_callbacks(execute=True):
        decide(tara, rule, "approve", "Agreed: it forbids claims")

    [(to, subject, body)] = sent_back  # the editors only, and nothing for the first approval
    assert to == [alice.email] and subject == "Ändere deine Anweisungen für Lint"  # Alpaca is German
    assert "Name the blend you show." in body and f"/campaigns/{draft.pk}/" in body
    [approved] = mailoutbox[1:]
    assert approved.to == [alice.email] and "gelesen und freigegeben" in approved.body


def appeal(client, rule):
    return client.post(
        reverse("compliance:rule_appeal", args=[rule.campaign.brand.slug, rule.campaign_id, rule.pk]),
        follow=True,
    )


def test_words_refused_for_sure_are_read_on_the_brands_request_by_two_staff(client, alice, draft, sam, tara):
    rule = share_instructions(draft, RATING_IS_YOURS)
    client.force_login(alice)
    page = client.get(reverse("campaign_detail", args=["alpaca", draft.pk])).content.decode()
    assert instructions_awaiting_review() == []  # refused for sure: nobody reads it unasked

    asked = appeal(client, rule).content.decode()
    listed = StringIO()
    call_command("compliance_instructions_review", stdout=listed)
    queue = signed_in(sam).get(reverse("admin:compliance_briefreview_changelist")).content.decode()
    review = (
        signed_in(sam).get(reverse("admin:compliance_briefreview_change", args=[rule.pk])).content.decode()
    )
    decide(sam, rule, "approve", "The score is free and the fee does not depend on it")
    with pytest.raises(CampaignError, match="two of them approve"):
        campaign_transition(campaign=draft, to="live")
    decide(tara, rule, "approve", "Agreed: nothing is conditioned on the rating")
    campaign_transition(campaign=draft, to="live")

    assert "ask JoyBack's team to read them" in page
    assert "Two of them must approve the exact words" in asked
    assert "refused for sure" in queue and "conditions the reward on a sentiment" in review
    assert (
        f"{rule.pk}\tAlpaca Coffee" in listed.getvalue()
        and "refused_for_sure_asked_by_brand" in listed.getvalue()
    )
    assert Campaign.objects.get(pk=draft.pk).status == "live"


def test_changed_words_need_a_new_request(client, alice, draft, sam):
    rule = share_instructions(draft, RATING_IS_YOURS)
    client.force_login(alice)
    appeal(client, rule)

    rule = share_instructions(draft, RATING_IS_YOURS + " Five stars are not needed either.")

    assert instructions_awaiting_review() == []
    assert (
        "ask JoyBack's team to read them"
        in client.get(reverse("campaign_detail", args=["alpaca", draft.pk])).content.decode()
    )


def test_a_request_for_words_not_refused_for_sure_is_refused_and_nothing_recorded(client, alice, draft):
    rule = share_instructions(draft, HONEST)
    client.force_login(alice)

    answer = appeal(client, rule).content.decode()

    assert "there is nothing to ask" in answer
    assert not ComplianceDecision.objects.filter(evidence__has_key="appealed_instructions").exists()


def test_another_brand_and_a_viewer_cannot_ask_for_a_brands_words(client, draft, bob, make_user):
    rule = share_instructions(draft, RATING_IS_YOURS)
    viewer = make_user("vic@alpaca.example")
    Membership.objects.create(brand=draft.brand, user=viewer, role="viewer")

    client.force_login(bob)
    assert appeal(client, rule).status_code in (403, 404)
    client.force_login(viewer)
    assert appeal(client, rule).status_code == 403

    assert not ComplianceDecision.objects.filter(evidence__has_key="appealed_instructions").exists()


def test_an_approval_by_one_staff_member_never_lifts_a_sure_refusal(draft, sam):
    """Say one staff member approved these words before the patterns were sure of them (a policy
    edited since): that approval does not stand in for the two a sure refusal needs."""
    rule = share_instructions(draft, RATING_IS_YOURS)
    with transaction.atomic():
        decision_record(
            brand_id=draft.brand_id,
            kind=DecisionKind.LAUNCH_LINT,
            verdict="compliant",
            reasons=["instructions_review"],
            evidence={
                "rule_id": rule.pk,
                "approved_instructions": RATING_IS_YOURS,
                "note": "Approved when nothing was sure of it",
                "second_needed": False,
            },
            campaign_id=draft.pk,
            decided_by=sam,
        )

    with pytest.raises(CampaignError, match="conditions the reward on a sentiment"):
        campaign_transition(campaign=draft, to="live")


def test_a_running_campaigns_words_cannot_be_sent_this_way(client, alice, summer):
    rule = summer.rules.first()
    ActionRule.objects.filter(pk=rule.pk).update(instructions=RATING_IS_YOURS)  # as if saved before a pattern

    client.force_login(alice)
    answer = appeal(client, rule).content.decode()

    assert "Only a draft campaign" in answer
    assert not ComplianceDecision.objects.filter(evidence__has_key="appealed_instructions").exists()


def test_the_demo_has_two_staff_members_who_review_briefs():
    call_command("demo_seed", stdout=StringIO())

    staff = get_user_model().objects.filter(is_staff=True)
    reviewers = {user.email for user in staff if user.has_perm("compliance.review_brief")}

    assert {ADMIN_EMAIL, STAFF_EMAIL} <= reviewers


def test_an_account_a_staff_member_made_is_not_their_second_approver(client, alice, draft, sam, tara):
    """One person with two accounts is one person: the second approval must come from someone the
    first did not set up."""
    access_change_record(actor=sam, subject=tara, kind=AccessChangeKind.ACCOUNT)
    rule = share_instructions(draft, RATING_IS_YOURS)
    client.force_login(alice)
    appeal(client, rule)

    decide(sam, rule, "approve", "The score is free")
    refused = decide(tara, rule, "approve", "Agreed").content.decode()

    assert "cannot be the second person here" in refused
    with pytest.raises(CampaignError):
        campaign_transition(campaign=draft, to="live")
