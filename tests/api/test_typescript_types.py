"""TypeScript types from the served OpenAPI document (the npm registry's openapi-typescript),
compiled with tsc --strict against the quickstart's requests and answers. About 30 seconds, most
of it npm install: it fits in CI, so CI runs it (marked slow)."""

import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent / "typescript"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db,
    pytest.mark.skipif(
        shutil.which("npm") is None or shutil.which("node") is None, reason="node and npm are not installed"
    ),
]


@pytest.fixture
def npm_tools(tmp_path):
    shutil.copy(HERE / "package.json", tmp_path / "package.json")
    done = subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--silent"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return tmp_path


def test_the_served_schema_gives_typescript_types_the_quickstart_compiles_against(client, npm_tools):
    (npm_tools / "openapi.json").write_bytes(client.get("/api/v1/schema/?format=json").content)
    shutil.copy(HERE / "quickstart.ts", npm_tools / "quickstart.ts")
    bin_ = npm_tools / "node_modules" / ".bin"

    def run(*command):
        done = subprocess.run(command, cwd=npm_tools, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr

    run(str(bin_ / "openapi-typescript"), "openapi.json", "-o", "api.d.ts")
    run(str(bin_ / "tsc"), "--strict", "--noEmit", "quickstart.ts")
