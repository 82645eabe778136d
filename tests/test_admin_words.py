"""The admin names every kind of record in plain English: no plural made by a blind "s"."""

import re

from django.apps import apps


def test_no_model_is_named_in_the_admin_with_a_plural_made_by_a_blind_s():
    wrong = [
        f"{model._meta.label}: {model._meta.verbose_name_plural}"
        for model in apps.get_models()
        # "termss", "batchs", "publishs", "boxs": a noun ending in s, ch, sh or x takes "es".
        if re.search(r"(ss|chs|shs|xs)$", str(model._meta.verbose_name_plural))
    ]
    assert wrong == []
