# ruff: noqa: RUF001 - the Chinese captions use Chinese punctuation on purpose
"""The caption checker on --captions captions: captions per second, and the p99 of one check.

No database and no HTTP: the checker is pure, over the policies of compliance/policies/policies.toml
compiled once (as a worker process holds them). The captions are a mix a campaign sees: disclosed up
front, buried among end hashtags, ambiguous tags, none at all, below the fold, in the four languages,
for campaigns in one and in two jurisdictions, from a few words to TikTok's 2,200 characters.
"""

import os
import random
import time

from tests.bench.server import percentile

P99_TARGET_MS = 1.0
# The blind set's target: agreement with the expected verdicts, failing closed, and no unsafe pass.
AGREEMENT_TARGET = 95.0

HEADS = [
    "Ad · Paid partnership with Alpaca Coffee.",
    "Werbung · Bezahlte Partnerschaft mit Alpaca Coffee.",
    "Publicidad · Colaboración pagada con Alpaca Coffee.",
    "广告 · 与Alpaca Coffee的付费合作",
    "",
    "Thanks Alpaca Coffee!",
    "#sp",
]
BODIES = [
    "Loving the summer range, cold brew over ice with a little oat milk.",
    "Mein Kaffee am Morgen, kalt aufgebrüht mit Hafermilch.",
    "Mi café de la mañana con leche de avena y mucho hielo.",
    "早上的咖啡，加冰和燕麦奶，夏天的味道。",
]
TAILS = ["", "#ad", "#coffee #summer #coldbrew #morning #ad", "#werbung", "#publi", "#广告"]


def captions(count: int, seed: int = 7) -> list[tuple[str, str, str]]:
    rng = random.Random(seed)
    made = []
    for _ in range(count):
        body = " ".join(rng.choice(BODIES) for _ in range(rng.choice([1, 1, 2, 4, 30])))
        caption = f"{rng.choice(HEADS)} {body} {rng.choice(TAILS)}"[:2200]
        made.append((caption, rng.choice(["DE", "US", "ES", "CN", "GB", "US,DE"]), rng.choice(["en", "de"])))
    return made


def agreement(note) -> dict:
    """The labelled evaluation sets (tests/compliance/eval/) as the claim flow and the launch run
    them, each part on its own (the set written beside the checker, the blind set's dev and holdout
    halves, the whole): agreement with the expected verdicts, unsafe passes, safe rate, and the
    review cost of failing closed (the share of what is fine sent to a person); and the p99 of one
    check over the own set's captions (each caption's best of 5 runs: the hard cases' cost, not a
    shared machine's pauses)."""
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from django.conf import settings

    if not settings.configured:  # the linter's messages are translated: `--only caption` sets Django up
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        os.environ.setdefault("JOYBACK_ENV", "test")
        # deferred: the bench sets Django up (its settings, per process) before importing apps
        import django

        django.setup()
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from tests.compliance.eval.evaluate import PARTS, blind_present, captions_evaluate, percentile, report

    parts = {}
    every = tuple(PARTS)  # each part, then the blind and whole totals, as the evaluation names them
    for part in every if blind_present() else ("own",):
        captions, rules = report(part)
        parts[part] = (captions, rules)
        note(f"compliance evaluation, {part}: captions {captions.summary()}; rules {rules.summary()}")
        if part.startswith(("own", "blind_dev")):  # the holdouts' rows are not shown
            for row in (captions.wrong + rules.wrong)[:10]:
                note(f"  {part} disagrees: {row}")
    captions = parts["own"][0]
    best = [
        min(runs)
        for runs in zip(*(captions_evaluate().timings_ms for _ in range(4)), captions.timings_ms, strict=True)
    ]
    note(
        f"compliance check over the own set's captions: p50 {percentile(best, 0.5) * 1000:.0f} µs, "
        f"p99 {percentile(best, 0.99) * 1000:.0f} µs"
    )

    def scored(captions, rules) -> dict:
        total = captions.total + rules.total
        return {
            "agreement": 100.0 * (captions.agreed + rules.agreed) / total if total else 0.0,
            "unsafe": len(captions.unsafe) + len(rules.unsafe),
            "safe_rate": 100.0 * (total - len(captions.unsafe) - len(rules.unsafe)) / total if total else 0.0,
            "caption_review_cost": captions.review_cost,
            "rule_review_cost": rules.review_cost,
            "caption_refused": captions.refused_rate,
            "rule_refused": rules.refused_rate,
            "decided": 100.0 * (captions.decided + rules.decided) / total if total else 0.0,
            "decided_agreement": 100.0
            * (captions.decided_agreed + rules.decided_agreed)
            / (captions.decided + rules.decided)
            if captions.decided + rules.decided
            else 0.0,
            "rule_decided": rules.decided_rate,
            "rule_decided_agreement": rules.decided_agreement,
        }

    return {
        **scored(*parts["own"]),
        "parts": {part: scored(*results) for part, results in parts.items()},
        "check_p99_ms": percentile(best, 0.99),
    }


def measure(args, note) -> dict:
    # deferred: the bench sets Django up (its settings, per process) before importing apps
    from compliance.checker import caption_check, compiled, policies_for_countries, policies_from_source

    policies = [compiled(code=p["code"], version=1, data=p) for p in policies_from_source()]
    by_countries = {
        key: policies_for_countries(policies, key.split(","))
        for key in ("DE", "US", "ES", "CN", "GB", "US,DE")
    }
    work = captions(args.captions)
    for caption, countries, language in work[:1000]:  # compile every (policy, languages, brand) once
        caption_check(caption, policies=by_countries[countries], languages=[language], brand="Alpaca Coffee")
    timings = []
    verdicts: dict[str, int] = {}
    clock = time.perf_counter
    began = clock()
    for caption, countries, language in work:
        start = clock()
        verdict = caption_check(
            caption, policies=by_countries[countries], languages=[language], brand="Alpaca Coffee"
        )
        timings.append((clock() - start) * 1000)
        verdicts[verdict.verdict] = verdicts.get(verdict.verdict, 0) + 1
    wall = clock() - began
    note(
        f"caption: {len(work)} captions (mean {sum(len(c) for c, _, _ in work) / len(work):.0f} chars) "
        f"in {wall:.2f} s, one process; p50 {percentile(timings, 0.5) * 1000:.0f} µs, "
        f"p99 {percentile(timings, 0.99) * 1000:.0f} µs, max {max(timings):.2f} ms; verdicts {verdicts}"
    )
    return {"rate": len(work) / wall, "p99_ms": percentile(timings, 0.99), "evaluation": agreement(note)}
