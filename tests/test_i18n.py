# ruff: noqa: RUF001  (Chinese text uses full-width punctuation on purpose)
"""People read JoyBack in German, Spanish and Simplified Chinese; the catalogs are complete and compiled.

The page tests pick the language the way a browser does (Accept-Language) or the way the switcher
does (POST /i18n/setlang/). The catalog tests read the .po and .mo files in pure Python, so they
need no GNU gettext on the machine that runs them.
"""

import ast
import gettext
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

LOCALE = Path(settings.BASE_DIR) / "locale"
LANGS = {
    "de": "nplurals=2; plural=(n != 1);",
    "es": "nplurals=2; plural=(n != 1);",
    "zh_Hans": "nplurals=1; plural=0;",
}
LANDING = "/c/summer-glow/"
PLACEHOLDER = re.compile(r"%\(\w+\)s|%%")


def page_text(response) -> str:
    """The visible text of a response, tags dropped and white space collapsed."""
    html = response.content.decode()
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def html_lang(response) -> str:
    return re.search(r'<html lang="([^"]+)"', response.content.decode()).group(1)


# ---- the pages, in the browser's language ----------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("accept_language", "lang", "expected"),
    [
        (
            "de-DE,de;q=0.9,en;q=0.8",
            "de",
            [
                "Verdiene bis zu",
                "Direkt auf dein Bankkonto überwiesen. Keine Punkte, keine Gutscheine.",
                "Das ist bezahlte Werbung.",
                "So sicherst du dir dein Geld",
                "Verbinde dein TikTok-Konto",
                "Wohin sollen wir dein Geld überweisen?",
            ],
        ),
        (
            "es-ES,es;q=0.9",
            "es",
            [
                "Gana hasta",
                "Directo a tu cuenta bancaria. Sin puntos ni tarjetas regalo.",
                "Esto es publicidad pagada.",
                "Cómo conseguir tu dinero",
                "Conecta tu cuenta de TikTok",
                "¿A dónde te enviamos el dinero?",
            ],
        ),
        (
            # What Chrome and Firefox send in mainland China; LocaleMiddleware maps zh-cn to zh-hans.
            "zh-CN,zh;q=0.9",
            "zh-hans",
            [
                "最高可赚",
                "直接打到您的银行账户。没有积分，没有礼品卡。",
                "这是付费推广（广告）。",
                "如何赚取",
                "连接您的 TikTok 账户",
                "我们该把钱打到哪里？",
            ],
        ),
    ],
)
def test_the_landing_page_speaks_the_browsers_language(client, summer, accept_language, lang, expected):
    response = client.get(LANDING, headers={"Accept-Language": accept_language})

    assert response.status_code == 200
    assert html_lang(response) == lang
    assert response["Content-Language"] == lang
    text = page_text(response)
    for phrase in expected:
        assert phrase in text, phrase
    for english in ("Earn up to", "How to earn it", "Connect your TikTok", "Where should we send"):
        assert english not in text, english


@pytest.mark.django_db
@pytest.mark.parametrize("accept_language", ["zh-hans", "zh-Hans-CN", "zh-CN", "zh"])
def test_every_simplified_chinese_header_selects_zh_hans(client, summer, accept_language):
    response = client.get(LANDING, headers={"Accept-Language": accept_language})

    assert html_lang(response) == "zh-hans"
    assert "如何赚取" in page_text(response)


@pytest.mark.django_db
def test_english_stays_the_default(client, summer):
    response = client.get(LANDING, headers={"Accept-Language": "fr-FR,fr;q=0.9"})

    assert html_lang(response) == "en"
    assert "How to earn it" in page_text(response)


@pytest.mark.django_db
def test_the_steps_fragment_is_german(client, summer):
    response = client.get(
        reverse("verification:steps", args=[summer.slug]),
        headers={"Accept-Language": "de", "HX-Request": "true"},
    )

    text = page_text(response)
    assert "TikTok verbinden" in text
    assert "Wir lesen dein öffentliches Profil (Name und Follower-Zahl)" in text
    assert "Per WhatsApp anmelden" in text
    # The share step waits for the login; the step's name goes into the German sentence.
    assert "Wird nach „Verbinde dein TikTok-Konto“ freigeschaltet." in text


@pytest.mark.django_db
def test_the_payee_form_fragment_is_german(client, summer):
    response = client.get(
        reverse("payouts:payee", args=[summer.slug]),
        headers={"Accept-Language": "de", "HX-Request": "true"},
    )

    assert response.status_code == 200
    text = page_text(response)
    for phrase in (
        "Wohin sollen wir dein Geld überweisen?",
        "Vollständiger Name, wie bei deiner Bank hinterlegt",
        "WhatsApp-Nummer",
        "IBAN",
        "Ich bin einverstanden, dass JoyBack diese Angaben verarbeitet",
        "Mein Geld auszahlen",
    ):
        assert phrase in text, phrase
    assert "Send me my money" not in text


