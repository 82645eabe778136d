"""The caption checker: is a post's disclosure there, in the right language, where people see it?

Pure Python over policy data (no database): the services hand it the policies in force, the bench
runs it on its own. A policy's patterns are compiled once per (policy, version) and once more per
(languages, brand) the first time a campaign needs them, then kept: a check is a handful of
precompiled regular-expression searches over one caption.
"""

import re
import tomllib
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

CHECKER_VERSION = "caption-checker/1.0"
SOURCE = Path(__file__).parent / "policies" / "policies.toml"
LANGUAGES = ("en", "de", "es", "zh-hans")

COMPLIANT, NON_COMPLIANT, NEEDS_REVIEW = "compliant", "non_compliant", "needs_review"

# What each finding does to the verdict; anything else is advice that leaves it compliant.
FAILING = frozenset(
    {
        "missing",
        "ambiguous_only",
        "not_in_post",
        "wrong_language",
        "below_the_fold",
        "not_first",
        "buried_in_hashtags",
        "contest_word_missing",
        "label_off",
        "brand_not_named",
    }
)


def policies_from_source(path: Path = SOURCE) -> list[dict]:
    """The policies of the readable source, each with the language tables copied in."""
    raw = tomllib.loads(path.read_text("utf-8"))
    return [{**policy, "languages": raw["languages"]} for policy in raw["policy"]]


def _cjk(term: str) -> bool:
    return any(unicodedata.east_asian_width(char) in "WF" for char in term)


def _alternation(terms: Iterable[str]) -> str:
    ordered = sorted({t.casefold() for t in terms if t}, key=len, reverse=True)
    return "|".join(re.escape(term).replace(r"\ ", r"\s+") for term in ordered)


def _term_pattern(terms: Iterable[str], *, hashtag_only: bool = False) -> re.Pattern | None:
    """Whole words, with or without a leading '#'; CJK terms anywhere (they have no word breaks)."""
    terms = list(terms)
    latin = _alternation(t for t in terms if not _cjk(t))
    cjk = _alternation(t for t in terms if _cjk(t))
    parts = []
    if latin:
        parts.append((r"#(?:" if hashtag_only else r"(?<!\w)#?(?:") + latin + r")(?!\w)")
    if cjk:
        parts.append(r"#?(?:" + cjk + ")")
    return re.compile("|".join(parts)) if parts else None


def _brand_pattern(brand: str) -> str:
    words = re.findall(r"\w+", brand.casefold())
    return r"@?" + r"[\s_.-]*".join(re.escape(word) for word in words) if words else ""


def normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text or "").casefold()


@dataclass
class Matcher:
    """One policy compiled for one campaign's languages and brand."""

    disclosure: re.Pattern | None
    other_languages: re.Pattern | None
    ambiguous: re.Pattern | None
    thanks_brand: re.Pattern | None
    negation: re.Pattern | None
    contest: re.Pattern | None
    contest_unclear: re.Pattern | None
    brand: re.Pattern | None


