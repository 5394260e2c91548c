"""Dependencies are pinned in pyproject.toml and locked, with hashes, in requirements.lock."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata

import pytest
from conftest import KIT_ROOT

LOCK = (KIT_ROOT / "requirements.lock").read_text(encoding="utf-8")
PINNED = re.compile(r"^([A-Za-z0-9_.-]+)==(\S+) \\$", re.M)


def _name(text: str) -> str:
    return re.sub(r"[-_.]+", "-", text).lower()


def locked() -> dict[str, str]:
    return {_name(name): version for name, version in PINNED.findall(LOCK)}


def test_every_dependency_of_pyproject_is_locked_at_its_pin():
    project = tomllib.loads((KIT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = [*project["dependencies"], *project["optional-dependencies"]["dev"]]
    lock = locked()
    for requirement in wanted:
        name, version = requirement.split("==")
        assert lock.get(_name(name)) == version, f"{requirement} is not what requirements.lock holds"


def test_every_locked_package_has_a_hash_and_no_index_of_this_machine():
    entries = re.findall(r"^[A-Za-z0-9_.-]+==\S+ \\\n(?:    --hash=sha256:[0-9a-f]{64}(?: \\)?\n)+", LOCK, re.M)
    assert len(entries) == len(locked()) >= 20
    assert "--index-url" not in LOCK and "--find-links" not in LOCK and "file://" not in LOCK


@pytest.mark.pinned_hypothesis
def test_the_environment_running_the_tests_is_the_locked_one():
    for name, version in locked().items():
        assert metadata.version(name) == version, f"{name} {metadata.version(name)} is installed, the lock says {version}"
