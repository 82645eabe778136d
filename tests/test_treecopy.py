"""One way to copy a cached folder for a fresh clone (joyback.treecopy): the venv as hard links
(deploy/venv.py), the migrated database server as a copy with its owners (joyback.embedded_db), each
kept in the cache whole or not at all."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from joyback import embedded_db, treecopy
from joyback.treecopy import tree_copy, tree_keep

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def folder(tmp_path):
    source = tmp_path / "source"
    (source / "lib").mkdir(parents=True)
    (source / "lib" / "module.py").write_text("x = 1\n")
    (source / "private").write_text("secret")
    (source / "private").chmod(0o600)
    (source / "postmaster.pid").write_text("123")
    (source / "current").symlink_to("lib")
    return source


def test_a_linked_copy_shares_the_files_keeps_links_and_leaves_out_what_is_ignored(folder, tmp_path):
    target = tmp_path / "target"
    tree_copy(folder, target, link=True, ignore=("*.pid",))

    assert (target / "lib" / "module.py").stat().st_ino == (folder / "lib" / "module.py").stat().st_ino
    assert (target / "current").is_symlink() and os.readlink(target / "current") == "lib"
    assert not (target / "postmaster.pid").exists()


def test_where_no_link_can_be_made_the_file_is_copied(folder, tmp_path, monkeypatch):
    def refused(src, dst):
        raise OSError("cross-device link")

    monkeypatch.setattr(treecopy.os, "link", refused)
    target = tmp_path / "target"
    tree_copy(folder, target, link=True)

    copied = target / "lib" / "module.py"
    assert (
        copied.read_text() == "x = 1\n"
        and copied.stat().st_ino != (folder / "lib" / "module.py").stat().st_ino
    )


def test_a_plain_copy_is_a_file_of_its_own_with_the_originals_mode(folder, tmp_path):
    target = tmp_path / "target"
    tree_copy(folder, target, owners=True)

    (target / "lib" / "module.py").write_text("x = 2\n")  # a server writing in place
    assert (folder / "lib" / "module.py").read_text() == "x = 1\n"
    assert (target / "private").stat().st_mode & 0o777 == 0o600


def test_a_kept_copy_is_whole_or_not_there_and_the_first_one_stays(folder, tmp_path):
    kept = tmp_path / "cache" / "kept"
    assert tree_keep(folder, kept, link=True)
    (folder / "lib" / "later.py").write_text("")

    assert not tree_keep(folder, kept, link=True)  # another process's copy was there first
    assert not (kept / "lib" / "later.py").exists()
    assert [path.name for path in kept.parent.iterdir()] == ["kept"]  # no partial copy left behind


def test_the_venv_script_and_the_database_use_this_one_copy():
    spec = importlib.util.spec_from_file_location("deploy_venv", ROOT / "deploy" / "venv.py")
    venv = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(venv)

    assert venv.tree_copy is tree_copy and venv.tree_keep is tree_keep
    assert embedded_db.tree_copy is tree_copy and embedded_db.tree_keep is tree_keep
    for path in (ROOT / "deploy" / "venv.py", ROOT / "joyback" / "embedded_db.py"):
        assert "copytree" not in path.read_text() and "os.link" not in path.read_text()


def test_a_fresh_clone_gets_the_kept_venv_as_links_with_its_scripts_naming_it(tmp_path):
    """deploy/venv.py run as make runs it, with the system's Python and nothing installed."""
    lock = tmp_path / "requirements.lock"
    lock.write_text("# nothing\n")
    spec = importlib.util.spec_from_file_location("deploy_venv", ROOT / "deploy" / "venv.py")
    venv_script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(venv_script)
    kept = tmp_path / "cache" / "joyback" / f"venv-{venv_script._digest(lock)}"
    (kept / "bin").mkdir(parents=True)
    (kept / "lib").mkdir()
    (kept / "lib" / "site.py").write_text("")
    (kept / "pyvenv.cfg").write_text("home = /usr/bin\ncommand = /usr/bin/python3 -m venv /old/.venv\n")
    (kept / "bin" / "activate").write_text('VIRTUAL_ENV="/old/.venv"\n')
    fresh = tmp_path / "clone" / ".venv"

    subprocess.run(
        [sys.executable, str(ROOT / "deploy" / "venv.py"), str(fresh), str(lock)],
        check=True,
        env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")},
        cwd=tmp_path,
    )

    assert (fresh / "lib" / "site.py").stat().st_ino == (kept / "lib" / "site.py").stat().st_ino
    assert (fresh / "bin" / "activate").read_text() == f'VIRTUAL_ENV="{fresh}"\n'
    assert (kept / "bin" / "activate").read_text() == 'VIRTUAL_ENV="/old/.venv"\n'