@pytest.mark.django_db
def test_live_iban_feedback_explains_a_typo_in_spanish(client):
    response = client.post(
        reverse("payouts:iban_feedback"),
        {"iban": "DE89 3704 0044 0532 0130 01"},
        headers={"Accept-Language": "es"},
    )

    assert "Los dígitos de control del IBAN no coinciden" in page_text(response)


@pytest.mark.django_db
def test_a_refused_iban_is_explained_in_spanish(client, summer):
    from tests.conftest import rewarded_in_browser

    rewarded_in_browser(client, summer)

    response = client.post(
        reverse("payouts:payee", args=[summer.slug]),
        {"name": "Pat Example", "email": "pat@example.com", "iban": "US12 3456", "consent": "on"},
        headers={"Accept-Language": "es", "HX-Request": "true"},
    )

    assert response.status_code == 400
    text = page_text(response)
    assert "no es un país que use IBAN" in text
    assert "¿A dónde te enviamos el dinero?" in text


@pytest.mark.django_db
def test_the_language_switcher_wins_over_the_browser(client, summer):
    response = client.post("/i18n/setlang/", {"language": "es", "next": LANDING})

    assert response.status_code == 302
    assert response["Location"] == LANDING
    response = client.get(LANDING, headers={"Accept-Language": "de"})
    assert html_lang(response) == "es"
    assert "Cómo conseguir tu dinero" in page_text(response)
    assert '<option value="es" selected>' in response.content.decode()


# ---- the catalogs ----------------------------------------------------------------------------


def _unquote(literal: str) -> str:
    return ast.literal_eval(literal)


def po_entries(path: Path) -> list[dict]:
    """Each entry of a .po file: msgctxt, msgid, msgid_plural, msgstr (list), flags. Obsolete ones dropped."""
    entries = []
    for block in re.split(r"\n\s*\n", path.read_text(encoding="utf-8").strip()):
        entry = {"msgctxt": None, "msgid": None, "msgid_plural": None, "msgstr": {}, "flags": set()}
        field = None
        for line in block.splitlines():
            if line.startswith("#,"):
                entry["flags"] |= {flag.strip() for flag in line[2:].split(",")}
            elif line.startswith("#"):
                continue
            elif match := re.match(r"(msgctxt|msgid_plural|msgid|msgstr(?:\[(\d+)\])?) (\".*\")$", line):
                keyword, index, literal = match.groups()
                if keyword.startswith("msgstr"):
                    field = ("msgstr", int(index or 0))
                    entry["msgstr"][field[1]] = _unquote(literal)
                else:
                    field = (keyword, None)
                    entry[keyword] = _unquote(literal)
            elif line.startswith('"'):
                name, index = field
                if name == "msgstr":
                    entry["msgstr"][index] += _unquote(line)
                else:
                    entry[name] += _unquote(line)
            else:
                raise AssertionError(f"{path}: cannot read {line!r}")
        if entry["msgid"] is not None:
            entries.append(entry)
    return entries


def catalog(lang: str) -> tuple[dict, list[dict]]:
    entries = po_entries(LOCALE / lang / "LC_MESSAGES" / "django.po")
    header, messages = entries[0], entries[1:]
    assert header["msgid"] == ""
    fields = dict(line.split(": ", 1) for line in header["msgstr"][0].splitlines() if ": " in line)
    return fields, messages


@pytest.mark.parametrize("lang", LANGS)
def test_the_catalog_header_names_the_language_and_its_plurals(lang):
    fields, _ = catalog(lang)

    assert fields["Language"] == lang
    assert fields["Plural-Forms"] == LANGS[lang]
    assert fields["Content-Type"] == "text/plain; charset=UTF-8"


@pytest.mark.parametrize("lang", LANGS)
def test_every_message_is_translated_and_none_is_fuzzy(lang):
    _, messages = catalog(lang)
    nplurals = int(re.search(r"nplurals=(\d)", LANGS[lang]).group(1))

    assert len(messages) > 250
    fuzzy = [m["msgid"] for m in messages if "fuzzy" in m["flags"]]
    untranslated = [m["msgid"] for m in messages if not all(m["msgstr"].values())]
    wrong_plurals = [
        m["msgid"] for m in messages if m["msgid_plural"] is not None and len(m["msgstr"]) != nplurals
    ]
    assert fuzzy == []
    assert untranslated == []
    assert wrong_plurals == []