@dataclass
class CompiledPolicy:
    code: str
    version: int
    data: dict
    _matchers: dict = field(default_factory=dict, repr=False)

    @property
    def label(self) -> str:
        return f"{self.code}@{self.version}"

    @property
    def require_first(self) -> bool:
        return bool(self.data.get("require_first"))

    @property
    def require_brand(self) -> bool:
        return bool(self.data.get("require_brand"))

    @property
    def label_required(self) -> bool:
        return bool(self.data.get("label_required", True))

    @property
    def cluster_min(self) -> int:
        return int(self.data.get("hashtag_cluster_min", 3))

    def visible_chars(self, platform: str) -> int:
        limits = self.data.get("visible_chars", {})
        return int(limits.get(platform, limits.get("default", 100)))

    def allowed_languages(self, languages: Sequence[str]) -> tuple[str, ...]:
        known = self.data.get("languages", {})
        wanted = [*self.data.get("national_languages", []), *languages]
        return tuple(dict.fromkeys(code for code in wanted if code in known)) or (
            ("en",) if "en" in known else ()
        )

    def matcher(self, *, languages: Sequence[str], brand: str) -> Matcher:
        key = (tuple(languages), brand)
        found = self._matchers.get(key)
        if found is None:
            if len(self._matchers) > 4096:  # a bound on memory, not a tuning knob
                self._matchers.clear()
            found = self._matchers[key] = self._compile(languages=languages, brand=brand)
        return found

    def _compile(self, *, languages: Sequence[str], brand: str) -> Matcher:
        tables = self.data.get("languages", {})
        allowed = self.allowed_languages(languages)
        mine = [tables[code] for code in allowed]
        others = [table for code, table in tables.items() if code not in allowed]

        def terms(key, group):
            return [term for table in group for term in table.get(key, [])]

        brand_re = _brand_pattern(brand)
        thanks = None
        if brand_re:
            thanks_terms = terms("thanks", mine)
            latin = _alternation(t for t in thanks_terms if not _cjk(t))
            cjk = _alternation(t for t in thanks_terms if _cjk(t))
            alternatives = ([rf"(?<!\w)#?(?:{latin})"] if latin else []) + ([rf"#?(?:{cjk})"] if cjk else [])
            if alternatives:
                thanks = re.compile(rf"(?:{'|'.join(alternatives)})[\s_]*(?:to\s+)?{brand_re}")
        other_disclosures = [t for t in terms("disclosures", others) if t not in terms("disclosures", mine)]
        return Matcher(
            disclosure=_term_pattern(terms("disclosures", mine)),
            other_languages=_term_pattern(other_disclosures),
            ambiguous=_term_pattern(terms("ambiguous", mine), hashtag_only=True),
            thanks_brand=thanks,
            negation=_term_pattern(terms("negations", mine)),
            contest=_term_pattern(terms("contest", mine)),
            contest_unclear=_term_pattern(terms("contest_unclear", mine)),
            brand=re.compile(brand_re) if brand_re else None,
        )

    def wording(self, *, language: str, brand: str, contest: bool = False) -> str:
        table = self.data.get("languages", {}).get(language) or self.data["languages"]["en"]
        template = table.get("contest_wording" if contest else "wording") or table["wording"]
        return template.replace("{brand}", brand)


_COMPILED: dict[tuple, CompiledPolicy] = {}


def compiled(*, code: str, version: int, data: dict) -> CompiledPolicy:
    """The compiled form of one policy version, made once per process."""
    key = (code, version)
    policy = _COMPILED.get(key)
    if policy is None or (policy.data is not data and policy.data != data):
        policy = _COMPILED[key] = CompiledPolicy(code=code, version=version, data=data)
    return policy


@dataclass(frozen=True)
class CaptionVerdict:
    verdict: str
    reasons: tuple[str, ...]
    advisories: tuple[str, ...]
    policies: tuple[str, ...]
    checker_version: str = CHECKER_VERSION

    @property
    def passed(self) -> bool:
        return self.verdict == COMPLIANT


def _trailing_hashtags(text: str) -> tuple[int, int]:
    """(where the run of hashtags that ends the caption starts, how many there are)."""
    tokens = text.split()
    count = 0
    for token in reversed(tokens):
        if not token.startswith("#"):
            break
        count += 1
    position = len(text)
    for token in tokens[len(tokens) - count :][::-1]:
        position = text.rfind(token, 0, position)
    return position, count


_FIRST_WORD = re.compile(r"\w")


