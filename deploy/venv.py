"""Make the project's .venv from the lock, or from a copy kept of the last one made from the same lock.

    python deploy/venv.py VENV LOCK

Installing every locked package costs a minute or more of CPU; on a busy machine, several. The
first venv made from a lock is kept in the user's cache (~/.cache/joyback/venv-<digest of the lock
and the Python>), and the next fresh clone with the same lock gets its .venv as hard links to that
copy (a plain copy across file systems), which takes seconds. Scripts in bin/ are rewritten to name
their own venv's Python. A venv that exists already is brought up to the lock by pip, as before.
Standard library only: it runs before anything is installed (joyback.treecopy is too).
"""

import hashlib
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the project, not yet installed
from joyback.treecopy import tree_copy, tree_keep

CACHE_DIR = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "joyback"


def main(argv) -> int:
    venv, lock = Path(argv[0]).resolve(), Path(argv[1])
    if (venv / "bin" / "python").exists():
        return _install(venv, lock)
    kept = CACHE_DIR / f"venv-{_digest(lock)}"
    if kept.is_dir():
        tree_copy(kept, venv, link=True)
        _scripts_point_at(venv, made_as=_made_as(kept))
        return 0
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    status = _install(venv, lock)
    if status == 0:
        tree_keep(venv, kept, link=True)  # whole or not at all, should two clones finish at once
    return status


def _install(venv: Path, lock: Path) -> int:
    pip = [str(venv / "bin" / "pip"), "install", "--quiet", "--no-compile", "--require-hashes"]
    pip += ["-r", str(lock)]
    return subprocess.run(pip, check=False).returncode


def _digest(lock: Path) -> str:
    digest = hashlib.sha256(lock.read_bytes())
    digest.update(f"{sys.version} {sysconfig.get_platform()} {sys.executable}".encode())
    return digest.hexdigest()[:16]


def _made_as(kept: Path) -> str:
    """The path the kept venv was made at (pyvenv.cfg's `command`), which its scripts name."""
    for text in (kept / "pyvenv.cfg").read_text().splitlines():
        if text.startswith("command"):
            return text.rsplit(" ", 1)[-1]
    return ""


def _scripts_point_at(venv: Path, *, made_as: str) -> None:
    """Entry-point scripts and activate name the venv they were installed in: name this one."""
    for script in (venv / "bin").iterdir():
        if script.is_symlink() or not script.is_file():
            continue
        text = script.read_bytes()
        if not made_as or made_as.encode() not in text[:20000] or b"\0" in text[:1024]:
            continue  # a binary, or nothing that names the old place
        mode = script.stat().st_mode
        script.unlink()  # a new file: the kept copy it was linked to stays as it was
        script.write_bytes(text.replace(made_as.encode(), str(venv).encode()))
        script.chmod(mode)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
