# ruff: noqa: RUF001 - Chinese punctuation is matched on purpose
"""A brief's sentence read by its structure, not by its exact words.

A brand's brief asks for tasks: produce the video (film, show, hold, light), format it (vertical, 30
seconds), time it (post within 48 hours, keep it public 30 days), tag, disclose. Such a sentence is
an imperative (or a modal: "you should", "du musst", "debes", "需要") of a task verb over an object,
or a description of the video ("the video should be vertical"). Its object is open: "the oat latte on
your kitchen table" need not be listed word by word. What must never pass is an element of a kind
the law forbids: praise or a superlative scripted, a rating, sales as the goal, engagement or
accounts, the length of use or health, negatives kept out, the payment hidden. So a sentence is
understood as allowed when it has a task and no such element (`veto`), scripts no speech (`speech`
verbs: what a script says is read only by the exact shapes of the policy data), negates nothing but
what a brand may forbid (`safe`: "no swearing", "don't buy views", "don't remove the #ad"), and
leaves at most a few words unknown. A sentence not understood that holds an element of a blocked
kind (`cues`) is blocked as that kind; otherwise it goes to a person. The data is in the policy
file, `[languages.<code>.brief]`.
"""

import functools
import re
from dataclasses import dataclass

import snowballstemmer

STEMMERS = {"en": "english", "de": "german", "es": "spanish"}
ALLOW, BLOCK, UNKNOWN = "allow", "block", "unknown"
_WORDS = re.compile(r"[#@]?[^\W_]+(?:['’-][^\W_]+)*")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_DATA = re.compile(r"[^\W\d_]*\d+")
# What looks like a disclosure though no policy lists it: it calls for the same plain placement.
_LABEL_LIKE = re.compile(
    r"#(?:spon|sponsor|paid|promo|collab|colab|partner|werb|anzeige|publi|patrocin|kooperation|ad|ads)\w*"
    r"|\b(?:spon|sponsored|sponsoring|anzeige\w*|werbe\w*|patrocinad\w*)\b|推广|赞助|恰饭"
    # ... or marks the video as something: what it is marked as must be the disclosure.
    r"|\b(?:mark|label|tag)\w*\s+(?:the\s+|your\s+)?(?:video|post|clip|reel|it)\s+(?:as|with)\b"
    r"|\bmarkier\w*\s+(?:\w+\s+){0,2}(?:als|mit)\b|\bmarca(?:d|r)?\s+(?:\w+\s+){0,2}(?:como|con)\b|标[注记]为"
)
# A word that mixes Latin letters with Cyrillic or Greek ones ("#ad" with a Cyrillic first letter) says
# one thing to a reader and another to the patterns.
MIXED_SCRIPT = re.compile(r"[a-zà-ÿ][\u0370-\u04ff]|[\u0370-\u04ff][a-zà-ÿ]|#[\u0370-\u04ff]")
# "Only say how long you have really used it": in a sentence asking for honesty, "only" limits the
# honesty; what it could limit to (praise, a rating) is a veto element and still refused.
_LIMITERS = re.compile(r"\b(?:only|just|solo|sólo|únicamente|nur|bloß)\b")
# A disclosure in quotes ('Put "Ad" first') is the disclosure, not a scripted line.
# What is left of an honesty sentence may not set a condition ("we pay as long as ...").
_CONDITIONS = re.compile(
    r"\b(?:as long as|so long as|provided|once|unless|if|when|as soon as|sofern|solange|wenn|falls|sobald"
    r"|siempre que|si|cuando|mientras|en cuanto)\b|只要|才|如果|前提"
)
# The words for a disclosure or the platform's label, besides each language's `disclosures`.
_LABELS = (
    r"\blabel",
    r"\bdisclos",
    r"\bkennzeichn",
    r"\bwerbekennzeichn",
    r"\bwerbehinweis",
    r"\betiquet",
    # The platform's own switch for the label ("switch on the branded content toggle").
    r"\bbranded content",
    r"\bmarkeninhalt",
    r"\bcontenido de marca",
    "品牌内容",
    "付费合作",
    r"\bindicaci",
    "标识",
    "标签",
    "标注",
    "标明",
)
_QUOTES = "\"“”„‘’'«»「」『』‚"

