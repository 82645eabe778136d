# ruff: noqa: RUF001 - Chinese punctuation and typographic quotes are matched on purpose
"""The campaign-rule linter: a rule may not buy a sentiment or fake engagement.

16 CFR 465 (US, in force October 2024) forbids conditioning an incentive, expressly or by
implication, on a particular sentiment, and buying fake engagement; the UCPD and the ASA say the
same of fake reviews. The patterns are policy data (every language of every policy in force is
searched: a rule written in Spanish for a German campaign is still a rule), so a lawyer can
tighten them without a release.
"""

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import snowballstemmer
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from compliance.checker import CompiledPolicy, brand_short_name, normalize, term_pattern_compile
from compliance.reading import ALLOW, BLOCK, MIXED_SCRIPT, Grammar, Reading
from compliance.reading import UNKNOWN as UNKNOWN_

STEMMERS = {"en": "english", "de": "german", "es": "spanish"}
GAP = 6  # words that may stand between "only" and "recommend", "buy" and "likes" ("buy 500 more likes")
# Sentences and clauses end at these; a comma does not (a German relative clause follows one), and
# neither does the point or comma inside a number ("1.000 Aufrufe").
_SENTENCES = re.compile(r"\.(?!\d)|[!?;:\n。！？；：]+")
# A new clause: "buy our coffee and follow us" does not ask to buy followers.
_CLAUSE = frozenset(
    {"and", "or", "then", "but", "und", "oder", "dann", "aber", "y", "o", "e", "luego", "pero"}
)
_WORDS = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")

# Triggers whose reward depends on counts other people give the person's own post.
OWN_POST_TRIGGERS = frozenset({"ugc_share", "view_threshold"})


@dataclass(frozen=True)
class Finding:
    code: str
    blocking: bool
    rule_id: int | None
    message: str
    # JoyBack staff may lift it by approving the exact words: free text not understood, or read as a
    # blocked kind without being understood (a lawful look-alike the reading missed is refused until
    # a person has read it). What the patterns know for sure stays refused.
    reviewable: bool = False
    # Refused by what the patterns know for sure, yet the brand may ask JoyBack's team to read the
    # words: two staff members approving those exact words lift it, never one.
    appealable: bool = False


_COMPILED: dict[tuple, dict] = {}


@functools.cache
def _stemmer(language: str):
    name = STEMMERS.get(language)
    return snowballstemmer.stemmer(name) if name else None


_EVERY_NEGATION = frozenset(
    {
        "no",
        "not",
        "never",
        "don't",
        "dont",
        "nothing",
        "nicht",
        "kein",
        "keine",
        "keinen",
        "keiner",
        "nie",
        "niemals",
        "nichts",
        "nix",
        "nunca",
        "sin",
        "ni",
        "nada",
        "jamás",
    }
)


@dataclass(frozen=True)
class WordPair:
    """A word from `first` followed within GAP words by one from `then`, in one sentence, with no
    negation just before the first: "only videos that recommend", "kauft euch 500 Likes"."""

    language: str
    first: frozenset
    then: frozenset
    negations: frozenset
    then_stemmed: bool  # verbs by their stem; nouns as listed ("likes", not the verb "like")
    reverse_gap: int = 0  # German puts the infinitive last: "Likes kaufen", "Follower zu kaufen"
    prohibited: frozenset = frozenset()

    def search(self, text: str) -> str | None:
        stem = _stemmer(self.language)
        # Every policy in force reads every language: an English negation counts in an English
        # sentence read with the German pair ("no bought likes, nothing fake").
        negations = self.negations | _EVERY_NEGATION
        for sentence in _SENTENCES.split(text):
            words = _WORDS.findall(sentence)
            stems = [stem.stemWord(word) if stem else word for word in words]
            if any(word in self.prohibited for word in words):
                continue  # "bought likes are removed" describes what happens to them
            for i, word in enumerate(stems):
                if word not in self.first or any(w in negations for w in words[max(0, i - 3) : i]):
                    continue
                # "We'll never ask you to buy likes": a negation over a verb whose infinitive it is.
                if i and words[i - 1] == "to" and any(w in negations for w in words[max(0, i - 5) : i]):
                    continue
                for j in range(i + 1, min(len(stems), i + GAP + 2)):
                    if words[j] in negations or words[j] in _CLAUSE:
                        break
                    if (stems[j] if self.then_stemmed else words[j]) in self.then:
                        said = re.search(rf"\b{re.escape(words[j])}\b", sentence)
                        if said and _FORBIDDEN_AFTER.match(sentence, said.end()):
                            break  # "buying views is a total no-go for us"
                        return " ".join(words[i : j + 1])
                for j in range(max(0, i - self.reverse_gap - 1), i):
                    if words[j] in self.then and not any(w in negations for w in words[max(0, j - 3) : i]):
                        return " ".join(words[j : i + 1])
        return None


def _pair(language: str, table: dict, first: str, then: str) -> WordPair | None:
    if not table.get(first) or not table.get(then):
        return None
    stem = _stemmer(language)

    def stems(words):
        return frozenset(stem.stemWord(w.casefold()) if stem else w.casefold() for w in words)

    then_stemmed = then == "praise"
    return WordPair(
        language,
        stems(table[first]),
        stems(table[then]) if then_stemmed else frozenset(w.casefold() for w in table[then]),
        frozenset(w.casefold() for w in table.get("rule_negations", [])),
        then_stemmed,
        int(table.get("engagement_reverse_gap", 0)) if first == "engagement_verbs" else 0,
        frozenset(w.casefold() for w in table.get("prohibited", [])),
    )


# "No need to give it five stars", "Du musst keine 5 Sterne geben", "不需要打五星": a rating or a
# sentiment the rule says is NOT required is what a brand may say; what follows must still be understood.
def _not_needed(german: str) -> str:
    return (
        r"(?:\bno need to|\b(?:don'?t|do not|doesn'?t|does not) (?:need|have) to"
        r"|\bnot (?:necessary|required) to"
        # "Du musst uns keine fünf Sterne geben": a pronoun or two may stand before the negation.
        r"|\b(?:musst|müssen|müsst|brauchst)\s+(?:du\s+|sie\s+|ihr\s+)?"
        r"(?:(?:uns|mir|ihm|ihr|ihnen|dem \w+|der \w+)\s+)?"
        rf"(?:{german})|\bno hace falta(?: que)?"
        r"|\bno (?:tienes|tiene|necesitas|necesita) que|\bno es necesario(?: que)?)"
        r"(?:\W+(?!(?:or|nor|oder|noch|ni|o)\b)\w+){0,3}"
    )


_NOT_NEEDED_CJK = r"(?:不需要|不用|不必|无需|没必要)(?:非得|一定)?"
_NOT_NEEDED = _not_needed(r"nicht|kein\w*")
_NOT_NEEDED_LISTED = _not_needed(r"nicht|kein\w*|weder")
_NOT_REQUIRED = re.compile(rf"{_NOT_NEEDED}\W*$|{_NOT_NEEDED_CJK}[^。！？.!?,，]{{0,2}}$")
# ... or over a list of ratings, which must then end the clause: "you don't need to give us a ten or
# five stars", "weder zehn Punkte noch fünf Sterne geben", "不需要给我们满分或者五星"; never "… or five
# stars is the minimum".
_NOT_REQUIRED_LIST = re.compile(
    rf"{_NOT_NEEDED_LISTED}(?:\W+\w+){{0,2}}\W+(?:or|nor|oder|noch|ni|o)\W*$"
    rf"|{_NOT_NEEDED_CJK}(?:给(?:我们|我|品牌)?)?[^。！？.!?,，、和]{{1,4}}(?:或者|或|还是)$"
)
_LIST_ENDS = re.compile(
    r"\s*(?:(?:zu\s+)?geben|(?:to\s+)?give|vergeben|dar|darnos)?\s*(?:[,.;:!?，。；！？]|$)"
)


