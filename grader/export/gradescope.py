"""Gradescope's autograder zip: this same grader, run on Gradescope's fleet (`meteor-kit export-gradescope`).

Gradescope unzips the autograder into /autograder/source, runs setup.sh there once as root
when it builds the image, then runs /autograder/run_autograder for each submission, with the
student's files in /autograder/submission, and reads /autograder/results/results.json
(grader/cli/autograder.py writes it). The kit runs from /autograder/source itself, the exported
exercise's problem/, hidden_tests/ and solutions/ beside the grader's package, with pytest and
hypothesis pinned in a venv of the system's Python. See docs/gradescope.md.
"""

from __future__ import annotations

import stat
import tomllib
import zipfile
from pathlib import Path

from grader.core import exercise

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, in /autograder/source, when it builds the autograder image.
set -euo pipefail
cd /autograder/source
export DEBIAN_FRONTEND=noninteractive
# Ubuntu 22.04's python3 is 3.10; the kit needs 3.11 (tomllib), which 22.04 ships in universe.
# bubblewrap is used when the container lets it create namespaces (Gradescope's usually does not).
apt-get update -qq
apt-get install -y -qq --no-install-recommends python3.11 python3.11-venv bubblewrap
/usr/bin/python3.11 -m venv /autograder/venv
/autograder/venv/bin/pip install --quiet --no-input --disable-pip-version-check -r requirements.txt
# Fail the build, not every submission, if the kit cannot start; build the diagnosis table now,
# not once per submission (each runs in a fresh copy of this image).
/autograder/venv/bin/python -c "from grader.core import exercise; from grader.judging import diagnose, grade; diagnose.browser_table(exercise.load('/autograder/source'))"
# Submissions run as an unprivileged uid. The kit holds the reference and the private tests
# (and the misconception models, which compute the score too): only root may read it, and what
# was written in it above. That uid may only reach the jail's own script, whose path it must open,
# and the one module the script imports.
chmod -R go= /autograder/source
chmod go=x /autograder/source /autograder/source/grader /autograder/source/grader/sandbox
chmod go=r /autograder/source/grader/sandbox/child.py /autograder/source/grader/sandbox/wire.py
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for each submission, as root; it writes /autograder/results/results.json.
set -euo pipefail
cd /autograder/source
# Hypothesis caches the constants of the modules it sees (the tests' among them) on disk:
# somewhere only root can read, not a .hypothesis/ in the kit.
mkdir -p -m 0700 /autograder/hypothesis
export HYPOTHESIS_STORAGE_DIRECTORY=/autograder/hypothesis
exec /autograder/venv/bin/python -m grader.cli.autograder run --root /autograder --exercise /autograder/source
"""

# What the zip carries besides the scripts: the engine's package and the exercise's folders, which the grader reads at run time.
ENGINE_PACKAGED = ("grader",)
EXERCISE_PACKAGED = ("hidden_tests", "problem", "solutions")  # solutions/: the reference and the seam's trusted modules


class ExportError(Exception):
    """The zip cannot be made as the kit was tested."""


# Class-level tools the autograder never runs (it grades one upload): not installed on Gradescope.
NOT_IN_AUTOGRADER = {"copydetect", "pyyaml"}  # pyyaml: LMS downloads only (grader/judging/lms.py)


def requirements() -> str:
    """The runtime dependencies, pinned with everything they pull in, at the versions installed here."""
    from importlib import metadata

    from packaging.markers import default_environment
    from packaging.requirements import Requirement

    environment = {**default_environment(), "extra": ""}
    pins: dict[str, str] = {}
    with open(exercise.KIT_ROOT / "pyproject.toml", "rb") as f:
        todo = [Requirement(r) for r in tomllib.load(f)["project"]["dependencies"]]
    todo = [r for r in todo if r.name.lower() not in NOT_IN_AUTOGRADER]
    while todo:
        requirement = todo.pop()
        if requirement.marker and not requirement.marker.evaluate(environment):
            continue
        name = metadata.metadata(requirement.name)["Name"]
        if name.lower() in pins:
            continue
        version = metadata.version(name)
        if not requirement.specifier.contains(version, prereleases=True):
            raise ExportError(f"{name} {version} is installed, but the kit needs {requirement}: reinstall the kit's dependencies")
        pins[name.lower()] = f"{name}=={version}"
        todo += [Requirement(r) for r in metadata.requires(name) or []]
    return "".join(f"{pin}\n" for _, pin in sorted(pins.items()))


def export(out: Path, ex: exercise.Exercise) -> None:
    """Write the autograder zip of `ex`: setup.sh, run_autograder, the engine and the exercise, all at the zip's root."""
    pins = requirements()  # before the zip is opened: a refusal leaves no half-written file
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text, mode in (
            ("setup.sh", SETUP_SH, 0o755),
            ("run_autograder", RUN_AUTOGRADER, 0o755),
            ("requirements.txt", pins, 0o644),
        ):
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFREG | mode) << 16
            zf.writestr(info, text)
        for root, items in ((exercise.ENGINE_ROOT, ENGINE_PACKAGED), (ex.root, EXERCISE_PACKAGED)):
            for item in items:
                _add(zf, root, item)


def _add(zf: zipfile.ZipFile, root: Path, item: str) -> None:
    """`root / item` (a folder, whole, or a file) into the zip, at its path in `root`."""
    path = root / item
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for file in files:
        if "__pycache__" in file.parts or file.suffix == ".pyc":
            continue
        zf.write(file, str(file.relative_to(root)))
