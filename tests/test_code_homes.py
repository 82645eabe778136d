"""Where code does what, in every app: the SQL the ORM cannot say lives in the app's own sql.py,
each statement there with why the ORM cannot say it."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RAW_SQL = re.compile(r"\.execute\(|\.cursor\(|prepared_fetchall\(|RawSQL\(|\.raw\(|\.extra\(")
# Innermost first: a module belongs to the innermost app around it (joyback.users is joyback's).
APPS = ["joyback/ledger", "joyback/api", "joyback", "campaigns", "compliance", "verification", "payouts"]
# Code that runs SQL without being an app's statement: the database engine, which prepares the
# statements the sql.py modules give it, and the launcher of the project's own PostgreSQL server,
# which creates the database before Django starts.
NOT_AN_APPS_SQL = ("joyback/postgresql/", "joyback/embedded_db.py")
WHY = re.compile(r"Why raw|\bORM\b")


def _app_of(name: str) -> str:
    return next(app for app in APPS if name.startswith(app + "/"))


def _code():
    for app in {app.split("/")[0] for app in APPS}:
        for path in sorted((ROOT / app).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            if "migrations" not in path.parts and not name.startswith(NOT_AN_APPS_SQL):
                yield name, path.read_text()


def test_each_apps_raw_sql_lives_in_its_own_sql_module():
    elsewhere = [name for name, text in _code() if RAW_SQL.search(text) and name != f"{_app_of(name)}/sql.py"]

    assert elsewhere == []


def _comments_above(lines: list[str], lineno: int) -> str:
    """The comment lines directly above line `lineno` (1-based)."""
    found = []
    for line in reversed(lines[: lineno - 1]):
        if not line.strip().startswith("#"):
            break
        found.append(line)
    return "\n".join(found)


def _reasons(text: str) -> dict[str, str]:
    """For each function of a sql.py that runs SQL: its docstring and comments, the comments above
    it, and those above the module's constants it uses (a statement kept as a constant)."""
    tree, lines = ast.parse(text), text.splitlines()
    constants = {
        target.id: _comments_above(lines, node.lineno)
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    reasons = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        source = "\n".join(lines[node.lineno - 1 : node.end_lineno])
        if not RAW_SQL.search(source):
            continue
        used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in constants}
        reasons[node.name] = "\n".join(
            [source, _comments_above(lines, node.lineno), *(constants[name] for name in used)]
        )
    return reasons


def test_each_statement_says_why_the_orm_cannot_say_it():
    modules = {app: (ROOT / app / "sql.py").read_text() for app in APPS if (ROOT / app / "sql.py").exists()}
    unexplained = [
        f"{app}/sql.py: {function}"
        for app, text in modules.items()
        for function, reason in _reasons(text).items()
        if not WHY.search(reason)
    ]

    assert set(modules) == set(APPS)
    assert unexplained == []