# One register per language: German and Spanish speak to people as du/tú, Chinese as 您. (A German
# "Sie"/"Ihre" that opens a sentence is "they"/"their", so only one inside a sentence counts.)
REGISTER = {
    "de": re.compile(r"(?<![.:!?] )(?<!^)\b(Sie|Ihnen|Ihre?[mnrs]?)\b"),
    "es": re.compile(r"\b(usted|ustedes)\b", re.IGNORECASE),
    "zh_Hans": re.compile("你"),
}


@pytest.mark.parametrize("lang", LANGS)
def test_each_language_keeps_one_register(lang):
    _, messages = catalog(lang)

    mixed = [text for m in messages for text in m["msgstr"].values() if REGISTER[lang].search(text)]
    assert mixed == []


# Spanish rarely says "usted": the formal register shows in its verbs and in "su"/"sus" for "your".
USTED = re.compile(
    r"\b(Introduzca|Compruebe|Haga|Elija|Indique|Confirme|Use|Guarde|Escriba|Pulse|Revise|inténtelo|"
    r"pídanos|verá|le enviamos|le enviaremos|al registrarse)\b"
)
USTED_YOUR = re.compile(r"\b(sus datos|su dirección|su nombre|su marca|su cuenta)\b")


def test_spanish_speaks_to_the_reader_as_tu_in_its_verbs_and_possessives():
    _, messages = catalog("es")

    formal = [
        text
        for m in messages
        for text in m["msgstr"].values()
        if USTED.search(text) or (re.search(r"\b[Yy]our\b", m["msgid"]) and USTED_YOUR.search(text))
    ]
    assert formal == []


@pytest.mark.parametrize("lang", LANGS)
def test_translations_keep_every_placeholder_and_brand_name(lang):
    _, messages = catalog(lang)

    problems = []
    for message in messages:
        wanted = sorted(PLACEHOLDER.findall(message["msgid"]))
        for text in message["msgstr"].values():
            if sorted(PLACEHOLDER.findall(text)) != wanted:
                problems.append((message["msgid"], text))
            for name in ("JoyBack", "TikTok", "WhatsApp", "IBAN", "SEPA", "STOP"):
                if name in message["msgid"] and name not in text:
                    problems.append((message["msgid"], text))
    assert problems == []


@pytest.mark.parametrize("lang", LANGS)
def test_the_compiled_catalog_matches_the_po_file(lang):
    """The .mo files are committed (servers need no gettext); a stale one would show English."""
    _, messages = catalog(lang)
    with (LOCALE / lang / "LC_MESSAGES" / "django.mo").open("rb") as mo:
        compiled = gettext.GNUTranslations(mo)

    stale = []
    for m in messages:
        if m["msgid_plural"] is not None:
            for n, index in ((1, 0), (2, 1 if len(m["msgstr"]) > 1 else 0)):
                if compiled.ngettext(m["msgid"], m["msgid_plural"], n) != m["msgstr"][index]:
                    stale.append(m["msgid"])
        elif m["msgctxt"] is not None:
            if compiled.pgettext(m["msgctxt"], m["msgid"]) != m["msgstr"][0]:
                stale.append(m["msgid"])
        elif compiled.gettext(m["msgid"]) != m["msgstr"][0]:
            stale.append(m["msgid"])
    assert stale == [], "run: manage.py compilemessages --ignore=.venv"


# ---- every marked string of the project is in the catalogs -------------------------------------

SOURCE_SKIP = {".venv", "tests", "static", "staticfiles", "artifacts", "locale", "migrations", "node_modules"}
GETTEXT_CALLS = {
    "_": (None, 0, None),
    "gettext": (None, 0, None),
    "gettext_lazy": (None, 0, None),
    "gettext_noop": (None, 0, None),
    "ngettext": (None, 0, 1),
    "ngettext_lazy": (None, 0, 1),
    "pgettext": (0, 1, None),
    "pgettext_lazy": (0, 1, None),
}
TRANSLATE_TAG = re.compile(
    r"""{%\s*(?:translate|trans)\s+(?P<q>["'])(?P<msg>.*?)(?P=q)"""
    r"""(?:\s+context\s+(?P<cq>["'])(?P<ctx>.*?)(?P=cq))?[^%]*%}"""
)
BLOCK_TAG = re.compile(
    r"{%\s*(?:blocktranslate|blocktrans)(?P<opts>[^%]*)%}(?P<body>.*?)"
    r"(?:{%\s*plural\s*%}(?P<plural>.*?))?{%\s*(?:endblocktranslate|endblocktrans)\s*%}",
    re.S,
)
TEMPLATE_UNDERSCORE = re.compile(r"""_\((["'])(.*?)\1\)""")


def _source_files(suffix: str):
    for path in Path(settings.BASE_DIR).rglob(f"*{suffix}"):
        if not SOURCE_SKIP & set(path.relative_to(settings.BASE_DIR).parts):
            yield path


