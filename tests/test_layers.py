"""The app line and what `make lint`'s import contracts (pyproject.toml, [tool.importlinter]) cannot
see: imports put off into functions, and the dotted paths through which an app on the left calls one
on its right (docs/design.md, "The app line")."""

import ast
import re
from pathlib import Path

from django.conf import settings
from django.utils.module_loading import import_string

ROOT = Path(__file__).resolve().parents[1]
LINE = ["joyback", "campaigns", "compliance", "verification", "payouts"]  # each imports only to its left
REASON = "# deferred:"

# The sanctioned plug-in points: an app on the left calls, by a dotted path it never imports, code of
# an app on its right. Each: the setting (or the task name queued) -> the app that calls it.
PLUG_INS = {
    "CAMPAIGN_LAUNCH_CHECKS": "campaigns",  # compliance's checks before a campaign goes live
    "CAMPAIGN_WORDS_PROPOSED": "campaigns",  # a live campaign's new words, to JoyBack's review
    "SANDBOX_BANK_TRANSFER": "campaigns",  # a sandbox top up: the test-mode bank receives a transfer
    "SANDBOX_TEST_FUNDS": "campaigns",  # test data's play money, from the test-mode bank
    "BRAND_VERIFIED_TASK": "campaigns",  # queued: a verified brand's virtual account is requested
    "BRAND_MONEY_CHECKS": "campaigns",  # live money: the provider allows the brand's own account
    "LEDGER_EXTERNAL_CHECKS": "joyback",  # ledger_check: the ledger against the banks
    "HEALTH_CHECKS": "joyback",  # /healthz/: alerts staff have not cleared
    "METRICS_SOURCES": "joyback",  # GET /metrics: each app's own numbers
    "verification.tasks.remediation_recheck_task": "compliance",  # a remediation case's deadline
    "verification.tasks.compliance_cleared_task": "compliance",  # the brand cleared a caption
    "payouts.tasks.disclosure_fix_notify_task": "compliance",  # tell the person what to fix, by when
    "payouts.tasks.shop_taken_over_notify_task": "verification",  # tell the owners a shop moved
    "payouts.tasks.brief_reviewed_notify_task": "compliance",  # tell the editors how review decided
    "payouts.tasks.invitation_notify_task": "campaigns",  # mail a team invitation's link
    "REFERRAL_PAYEE_MATCHES": "verification",  # a referred order against the poster's payee details
    "WHATSAPP_STATUS_RECEIVERS": "verification",  # a sent template's status: the audience's sends
}
BACKGROUND = ROOT / "joyback" / "background.py"
DOTTED = re.compile(r"^(joyback|campaigns|compliance|verification|payouts)(\.\w+)+$")


def _code_files():
    for app in [*LINE, "deploy"]:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path
    # The tests' own infrastructure: fixtures, helpers, the benchmarks and the evaluation.
    yield from (path for path in sorted((ROOT / "tests").rglob("*.py")) if not path.name.startswith("test_"))


def _statement_lists(function):
    for node in ast.walk(function):
        for name in ("body", "orelse", "finalbody"):
            statements = getattr(node, name, None)
            if isinstance(statements, list) and statements and isinstance(statements[0], ast.stmt):
                yield statements


def _unexplained_imports(path: Path) -> list[str]:
    """Imports inside a function without a reason: `# deferred: <why>` on the import's lines, or on
    the comment line right above a run of imports (the statements one after the other)."""
    text = path.read_text()
    lines = text.splitlines()
    found = set()
    for function in ast.walk(ast.parse(text)):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for statements in _statement_lists(function):
            run_reason, previous = False, None
            for node in statements:
                if not isinstance(node, ast.Import | ast.ImportFrom):
                    previous = None
                    continue
                if previous is None:  # a run starts: its reason is the comment line above
                    run_reason = node.lineno > 1 and lines[node.lineno - 2].strip().startswith(REASON)
                own = any(REASON in line for line in lines[node.lineno - 1 : node.end_lineno])
                if not (own or run_reason):
                    found.add(
                        (
                            node.lineno,
                            f"{path.relative_to(ROOT)}:{node.lineno}: {lines[node.lineno - 1].strip()}",
                        )
                    )
                previous = node
    return [line for _lineno, line in sorted(found)]


