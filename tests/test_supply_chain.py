"""The lock file: every dependency pyproject.toml names is pinned there, with hashes, in a version
its range allows, and every range has an upper bound on the major version."""

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent


def declared() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = project["dependencies"] + project["optional-dependencies"]["dev"]
    return [Requirement(line) for line in names]


def locked() -> dict[str, tuple[str, int]]:
    """{name: (version, number of hashes)} of requirements.lock."""
    text = (ROOT / "requirements.lock").read_text()
    pins = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        match = re.match(r"([A-Za-z0-9_.-]+)==([^\s\\;]+)", block)
        if match:
            pins[canonical(match[1])] = (match[2], block.count("--hash=sha256:"))
    return pins


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@pytest.mark.parametrize("requirement", declared(), ids=str)
def test_each_dependency_is_locked_in_a_version_it_allows(requirement):
    pins = locked()

    assert canonical(requirement.name) in pins, f"{requirement.name} is not in requirements.lock: make lock"
    version, hashes = pins[canonical(requirement.name)]
    assert requirement.specifier.contains(version, prereleases=True), (
        f"requirements.lock pins {requirement.name}=={version}, outside {requirement.specifier}: make lock"
    )
    assert hashes >= 1


@pytest.mark.parametrize("requirement", declared(), ids=str)
def test_each_dependency_has_an_upper_bound(requirement):
    assert any(spec.operator in {"<", "<=", "~=", "=="} for spec in requirement.specifier), (
        f"{requirement} has no upper bound"
    )


def test_every_locked_package_has_hashes():
    assert all(hashes for _version, hashes in locked().values())
