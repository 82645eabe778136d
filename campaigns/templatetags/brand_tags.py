from django import template

from campaigns import roles
from campaigns.selectors import brand_members_who_can

register = template.Library()


@register.inclusion_tag("campaigns/_role_help.html")
def role_help(membership):
    """What this member can do on the page, and who does what their role cannot."""
    can_fund = membership.role in roles.FUND
    return {
        "what": roles.WHAT_YOU_CAN_DO.get(membership.role, ""),
        "funders": [] if can_fund else brand_members_who_can(brand=membership.brand, capability=roles.FUND),
    }


@register.inclusion_tag("campaigns/_who_funds.html")
def who_funds(membership):
    return {"funders": brand_members_who_can(brand=membership.brand, capability=roles.FUND)}
