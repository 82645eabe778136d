from django import template

from verification.posting import failure_text

register = template.Library()


@register.filter
def post_failure(code: str) -> str:
    """Why a video JoyBack tried to post did not go out, in the reader's language."""
    return failure_text(code)


@register.filter
def gate_for(gates: dict, trigger: str) -> str:
    """The purchase gate's words for this step, "" when it is open."""
    return (gates or {}).get(trigger, "")
