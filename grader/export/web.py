"""The student's page, built into a self-contained static site (`meteor-kit build-web`, grader/cli/web_build.py).

The site holds Pyodide (from its npm package), the test wheels and the standard library
precompiled inside Pyodide, the grader and the browser tiers' tests, and everything the page
needs from the reference solution, computed here. Never the reference itself, nor the
tests of a secret tier (browser = false).
"""

from __future__ import annotations

import hashlib
import html
import importlib.util
import json
import shutil
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path
from typing import Any

from grader.core import exercise, replay, runner

ROOT = exercise.ENGINE_ROOT  # the engine: grader/, web/ (the exercise, problem/, solutions/ and hidden_tests/, is given)
WEB = ROOT / "web"
CACHE = exercise.CACHE  # what the page's Python needs whatever the exercise: Pyodide's packages, compiled
STAMP = "build-stamp.txt"

PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "pyodide-lock.json")
# What the page's Python runs: the same grader and tests as the CLI, minus the sandbox,
# the secret tiers and the reference solution.
# The whole browser-safe core package ships; nothing else from grader/ does.
CORE_FILES = tuple(sorted(str(p.relative_to(ROOT)) for p in (ROOT / "grader" / "core").glob("*.py")))
PAGE_SESSION = WEB / "py" / "page_session.py"
REPLAY_FILE = "replay.json"  # beside page_session.py in the page (grader/core/replay.py)
# The diagnosis's probes and the reference's and models' answers to them, computed here: the page
# runs grader/core/diagnosis.py on it, never the reference or the models themselves.
DIAGNOSIS_TABLE = "py/diagnosis-table.json"
# Python's memory once started (the imports and a first collection done): see web/src/boot.js.
SNAPSHOT = "py/python.snapshot.gz"

SOURCE_DIRS = ("web/src", "web/py", "web/tools")


def default_out(ex: exercise.Exercise) -> Path:
    """Where the site goes without --out: build/web in the exercise's folder."""
    return ex.root / "build" / "web"


def kit_files(ex: exercise.Exercise) -> tuple[str, ...]:
    """The files of kit.zip, by their path in the engine's folder or in `ex`'s."""
    return (
        "grader/__init__.py",
        *CORE_FILES,
        "problem/exercise.toml",
        "hidden_tests/conftest.py",
        *(f"hidden_tests/test_{tier}.py" for tier in ex.browser_tiers),
        # The exercise's value rule: the page's tests judge with it, as the CLI's do.
        *(name for part, name in ex.seam.items() if exercise.SEAM_PARTS[part] and name.endswith(".py")),
    )


def widget(ex: exercise.Exercise) -> Path:
    """The page's Try it panel: the exercise's widget (bundled into app.js with the JavaScript beside it), or the engine's plain one."""
    return ex.path("widget") or WEB / "src" / "try_plain.js"


def sources(ex: exercise.Exercise) -> tuple[str, ...]:
    """The files whose change means `ex`'s site must be rebuilt (besides SOURCE_DIRS)."""
    return (
        *kit_files(ex),
        "problem/statement.md",
        "problem/starter.py",
        "solutions/reference.py",
        "grader/judging/diagnose.py",
        *(name for part, name in ex.seam.items() if not exercise.SEAM_PARTS[part]),
        *(str(p.relative_to(ex.root)) for p in sorted(widget(ex).parent.glob("*.js")) if p.is_relative_to(ex.root)),
        "grader/export/web.py",
        "web/package-lock.json",
        "web/wheels.txt",
    )


def source(ex: exercise.Exercise, name: str) -> Path:
    """Where a shipped or watched file lives: the engine's own, or the exercise's."""
    return ROOT / name if name.split("/")[0] in ("grader", "web") else ex.root / name


def _relative(path: Path, roots: tuple[Path, ...]) -> str:
    for root in roots:
        if path.is_relative_to(root):
            return path.relative_to(root).as_posix()
    return path.as_posix()


def log(message: str) -> None:
    print(f"build-web: {message}", file=sys.stderr, flush=True)


