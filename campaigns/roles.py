"""Who may do what in a brand. Views name the capability, never a list of roles."""

from campaigns.models import Role

READ = frozenset(Role)
EDIT_CAMPAIGNS = frozenset({Role.OWNER, Role.MARKETER})
FUND = frozenset({Role.OWNER, Role.FINANCE})
MANAGE_MEMBERS = frozenset({Role.OWNER})
MANAGE_API = frozenset({Role.OWNER})
REVIEW = frozenset({Role.OWNER, Role.MARKETER})
# Who must set up a second factor before moving money (staff too, whatever their role).
NEEDS_MFA = frozenset({Role.OWNER, Role.FINANCE})
