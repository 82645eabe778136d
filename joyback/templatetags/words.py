from django import template

from joyback.words import said as said_words

register = template.Library()


@register.filter
def said(code, kind):
    """{{ claim.reason|said:"claim" }}: the code in words, in the reader's language."""
    return said_words(kind, code)
