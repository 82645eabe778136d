from django.core.management.base import BaseCommand, CommandError

from compliance.selectors import audit_chain_problems


class Command(BaseCommand):
    help = "Verify the hash chain of every compliance decision; exits non-zero and lists any break."

    def handle(self, *args, **options):
        problems = audit_chain_problems()
        for problem in problems:
            self.stderr.write(problem)
        if problems:
            raise CommandError(f"{len(problems)} break(s) in the compliance decision record")
        self.stdout.write("compliance decision record verifies")