def test_every_import_inside_a_function_says_why_it_is_deferred():
    unexplained = [line for path in _code_files() for line in _unexplained_imports(path)]

    assert unexplained == []


def test_the_check_finds_an_unexplained_deferred_import(tmp_path):
    module = tmp_path / "module.py"
    module.write_text(
        "def f():\n    import json\n\n\n"
        "def g():\n    import json  # deferred: a reason\n\n\n"
        "def h():\n    # deferred: a reason for both\n    import json\n    import csv\n"
    )
    found = [line.split(":", 1)[1] for line in _unexplained_imports_at(module)]

    assert found == ["2: import json"]


def _unexplained_imports_at(path: Path) -> list[str]:
    global ROOT
    saved, ROOT = ROOT, path.parent
    try:
        return _unexplained_imports(path)
    finally:
        ROOT = saved


def _app_of(dotted: str) -> str:
    return dotted.split(".")[0]


def _paths_of(value) -> list[str]:
    items = value if isinstance(value, list | tuple) else [value]
    return [item for item in items if isinstance(item, str) and DOTTED.match(item)]


def _settings_called_by_path():
    """(app, setting) for each setting an app's module reads where it calls code by dotted path."""
    for app in LINE:
        for path in sorted((ROOT / app).rglob("*.py")):
            text = path.read_text()
            if "migrations" in path.parts or not re.search(r"import_string|enqueue", text):
                continue
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.Attribute) and getattr(node.value, "id", "") == "settings":
                    yield app, node.attr
                elif (
                    isinstance(node, ast.Call)
                    and getattr(node.func, "id", "") == "getattr"
                    and getattr(node.args[0], "id", "") == "settings"
                    and isinstance(node.args[1], ast.Constant)
                ):
                    yield app, node.args[1].value


def test_an_app_calls_an_app_on_its_right_only_through_a_registered_plug_in_point():
    rightward = {
        (app, name)
        for app, name in _settings_called_by_path()
        for target in _paths_of(getattr(settings, name, None))
        if LINE.index(_app_of(target)) > LINE.index(app)
    }

    assert sorted(f"{app}: {name}" for app, name in rightward if PLUG_INS.get(name) != app) == []


def test_each_registered_plug_in_names_code_on_the_right_of_its_caller():
    for name, caller in PLUG_INS.items():
        targets = [name] if "." in name else _paths_of(getattr(settings, name))
        assert targets, name
        for target in targets:
            assert callable(import_string(target)), target
            assert LINE.index(_app_of(target)) >= LINE.index(caller), f"{name} = {target}: an import would do"
        # A plug-in point the caller's own app fills alone is no plug-in point: an import would do.
        assert any(LINE.index(_app_of(target)) > LINE.index(caller) for target in targets), name


def _task_names_in_code():
    """String literals of an app's code that name a function of an app (queued task names)."""
    for app in LINE:
        for path in sorted((ROOT / app).rglob("*.py")):
            # joyback/background.py is the one registry of background work: it names every
            # schedule's and standing worker's function by dotted path, and tests/test_background.py
            # imports each one.
            if "migrations" in path.parts or path.name == "settings.py" or path == BACKGROUND:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if (
                    isinstance(node, ast.Constant)
                    and isinstance(node.value, str)
                    and DOTTED.match(node.value)
                ):
                    yield app, node.value


def test_an_app_queues_work_of_an_app_on_its_right_only_by_a_registered_task_name():
    rightward = {
        (app, name)
        for app, name in _task_names_in_code()
        if LINE.index(_app_of(name)) > LINE.index(app) and name.endswith("_task")
    }

    assert sorted(f"{app}: {name}" for app, name in rightward if PLUG_INS.get(name) != app) == []