# ... and said after it: "A five-star rating is not required", "Fünf Sterne sind keine Pflicht".
_NOT_REQUIRED_AFTER = re.compile(
    r"[\s-]*(?:stars?\s+)?(?:ratings?|reviews?|scores?)?\s*(?:(?:is|are)\s+(?:not|never)|isn'?t|aren'?t)\s+"
    r"(?:required|needed|necessary|expected|a condition)\b"
    r"|[\s-]*(?:sterne[\s-]*)?(?:bewertung|wertung)?\s*(?:ist|sind)\s+(?:nicht\s+(?:nötig|notwendig|erforderlich)|keine\s+(?:pflicht|voraussetzung))"
    r"|\s*(?:estrellas\s+)?no\s+(?:es|son)\s+(?:necesari|obligatori)\w*"
    # "好评差评都可以": a good or a bad review, either is fine.
    r"|(?:、|和|或|或者)?差评(?:也|都)(?:可以|行|没关系|欢迎)"
)


def not_required(text: str, start: int, end: int | None = None) -> bool:
    if _NOT_REQUIRED.search(text, max(0, start - 40), start):
        return True
    if end is None:
        return False
    listed = _NOT_REQUIRED_LIST.search(text, max(0, start - 50), start) and _LIST_ENDS.match(text, end)
    return bool(listed or _NOT_REQUIRED_AFTER.match(text, end))


@dataclass(frozen=True)
class Negatable:
    """A pattern that does not count right after a negation ("不要买赞", "never buy likes")."""

    pattern: re.Pattern
    negation: re.Pattern | None
    latin: bool = False  # a Latin negation right before its object counts too ("do not use bots")
    # A promotion forbidden ("don't call it the best", "avoid calling it the best"): what is left is
    # read by compliance.reading, which blocks a floor or a second negation ("never less than…").
    promotion: bool = False

    def search(self, text: str) -> str | None:
        for match in self.pattern.finditer(text):
            # A negation counts only in the same list item: "不用露脸、五星是硬性要求" asks for the stars.
            before = re.split(r"[、，,;；。]", text[max(0, match.start() - 6) : match.start()])[-1]
            around = before + match.group(0)
            if self.latin and _NEGATED_OBJECT.search(text, max(0, match.start() - 30), match.start()):
                continue
            if self.latin and _FORBIDDEN_AFTER.match(text, match.end()):
                continue
            if (
                self.promotion
                and not _FLOOR_AFTER.search(text, match.start(), match.end() + 40)
                and not _REQUIRED_AFTER.match(text, match.end())
                and not _REMINDER_BEFORE.search(text, max(0, match.start() - 40), match.start())
                and (
                    _LATIN_NEGATION.search(text, max(0, match.start() - 40), match.start())
                    or _promotion_forbidden(text, match.start())
                    or _negatives_kept(text, match.start(), match.end())
                )
            ):
                continue
            if (self.negation is None or not self.negation.search(around)) and not not_required(
                text, match.start(), match.end()
            ):
                return match.group(0)
        return None


# A negation in the few words before ("never use several accounts"), in any of the four languages;
# not one that asks for what follows ("don't forget to remove the #ad", "no olvides quitar…").
_REMINDER = (
    r"(?!\W+(?:forget|fail|hesitate|neglect|olvides|olvide|olvidéis|te olvides|vergiss|vergessen|vergesst"
    r"|se (?:te|le|os) olvide\w*)\b)"
)
_LATIN_NEGATION = re.compile(
    r"\b(?:not|don'?t|never|no|without|nicht|kein\w*|nie|niemals|ohne|nunca|sin|ni|jamás)\b"
    + _REMINDER
    + r"(?:\W+\w+){0,3}\W*$"
)
# "Don't forget to add #ad", "vergiss nicht, #werbung zu setzen": a match that opens with a reminder
# asks for what it names; the sentence is still read (compliance.reading) and must be understood.
_OPENS_WITH_REMINDER = re.compile(
    r"(?:don'?t|do not|never)\s+(?:forget|fail|neglect)\b|no\s+(?:te\s+)?(?:olvides|olvide|olvidéis)\b"
    r"|(?:vergiss|vergesst)\s+nicht\b|no\s+se\s+(?:te|le|os)\s+olvide\w*"
)
# German puts the negation after the verb and its object: "Verstecken Sie die Kennzeichnung bitte nicht
# zwischen den Hashtags" forbids the hiding.
_NEGATED_AFTER_VERB = re.compile(
    r"(?:versteck|entfern|lösch|verschieb|schieb|pack|setz|stell|verberg)\w*\s+(?:sie\s+)?(?:\w+\s+){0,4}?"
    r"(?:bitte\s+)?(?:nicht|nie|niemals)\b"
)
# An edit forbidden whose purpose is the removal: "don't edit the caption later to remove the #ad",
# "die Caption nicht bearbeiten, um die Kennzeichnung zu entfernen", "发布后不要改文案去掉广告标识".
_NO_EDIT_TO = re.compile(
    r"\b(?:don'?t|do not|never)\s+(?:go back and\s+)?(?:edit|change|update|modify|rewrite)\b"
    r"(?:\W+\w+){0,4}\W+(?:to|and)\W*$"
    r"|\b(?:nicht|nie|niemals)\s+(?:\w+\s+)?(?:bearbeiten|ändern|editieren|umschreiben)\s*,?\s+um\s+"
    r"(?:die|den|das)?\s*$"
    r"|\bno\s+(?:edites|edite|editéis|cambies|cambie|modifiques|modifique)\b(?:\W+\w+){0,4}\W+para\W*$"
    r"|(?:不要|别|请勿|不得|不能)(?:再|事后|之后)?(?:改|修改|编辑)(?:文案|标题|视频|描述|内容)?(?:来)?$"
)
# Chinese forbids a claim by its verb of saying: "千万别说它能增强免疫力或者减肥".
_CJK_NEGATED_CLAIM = re.compile(
    r"(?:不要|别|不能|不得|切勿|请勿|禁止|避免|不可以)(?:说|讲|宣称|声称|暗示|写|提到|承诺)[^。！？，,；;.!?]{0,20}$"
)
# ... but not the truth: "不要提我们给了你钱" hides the payment.
_CJK_TRUTH = re.compile(
    r"钱|付费|付款|报酬|酬劳|广告|合作|赞助|推广|恰饭|标识|标注|标签|糖|热量|价格|价钱|涨价|缺点|负面|差评|不足|咖啡因|问题"
)
# A hiding place negated at the end of what was matched: "the label goes up front, not between the
# hashtags", "no escondida entre los hashtags", "不要埋在话题标签里"; not after a "but" ("not at the
# start but at the end"), and not where the match holds another place before it ("at the end, not below").
_NEGATED_PLACE = re.compile(
    r"\b(?:not|nicht|no|nie|never|nunca)\s+"
    r"(?:(?:in|among|between|under|below|at|the|all|your|other|buried|hidden|tucked|away|lost|squeezed|zwischen"
    r"|unter|im|den|die|der|dem|am|versteckt|vergraben|escondid[oa]|enterrad[oa]|perdid[oa]|entre|en|los|las|el"
    r"|la|al)\s+){0,4}"
    r"(?:hashtags?|comments?|bio|end|bottom|kommentar\w*|ende|bio|comentarios?|final|biografía)$"
    r"|(?:不要|别)(?:埋|藏|放|夹|混|淹没)?在?(?:一堆)?(?:话题标签|标签|话题|评论区|评论|简介|主页|最后|结尾|末尾)(?:里|中|之间)?$"
)
# A promotion forbidden by a verb of avoiding: "avoid calling it the best", "evita decir que es el
# mejor", "避免说是最好的". Only for what promotes: avoiding the truth (the sugar, the payment) is read
# by compliance.reading and blocked there.
_AVOIDED = re.compile(
    r"\b(?:avoid|avoiding|refrain from|vermeide\w*|verzichte\w* auf|evita\w*|evite\w*)\b(?:\W+\w+){0,3}\W*$"
    r"|避免[^。！？]{0,4}$"
)
# German says what not to call it after the verb: "Bezeichne ihn bitte nicht als gesündesten Kaffee".
_NOT_CALLED = re.compile(
    r"\b(?:bezeichne|bezeichnen|nenn|nenne|nennen|beschreib|beschreibe|beschreiben)\w*\s+(?:sie\s+)?"
    r"(?:ihn|es|sie|den kaffee|das produkt|unseren kaffee)?\s*(?:bitte\s+)?(?:nicht|nie|niemals)\s+"
    r"(?:als|einen|den)\b"
)


