from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from campaigns.models import ActionRule
from compliance.selectors import (
    instructions_awaiting_review,
    instructions_sure_refusals,
    instructions_under_review,
    instructions_unsure,
    read_once,
)
from compliance.services import ComplianceError, instructions_approve


class Command(BaseCommand):
    help = (
        "JoyBack's review of rule instructions the linter could not read as allowed: without --approve, "
        "list the rules waiting; with --approve RULE_ID --staff EMAIL --note WHY, approve that rule's "
        "words that wait (--text: refused unless it is exactly those words)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--approve", type=int)
        parser.add_argument("--staff", default="")
        parser.add_argument("--note", default="")
        parser.add_argument("--text", default=None)

    def handle(self, *args, approve=None, staff="", note="", text=None, **options):
        if approve is None:
            with read_once():
                self._waiting_list()
            return
        user = get_user_model().objects.filter(email=staff).first()
        rule = ActionRule.objects.select_related("campaign").filter(pk=approve).first()
        if user is None or rule is None:
            raise CommandError("No such staff member or rule.")
        try:
            instructions_approve(rule=rule, approved_by=user, note=note, words=text)
        except ComplianceError as refused:
            raise CommandError(str(refused)) from refused
        self.stdout.write(f"approved the instructions of rule {rule.pk}")

    def _waiting_list(self):
        for rule in instructions_awaiting_review():
            words = instructions_under_review(rule=rule)
            kinds = sorted({u.kind for u in instructions_unsure(rule=rule, words=words) if u.kind})
            if instructions_sure_refusals(rule=rule, words=words):
                kinds = ["refused_for_sure_asked_by_brand"]
            waits = ",".join(kinds) or "not_understood"
            self.stdout.write(f"{rule.pk}\t{rule.campaign.brand.name}\t{rule.campaign}\t{waits}\t{words}")
