"""Who may do what in a brand. Views name the capability, never a list of roles."""

from django.utils.translation import gettext_lazy as _

from campaigns.models import Role

READ = frozenset(Role)
EDIT_CAMPAIGNS = frozenset({Role.OWNER, Role.MARKETER})
FUND = frozenset({Role.OWNER, Role.FINANCE})
MANAGE_MEMBERS = frozenset({Role.OWNER})
MANAGE_API = frozenset({Role.OWNER})
REVIEW = frozenset({Role.OWNER, Role.MARKETER})
# Who must set up a second factor before moving money (staff too, whatever their role).

# Said where a member works: what their role lets them do here, and who does the rest.
WHAT_YOU_CAN_DO = {
    Role.OWNER: _(
        "As the owner you can do everything here: campaigns, funding, payouts, members and API keys."
    ),
    Role.FINANCE: _(
        "As a finance member you fund campaigns, approve payouts and reconcile bank statements. "
        "Campaigns are written by the owner and marketers."
    ),
    Role.MARKETER: _(
        "As a marketer you create and edit campaigns, take them live and review claims. "
        "Funding and payouts are done by the owner or a finance member."
    ),
    Role.VIEWER: _(
        "As a viewer you can see everything here but change nothing. The owner can change your role."
    ),
}
