from django import template
from django.utils.translation import gettext as _

from payouts.notifications import reason_text

register = template.Library()


@register.filter
def bank_reason(code: str) -> str:
    """A bank's ISO 20022 reason code in words; the code itself is shown beside it, for finance."""
    if not code:
        return ""
    if code == "VOP":
        return _("waiting for the person's answer to the bank's name check")
    if code == "REPLACED":
        return _(
            "the person replaced their bank details before it was sent; a new payout goes to the new ones"
        )
    return reason_text(code)