def _findings(
    policy: CompiledPolicy,
    text: str,
    *,
    platform: str,
    languages: Sequence[str],
    brand: str,
    label_on: bool | None,
    contest: bool,
    elsewhere: Sequence[str],
) -> tuple[list[str], list[str]]:
    m = policy.matcher(languages=languages, brand=brand)
    reasons: list[str] = []
    advisories: list[str] = []
    hits = list(m.disclosure.finditer(text)) if m.disclosure else []
    if not hits:
        if m.disclosure and any(m.disclosure.search(normalize(other)) for other in elsewhere):
            reasons.append("not_in_post")
        elif m.other_languages and m.other_languages.search(text):
            reasons.append("wrong_language")
        elif (m.ambiguous and m.ambiguous.search(text)) or (m.thanks_brand and m.thanks_brand.search(text)):
            reasons.append("ambiguous_only")
        else:
            reasons.append("missing")
        return reasons, advisories
    first = hits[0]
    if first.end() > policy.visible_chars(platform):
        reasons.append("below_the_fold")
    elif policy.require_first:
        lead = _FIRST_WORD.search(text)
        if lead and first.start() > lead.start():
            reasons.append("not_first")
    start, count = _trailing_hashtags(text)
    if count >= policy.cluster_min and all(hit.start() > start for hit in hits):
        reasons.append("buried_in_hashtags")
    if contest and not (m.contest and m.contest.search(text)):
        unclear = m.contest_unclear and m.contest_unclear.search(text)
        reasons.append("contest_word_unclear" if unclear else "contest_word_missing")
    if m.brand is not None and not m.brand.search(text):
        (reasons if policy.require_brand else advisories).append("brand_not_named")
    if all(text.startswith("#", hit.start()) for hit in hits):
        advisories.append("bare_hashtag")
    if label_on is False and policy.label_required:
        reasons.append("label_off")
    elif label_on is None:
        advisories.append("label_unverified")
    if m.negation and m.negation.search(text):
        reasons.append("negated")
    return reasons, advisories


def caption_check(
    caption: str,
    *,
    policies: Sequence[CompiledPolicy],
    platform: str = "tiktok",
    languages: Sequence[str] = ("en",),
    brand: str = "",
    label_on: bool | None = None,
    contest: bool = False,
    elsewhere: Sequence[str] = (),
) -> CaptionVerdict:
    """The verdict of every policy in force, the strictest winning.

    `label_on` is the platform's paid-partnership label as the provider reports it (None when it
    cannot say); `elsewhere` is text outside the post (a comment, the profile), where a disclosure
    does not count.
    """
    text = normalize(caption)
    reasons: dict[str, None] = {}
    advisories: dict[str, None] = {}
    for policy in policies:
        found, advice = _findings(
            policy,
            text,
            platform=platform,
            languages=languages,
            brand=brand,
            label_on=label_on,
            contest=contest,
            elsewhere=elsewhere,
        )
        reasons.update(dict.fromkeys(found))
        advisories.update(dict.fromkeys(advice))
    if any(reason in FAILING for reason in reasons):
        verdict = NON_COMPLIANT
    elif reasons:
        verdict = NEEDS_REVIEW
    else:
        verdict = COMPLIANT
    return CaptionVerdict(
        verdict=verdict,
        reasons=tuple(reasons),
        advisories=tuple(a for a in advisories if a not in reasons),
        policies=tuple(policy.label for policy in policies),
    )


def policies_for_countries(
    policies: Sequence[CompiledPolicy], countries: Sequence[str]
) -> list[CompiledPolicy]:
    """The policies in force where a campaign runs: each country's own, or the catch-all."""
    by_country = {country: p for p in policies for country in p.data.get("countries", [])}
    chosen = [by_country.get(country.upper()) or by_country.get("*") for country in countries or ["*"]]
    return list({p.code: p for p in chosen if p is not None}.values())


def wording_language(policies: Sequence[CompiledPolicy], *, languages: Sequence[str], preferred: str) -> str:
    """The language of a disclosure every policy in force accepts: the visitor's if it can be."""
    allowed = None
    for policy in policies:
        mine = set(policy.allowed_languages(languages))
        allowed = mine if allowed is None else allowed & mine
    allowed = allowed or set()
    for code in [preferred, *languages, *LANGUAGES]:
        if code in allowed:
            return code
    return preferred if preferred in LANGUAGES else "en"