# Forbidding what the law forbids is lawful: "don't say it cures headaches", "you don't need to give
# us 5 stars", "nunca digas que es el mejor café" ask for less promotion, not more. A clause opened
# by a negation that holds an element of these kinds, and none of hiding the payment or keeping
# negatives out (forbidding the truth: "don't mention the sugar"), is read as a prohibition.
_PROMOTION_KINDS = frozenset(
    {"false_testimony", "scripted_superlative", "rating_condition", "fake_engagement"}
)
_FORBIDS = re.compile(
    r"(?:\b(?:don'?t|do not|does not|doesn'?t|never|no|not|avoid|steer clear of|stay away from"
    # "We can't make any health promises": what a brand may not claim, said of itself.
    r"|(?:can'?t|cannot|may not|must not|mustn'?t)\s+(?:make|claim|promise)"
    r"|nicht|kein\w*|nie|niemals|vermeide\w*|weder"
    r"|nunca|jamás|evita\w*|nada de|cero|sin)\b"
    # "Don't forget to say…", "not only…": what follows is asked for, not forbidden.
    r"(?!\s+(?:forget|fail|hesitate|miss|skip|stop|only|just|be shy|be afraid|vergiss|vergessen|nur|scheu"
    r"|olvides|olvidéis|dejes|solo|sólo|tengas miedo)\b)"
    r"|不要|别|禁止|严禁|不得|不能|不许|请勿|切勿|不用|不必|无需|不需要|没必要|不搞|不玩|不做|拒绝)"
)
# A comma before "dass"/"que"/"that" opens what the negated verb governs ("nicht behaupten, dass…").
_CLAUSE_END = re.compile(
    r",(?!\s*(?:dass|daß|that|que|wie|como)\b)|[;—–()，；]|\b(?:but|aber|sondern|pero|sino|instead|stattdessen)\b|但|而是"
    # A new clause ends the prohibition: "don't call it healthy and tell them a friend gave it to you"
    # forbids the claim, never the testimony.
    r"|\b(?:and|und|y|then|so|plus|dann|also|luego|entonces|así que)\b|然后|并且|所以"
)
# A list the negation governs runs past its commas to its last item: "don't describe it as healthy,
# detoxing, immune-boosting or good for focus", "nicht, dass er gesund ist, entgiftet oder … fördert".
_LIST_WORD = r"(?!(?:and|und|y|but|aber|sondern|pero|sino|then|so|plus|dann|also|luego|instead)\b)[\w-]+"
_LIST_TAIL = re.compile(
    rf"(?:,\s*{_LIST_WORD}(?:\s+{_LIST_WORD}){{0,2}})+?,?\s+(?:or|nor|oder|noch|o|ni)\s+"
    rf"{_LIST_WORD}(?:\s+{_LIST_WORD}){{0,4}}(?=\s*(?:[,.;:!?—–()，；]|$))"
    r"|(?:、[^、。！？，,；;和]{1,6})*(?:或者|或|还是)[^。！？，,；;和然并所再]{1,6}(?=[。！？，,；;]|$)"
)
_CLAIMED = re.compile(r"\b(?:as|als|como|that|dass|daß|que)\b|(?:说|讲|称|写|宣传)")
# "Never rate it below five stars", "nichts außer Lob": a negation over a floor is the demand itself.
_FLOOR = re.compile(
    r"\bunless(?!\s+(?:that'?s|it'?s|it is|that is|you)\s+(?:genuinely|truly|really|honestly|actually)\b)"
    r"|\b(?:less|fewer|below|under|lower|anything but|other than|except|weniger|unter|niedriger|außer"
    r"|menos|por debajo|inferior|salvo|excepto|si no)\b|低于|少于|除了|以下|不到"
    # A second negation turns the prohibition into the demand: "don't post without calling it the best".
    r"|\b(?:without|ohne|sin|nicht|not|no|never|nie|nunca|sofern nicht)\b|不|没|别|无"
)


