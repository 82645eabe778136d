"""What refuses a change to a brand or a campaign: the error, and the launch checks of the apps to
the right."""

from dataclasses import dataclass

from django.conf import settings
from django.utils.module_loading import import_string

from campaigns.models import (
    Campaign,
)


class CampaignError(Exception):
    """A refused campaign operation; the message is for the person who tried it, and `problems` the
    launch checks' findings when those refused it."""

    def __init__(self, message: str = "", *, problems: tuple = ()):
        super().__init__(message)
        self.problems = tuple(problems)


@dataclass(frozen=True)
class LaunchProblem:
    """What a launch check found: a blocking one refuses going live, the rest are warnings."""

    code: str
    message: str
    blocking: bool = True
    rule_id: int | None = None
    # Only a person's review stands in the way: JoyBack's team reads the words and may let them go.
    reviewable: bool = False
    # Refused for sure, and the brand may ask JoyBack's team to read the words (rule_id's).
    appealable: bool = False


def campaign_launch_problems(*, campaign: Campaign, launching: bool = False) -> list[LaunchProblem]:
    """The checks of apps to the right (settings.CAMPAIGN_LAUNCH_CHECKS, dotted paths), which
    campaigns may not import: each returns its problems with the campaign as it stands."""
    problems: list[LaunchProblem] = []
    for path in getattr(settings, "CAMPAIGN_LAUNCH_CHECKS", []):
        problems += import_string(path)(campaign=campaign, launching=launching)
    return problems


def launch_problems_refuse(campaign: Campaign, *, launching: bool = False) -> None:
    blocking = [p for p in campaign_launch_problems(campaign=campaign, launching=launching) if p.blocking]
    if blocking:
        raise CampaignError(" ".join(problem.message for problem in blocking), problems=blocking)