# A floor or an exception makes the negation the demand: "don't pay unless it gets five stars".
_FLOOR_AFTER = re.compile(
    r"\bunless(?!\s+(?:that'?s|it'?s|it is|that is|you)\s+(?:genuinely|truly|really|honestly|actually)\b)"
    r"|\b(?:only if|except|otherwise|or else|less|below|under|lower|fewer|other than|anything but"
    r"|sino|salvo|excepto|menos|außer|sonst|weniger|unter|niedriger)\b|除非|除了|低于|少于|否则|以下"
)


# ... or says it is required right after it: "keine zehn Punkte oder fünf Sterne sind Pflicht".
_REQUIRED_AFTER = re.compile(
    r"[^.!?;,]{0,12}?\b(?:is|are|ist|sind|es|son)\s+(?:a\s+|an\s+|eine\s+|die\s+|das\s+)?(?:absolute\s+)?"
    r"(?:must|required|mandatory|expected|the minimum|the bar|pflicht|vorgabe|voraussetzung|das minimum"
    r"|obligatori\w*|lo mínimo|imprescindible)"
)


# "Vergiss nicht zu sagen, dass…": German puts the reminder before its negation.
_REMINDER_BEFORE = re.compile(r"\b(?:vergiss|vergesst|vergessen)\b(?:\W+\w+){0,2}\W+(?:nicht|nie)\b")


# Cutting the negatives forbidden: "don't cut anything negative", "schneide nichts Negatives raus",
# "no cortes lo negativo", "不要剪掉负面的内容". The rest is read by compliance.reading.
_REMOVAL_FORBIDDEN = re.compile(
    r"\b(?:no|not|don'?t|do not|never|won'?t|nicht|nie|nichts|nada)\b[^.!?]{0,20}"
    r"\b(?:cut|remove|delete|edit out|censor|filter|schneid\w*|lösch\w*|entfern\w*|zensier\w*|cort\w*|borr\w*"
    r"|quit\w*|elimin\w*|censur\w*)\b"
    r"|\b(?:cut|remove|delete|censor|schneid\w*|lösch\w*|entfern\w*|zensier\w*)\s+(?:bitte\s+)?"
    r"(?:nothing|nichts|keine\w*)\b"
    r"|(?:不要|别|不会)(?:剪掉|删掉|删除|去掉|屏蔽|隐藏)"
)
_PAYMENT_WORDS = re.compile(
    r"\b(?:pa(?:y|id)\w*|sponsor\w*|#?ad|disclos\w*|bezahl\w*|werbung|kennzeichnung|pag\w*|publi\w*)\b|钱|付|广告|合作|赞助"
)


def _negatives_kept(text: str, start: int, end: int) -> bool:
    window = text[max(0, start - 30) : end]
    return bool(_REMOVAL_FORBIDDEN.search(window)) and not _PAYMENT_WORDS.search(window)


def _promotion_forbidden(text: str, start: int) -> bool:
    return bool(
        _AVOIDED.search(text, max(0, start - 40), start)
        or _NOT_CALLED.match(text, start)
        or _NOT_CALLED.search(text, max(0, start - 60), start)
    )


# ... or says so after the deed: "Hiding the #ad is a no-go for us", "… ist tabu", "… está prohibido".
_FORBIDDEN_AFTER = re.compile(
    r"\s+(?:is|are)\s+(?:a\s+)?(?:total\s+|complete\s+|absolute\s+|big\s+|hard\s+|strict\s+)?(?:no-go|no go"
    r"|not (?:allowed|ok|okay|acceptable|an option|tolerated)|forbidden|prohibited|banned|off the table"
    r"|off-limits|out of the question|a dealbreaker)"
    r"|\s+(?:ist|sind)\s+(?:bei uns\s+|für uns\s+)?(?:absolut\s+|streng\s+|total\s+)?"
    r"(?:tabu|verboten|nicht erlaubt|ein no-go|untersagt)"
    # "Zweitaccounts brauchen wir nicht": what a brand does not want, said after it.
    r"|\s+(?:brauchen|wollen|möchten)\s+wir\s+(?:hier\s+|bei uns\s+|wirklich\s+)?(?:nicht|keine?|nie)\b"
    r"|\s+(?:es|son)\s+(?:un\s+)?(?:no rotundo|inaceptable|intolerable)"
    r"|\s+(?:está|están)\s+(?:prohibid[oa]s?|fuera de lugar)|\s+no\s+(?:está|están)\s+permitid[oa]s?"
    r"|[^。！？；.!?;]{0,8}?(?:是)?(?:绝对|坚决|严格)?(?:不行|不允许|禁止|不可以|不能接受|红线)"
)
# The object of a negation right before: "do not use bots", "keine Bots", "nada de bots".
_NEGATED_OBJECT = re.compile(
    r"\b(?:no|not|don'?t|do not|never|without|kein\w*|ohne|nie|niemals|nunca|sin|ni|nada de|jamás)\s+"
    r"(?:(?:want|need|expect|ask)\s+(?:you|anyone|people)\s+to\s+)?"
    r"(?:(?:use|using|buy|buying|get|nutze\w*|verwende\w*|kauf\w*|uses|usar|utilices|compres|compre)\s+)?"
    r"(?:any\s+|irgendwelche\s+|ningún\s+)?"
    # ... or of a list it opens: "do not use bots or engagement pods", "keine Views, keine Bots".
    r"(?:[\w-]+(?:\s+[\w-]+)?\s*(?:,|\bor\b|\band\b|\bnor\b|\bni\b|\boder\b|\bund\b|\bo\b|\by\b)\s*"
    r"(?:(?:no|kein\w*|ni|nor)\s+)?){0,3}"
    r"(?:(?:bought|fake|purchased|paid|gekauft\w*|gefälscht\w*|comprad\w*|fals\w*)\s+)?$"
)


