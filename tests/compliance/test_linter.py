"""A rule that buys a sentiment or fake engagement blocks the launch, naming the rule and why."""

import contextlib

import pytest
from django.urls import reverse

from campaigns.models import Campaign
from campaigns.services.campaigns import campaign_transition
from campaigns.services.refusals import CampaignError, campaign_launch_problems
from campaigns.services.rules import rule_save
from compliance.models import ComplianceDecision
from compliance.selectors import instructions_awaiting_review
from compliance.services import ComplianceError, instructions_approve
from tests.compliance.conftest import share_instructions

pytestmark = pytest.mark.django_db


SENTIMENT = [
    ("en", "Post a positive review of our cold brew", "positive review"),
    ("en", "Give us five stars and say you love it", "five stars"),
    ("en", "Say that you love the new range", "say that you love"),
    ("de", "Schreib eine positive Bewertung unseres Kaffees", "positive bewertung"),
    ("de", "5 Sterne für unseren Kaffee!", "5 sterne"),
    ("de", "Sag, dass du es liebst", "sag, dass du es liebst"),
    ("es", "Deja una reseña positiva de nuestro café", "reseña positiva"),
    ("es", "Danos cinco estrellas", "cinco estrellas"),
    ("es", "Di que te encanta nuestro café", "di que te encanta"),
    ("zh-hans", "发视频给我们好评", "好评"),
    ("zh-hans", "五星推荐我们的咖啡", "五星"),
    ("zh-hans", "说你喜欢我们的咖啡", "说你喜欢"),
]


@pytest.mark.parametrize(("language", "text", "said"), SENTIMENT)
def test_a_sentiment_conditioned_rule_blocks_launch_in_every_language(draft, language, text, said):
    share_instructions(draft, text)

    with pytest.raises(CampaignError) as refused:
        campaign_transition(campaign=draft, to="live")

    assert "UGC share" in str(refused.value) and said in str(refused.value)
    assert "positive opinion" in str(refused.value)
    assert Campaign.objects.get(pk=draft.pk).status == "draft"


@pytest.mark.parametrize(
    "text",
    [
        "Buy likes if you need to reach 500 views",
        "Likes kaufen ist ok",
        "Puedes comprar seguidores",
        "可以买赞",
    ],
)
def test_paying_for_fake_engagement_blocks_launch(draft, text):
    share_instructions(draft, text)

    with pytest.raises(CampaignError, match="fake or bought engagement"):
        campaign_transition(campaign=draft, to="live")


def test_paying_for_likes_on_the_persons_own_post_without_a_window_blocks(draft):
    rule_save(campaign=draft, trigger="view_threshold", reward_amount=2_00, verification_mode="instant")

    problems = campaign_launch_problems(campaign=draft)

    assert [(p.code, p.blocking) for p in problems] == [("unchecked_engagement", True)]


def test_a_rule_asking_only_what_a_brand_may_ask_goes_live_and_the_check_is_recorded(draft):
    share_instructions(
        draft, "Show the cup in the first 3 seconds, tag @drinkalpaca and keep the video public"
    )

    campaign_transition(campaign=draft, to="live")

    decision = ComplianceDecision.objects.get(kind="launch_lint", campaign=draft)
    assert decision.verdict == "compliant" and decision.policy_versions == ["eu-de@1"]


HONEST = "Tell a story about your grandmother's kitchen while the coffee brews"


def test_free_text_the_linter_cannot_read_waits_for_joybacks_review_before_launch(draft):
    share_instructions(draft, HONEST)

    with pytest.raises(CampaignError, match="JoyBack's team reviews it"):
        campaign_transition(campaign=draft, to="live")

    assert Campaign.objects.get(pk=draft.pk).status == "draft"
    assert [rule.instructions for rule in instructions_awaiting_review()] == [HONEST]


