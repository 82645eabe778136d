"""Copies of whole folders kept in the user's cache and handed to a fresh clone: the venv made
from a lock (deploy/venv.py) and a freshly migrated database server (joyback.embedded_db).

Standard library only: deploy/venv.py imports it before anything is installed.
"""

import os
import shutil
from pathlib import Path


def tree_copy(source: Path, target: Path, *, link: bool = False, ignore=(), owners: bool = False) -> None:
    """Copy the folder `source` to `target` (not there yet), symbolic links as links. With `link`,
    each file is a hard link to its original (a plain copy where no link can be made: another file
    system, links refused), for files that are replaced, never written in place. Names matching a
    pattern of `ignore` are left out. With `owners`, run as root, every file keeps its owner (a
    database server's folder must be its own user's)."""

    def hard_link(src, dst):
        try:
            os.link(src, dst)
        except OSError:  # another file system, or links refused: a copy then
            shutil.copy2(src, dst)
        return dst

    shutil.copytree(
        source,
        target,
        symlinks=True,
        ignore=shutil.ignore_patterns(*ignore) if ignore else None,
        copy_function=hard_link if link else shutil.copy2,
    )
    if not owners or os.geteuid() != 0:
        return
    for folder, folders, files in os.walk(source):
        for name in [".", *folders, *files]:
            original = Path(folder) / name
            copied = target / original.relative_to(source)
            if not copied.exists():
                continue  # left out of the copy
            owner = original.lstat()
            os.lchown(copied, owner.st_uid, owner.st_gid)


def tree_keep(source: Path, target: Path, **copy) -> bool:
    """Keep a copy of `source` at `target` whole or not at all: copied next to it under a name of
    this process's, then renamed in one step, so that whoever looks meanwhile sees all of it or
    none. False when another process kept its copy first (this one is dropped)."""
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    target.parent.mkdir(parents=True, exist_ok=True)
    tree_copy(source, partial, **copy)
    try:
        partial.rename(target)
    except OSError:
        shutil.rmtree(partial, ignore_errors=True)
        return False
    return True