# ... or a negated verb of saying whose "that"-clause holds it: "nicht behaupten, dass der Kaffee gegen
# Kopfschmerzen hilft", "never claim that it cures anything", "no digas que cura nada".
_NEGATED_CLAIM = re.compile(
    r"\b(?:not|don'?t|never|no|nicht|kein\w*|nie|niemals|nunca|jamás)\b(?:\W+\w+){0,2}?\W+"
    r"(?:say|claim|suggest|imply|promise|state|write|behaupt\w*|sag\w*|versprech\w*|schreib\w*|suggerier\w*"
    r"|digas|decir|afirm\w*|promet\w*|sugier\w*|escrib\w*)\W+(?:that|dass|daß|que)\b(?:\W+\w+){0,5}\W*$"
    # English drops the "that" ("don't say the coffee is healthy"): then the claim is the next few
    # words of the same clause, not past a sentence's end or a "but"/"instead".
    r"|\b(?:don'?t|do not|never|not)\s+(?:\w+\s+)?(?:say|claim|suggest|imply|promise|state)\b"
    r"(?:[^\w.!?;:]+(?!(?:but|instead|rather|and|then|so)\b)\w+){0,8}[^\w.!?;:]*$"
    # German puts the verb first: "Behaupte nicht, dass der Kaffee beim Abnehmen hilft".
    r"|\b(?:behaupte|behauptet|behaupten|sag|sage|sagt|sagen|schreib|schreibe|schreibt|versprich|versprecht"
    r"|versprechen|erzähl|erzähle|erzählt)\s+"
    r"(?:\w+\s+)?(?:nicht|nie|niemals)\W+(?:dass|daß)\b"
    # ... over the list of claims it names, up to another verb of saying.
    r"(?:[^\w.!?;:]+(?!(?:aber|sondern|und|dann|sag\w*|behaupt\w*|schreib\w*|erzähl\w*|versprech\w*|nenn\w*)\b)\w+){0,12}"
    r"[^\w.!?;:]*$"
)


@dataclass(frozen=True)
class NegatableAnyScript(Negatable):
    """Not after a negation in the words just before it ("please don't remove the #ad", "发布后不要删掉
    广告标识"); a negation inside the match is part of what it says ("不要标注广告")."""

    promotion: bool = False  # a sentiment pattern: a verb of avoiding before it forbids it too

    def search(self, text: str) -> str | None:
        for match in self.pattern.finditer(text):
            if _OPENS_WITH_REMINDER.match(match.group(0)) or _NEGATED_AFTER_VERB.match(text, match.start()):
                continue
            if _FORBIDDEN_AFTER.match(text, match.end()):
                continue
            if _LATIN_NEGATION.search(text, max(0, match.start() - 40), match.start()):
                continue
            if _NO_EDIT_TO.search(text, max(0, match.start() - 60), match.start()):
                continue
            claim = _CJK_NEGATED_CLAIM.search(text, max(0, match.start() - 30), match.start())
            if claim and not _CJK_TRUTH.search(text, claim.start(), match.end()):
                continue
            place = _NEGATED_PLACE.search(match.group(0))
            if place and not self.pattern.search(text, match.start(), match.start() + place.start()):
                continue
            if self.promotion and (
                _promotion_forbidden(text, match.start()) or _negatives_kept(text, match.start(), match.end())
            ):
                continue
            if _NEGATED_CLAIM.search(text, max(0, match.start() - 80), match.start()):
                continue
            if not_required(text, match.start(), match.end()):
                continue
            if self.negation is not None and self.negation.search(
                text, max(0, match.start() - 6), match.start()
            ):
                continue
            return match.group(0)
        return None


def _patterns(policies: Sequence[CompiledPolicy]) -> dict:
    key = tuple(policy.label for policy in policies)
    found = _COMPILED.get(key)
    if found is None:
        found = {"sentiment": [], "fake_engagement": [], "contest": [], "deceptive": []}
        words, phrases, shapes = set(), set(), []
        contest_terms = []
        languages = {}
        for policy in policies:
            languages.update(policy.data.get("languages", {}))
        for language, table in languages.items():
            negations = [re.escape(w) for w in table.get("rule_negations", []) if not w.isascii()]
            negation = re.compile("|".join(negations)) if negations else None
            found["sentiment"] += [
                Negatable(re.compile(p), negation, promotion=True) for p in table.get("sentiment", [])
            ]
            found["fake_engagement"] += [
                Negatable(re.compile(p), negation, latin=True) for p in table.get("fake_engagement", [])
            ]
            # These say a negation themselves ("nothing negative", "不要提广告"): only one before counts.
            deceptive = table.get("deceptive", []) + table.get("deceptive_more", [])
            found["deceptive"] += [NegatableAnyScript(re.compile(p), negation) for p in deceptive]
            found["sentiment"] += [
                NegatableAnyScript(re.compile(p), negation, promotion=True)
                for p in table.get("sentiment_extra", []) + table.get("sentiment_more", [])
            ]
            found["fake_engagement"] += [
                NegatableAnyScript(re.compile(p), negation) for p in table.get("fake_engagement_more", [])
            ]
            words.update(
                w.casefold() for w in table.get("allowed_words", []) + table.get("allowed_words_more", [])
            )
            phrases.update(table.get("allowed_phrases", []) + table.get("allowed_phrases_more", []))
            shapes += table.get("allowed_shapes", []) + table.get("allowed_shapes_more", [])
            found["sentiment"].append(_pair(language, table, "condition", "praise"))
            found["fake_engagement"].append(_pair(language, table, "engagement_verbs", "engagement_objects"))
            contest_terms += table.get("contest", []) + table.get("contest_unclear", [])
        found["sentiment"] = [p for p in found["sentiment"] if p is not None]
        found["fake_engagement"] = [p for p in found["fake_engagement"] if p is not None]
        found["contest"] = term_pattern_compile(contest_terms)
        found["words"] = frozenset(words)
        ordered = sorted(phrases, key=len, reverse=True)
        found["phrases"] = re.compile("|".join(re.escape(p) for p in ordered)) if ordered else None
        found["shapes"] = re.compile("|".join(f"(?:{p})" for p in shapes)) if shapes else None
        found["grammar"] = Grammar(languages)
        found["read"] = {}  # (instructions, names) -> _TextRead, for as long as these patterns stand
        _COMPILED[key] = found
    return found


def _first_match(patterns, text: str) -> str | None:
    for pattern in patterns:
        said = pattern.search(text)
        if said:
            return said
    return None


def is_contest(rules, policies: Sequence[CompiledPolicy]) -> bool:
    """A rule that mentions winning or a draw makes the campaign a contest (its wording says so)."""
    pattern = _patterns(policies)["contest"]
    return bool(pattern) and any(pattern.search(normalize(rule.instructions)) for rule in rules)


# Handles name people and brands; a hashtag can be the disclosure ("#ad") and is read as a word.
_TAGS = re.compile(r"@[\w.]+")
_HIDING = frozenset({"hide_payment"})
_CJK_SPACE = re.compile(r"(?<=[\u3400-\u9fff]) (?=[#\u3400-\u9fff])")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


# A brief's sentences end at these; not the point or colon inside a number ("1.000", "9:16").
_BRIEF_SENTENCES = re.compile(r"[.:](?!\d)|[!?;\n。！？；：]+")
# What a sentence says of the disclosure runs on past a colon or a semicolon.
_LABEL_CLAUSES = re.compile(r"\.(?!\d)|[!?\n。！？]+")
_QUESTION = re.compile(r"[?？]")


def _clauses_ended(text: str) -> list[tuple[str, str]]:
    """The text's clauses about the disclosure (`_LABEL_CLAUSES`), each with what ended it."""
    clauses, start = [], 0
    for end in _LABEL_CLAUSES.finditer(text):
        clauses.append((text[start : end.start()], end.group(0)))
        start = end.end()
    clauses.append((text[start:], ""))
    return clauses


# A list typed on one line ("- 20-45 seconds - daylight only - 'Ad' first"): a line that opens with
# a bullet has one item per bullet; a dash inside a sentence ("short - 30 seconds") ends nothing.
_BULLETED_LINE = re.compile(r"^[ \t]*[-•·▪*][ \t]+.*$", re.MULTILINE)
_BULLET = re.compile(r"[ \t][-•·▪*][ \t]+")