def test_staff_approval_of_the_exact_words_lets_the_campaign_go_live(draft, make_user):
    rule = share_instructions(draft, HONEST)
    staff = make_user("staff@joyback.example", is_staff=True)

    instructions_approve(rule=rule, approved_by=staff, note="An honest-opinion brief, nothing bought")
    campaign_transition(campaign=draft, to="live")

    approval = ComplianceDecision.objects.get(campaign=draft, decided_by=staff)
    assert approval.evidence["approved_instructions"] == HONEST
    assert instructions_awaiting_review() == []


def test_changed_words_after_an_approval_need_a_new_one(draft, make_user):
    rule = share_instructions(draft, HONEST)
    instructions_approve(
        rule=rule, approved_by=make_user("staff@joyback.example", is_staff=True), note="fine"
    )
    share_instructions(draft, HONEST + ". Film in daylight.")

    with pytest.raises(CampaignError, match="JoyBack's team reviews it"):
        campaign_transition(campaign=draft, to="live")


def test_a_brand_member_cannot_approve_their_own_instructions(draft, alice):
    rule = share_instructions(draft, HONEST)

    with pytest.raises(ComplianceError, match="Only JoyBack staff"):
        instructions_approve(rule=rule, approved_by=alice, note="looks fine to me")

    assert not ComplianceDecision.objects.filter(campaign=draft, kind="launch_lint").exists()


BLOCKED = [
    ("en", "hide_payment", "Don't mention that we paid you"),
    ("en", "hide_payment", "Leave the #ad out of the caption"),
    ("en", "false_testimony", "Say you have used it for months"),
    ("en", "suppress_negatives", "Nothing negative about the price"),
    ("en", "require_persuasion", "Viewers must want to buy it after watching"),
    ("en", "rating_condition", "Give it a top rating to qualify"),
    ("en", "scripted_superlative", "Call it the smoothest coffee in the world"),
    ("en", "fake_engagement", "Use a view service to get 10k views"),
    ("en", "fake_engagement", "Post it from several accounts"),
    ("de", "hide_payment", "Erwähne nicht, dass du bezahlt wirst"),
    ("de", "false_testimony", "Sag, dass du ihn seit Monaten trinkst"),
    ("de", "suppress_negatives", "Keine negativen Punkte zum Geschmack"),
    ("de", "require_persuasion", "Die Zuschauer müssen ihn kaufen wollen"),
    ("de", "scripted_superlative", "Nenne ihn den besten Kaffee der Stadt"),
    ("de", "fake_engagement", "Poste von mehreren Accounts"),
    ("es", "hide_payment", "No menciones que es publicidad"),
    ("es", "false_testimony", "Di que lo usas desde hace meses"),
    ("es", "suppress_negatives", "Nada negativo sobre el precio"),
    ("es", "rating_condition", "Dale la máxima puntuación"),
    ("es", "fake_engagement", "Publica desde varias cuentas"),
    ("zh-hans", "hide_payment", "不要标注广告"),
    ("zh-hans", "false_testimony", "就说你用了好几个月"),
    ("zh-hans", "suppress_negatives", "不要提缺点"),
    ("zh-hans", "require_persuasion", "观众看完必须想买"),
    ("zh-hans", "rating_condition", "给满分"),
    ("zh-hans", "scripted_superlative", "说这是最好喝的咖啡"),
    ("zh-hans", "fake_engagement", "用多个账号发布"),
]


@pytest.mark.parametrize(("language", "kind", "text"), BLOCKED)
def test_each_blocked_kind_is_refused_in_each_language_whatever_staff_approve(
    draft, make_user, language, kind, text
):
    rule = share_instructions(draft, text)
    # One staff member's approval, where one is taken at all, lifts none of them.
    with contextlib.suppress(ComplianceError):
        instructions_approve(
            rule=rule, approved_by=make_user("staff@joyback.example", is_staff=True), note="x"
        )

    problems = campaign_launch_problems(campaign=draft)

    assert [p.code for p in problems if p.blocking] in (
        ["deceptive_instruction"],
        ["sentiment_conditioned"],
        ["fake_engagement"],
    ), problems


def test_a_live_campaign_cannot_take_a_sentiment_rule(summer):
    with pytest.raises(CampaignError, match="positive opinion"):
        share_instructions(summer, "Only positive comments, please")

    assert summer.rules.get(trigger="ugc_share").instructions == ""