def digest(paths: list[Path], roots: tuple[Path, ...] = (ROOT,)) -> str:
    """A digest of the files' contents, each named by its path in the first of `roots` that holds it."""
    h = hashlib.sha256()
    for path in paths:
        h.update(_relative(path, roots).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def input_files(ex: exercise.Exercise) -> list[Path]:
    files = [source(ex, p) for p in sources(ex)]
    # page_session.py run under CPython (the parity tests) writes its recording beside itself: an
    # output, not an input. Counted, it made the site stale in the middle of the suite.
    written = ROOT / "web" / "py" / REPLAY_FILE
    for folder in SOURCE_DIRS:
        files += sorted(p for p in (ROOT / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts and p != written)
    return files


def stamp_of(ex: exercise.Exercise) -> str:
    """The build's digest: of every input of `ex`'s site, and of the hypothesis that recorded its examples
    (a site built beside another version has no recording, or one the page cannot use: it is built again)."""
    files = digest(input_files(ex), (ex.root, ROOT))
    return hashlib.sha256(f"{files}\0{replay.path()}".encode()).hexdigest()[:16]


def is_current(ex: exercise.Exercise, out: Path) -> bool:
    stamp = out / STAMP
    return stamp.exists() and stamp.read_text().strip() == stamp_of(ex)


def run(cmd: list[str], cwd: Path = WEB, **kwargs: Any) -> subprocess.CompletedProcess:
    """A build step; what it prints goes to stderr with the build's log: a command that builds the page on
    its way (`audit --json`, `check --json`) keeps its stdout for its own output."""
    if not kwargs.get("capture_output") and "stdout" not in kwargs:
        kwargs["stdout"] = sys.stderr
    try:
        return subprocess.run(cmd, cwd=cwd, check=True, **kwargs)
    except FileNotFoundError:
        raise SystemExit(f"build-web: {cmd[0]} is not installed (Node.js 18 or later and npm build the page)") from None
    except subprocess.CalledProcessError as exc:
        detail = (exc.stderr or "")[-2000:] if isinstance(exc.stderr, str) else ""
        raise SystemExit(f"build-web: this step failed: {' '.join(cmd)}\n{detail}") from None


def node_modules() -> None:
    """`npm ci` when web/node_modules is missing, older than the lock file, or installed by another Node.

    npm checks every package's `engines` against this Node (--engine-strict): a Node the lock does
    not accept stops the build, with npm's reason, instead of a warning that --loglevel=error hides.
    """
    marker = WEB / "node_modules" / ".package-lock.json"
    installed_by = WEB / "node_modules" / ".node-version"
    node = run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    current = marker.exists() and marker.stat().st_mtime >= (WEB / "package-lock.json").stat().st_mtime
    if current and installed_by.exists() and installed_by.read_text().strip() == node:
        return
    log(f"npm ci (Node {node})")
    command = ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error", "--engine-strict"]
    try:
        subprocess.run(command, cwd=WEB, check=True, capture_output=True, text=True)
    except FileNotFoundError:
        raise SystemExit("build-web: npm is not installed (Node.js 18 or later and npm build the page)") from None
    except subprocess.CalledProcessError as exc:
        if "EBADENGINE" in exc.stderr:
            said = "\n".join(line for line in exc.stderr.splitlines() if " notsup " in line)
            raise SystemExit(
                f"build-web: Node {node} is not one that web/package-lock.json accepts (its `engines`):\n{said}\n"
                "install a Node that satisfies it, and npm, then build again"
            ) from None
        raise SystemExit(f"build-web: this step failed: {' '.join(command)}\n{exc.stderr[-2000:]}") from None
    installed_by.write_text(node + "\n")


def wheels() -> Path:
    """The test wheels for Pyodide's Python, downloaded once; pip checks each sha256 in wheels.txt."""
    lock = WEB / "wheels.txt"
    dest = CACHE / f"wheels-{digest([lock])}"
    if not dest.exists():
        log("downloading the test wheels (hash-checked)")
        tmp = dest.with_suffix(".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--disable-pip-version-check",
                "--no-deps",
                "--require-hashes",
                "-r",
                str(lock),
                "--only-binary=:all:",
                "--python-version",
                "3.14",
                "--platform",
                "any",
                "--implementation",
                "py",
                "--abi",
                "none",
                "-d",
                str(tmp),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        tmp.rename(dest)
    return dest


def precompiled(wheel_dir: Path) -> Path:
    """The stdlib and wheels compiled inside Pyodide, and hypothesis's unicode cache."""
    script = WEB / "tools" / "precompile.mjs"
    dest = CACHE / f"python-{digest([WEB / 'wheels.txt', WEB / 'node_modules' / 'pyodide' / 'package.json', script])}"
    if not dest.exists():
        log("compiling the standard library and the wheels inside Pyodide (about 15 s)")
        tmp = dest.with_suffix(".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        run(["node", str(script), str(wheel_dir), str(tmp)])
        tmp.rename(dest)
    return dest


def python_snapshot(ex: exercise.Exercise, site: Path) -> None:
    """py/python.snapshot.gz: the page's Python once started, restored instead of started (web/tools/snapshot.mjs)."""
    script = WEB / "tools" / "snapshot.mjs"
    starter = ex.root / "problem" / "starter.py"
    feeds = [*(site / "pyodide").iterdir(), *(site / "py").glob("*.zip"), WEB / "src" / "boot.js", script, starter]
    cached = CACHE / f"snapshot-{snapshot_key(feeds)}.gz"
    if not cached.exists():
        log("taking a memory snapshot of the page's Python")
        tmp = cached.with_suffix(".tmp")
        run(["node", str(script), str(site), str(starter), str(tmp)])
        tmp.rename(cached)
    shutil.copy2(cached, site / SNAPSHOT)


def snapshot_key(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for path in sorted(paths, key=lambda p: (p.parent.name, p.name)):
        h.update(f"{path.parent.name}/{path.name}".encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def kit_zip(ex: exercise.Exercise, dest: Path) -> None:
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
        for name in kit_files(ex):
            z.write(source(ex, name), name)
        z.write(PAGE_SESSION, PAGE_SESSION.name)
        # The property tests' examples recorded against the reference: the page replays them as the CLI does.
        recording = replay.ensure(ex, runner.run)
        if recording is not None:
            z.writestr(REPLAY_FILE, json.dumps(recording.as_json(), ensure_ascii=True))


def diagnosis_table(ex: exercise.Exercise, dest: Path) -> None:
    from grader.judging.diagnose import browser_table

    dest.write_text(json.dumps(browser_table(ex), ensure_ascii=False, separators=(",", ":")), encoding="utf-8")


def load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_budget(ex: exercise.Exercise) -> float:
    """Seconds a whole Run tests may take in the page: `[limits] browser_run_budget`, 20 if absent."""
    return ex.browser_run_budget


def page_data(ex: exercise.Exercise) -> dict[str, Any]:
    """Everything the page needs besides its code: computed here, from the exercise's files."""
    page = ex.module("page")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its tier mark is registered by the tests' conftest, not here
        tries = page.try_examples() if page is not None else []
    return {
        "id": ex.id,
        "title": ex.title,
        "function": ex.function,
        "signature": ex.signature,
        "defaults": ex.defaults,
        "parameters": ex.parameters,
        "starter": ex.starter,
        "testTimeout": ex.browser_test_timeout,
        "runBudget": run_budget(ex),
        "tiers": {
            name: {"title": t.title, "points": t.points, "description": t.description, "showsInputs": t.shows_inputs}
            for name, t in ex.tiers.items()
            if t.browser
        },
        "examples": tries,
    }


def bundle(ex: exercise.Exercise, out: Path) -> None:
    esbuild = str(WEB / "node_modules" / ".bin" / "esbuild")
    common = ["--bundle", "--format=esm", "--minify", "--target=es2022", "--log-level=warning"]
    run([esbuild, "src/main.js", f"--outfile={out / 'app.js'}", f"--alias:exercise-widget={widget(ex)}", *common])
    run([esbuild, "src/worker.js", f"--outfile={out / 'worker.js'}", "--external:./pyodide/*", *common])
    run(
        [
            esbuild,
            "src/style.css",
            f"--outfile={out / 'app.css'}",
            "--bundle",
            "--minify",
            "--log-level=warning",
            "--loader:.woff2=file",
            "--loader:.woff=file",
            "--loader:.ttf=file",
            "--asset-names=fonts/[name]",
        ]
    )


def index_html(ex: exercise.Exercise, data: dict[str, Any]) -> str:
    statement = run(
        ["node", "tools/render-statement.mjs", str(ex.root / "problem" / "statement.md")], capture_output=True, text=True
    ).stdout
    template = (WEB / "src" / "index.html").read_text(encoding="utf-8")
    # In a <script> element, only "</" could end it early.
    payload = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    return (
        template.replace("{{title}}", html.escape(data["title"])).replace("{{statement}}", statement).replace("{{data}}", payload)
    )


def service_worker(site: Path, version: str) -> None:
    """sw.js: the list of every file of the site, cached on the first visit under this build's digest."""
    files = ["./"] + sorted(
        p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file() and p.name not in ("index.html", STAMP)
    )
    template = (WEB / "src" / "sw.js").read_text(encoding="utf-8")
    text = template.replace('"{{version}}"', json.dumps(version)).replace("{{files}}", json.dumps(files))
    (site / "sw.js").write_text(text, encoding="utf-8")


def build(ex: exercise.Exercise, out: Path | None = None) -> Path:
    """`ex`'s site, built into `out` (default_out without one)."""
    out = out or default_out(ex)
    if out.exists() and any(out.iterdir()) and not (out / STAMP).exists():
        raise SystemExit(f"build-web: {out} is not empty and holds no earlier build; refusing to replace it")
    node_modules()
    python = precompiled(wheels())
    stamp = stamp_of(ex)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "pyodide").mkdir(parents=True)
    (tmp / "py").mkdir()
    for name in PYODIDE_FILES:
        shutil.copy2(WEB / "node_modules" / "pyodide" / name, tmp / "pyodide" / name)
    for name in ("stdlib.zip", "site-packages.zip", "hypothesis-cache.zip"):
        shutil.copy2(python / name, tmp / "py" / name)
    kit_zip(ex, tmp / "py" / "kit.zip")
    diagnosis_table(ex, tmp / DIAGNOSIS_TABLE)
    python_snapshot(ex, tmp)
    bundle(ex, tmp)
    (tmp / "index.html").write_text(index_html(ex, page_data(ex)), encoding="utf-8")
    service_worker(tmp, stamp)
    (tmp / STAMP).write_text(stamp + "\n")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    log(f"built {out}")
    return out


def ensure_built(ex: exercise.Exercise, out: Path | None = None) -> Path:
    out = out or default_out(ex)
    return out if is_current(ex, out) else build(ex, out)