def _bullets_apart(text: str) -> str:
    return _BULLETED_LINE.sub(lambda line: _BULLET.sub("\n", line.group(0)), text)


def _hidden_across_bullets(text: str, grammar: Grammar) -> list[tuple[str, Reading]]:
    """A disclosure's place may stand in the item beside it on a one-line list ("- add #ad - after
    all your hashtags", "- #广告 - 放在所有话题标签后面"): each disclosing item is read with the next
    one, and must be understood with it."""
    hidden = []
    for line in _BULLETED_LINE.finditer(text):
        items = [item.strip(" -•·▪*") for item in _BULLET.split(line.group(0))]
        for at, item in enumerate(items):
            if not grammar.discloses(item):
                continue
            if at + 1 == len(items):
                continue
            joined = _CJK_SPACE.sub("", " ".join(items[at : at + 2]))
            if grammar.cued(joined, _HIDING):
                hidden.append((joined, Reading(BLOCK, "hide_payment", joined)))
            elif (reading := grammar.read(joined, asides=False)).verdict != ALLOW:
                hidden.append((joined, reading))  # not understood together: a person reads it
    return hidden


# "z. B.", "e.g.", "p. ej.": a point that ends no sentence.
_ABBREVIATIONS = re.compile(
    r"\b(?:z\. ?b\.|e\.g\.|i\.e\.|p\. ?ej\.|u\. ?a\.|d\. ?h\.|etc\.|usw\.|bzw\.|max\.|min\.|sek\.|ca\.|inkl\."
    r"|ggf\.|evtl\.)"
)
# An amount in brackets is data, not words: "the price ($4.99)", "den Preis (4,99 €)", also in
# full-width brackets.
_AMOUNT = re.compile(
    r"[(（]\s*(?:[$€£¥]\s*)?\d+(?:[.,:]\d+)?\s*(?:€|\$|£|eur|euros?|usd|dollars?|元|块|h|uhr)?\s*[)）]"
    # ... and a sum of money anywhere: "the $4.50 price", "den Preis von 4,20 € nennen".
    # A Chinese character may stand right before the amount ("提一下29.9元").
    r"|(?:\b(?:von|of|de|for|für|por)\s+)?(?:[$€£¥]\s*\d+(?:[.,]\d+)?"
    r"|(?:\b|(?<=[\u3400-\u9fff]))(?<![\d.,])\d+(?:[.,]\d+)?\s*(?:€|\$|£|eur\b|euros?\b|usd\b|(?:元|块)钱?的?))"
)


# A reminder asks for what follows, in every language: "don't forget to buy 1000 likes", "don't
# hesitate to", "vergiss nicht", "zögere nicht", "no olvides", "no dudes en", "别忘了", "不要犹豫".
# It is written as the request it is before anything is read, so that no negation in it ever
# counts as forbidding what follows (a bought like after "don't hesitate to" passed before).
_REMINDERS = (
    (re.compile(r"\b(?:don'?t|do not|never)\s+(?:forget|fail|neglect)\b"), "remember"),
    (re.compile(r"\b(?:don'?t|do not|never)\s+(?:hesitate|be afraid|be shy|be scared)\s+to\s+"), ""),
    (
        re.compile(
            r"\b(?:vergiss|vergesst|vergessen sie)\s+(?:bitte\s+|ja\s+|auf keinen fall\s+)?(?:nicht|nie)\b,?"
        ),
        "denk daran,",
    ),
    (re.compile(r"\b(?:vergiss|vergesst|vergessen sie)\b([^.!?;:\n]{1,60}?)\b(?:nicht|nie)\b"), r"denk an\1"),
    (re.compile(r"\b(?:zögere|zögert|zögern sie)\s+(?:bitte\s+)?(?:nicht|nie)\b,?\s*(?:und\s+)?"), ""),
    (
        re.compile(
            r"\b(?:que\s+)?no\s+(?:te\s+|se\s+te\s+|se\s+le\s+|se\s+os\s+)?(?:olvides|olvide|olvidéis|olvida)\s+(?:de\s+)?"
        ),
        "recuerda ",
    ),
    (re.compile(r"\bno\s+(?:dudes|dude|dudéis|tengas miedo de|tenga miedo de)\s+(?:en\s+)?"), ""),
    (re.compile(r"(?:千万)?(?:别|不要|不能)忘(?:了|记)?"), "记得"),
    (re.compile(r"(?:别|不要|不用)犹豫[，,]?"), ""),
    # A polite frame around a request is the request: "it would be great if you could tag us", "es
    # wäre toll, wenn du…", "nos gustaría que…", "希望你…"; what follows is read as asked for.
    (
        re.compile(
            r"\b(?:it\s+would\s+be\s+(?:great|nice|awesome|ideal|perfect|amazing|cool)|we'?d\s+(?:love|like)\s+it"
            r"|we\s+would\s+(?:love|like)\s+it)\s+if\s+you\s+(?:could\s+|can\s+|would\s+)?"
        ),
        "",
    ),
    (re.compile(r"\b(?:you\s+are|you'?re)\s+(?:required|expected|asked)\s+to\s+"), ""),
    (
        re.compile(
            r"\b(?:es\s+wäre\s+(?:toll|super|schön|klasse|prima|perfekt|ideal|cool)|wir\s+würden\s+uns\s+freuen"
            r"|wir\s+fänden\s+es\s+(?:toll|super|schön)),?\s+wenn\s+(?:du|sie|ihr)\s+"
        ),
        "",
    ),
    (
        re.compile(
            r"\b(?:nos\s+gustaría|me\s+gustaría|sería\s+(?:genial|ideal|perfecto|estupendo)|te\s+pedimos"
            r"|le\s+pedimos|os\s+pedimos|te\s+rogamos|le\s+rogamos)\s+que\s+"
        ),
        "",
    ),
    (re.compile(r"希望(?:你|您)|麻烦(?:你|您)?|请确保|确保"), "请"),
)


# Chat shorthand, written out before anything is read: a brief typed as a DM ("cud u tag us pls",
# "porfa pon q es publi", "bzw. per WeTransfer") asks what the same brief written out asks. Only
# forms that are no word of another language of the policies ("im" is German, "x" Spanish "por").
_SHORTHAND = {
    "u": "you",
    "ur": "your",
    "urs": "yours",
    "pls": "please",
    "plz": "please",
    "pleeease": "please",
    "thx": "thanks",
    "ty": "thanks",
    "n": "and",
    "b4": "before",
    "cud": "could",
    "wud": "would",
    "shud": "should",
    "ppl": "people",
    "vid": "video",
    "vids": "videos",
    "acc": "account",
    "accs": "accounts",
    "thru": "through",
    "tho": "though",
    "rn": "right now",
    "dont": "don't",
    "cant": "can't",
    "wont": "won't",
    "isnt": "isn't",
    "doesnt": "doesn't",
    "didnt": "didn't",
    "thats": "that's",
    "youre": "you're",
    "w/": "with",
    "w/o": "without",
    "q": "que",
    "xq": "porque",
    "pq": "porque",
    "porfa": "por favor",
    "porfi": "por favor",
    "tb": "también",
    "tmb": "también",
    "bzw": "beziehungsweise",
    "zw": "zwischen",
    "sek": "sekunden",
}
_SHORTHAND_WORDS = re.compile(
    r"(?<![\w'’/])("
    + "|".join(sorted(map(re.escape, _SHORTHAND), key=len, reverse=True))
    + r")(?![\w'’/])\.?"
)