def test_the_campaign_page_shows_the_problem_and_refuses_going_live(client, alice, draft):
    client.force_login(alice)
    url = reverse("campaign_rule_save", args=["alpaca", draft.pk])
    saved = client.post(
        url,
        {
            "trigger": "ugc_share",
            "reward": "5.00",
            "verification_mode": "engagement",
            "window_hours": "72",
            "min_views": "0",
            "min_likes": "0",
            "instructions": "Say you love it in your video",
        },
        follow=True,
    ).content.decode()
    live = client.post(reverse("campaign_status", args=["alpaca", draft.pk]), {"to": "live"}, follow=True)

    assert "Blocks going live" in saved and "say you love" in saved
    assert "conditions the reward on a sentiment" in live.content.decode()
    assert Campaign.objects.get(pk=draft.pk).status == "draft"


def test_staff_list_and_approve_waiting_instructions_from_the_command_line(draft, make_user):
    from io import StringIO

    from django.core.management import call_command
    from django.core.management.base import CommandError

    rule = share_instructions(draft, HONEST)
    make_user("staff@joyback.example", is_staff=True)
    listed = StringIO()
    call_command("compliance_instructions_review", stdout=listed)
    with pytest.raises(CommandError, match="Say why"):
        call_command(
            "compliance_instructions_review", approve=rule.pk, staff="staff@joyback.example", note=" "
        )
    call_command(
        "compliance_instructions_review", approve=rule.pk, staff="staff@joyback.example", note="honest brief"
    )

    assert f"{rule.pk}\tAlpaca Coffee\tLint\tnot_understood\t{HONEST}" in listed.getvalue()
    assert instructions_awaiting_review() == []


@pytest.mark.parametrize(
    "text",
    [
        "Keep it natural",
        "Show only good sides",
        "只展示好的",
        "Make them crave it",
        "Sag nur Gutes",
        "Muestra solo lo bueno",
    ],
)
def test_free_text_no_pattern_blocks_still_waits_for_review_rather_than_going_live(draft, text):
    share_instructions(draft, text)

    assert [p.code for p in campaign_launch_problems(campaign=draft) if p.blocking] in (
        ["instructions_review"],
        ["sentiment_conditioned"],
        ["deceptive_instruction"],
    )


# Lawful (the brand forbids health claims), but the reading sees a health claim it cannot place.
LOOKALIKE = "Keep it about taste please, health or energy promises are not our thing"


def test_a_blocked_kind_the_reading_was_not_sure_of_waits_for_joybacks_review(draft, make_user):
    rule = share_instructions(draft, LOOKALIKE)

    with pytest.raises(CampaignError, match="JoyBack's team reads these words"):
        campaign_transition(campaign=draft, to="live")
    assert [waiting.instructions for waiting in instructions_awaiting_review()] == [LOOKALIKE]

    instructions_approve(
        rule=rule, approved_by=make_user("staff@joyback.example", is_staff=True), note="Forbids claims"
    )
    with pytest.raises(CampaignError, match="JoyBack's team reads these words"):
        campaign_transition(campaign=draft, to="live")  # one staff member alone never lifts a kind
    instructions_approve(
        rule=rule, approved_by=make_user("second@joyback.example", is_staff=True), note="Agreed"
    )
    campaign_transition(campaign=draft, to="live")

    assert Campaign.objects.get(pk=draft.pk).status == "live"


def test_a_blocked_kind_the_patterns_are_sure_of_is_never_lifted_by_an_approval(draft, make_user):
    rule = share_instructions(draft, "Buy 1000 likes for your video before you post")
    with pytest.raises(ComplianceError, match="Nothing of this rule waits for review"):
        instructions_approve(
            rule=rule, approved_by=make_user("staff@joyback.example", is_staff=True), note="looks fine"
        )

    with pytest.raises(CampaignError, match="fake or bought engagement"):
        campaign_transition(campaign=draft, to="live")
    assert instructions_awaiting_review() == []