# German puts the verb of saying before its negation: "Behaupte nicht, dass…", "Sag bitte nie, …".
_VERB_BEFORE = re.compile(
    r"\b(?:behaupte|behaupten|sag|sage|sagen|schreib|schreibe|schreiben|erzähl|erzähle|erzählen|versprich"
    r"|versprechen|erwähne|erwähnen|nenn|nenne|nennen)(?:\s+sie)?(?:\s+bitte)?\s+$"
)


@dataclass(frozen=True)
class Reading:
    verdict: str  # ALLOW, BLOCK (a blocked kind's element, `kind`) or UNKNOWN
    kind: str = ""
    said: str = ""


@functools.cache
def _stemmer(language: str):
    name = STEMMERS.get(language)
    return snowballstemmer.stemmer(name) if name else None


def _stem(language: str, word: str) -> str:
    stemmer = _stemmer(language)
    return stemmer.stemWord(word) if stemmer else word


def _any(patterns) -> re.Pattern | None:
    patterns = list(patterns)
    return re.compile("|".join(f"(?:{p})" for p in patterns)) if patterns else None


@dataclass(frozen=True)
class _Latin:
    language: str
    tasks: frozenset  # stems
    speech: frozenset  # stems
    known: frozenset  # words as written
    known_stems: frozenset
    negations: re.Pattern | None
    safe: re.Pattern | None
    budget: int
    honesty: re.Pattern | None = None
    honesty_safe: re.Pattern | None = None
    honesty_words: re.Pattern | None = None

    def read(
        self,
        text: str,
        veto: re.Pattern | None,
        disclosed: re.Pattern | None = None,
        *,
        prohibits: bool = False,
    ) -> bool:
        """True when the sentence asks for a task, or for honesty, and nothing else this language
        can tell. `prohibits`: a prohibition of a promotion element was taken out of it."""
        forbidden = prohibits  # something a brand may forbid, forbidden ("no swearing")
        if self.safe is not None:
            text, count = self.safe.subn(" ", text)
            forbidden = forbidden or bool(count)
        if self.honesty is not None and self.honesty.search(text):
            return self._honest(text, veto)
        if not self._clean(text, veto):
            return False
        words, stems = self._words(text)
        anchored = forbidden or any(stem in self.tasks or stem in self.speech for stem in stems)
        # A speech verb scripts what is said, and a disclosure may only be asked for plainly: the
        # rest must be all known words ("mention the oat flavour", "add #ad at the start"), never an
        # open one ("say it tastes like caramel", "leave the #ad off, it looks salesy").
        strict = any(stem in self.speech for stem in stems) or (
            disclosed is not None and disclosed.search(text)
        )
        return anchored and self._unknown(words, stems) <= (0 if strict else self.budget)

    def _clean(self, text: str, veto: re.Pattern | None) -> bool:
        if veto is not None and veto.search(text):
            return False
        return self.negations is None or not self.negations.search(text)

    def _words(self, text: str) -> tuple[list[str], list[str]]:
        # A number or a discount code ("alpaca15") is data, not a word.
        words = [w for w in _WORDS.findall(text) if not w.startswith(("#", "@")) and not _DATA.fullmatch(w)]
        return words, [_stem(self.language, w.strip("'’")) for w in words]

    def _unknown(self, words, stems, also: frozenset = frozenset()) -> int:
        return sum(
            1
            for word, stem in zip(words, stems, strict=True)
            if word not in self.known
            and word not in also
            and stem not in self.known_stems
            and stem not in self.tasks
        )

    def _honest(self, text: str, veto: re.Pattern | None) -> bool:
        """Honesty asked for: the markers and their look-alikes out, nothing of a blocked kind left."""
        # The markers before the look-alikes and again after: a marker can open with one ("feel free
        # to say what it costs"), and a look-alike can stand inside another marker.
        text = self.honesty.sub(" ", text)
        if self.honesty_safe is not None:
            text = self.honesty_safe.sub(" ", text)
        text = _LIMITERS.sub(" ", self.honesty.sub(" ", text))
        if self.honesty_words is not None:
            text = self.honesty_words.sub(" ", text)
        if _CONDITIONS.search(text) or not self._clean(text, veto):
            return False
        words, stems = self._words(text)
        return self._unknown(words, stems) <= self.budget