def shorthand_written_out(text: str) -> str:
    """The lower-cased text with chat shorthand written out."""
    return _SHORTHAND_WORDS.sub(lambda found: _SHORTHAND[found.group(1)], text)


def reminders_as_requests(text: str) -> str:
    """The text with its shorthand written out and its reminders and polite frames written as the
    requests they are."""
    text = shorthand_written_out(text)
    for pattern, request in _REMINDERS:
        text = pattern.sub(request, text)
    return text


def _names_out(text: str, names: Sequence[str]) -> str:
    """The text without the brand as written, and its words joined any way ("Alpaca-Coffee-Dose")."""
    for words in (_WORDS.findall(normalize(name)) for name in names if name):
        if words:
            text = re.sub(r"[\s_.-]*".join(map(re.escape, words)), " ", text)
    return text


def sentences_read(text: str, patterns: dict, names: Sequence[str] = ()) -> list[tuple[str, Reading]]:
    """Each sentence of a rule's free text not made only of what a brand may ask once the allowed
    shapes in it are taken out, with how its structure reads (compliance.reading): understood as a
    task after all, an element of a blocked kind, or unknown (fail closed: JoyBack's review)."""
    unread = []
    text = _ABBREVIATIONS.sub(lambda found: found.group(0).replace(".", "").replace(" ", ""), text)
    # What the amount leaves is one space: "the $3.99 price tag" reads as "the price tag".
    text = re.sub(r"[ \t]{2,}", " ", _AMOUNT.sub(" ", text))
    text = re.sub(r"(?<=[\u3400-\u9fff]) (?=[\u3400-\u9fff])", "", text)
    unread.extend(_hidden_across_bullets(text, patterns["grammar"]))
    grammar = patterns["grammar"]
    # Whether the brief names the disclosure anywhere: a sentence that refers back to it ("switch it",
    # "the tag") before or after is about it too.
    labelled = grammar.names_label(text)
    for sentence in _BRIEF_SENTENCES.split(_bullets_apart(text)):
        rest = _names_out(_TAGS.sub(" ", sentence), names)
        if patterns["shapes"] is not None:
            rest = patterns["shapes"].sub(" ", rest)
        shaped = rest
        if patterns["phrases"] is not None:
            rest = patterns["phrases"].sub(" ", rest)
        written = normalize(_TAGS.sub(" ", sentence))
        disclosed = grammar.discloses(written)
        reading = _sentence_read(grammar, rest, shaped, written, patterns["words"], asides=not disclosed)
        # A disclosure the allowed shapes took out can still be made optional by what is left
        # ("Pon publi si quieres", "Add the #ad if you like"): such a sentence is read as written too.
        if reading.verdict == ALLOW and disclosed and grammar.cued(written, _HIDING):
            reading = grammar.read(written, asides=False)
        # A dislike the shapes or the honesty markers took out can still be cut from the video
        # ("si no te gusta, quítalo del vídeo").
        cut = grammar.cut_negatives.search(written) if grammar.cut_negatives is not None else None
        if reading.verdict != BLOCK and cut:
            reading = Reading(BLOCK, "suppress_negatives", cut.group(0).strip())
        if reading.verdict == ALLOW and MIXED_SCRIPT.search(written):
            reading = Reading(UNKNOWN_)
        if reading.verdict != ALLOW:
            unread.append((sentence.strip(), reading))
    return _disclosure_qualified(text, unread, grammar, names, labelled=labelled)


def _disclosure_qualified(text: str, unread: list, grammar, names: Sequence[str], *, labelled: bool) -> list:
    """`unread` with each clause that asks for the disclosure with more than where and how it stands.

    A disclosure may be asked for only plainly: nothing of how long, when, how small or on what
    condition ("Add #ad for the first day", "Add #ad. After a day, switch it."). What else a clause
    says beside it, or of it elsewhere, goes to a person; a colon or a semicolon does not end what it
    says of it ("Disclosure: the brand's post"). Such words go to a person as a disclosure qualified
    (`QUALIFIED`): the brand is told to ask for it plainly, and two staff members approve them, as
    words near hiding the payment."""
    clauses = _clauses_ended(_bullets_apart(text))
    for index, (clause, end) in enumerate(clauses):
        written = normalize(_names_out(_TAGS.sub(" ", clause), names))
        if not (grammar.names_label(written) or (labelled and grammar.refers_back(written))):
            continue
        if _QUESTION.search(end) or written.lstrip().startswith("¿"):
            answer = next((c for c, _e in clauses[index + 1 :] if c.strip()), "")
            if _answered_plainly(grammar, written, normalize(_names_out(_TAGS.sub(" ", answer), names))):
                unread = [(s, r) for s, r in unread if r.verdict == BLOCK or not (s in clause or s in answer)]
                continue
        elif grammar.placed_only(written):
            continue
        if index and grammar.answered_yes(written.strip()) and _QUESTION.search(clauses[index - 1][1]):
            continue  # the yes of a question that stands with it (above)
        qualified = Reading(UNKNOWN_, QUALIFIED, clause.strip())
        overlapping = [i for i, (s, _r) in enumerate(unread) if s in clause or clause.strip() in s]
        for i in overlapping:
            if unread[i][1] == Reading(UNKNOWN_):
                unread[i] = (unread[i][0], qualified)
        if not overlapping:
            unread.append((clause.strip(), qualified))
    return unread


def _answered_plainly(grammar, question: str, answer: str) -> bool:
    """Whether a question naming the disclosure asks it plainly and the clause after it is the bare
    yes that answers it ("Do we need #ad? Yes, every single time."). A question asks nothing on its
    own ("Do you need to use the #ad?"), and "Yes, at first" goes to a person."""
    return grammar.asks_plainly(question.strip(" ¿")) and grammar.answered_yes(answer.strip())


# Allowed words that can still take the label or the post away ("then remove it"): such a sentence is
# read by its structure, never passed for its words alone.
_REMOVAL = re.compile(
    r"\b(?:remov\w*|delet\w*|drop\w*|archiv\w*|unpublish\w*|take (?:it |them )?(?:down|off|out)"
    r"|entfern\w*|lösch\w*|quit\w*|borr\w*|elimin\w*)\b|删|去掉|撤|下架|隐藏"
    # ... or change the caption the label stands in ("on day three, update the caption to …").
    r"|\b(?:edit|chang|updat|shorten|trim|replac|swap|rewrit|kürz|änder|ersetz)\w*\s+(?:\w+\s+){0,2}caption\b"
    r"|\bkeep\s+(?:just|only)\s+(?:#|the\s+hashtags?\b)"
)


def _sentence_read(grammar, rest: str, shaped: str, written: str, words, *, asides: bool) -> Reading:
    """How one sentence reads: `rest` without the allowed shapes and phrases, `shaped` without the
    shapes only, `written` as written."""
    # Words that are each allowed can still say a blocked kind together ("if you didn't like it,
    # keep it to yourself"): a cue in what is left sends the sentence to be read as well.
    if not (
        _CJK.search(rest)
        or any(not w.isdigit() and w not in words for w in _WORDS.findall(rest))
        or grammar.cued(rest)
        or _REMOVAL.search(rest)
    ):
        return Reading(ALLOW)
    reading = grammar.read(rest, asides=asides)
    if reading.verdict != ALLOW and shaped != rest:
        # Without the allowed phrases taken out too: a phrase can cut a lawful negation in two
        # ("不要" of "不要花钱买播放").
        alone = grammar.read(shaped, asides=asides)
        # A blocked kind's element the phrases cut apart ("广告标识放到最后"): blocked if the sentence
        # as written is blocked too (below).
        if alone.verdict == ALLOW or (alone.verdict == BLOCK and reading.verdict != BLOCK):
            reading = alone
    if reading.verdict != ALLOW:
        # The shapes are tried one after another, not longest first: a shorter one can cut a lawful
        # phrase in two ("不要买粉" of "不要买粉丝或刷播放"). The sentence as written is read too:
        # allowed if either reading allows it, blocked only if both block it.
        whole = grammar.read(written)
        if whole.verdict == ALLOW:
            return whole
        if whole.verdict != BLOCK or reading.verdict == UNKNOWN_:
            reading = whole
    return reading