def _python_messages():
    for path in _source_files(".py"):
        source = path.read_text(encoding="utf-8")
        if "django.utils.translation" not in source:
            continue
        for node in ast.walk(ast.parse(source)):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            if node.func.id not in GETTEXT_CALLS:
                continue
            ctx_at, msg_at, _plural_at = GETTEXT_CALLS[node.func.id]
            args = node.args
            if len(args) <= msg_at or not isinstance(args[msg_at], ast.Constant):
                continue
            ctx = args[ctx_at].value if ctx_at is not None else None
            yield (ctx, args[msg_at].value), f"{path.name}:{node.lineno}"


def _block_msgid(body: str, trimmed: bool) -> str:
    if trimmed:
        body = " ".join(line.strip() for line in body.strip().splitlines() if line.strip())
    body = body.replace("%", "%%")
    return re.sub(r"{{\s*(\w+)\s*}}", r"%(\1)s", body)


def _template_messages():
    for path in _source_files(".html"):
        source = path.read_text(encoding="utf-8")
        for match in TRANSLATE_TAG.finditer(source):
            yield (match["ctx"], match["msg"]), path.name
        for match in BLOCK_TAG.finditer(source):
            opts = match["opts"]
            context = re.search(r"""context\s+(["'])(.*?)\1""", opts)
            trimmed = "trimmed" in opts.split()
            yield (context.group(2) if context else None, _block_msgid(match["body"], trimmed)), path.name
        for match in TEMPLATE_UNDERSCORE.finditer(source):
            yield (None, match.group(2)), path.name


@pytest.mark.parametrize("lang", LANGS)
def test_every_marked_string_of_the_project_is_in_the_catalog(lang):
    """A string marked for translation but missing here shows in English: re-run makemessages."""
    _, messages = catalog(lang)
    known = {(m["msgctxt"], m["msgid"]) for m in messages}
    found = [*_python_messages(), *_template_messages()]

    assert len(found) > 250
    missing = sorted({f"{where}: {key[1]!r}" for key, where in found if key not in known})
    assert missing == [], (
        "makemessages -l de -l es -l zh_Hans --ignore=.venv --ignore=tests --ignore=static "
        "--ignore=staticfiles --ignore=artifacts; translate; compilemessages --ignore=.venv"
    )


# ---- the sign-in and account pages the libraries draw speak in the project's register ----------

# What the libraries' own German and Spanish catalogs say in the formal register, found by a reader:
# "Sie"/"Ihr" (not "sie", they), and Spanish "su"/"sus" with a usted verb.
FORMAL_PAGE = {
    "de": re.compile(r"\b(?:Sie|Ihnen|Ihre?[mnrs]?)\b"),
    "es": re.compile(
        r"\b(?:usted|su|sus|Introduzca|Ingrese|Utilice|vuelva|Escanee|Está seguro|Ha olvidado"
        r"|Puede guardar)\b"
    ),
}
ACCOUNT_PAGES = {
    "anonymous": ["/accounts/login/", "/accounts/signup/", "/accounts/password/reset/"],
    "signed in": [
        "/accounts/2fa/totp/activate/",
        "/accounts/2fa/recovery-codes/generate/",
        "/accounts/reauthenticate/",
        "/accounts/email/",
        "/accounts/password/change/",
    ],
}


@pytest.mark.parametrize("lang", ["de", "es"])
def test_the_sign_in_and_security_pages_keep_the_projects_register(lang, make_user, alice):
    from tests.conftest import PASSWORD, SignedInClient

    anonymous, signed_in = (
        SignedInClient(HTTP_ACCEPT_LANGUAGE=lang),
        SignedInClient(HTTP_ACCEPT_LANGUAGE=lang),
    )
    signed_in.force_login(make_user("new@alpaca.example"))
    pages = [(anonymous, path) for path in ACCOUNT_PAGES["anonymous"]]
    pages += [(signed_in, path) for path in ACCOUNT_PAGES["signed in"]]
    texts = {path: client.get(path).content.decode() for client, path in pages}
    # The second factor's step of signing in, as Alice (who has one) meets it.
    answer = SignedInClient(HTTP_ACCEPT_LANGUAGE=lang).post(
        "/accounts/login/", {"login": alice.email, "password": PASSWORD}, follow=True
    )
    texts["/accounts/2fa/authenticate/"] = answer.content.decode()

    formal = {
        path: sorted(set(FORMAL_PAGE[lang].findall(re.sub(r"<[^>]+>", " ", text))))
        for path, text in texts.items()
    }
    assert answer.redirect_chain[-1][0].startswith("/accounts/2fa/authenticate/")
    assert {path: words for path, words in formal.items() if words} == {}