@dataclass(frozen=True)
class _Chinese:
    tasks: re.Pattern | None
    known: re.Pattern | None
    negations: re.Pattern | None
    safe: re.Pattern | None
    budget: int
    honesty: re.Pattern | None = None
    honesty_words: re.Pattern | None = None

    def read(
        self,
        text: str,
        veto: re.Pattern | None,
        disclosed: re.Pattern | None = None,
        *,
        prohibits: bool = False,
    ) -> bool:
        forbidden = int(prohibits)
        if self.safe is not None:
            text, count = self.safe.subn("，", text)
            forbidden += count
        honest = self.honesty is not None and self.honesty.search(text)
        if honest:
            text = self.honesty.sub("，", text)
            if self.honesty_words is not None:
                text = self.honesty_words.sub("，", text)
            if _CONDITIONS.search(text):
                return False
        if veto is not None and veto.search(text):
            return False
        if self.negations is not None and self.negations.search(text):
            return False
        if not honest and not forbidden and (self.tasks is None or not self.tasks.search(text)):
            return False
        rest = self.known.sub("", text) if self.known is not None else text
        strict = disclosed is not None and disclosed.search(text)
        return sum(len(run) for run in _CJK_RUN.findall(rest)) <= (0 if strict else self.budget)


class Grammar:
    """The structure of what a brief may ask, in every language of the policies in force."""

    def __init__(self, languages: dict):
        self.latin: list[_Latin] = []
        self.chinese: list[_Chinese] = []
        vetoes, cues, asides, cut, refers_back, asks, yes, temporal = [], [], [], [], [], [], [], []
        self.placement_latin: list[tuple[frozenset, re.Pattern | None]] = []
        self.placement_chinese: list[re.Pattern] = []
        for code, table in languages.items():
            brief = table.get("brief")
            if not brief:
                continue
            vetoes += brief.get("veto", [])
            asides += brief.get("asides", [])
            cut += brief.get("cut_negatives", [])
            refers_back += brief.get("refers_back", [])
            asks += brief.get("asks", [])
            temporal += brief.get("temporal", [])
            yes += brief.get("yes", [])
            placement = brief.get("placement", [])
            phrases = brief.get("placement_phrases", [])
            if code.startswith("zh"):
                ordered = sorted(placement, key=len, reverse=True)
                self.placement_chinese.append(_any([*phrases, *(re.escape(p) for p in ordered)]))
            else:
                self.placement_latin.append((frozenset(w.casefold() for w in placement), _any(phrases)))
            cues += [("suppress_negatives", re.compile(p)) for p in brief.get("cut_negatives", [])]
            cues += [(kind, re.compile(pattern)) for kind, pattern in brief.get("cues", [])]
            negations = brief.get("negations", [])
            safe = _any(brief.get("safe", []))
            budget = int(brief.get("unknown_budget", 0))
            honesty = table.get("honesty", {})
            markers = _any(honesty.get("markers", []))
            if code.startswith("zh"):
                known = [*table.get("allowed_phrases", []), *table.get("allowed_phrases_more", [])]
                known += [*brief.get("known", []), *brief.get("objects", []), *brief.get("tasks", [])]
                ordered = sorted(set(known), key=len, reverse=True)
                self.chinese.append(
                    _Chinese(
                        _any(re.escape(t) for t in brief.get("tasks", [])),
                        _any(re.escape(k) for k in ordered),
                        _any(re.escape(n) for n in negations),
                        safe,
                        budget,
                        markers,
                        _any(re.escape(w) for w in sorted(honesty.get("words", []), key=len, reverse=True)),
                    )
                )
                continue
            known_words = {
                w.casefold() for key in ("allowed_words", "allowed_words_more") for w in table.get(key, [])
            }
            known_words |= {
                w.casefold()
                for key in ("function", "nouns", "subjects", "objects")
                for w in brief.get(key, [])
            }
            self.latin.append(
                _Latin(
                    code,
                    frozenset(
                        _stem(code, w.casefold())
                        for w in [*brief.get("tasks", []), *brief.get("subjects", [])]
                    ),
                    frozenset(_stem(code, w.casefold()) for w in brief.get("speech", [])),
                    frozenset(known_words),
                    frozenset(
                        _stem(code, w.casefold()) for key in ("nouns", "objects") for w in brief.get(key, [])
                    ),
                    _any(rf"(?<![\w'’]){re.escape(n)}(?![\w'’])" for n in negations),
                    safe,
                    budget,
                    markers,
                    _any(honesty.get("safe", [])),
                    _any(
                        rf"(?<![\w'’]){re.escape(w.casefold())}(?![\w'’])" for w in honesty.get("words", [])
                    ),
                )
            )
        # Whatever would be blocked as a kind is never read as allowed either.
        self.veto = _any([*vetoes, *(pattern.pattern for _kind, pattern in cues)])
        self.cues = cues
        self.asides = _any(asides)
        self._refers_back = _any(refers_back)
        self._asks = _any(asks)
        self._yes = _any(yes)
        self._temporal = _any(temporal)
        self.cut_negatives = _any(cut)
        self.safe = _any(
            reader.safe.pattern for reader in [*self.latin, *self.chinese] if reader.safe is not None
        )
        terms = sorted(
            {t.casefold() for table in languages.values() for t in table.get("disclosures", [])},
            key=len,
            reverse=True,
        )
        self.quoted = (
            # ... with the bar or colon a creator puts after it: 'Begin with "Ad |"'.
            re.compile(rf"[{_QUOTES}]\s*(#?(?:{'|'.join(map(re.escape, terms))}))\s*[|:·-]?\s*[{_QUOTES}]")
            if terms
            else None
        )
        # A Latin term as a word ("publi", not "publica"); a Chinese one wherever it stands.
        self.disclosed = _any(
            [
                *(
                    re.escape(t) if not t.isascii() or not t[-1].isalnum() else rf"{re.escape(t)}(?![\w'’-])"
                    for t in terms
                    if len(t) > 2 or not t.isascii()
                ),
                r"#?\bads?\b",
                *_LABELS,
            ]
        )

    @functools.cached_property
    def _label_words(self) -> re.Pattern | None:
        # The whole word a disclosure term opens ("gekennzeichnet", "etiquetad"), not its stem only.
        if self.disclosed is None:
            return None
        return re.compile(rf"(?:{self.disclosed.pattern})[^\W\u3400-\u9fff]*")

    def discloses(self, text: str) -> bool:
        """Whether a disclosure term stands in the sentence as a word of its own (not `ads` in
        `leads`); a Chinese term wherever it stands."""
        if self.disclosed is None:
            return False
        return any(
            found.start() == 0 or not text[found.start() - 1].isalnum() or _CJK.match(found.group(0))
            for found in self.disclosed.finditer(text)
        )

    def refers_back(self, text: str) -> bool:
        """Whether the sentence can refer to a disclosure another sentence of the brief named ("switch
        it", "the tag", "after a day")."""
        return self._refers_back is not None and bool(self._refers_back.search(text))

    def placed_only(self, text: str) -> bool:
        """Whether a sentence naming the disclosure says nothing but where and how it stands (the
        `placement` words and phrases): no time, limit, condition, size, colour or other place. Words
        of place that also say a time ("at first", "to start with", "zu Beginn", "先") are `temporal`."""
        if self._temporal is not None and self._temporal.search(text):
            return False
        if _CJK.search(text):
            for placement in self.placement_chinese:
                text = placement.sub(" ", text) if placement is not None else text
            if _CJK.search(self._label_out(text)):
                return False
        # A number places nothing ("in line 30", "on video 3"), and a hashtag beside the label can say
        # what words would not ("#ad #for24hoursonly", "#ad #jk"): neither is a placement word.
        return any(
            all(
                word in placement
                for word in _WORDS.findall(self._label_out(phrases.sub(" ", text) if phrases else text))
            )
            for placement, phrases in self.placement_latin
        )

    def asks_plainly(self, question: str) -> bool:
        """Whether a question the brief asks of the disclosure asks only whether it is needed where
        it stands ("Do we need #ad in the caption?", "¿Hace falta poner #publi?", "要标广告吗"):
        once its `asks` opening is taken out, the rest must say only where and how it stands."""
        if self._asks is None or not self._asks.match(question):
            return False
        return self.placed_only(self._asks.sub(" ", question))

    def answered_yes(self, answer: str) -> bool:
        """Whether the sentence after such a question answers it with a bare yes ("Yes, every single
        time."): anything more ("Yes, at first", "Yes, to us") is read by a person."""
        if self._yes is None:
            return False
        return bool(self._yes.match(answer))

    def _label_out(self, text: str) -> str:
        return self._label_words.sub(" ", text) if self._label_words is not None else text

    def names_label(self, text: str) -> bool:
        """Whether the sentence names the disclosure: a disclosure term, the platform's label, or a
        hashtag or word that looks like one ("#paidcollab", "spon", "Anzeige-Hinweis")."""
        return self.discloses(text) or bool(_LABEL_LIKE.search(text))

    def _prohibitions_out(self, text: str) -> str:
        """The sentence without the clauses that forbid an element of a promotion kind."""
        truth = [pattern for kind, pattern in self.cues if kind not in _PROMOTION_KINDS]
        promotion = [pattern for kind, pattern in self.cues if kind in _PROMOTION_KINDS]
        spans = []
        for negation in _FORBIDS.finditer(text):
            if spans and negation.start() < spans[-1][1]:
                continue
            end = _CLAUSE_END.search(text, negation.end())
            tail = _LIST_TAIL.match(text, end.start()) if end else None
            # Only a list of what is said or claimed ("as X, Y or Z", "dass X, Y oder Z"); never one of
            # deeds ("no bots, buy likes or views" asks for the likes).
            if (
                tail
                and _CLAIMED.search(text, negation.start(), end.start())
                and not any(
                    pattern.search(tail.group(0)) for kind, pattern in self.cues if kind == "fake_engagement"
                )
            ):
                end = _CLAUSE_END.search(text, tail.end())
            clause = text[negation.start() : end.start() if end else len(text)]
            if (
                not _FLOOR.search(clause, negation.end() - negation.start())
                and any(pattern.search(clause) for pattern in promotion)
                and not any(pattern.search(clause) for pattern in truth)
            ):
                verb = _VERB_BEFORE.search(text, 0, negation.start())
                spans.append((verb.start() if verb else negation.start(), negation.start() + len(clause)))
        for start, end in reversed(spans):
            text = text[:start] + " " + text[end:]
        return text

    def cued(self, text: str, kinds: frozenset | None = None) -> bool:
        """Whether an element of a blocked kind (of `kinds`, if given) stands in the sentence, its
        lawful look-alikes aside."""
        if self.safe is not None:
            text = self.safe.sub(" ", text)
        return any(pattern.search(text) for kind, pattern in self.cues if kinds is None or kind in kinds)

    def read(self, text: str, *, asides: bool = True) -> Reading:
        """How a sentence (lower case, the brand's names and handles taken out) reads. `asides`:
        False when the sentence as written held a disclosure that allowed shapes took out."""
        if self.quoted is not None:
            text = self.quoted.sub(r" \1 ", text)
        if text.strip():
            readers = self.chinese if _CJK.search(text) else self.latin
            if any(reader.read(text, self.veto, self.disclosed) for reader in readers):
                return Reading(ALLOW)
            # An aside asks nothing of what the video says ("thanks for working with us", "your
            # call", "raw footage is not required", "we may ask for one round of edits"): without
            # it, the rest must still be read as allowed, and the aside stands for its task. Never
            # beside a disclosure, whose every word must stay known ("#ad: your call").
            if asides and self.asides is not None and not self.discloses(text):
                rest = self.asides.sub(" ", text)
                if rest != text and any(
                    reader.read(rest, self.veto, self.disclosed, prohibits=True) for reader in readers
                ):
                    return Reading(ALLOW)
            rest = self._prohibitions_out(text)
            if rest != text:
                text = rest
                if any(reader.read(text, self.veto, self.disclosed, prohibits=True) for reader in readers):
                    return Reading(ALLOW)
        if self.safe is not None:
            text = self.safe.sub(" ", text)  # a lawful look-alike ("don't forget the #ad") is no cue
        for kind, pattern in self.cues:
            found = pattern.search(text)
            if found:
                return Reading(BLOCK, kind, found.group(0).strip())
        return Reading(UNKNOWN)