def brand_names(brand: str, others: Sequence[str] = (), patterns: dict | None = None) -> list[str]:
    """The brand as a brief names it: in full, by its first word, and by the other names and handles
    staff configured for it ("羊驼咖啡"), each only if it says nothing of a blocked kind itself."""
    short = brand_short_name(brand)
    names = [brand, short] if short else [brand]
    grammar = patterns["grammar"] if patterns else None
    for other in others:
        written = normalize(other)
        if (
            grammar is not None
            and not grammar.cued(written)
            and not (grammar.veto and grammar.veto.search(written))
        ):
            names.append(other)
    return names


def not_understood(text: str, patterns: dict, names: Sequence[str] = ()) -> str | None:
    """The first sentence of a rule's free text not understood as allowed, or None."""
    unread = sentences_read(text, patterns, names)
    return unread[0][0] if unread else None


# What each blocked kind asks for, in the words a brand and JoyBack's reviewers read.
QUALIFIED = "qualified_disclosure"
KIND_NAMES = {
    QUALIFIED: gettext_lazy("a disclosure asked for with more than where it stands"),
    "hide_payment": gettext_lazy("hiding that the post is paid"),
    "false_testimony": gettext_lazy("a testimony that is not the creator's own"),
    "suppress_negatives": gettext_lazy("keeping negatives out"),
    "require_persuasion": gettext_lazy("a video that must persuade"),
    "rating_condition": gettext_lazy("a rating as the condition"),
    "scripted_superlative": gettext_lazy("a scripted superlative"),
    "fake_engagement": gettext_lazy("fake or bought engagement"),
}

# A sentence read as an element of a blocked kind, as the finding that kind makes.
KIND_FINDINGS = {
    "hide_payment": "deceptive_instruction",
    "false_testimony": "deceptive_instruction",
    "suppress_negatives": "sentiment_conditioned",
    "require_persuasion": "sentiment_conditioned",
    "rating_condition": "sentiment_conditioned",
    "scripted_superlative": "sentiment_conditioned",
    "fake_engagement": "fake_engagement",
}


# A hashtag that says the post is not an ad, or not paid: "#notanad", "#keinewerbung", "#sinpubli", "#非广告".
_DENIED_TAG = re.compile(
    r"(?:not|no|non|un|kein\w*|nicht|sin|ohne|不是|非|无|没)(?:an?|e|es)?(?:ad|ads|sponsored|paid|werbung|anzeige|publi\w*|广告|赞助)"
)


def _brief_value_doubtful(brief: dict, patterns: dict) -> str | None:
    """A brief's free-standing values (the product to name, the hashtags) read like free text: one
    that holds a blocked kind's element or denies the ad goes to review like a sentence would."""
    grammar = patterns["grammar"]
    for value in [brief.get("mention") or "", *(brief.get("hashtags") or [])]:
        words = normalize(re.sub(r"(?<=[a-z])(?=[A-Z])", " ", value.lstrip("#")))
        if not words:
            continue
        if (
            _DENIED_TAG.search(words.replace(" ", ""))
            or (grammar.veto is not None and grammar.veto.search(words))
            or _first_match(patterns["deceptive"], words)
            or _first_match(patterns["sentiment"], words)
            or _first_match(patterns["fake_engagement"], words)
        ):
            return value
    return None


def _qualified_message(rule: str, said: str) -> str:
    return _(
        "Rule “%(rule)s” asks for the disclosure with more than where it stands (“%(said)s”). A "
        "disclosure stays as long as the post, in full view, whatever happens: ask for it plainly "
        "(“Put #ad at the start of the caption”) or tick “Switch on the paid-partnership label” in the "
        "rule's settings, and nothing waits. Otherwise two of JoyBack's team read these words before "
        "the campaign can go live."
    ) % {"rule": rule, "said": said[:120]}


def _kind_message(code: str, rule: str, said: str) -> str:
    if code == "fake_engagement":
        return _(
            "Rule “%(rule)s” asks for fake or bought engagement (“%(said)s”), which is banned "
            "(FTC 16 CFR 465.8)."
        ) % {"rule": rule, "said": said}
    if code == "sentiment_conditioned":
        return _(
            "Rule “%(rule)s” conditions the reward on a sentiment (“%(said)s”). An incentive may never "
            "depend on a positive opinion (FTC 16 CFR 465, EU UCPD): ask for an honest post instead."
        ) % {"rule": rule, "said": said}
    return _(
        "Rule “%(rule)s” asks people to hide that they are paid or to say something untrue (“%(said)s”). A "
        "paid post must say so, and a testimony must be the person's own (FTC 16 CFR 255 and 465, EU UCPD): "
        "remove it."
    ) % {"rule": rule, "said": said}


# A line in quotes, up to a short sentence long.
_QUOTE = re.compile(r"[\"“„«「『‘]([^\"“”„«»「」『』‘’。！？.!?]{1,48})[\"”»」』’“]")
# What a disclosure said as a sentence holds besides the disclosure and the brand: "This video is an ad
# for Alpaca Coffee", „Werbung für Alpaca Coffee“, «Sorteo con Alpaca Coffee», “本视频是羊驼咖啡的广告”.
_STATEMENT = re.compile(
    r"\b(?:this|the|video|post|is|it'?s|an?|for|with|by|in|from|dieses|das|video|ist|eine?|mit|für|von|este"
    r"|vídeo|video|es|una?|con|de|del|para|en)\b|本视频|这条视频|这个视频|视频|这是|本条|是|的|和|与|跟|合作的?|活动"
)


def _statement_disclosed(content: str, patterns: dict, names: Sequence[str]) -> str | None:
    """The disclosure and giveaway terms of a quoted line that says only that the video is an ad or a
    giveaway of the brand, or None: such a line is the label, not a scripted opinion."""
    grammar = patterns["grammar"]
    if grammar.disclosed is None:
        return None
    said = [found.group(0) for found in grammar.disclosed.finditer(content)]
    giveaway = (
        [found.group(0) for found in patterns["contest"].finditer(content)] if patterns["contest"] else []
    )
    if not said and not giveaway:
        return None
    rest = grammar.disclosed.sub(" ", content)
    if patterns["contest"] is not None:
        rest = patterns["contest"].sub(" ", rest)
    for words in (_WORDS.findall(normalize(name)) for name in names if name):
        if words:
            rest = re.sub(r"[\s_.-]*".join(map(re.escape, words)), " ", rest)
    rest = _STATEMENT.sub(" ", rest)
    return None if re.search(r"\w", rest) else " ".join([*said, *giveaway])


def _instructions_prepared(instructions: str, patterns: dict, names: Sequence[str] = ()) -> str:
    text = reminders_as_requests(normalize(instructions))
    if patterns["grammar"].quoted is not None:
        # A label in quotes is the label, not a scripted line: 'Begin with "Ad |"', „Werbung“.
        text = patterns["grammar"].quoted.sub(r" \1 ", text)
    # ... and so is a line that only says the video is the brand's ad.
    return _QUOTE.sub(
        lambda quote: (
            f" {label} "
            if (label := _statement_disclosed(quote.group(1), patterns, names))
            else quote.group(0)
        ),
        text,
    )


