from django import template
from django.utils.translation import get_language

from joyback.money import money_format

register = template.Library()


@register.simple_tag
def money(amount: int, currency: str) -> str:
    return money_format(amount, currency, locale=get_language() or "en")


@register.filter
def absolute(amount: int) -> int:
    return abs(amount)
