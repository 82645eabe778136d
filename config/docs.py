"""Writes what is said about the environment elsewhere from config.variables: the README's
configuration tables and the container entrypoint's list of required variables.

    python -m config.docs           rewrite them
    python -m config.docs --check   exit 1, naming the file, when one differs (tests/test_config.py)
"""

import sys
from pathlib import Path

from config.env import UNSET, Var
from config.variables import VARIABLES

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
ENTRYPOINT = ROOT / "deploy" / "entrypoint.sh"

README_BEGIN = "<!-- BEGIN configuration (written by `python -m config.docs` from config/variables.py) -->\n"
README_END = "<!-- END configuration -->\n"
ENTRYPOINT_BEGIN = "# BEGIN required (written by `python -m config.docs` from config/variables.py)\n"
ENTRYPOINT_END = "# END required\n"


def _value(var: Var, value) -> str:
    if value is UNSET or value is None or value == "" or value == []:
        return "unset"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list):
        return "`" + ",".join(value) + "`"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return f"`{value}`" if isinstance(value, str) else str(value)


def default_text(var: Var) -> str:
    """The README's default column: production's, and what differs outside it or in the sandbox."""
    if var.shown:
        return var.shown
    said = _value(var, var.default)
    if var.local is not UNSET:
        said += f"; {_value(var, var.local)} outside production"
    if var.sandbox is not UNSET:
        sandbox = "the sandbox's own" if var.is_secret else _value(var, var.sandbox)
        said += f"; {sandbox} with the sandbox on"
    return said


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def readme_section() -> str:
    lines = [
        "Every variable is declared once, in `config/variables.py` (its type, default and whether "
        "production needs it); the tables below are written from there by `python -m config.docs`, "
        "and a test fails when they differ. Production refuses to start while a *required* one is "
        "unset, naming every one missing.\n",
    ]
    concerns: dict[str, list[Var]] = {}
    for var in VARIABLES:
        concerns.setdefault(var.concern, []).append(var)
    for concern, variables in concerns.items():
        lines += [
            "",
            f"### {concern}",
            "",
            "| variable | type | meaning | default | production |",
            "| --- | --- | --- | --- | --- |",
        ]
        for var in variables:
            kind = "secret" if var.is_secret and var.kind != "secret" else var.kind
            lines.append(
                f"| `{var.name}` | {kind} | {_cell(var.description)} | {_cell(default_text(var))} "
                f"| {'required' if var.required else ''} |"
            )
    return "\n".join(lines).replace("\n\n\n", "\n\n") + "\n"


def required_names() -> list[str]:
    return [var.name for var in VARIABLES if var.required]


def entrypoint_section() -> str:
    return f'required="{" ".join(required_names())}"\n'


def _replace(text: str, begin: str, end: str, body: str, path: Path) -> str:
    if begin not in text or end not in text:
        raise SystemExit(f"{path}: the markers {begin.strip()!r} and {end.strip()!r} are missing")
    head, rest = text.split(begin, 1)
    _old, tail = rest.split(end, 1)
    return head + begin + body + end + tail


def rendered() -> dict[Path, str]:
    """Each file as it should read."""
    return {
        README: _replace(README.read_text(), README_BEGIN, README_END, readme_section(), README),
        ENTRYPOINT: _replace(
            ENTRYPOINT.read_text(), ENTRYPOINT_BEGIN, ENTRYPOINT_END, entrypoint_section(), ENTRYPOINT
        ),
    }


def main(argv: list[str]) -> int:
    check = "--check" in argv
    differing = []
    for path, text in rendered().items():
        if path.read_text() == text:
            continue
        differing.append(path)
        if not check:
            path.write_text(text)
    if check and differing:
        names = ", ".join(str(path.relative_to(ROOT)) for path in differing)
        print(f"{names}: not what config/variables.py says; run `python -m config.docs`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