@dataclass(frozen=True)
class _TextRead:
    text: str  # as prepared for the patterns
    hidden: str | None  # what the deceptive patterns found, for sure
    sentiment: str | None  # ... the sentiment patterns
    bought: str | None  # ... the fake engagement patterns
    unread: tuple[tuple[str, Reading], ...]  # the sentences not read as allowed (sentences_read)


_TEXTS_READ_AT_MOST = 4096


def _text_read(instructions: str, patterns: dict, names: Sequence[str]) -> _TextRead:
    """What the patterns find in a rule's free text, read once per text and patterns: the review
    queue and the campaign's page ask again on every load."""
    memo, key = patterns["read"], (instructions, tuple(names))
    found = memo.get(key)
    if found is None:
        text = _instructions_prepared(instructions, patterns, names)
        found = _TextRead(
            text=text,
            hidden=_first_match(patterns["deceptive"], text) if text else None,
            sentiment=_first_match(patterns["sentiment"], text) if text else None,
            bought=_first_match(patterns["fake_engagement"], text) if text else None,
            unread=tuple(sentences_read(text, patterns, names)) if text else (),
        )
        if len(memo) >= _TEXTS_READ_AT_MOST:
            memo.clear()
        memo[key] = found
    return found


def instructions_unread(
    instructions: str, policies: Sequence[CompiledPolicy], *, brand: str, others: Sequence[str] = ()
) -> list[tuple[str, Reading]]:
    """The sentences of a rule's free text JoyBack cannot read as allowed on its own, each with how
    it reads: an element of a blocked kind, or not understood."""
    patterns = _patterns(policies)
    return list(_text_read(instructions, patterns, brand_names(brand, others, patterns)).unread)


def rules_lint(
    rules,
    policies: Sequence[CompiledPolicy],
    *,
    approved: frozenset = frozenset(),
    sure_approved: frozenset = frozenset(),
) -> list[Finding]:
    """What each rule's settings and free text say. `approved` holds the instructions (as written)
    JoyBack's review approved; free text not understood otherwise is a blocking
    `instructions_review` until then. `sure_approved`: words two staff members approved although
    the patterns refuse them for sure (on the brand's request); nothing else lifts such a refusal."""
    patterns = _patterns(policies)
    findings = []
    for rule in rules:
        before = len(findings)
        name = rule.get_trigger_display()
        brand = getattr(getattr(rule, "campaign", None), "brand", None)
        names = brand_names(getattr(brand, "name", ""), getattr(brand, "sponsor_names", ()), patterns)
        read = _text_read(rule.instructions, patterns, names)
        text = read.text
        # Words two staff members approved on the brand's appeal: what the patterns are sure of too.
        sure_lifted = rule.instructions.strip() in sure_approved
        hidden = read.hidden if not sure_lifted else None
        if hidden:
            findings.append(
                Finding(
                    "deceptive_instruction",
                    True,
                    rule.pk,
                    _(
                        "Rule “%(rule)s” asks people to hide that they are paid or to say something untrue "
                        "(“%(said)s”). A paid post must say so, and a testimony must be the person's own "
                        "(FTC 16 CFR 255 and 465, EU UCPD): remove it."
                    )
                    % {"rule": name, "said": hidden},
                    appealable=True,
                )
            )
        said = read.sentiment if not sure_lifted else None
        if said:
            findings.append(
                Finding(
                    "sentiment_conditioned",
                    True,
                    rule.pk,
                    _(
                        "Rule “%(rule)s” conditions the reward on a sentiment (“%(said)s”). An incentive may "
                        "never depend on a positive opinion (FTC 16 CFR 465, EU UCPD): ask for an honest "
                        "post instead."
                    )
                    % {"rule": name, "said": said},
                    appealable=True,
                )
            )
        bought = read.bought if not sure_lifted else None
        if bought:
            findings.append(
                Finding(
                    "fake_engagement",
                    True,
                    rule.pk,
                    _(
                        "Rule “%(rule)s” asks for fake or bought engagement (“%(said)s”), which is banned "
                        "(FTC 16 CFR 465.8)."
                    )
                    % {"rule": name, "said": bought},
                    appealable=True,
                )
            )
        counts_others = rule.min_likes or rule.min_comments or rule.trigger == "view_threshold"
        if rule.trigger in OWN_POST_TRIGGERS and counts_others:
            if rule.verification_mode == "instant":
                findings.append(
                    Finding(
                        "unchecked_engagement",
                        True,
                        rule.pk,
                        _(
                            "Rule “%(rule)s” pays for likes, comments or views others give the person's "
                            "own post with no window to check they are real: that buys engagement. Use "
                            "verification after an engagement window."
                        )
                        % {"rule": name},
                    )
                )
            elif rule.min_likes or rule.min_comments:
                findings.append(
                    Finding(
                        "engagement_threshold",
                        False,
                        rule.pk,
                        _(
                            "Rule “%(rule)s” pays on likes or comments others give the person's post. "
                            "Bought engagement is filtered before paying, but tell people not to buy or "
                            "swap likes."
                        )
                        % {"rule": name},
                    )
                )
        blocked = any(finding.blocking for finding in findings[before:])
        unread = list(read.unread) if not blocked else []
        kinds = [(reading.kind, reading.said) for _sentence, reading in unread if reading.verdict == BLOCK]
        words_approved = rule.instructions.strip() in approved
        if kinds and not words_approved:
            # Not understood, and an element of a blocked kind in it: blocked as that kind, until a
            # person reads the words and finds them lawful.
            kind, cue = kinds[0]
            code = KIND_FINDINGS.get(kind, "deceptive_instruction")
            message = _(
                "Rule “%(rule)s” may ask for %(kind)s (“%(said)s”), which the law forbids. JoyBack's team "
                "reads these words before the campaign can go live: change them, or keep them if you are "
                "sure they are lawful."
            ) % {"rule": name, "kind": KIND_NAMES.get(kind, kind), "said": cue}
            findings.append(Finding(code, True, rule.pk, message, reviewable=True))
            said = said or (cue if code == "sentiment_conditioned" else None)
        elif unread and not kinds and not words_approved:
            qualified = [sentence for sentence, reading in unread if reading.kind == QUALIFIED]
            findings.append(
                Finding(
                    "instructions_review",
                    True,
                    rule.pk,
                    reviewable=True,
                    message=_qualified_message(name, qualified[0])
                    if qualified
                    else _(
                        "Rule “%(rule)s” says more than JoyBack can check on its own (“%(said)s”). Use the "
                        "rule's settings for what people must do, or keep the text: JoyBack's team reviews "
                        "it before the campaign can go live, and tells you what to change."
                    )
                    % {"rule": name, "said": unread[0][0][:120]},
                )
            )
        odd = _brief_value_doubtful(getattr(rule, "brief", None) or {}, patterns)
        if odd and odd not in approved:
            findings.append(
                Finding(
                    "instructions_review",
                    True,
                    rule.pk,
                    reviewable=True,
                    message=_(
                        "Rule “%(rule)s” says more than JoyBack can check on its own (“%(said)s”). Use the "
                        "rule's settings for what people must do, or keep the text: JoyBack's team reviews "
                        "it before the campaign can go live, and tells you what to change."
                    )
                    % {"rule": name, "said": odd[:120]},
                )
            )
        if text and "review" in text and not said:
            findings.append(
                Finding(
                    "review_incentive",
                    False,
                    rule.pk,
                    _(
                        "Rule “%(rule)s” rewards a review: any opinion must earn it, and the review must "
                        "say it was rewarded."
                    )
                    % {"rule": name},
                )
            )
    return findings
