"""Every shipped exercise passes `meteor-kit audit`: the checks of an exercise's quality, through the command.

METEOR with its catalogue; WER with its catalogue and in the page (Chromium: this module runs
alone, `-m serial`). The third exercise's audit is in tests/test_top_words.py.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import KIT_ROOT

KIT = [sys.executable, "-m", "grader.cli"]
pytestmark = pytest.mark.serial  # Chromium, and the mutants on both cores

SHIPPED = {
    "meteor": (KIT_ROOT, KIT_ROOT / "tests" / "catalogue", []),
    "wer": (KIT_ROOT / "tests" / "exercises" / "wer", KIT_ROOT / "tests" / "exercises" / "wer-catalogue", ["--browser"]),
}


@pytest.mark.parametrize("name", SHIPPED)
def test_the_shipped_exercise_passes_the_audit(name, tmp_path):
    folder, catalogue, more = SHIPPED[name]
    page = tmp_path / "audit.html"
    command = [
        *KIT,
        "audit",
        "--exercise",
        str(folder),
        "--catalogue",
        str(catalogue),
        "--jobs",
        "2",
        "--json",
        "--html",
        str(page),
    ]
    done = subprocess.run([*command, *more], capture_output=True, text=True, timeout=1200, cwd=KIT_ROOT)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-3000:]
    report = json.loads(done.stdout)
    checks = {check["id"]: check for check in report["checks"]}
    assert report["passed"] and all(check["status"] == "pass" for check in checks.values() if check["id"] != "page")
    assert checks["page"]["status"] == ("pass" if more else "skipped")
    # Every mutant loses points but those no input of the exercise tells from the reference.
    assert all(s["verdict"] == "likely equivalent" for s in checks["strength"]["survivors"])
    assert "mutants lose points" in checks["strength"]["reason"]
    # Every catalogue MISTAKE is named, and most failing mutants get a diagnosis.
    assert "every catalogue MISTAKE named" in checks["diagnosis"]["reason"]
    share = next(line for line in checks["diagnosis"]["details"] if line.startswith("failing mutants:"))
    assert float(share.split("(")[1].split("%")[0]) >= 95.0, share
    assert "Survivors" in page.read_text(encoding="utf-8") or not checks["strength"]["survivors"]
