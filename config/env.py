"""Reading the environment: every variable the settings read is declared once, in
config.variables, with its type, its defaults, whether production needs it and what it means.

The settings modules ask `env.get("NAME")` and never os.environ: an undeclared name is an error at
once, the README's table and the container entrypoint's list of required variables are written
from the same declarations (`python -m config.docs`), and production names everything it misses in
one message instead of failing on the first.
"""

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ImproperlyConfigured

UNSET: Any = object()  # no default of its own here: another one applies (or the settings derive one)

KINDS = {"str", "int", "float", "bool", "list", "url", "secret", "path"}
TRUE = {"1", "true", "yes", "on"}
FALSE = {"0", "false", "no", "off"}
URL_STARTS = ("http://", "https://", "/", "postgres://", "postgresql://", "redis://", "rediss://", "unix://")


@dataclass(frozen=True)
class Var:
    """One environment variable. `default` holds in production; `local` outside production
    (development and test) and `sandbox` while the sandbox is on, each only when given. A value
    the settings derive from others (a key from SECRET_KEY) has no default here and says so in
    `shown`, which is what the README prints as its default."""

    name: str
    kind: str
    description: str
    concern: str
    default: Any = ""
    local: Any = UNSET
    sandbox: Any = UNSET
    required: bool = False  # production does not start without it
    shown: str = ""
    secret: bool = False  # a list of secrets (kind "secret" is one)
    # Who reads it: the settings, gunicorn's config (deploy/gunicorn.conf.py, through Env too), the
    # container's entrypoint (a shell) or a library on its own.
    read_by: str = "settings"

    @property
    def is_secret(self) -> bool:
        return self.secret or self.kind == "secret"

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: unknown kind {self.kind!r}")

    def default_for(self, *, production: bool, sandbox: bool) -> Any:
        if sandbox and self.sandbox is not UNSET:
            return self.sandbox
        if not production and self.local is not UNSET:
            return self.local
        return self.default

    def parse(self, raw: str) -> Any:
        text = raw.strip()
        try:
            if self.kind == "int":
                return int(text)
            if self.kind == "float":
                return float(text)
        except ValueError:
            raise ImproperlyConfigured(f"{self.name} must be a number, not {raw!r}") from None
        if self.kind == "bool":
            if text.lower() in TRUE:
                return True
            if text.lower() in FALSE:
                return False
            raise ImproperlyConfigured(f"{self.name} must be on or off (1/0, true/false), not {raw!r}")
        if self.kind == "list":
            return [item.strip() for item in raw.split(",") if item.strip()]
        if self.kind == "url" and text and not text.startswith(URL_STARTS):
            raise ImproperlyConfigured(f"{self.name} must be a URL (http(s)://, a path), not {raw!r}")
        return raw if self.kind in {"secret", "str"} else text


def _empty(value: Any) -> bool:
    return value is None or value is UNSET or value == "" or value == []


class Env:
    """The environment as the settings see it: declared names only, parsed, with their defaults for
    this kind of installation. It remembers what production needs and was not given."""

    def __init__(self, variables: list[Var], environ: Mapping[str, str] | None = None):
        self.variables = {var.name: var for var in variables}
        if len(self.variables) != len(variables):
            raise ValueError("a variable is declared twice")
        self.environ = os.environ if environ is None else environ
        self.production = True
        self.sandbox = False
        self.read: set[str] = set()
        self.missing: dict[str, Var] = {}

    def given(self, name: str) -> bool:
        """Whether the environment sets it (to something)."""
        self._declared(name)
        return self.environ.get(name, "") != ""

    def get(self, name: str, *, default: Any = UNSET) -> Any:
        """The variable's value: as set, else `default` when given (a layer's own, the test
        layer's), else its declared default for this installation."""
        var = self._declared(name)
        self.read.add(name)
        raw = self.environ.get(name, "")
        if raw != "":
            value = var.parse(raw)
        elif default is not UNSET:
            value = default
        else:
            value = var.default_for(production=self.production, sandbox=self.sandbox)
        if var.required and self.production and _empty(value):
            self.missing[name] = var
        return None if value is UNSET else value

    def _declared(self, name: str) -> Var:
        try:
            return self.variables[name]
        except KeyError:
            raise ImproperlyConfigured(
                f"{name} is read by the settings but not declared in config.variables"
            ) from None

    def refuse_missing(self) -> None:
        """Production without a value it needs does not start: every one of them, said at once."""
        if not self.production or not self.missing:
            return
        lines = "\n".join(f"  {var.name}: {var.description}" for var in self.missing.values())
        raise ImproperlyConfigured(
            f"JoyBack refuses to start in production: these variables must be set:\n{lines}"
        )
