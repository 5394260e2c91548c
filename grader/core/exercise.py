"""An exercise as a value: its metadata, read from problem/exercise.toml (the one source of truth), and its seam.

`load(folder)` reads one; the engine is handed it (a command's --exercise, a Settings, a
Catalogue) and never looks one up elsewhere. An exercise's own files find theirs with `holding`.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import re
import sys
import tomllib
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from types import ModuleType
from typing import Any, cast

KIT_ROOT = Path(__file__).resolve().parents[2]  # the engine's own folder, which holds its default exercise
ENGINE_ROOT = KIT_ROOT
# The kit's cache folder: what the engine computes from an exercise (recordings, tables) is kept
# there, in a folder of the exercise's own (Exercise.cache), never in the exercise's folder.
CACHE = ENGINE_ROOT / "build" / "cache"
# A tier's name names its test file (hidden_tests/test_<name>.py), its pytest mark and its tests' keys
# ("<tier>-<id>" in [scoring]): letters, digits and underscores, no "-".
TIER_NAME = re.compile(r"[a-z][a-z0-9_]*")
# Gradescope's visibility of a test (its `visibility` in results.json).
GRADESCOPE_VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")
# The seam's parts (exercise.toml's [seam]) and whether each may ship to the page.
SEAM_PARTS = {"values": True, "trusted": False, "page": False, "explain": False, "widget": True}


@dataclass(frozen=True)
class Tier:
    """What a tier's tests are and who sees what of them: `[tiers.<name>]` of exercise.toml (docs/tests-and-tiers.md)."""

    name: str
    points: float  # what each passed test pays (the grading policy may pay less: grader/core/scoring.py)
    browser: bool  # its tests, inputs included, ship to the page: students can read its inputs
    description: str
    # A failure's message names the input (the statement's examples, a property's counterexample):
    # it is shown whole. Only a tier that ships to the page can show its inputs.
    shows_inputs: bool = False
    # What the submission printed in its tests is shown to students (Gradescope, the feedback files):
    # it may print any input it got, so only a tier that shows its inputs can.
    shows_printed: bool = False
    # Its failing calls are the diagnosis's to quote as the example of a mistake: a tier that shows its inputs.
    feeds_diagnosis: bool = False
    gradescope_visibility: str = "after_published"  # one of GRADESCOPE_VISIBILITIES
    title: str = ""  # the page's heading for its tests
    # Its tests start in a fresh child: nothing the submission kept from the tiers before reaches
    # them. Off by default: a secret tier runs after every public one anyway (Exercise.stages).
    fresh_child: bool = False

    @property
    def public(self) -> bool:
        """Whether students can get its inputs: what the submission says in its tests may quote nothing secret."""
        return self.browser


# Each field of a [tiers.<name>] table: its type, and its default (None: required; a function: computed
# from the fields before it, so a tier says only what differs from what its kind usually does).
TIER_FIELDS: dict[str, tuple[type, Any]] = {
    "points": (float, None),
    "browser": (bool, False),
    "description": (str, ""),
    "shows_inputs": (bool, False),
    "shows_printed": (bool, False),
    "feeds_diagnosis": (bool, lambda t: t["shows_inputs"]),
    "gradescope_visibility": (str, lambda t: "visible" if t["browser"] else "after_published"),
    "title": (str, lambda t: t["name"].replace("_", " ").capitalize()),
    "fresh_child": (bool, False),
}


AFTER_TIMEOUT = 0.05  # `[limits] after_timeout` where exercise.toml gives none (see after_timeout below)


# eq=False: an exercise is one folder's, loaded once (`load`); compared and hashed as that object,
# so the engine's per-exercise caches can be keyed by it.
@dataclass(frozen=True, eq=False)
class Exercise:
    id: str
    title: str
    difficulty: str
    function: str
    signature: str
    call_timeout: float
    budget: float
    browser_test_timeout: float
    memory_mb: int
    hypothesis_examples: int
    private_examples: int
    tiers: dict[str, Tier]
    scoring: dict = field(default_factory=dict)  # when points are paid: read by grader/core/scoring.py
    submission_file: str | None = None  # `[submission] file`: a glob naming the file graded among a student's files
    browser_run_budget: float = 20.0
    after_timeout: float = AFTER_TIMEOUT  # CPU seconds a call has at least once one of the submission's timed out (timing.Pace)
    root: Path = KIT_ROOT  # its folder
    seam: dict[str, str] = field(default_factory=dict)  # part -> path in the exercise folder

    @property
    def tests_dir(self) -> Path:
        """Its hidden_tests/ folder: one test module per tier, and the conftest that takes the engine's plugin."""
        return self.root / "hidden_tests"

    @cached_property
    def cache(self) -> Path:
        """Where the engine keeps what it computes from this exercise: a folder of the kit's cache folder, by its path."""
        where = hashlib.sha256(str(self.root).encode("utf-8", "surrogateescape")).hexdigest()[:12]
        return CACHE / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', self.id)[:40]}-{where}"

    @property
    def starter(self) -> str:
        """problem/starter.py: what the page's editor starts with, the code every student was given."""
        return (self.root / "problem" / "starter.py").read_text(encoding="utf-8")

    @property
    def browser_tiers(self) -> tuple[str, ...]:
        return tuple(name for name, tier in self.tiers.items() if tier.browser)

    @property
    def diagnosis_tiers(self) -> tuple[str, ...]:
        """The tiers whose failing calls the diagnosis may quote (`feeds_diagnosis`): all of them show their inputs."""
        return tuple(name for name, tier in self.tiers.items() if tier.feeds_diagnosis)

    @cached_property
    def stages(self) -> tuple[tuple[str, ...], ...]:
        """The tiers in the order they run, grouped by the child that answers them (docs/tests-and-tiers.md).

        Every public tier first, then every tier whose inputs students never get, each group in
        exercise.toml's order. So a child that has seen a secret input never answers a call of
        a public test afterwards, and what a submission says in a public test can quote only
        public inputs. One child answers them all, but a tier with `fresh_child` starts a new one.
        """
        ordered = [t for t in self.tiers.values() if t.public] + [t for t in self.tiers.values() if not t.public]
        stages: list[tuple[str, ...]] = []
        for tier in ordered:
            if tier.fresh_child or not stages:
                stages.append(())
            stages[-1] += (tier.name,)
        return tuple(stages)

    @property
    def run_order(self) -> tuple[str, ...]:
        """Every tier, in the order its tests run."""
        return tuple(name for stage in self.stages for name in stage)

    def stage_of(self, tier: str) -> int:
        """The number of the child that answers `tier`'s tests (0: the first); an unknown tier runs last."""
        return self._stage_numbers.get(tier, len(self.stages))

    @cached_property
    def _stage_numbers(self) -> dict[str, int]:
        return {name: number for number, stage in enumerate(self.stages) for name in stage}

    @property
    def parameters(self) -> list[str]:
        """The signature's positional parameters, those without defaults."""
        return [cast(ast.Name, a).id for a in _signature_call(self.signature).args]

    @property
    def defaults(self) -> dict[str, Any]:
        """The signature's keyword parameters and their defaults: the one source of them."""
        return {cast(str, k.arg): ast.literal_eval(k.value) for k in _signature_call(self.signature).keywords}

    def path(self, part: str) -> Path | None:
        """Where the seam's `part` lives, or None when the exercise has none."""
        name = self.seam.get(part)
        return self.root / name if name else None

    def module(self, part: str) -> ModuleType | None:
        """The seam's Python module `part` ("values" or "trusted"), loaded once from the exercise folder."""
        path = self.path(part)
        return _load_module(path, f"_exercise_{self.id}_{part}") if path else None


def _signature_call(signature: str) -> ast.Call:
    node = ast.parse(signature, mode="eval").body
    if not isinstance(node, ast.Call):
        raise ValueError(f"exercise.toml's signature is not a call: {signature!r}")
    if not all(isinstance(a, ast.Name) for a in node.args) or any(k.arg is None for k in node.keywords):
        raise ValueError(f"exercise.toml's signature takes plain names and name=value only: {signature!r}")
    return node


@cache
def _load_module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path} as a module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while it runs
    spec.loader.exec_module(module)
    return module


def parse(data: dict, root: Path = KIT_ROOT) -> Exercise:
    limits = data["limits"]
    where = root / "problem" / "exercise.toml"
    tiers = parse_tiers(data.get("tiers"), where)
    check_twin_tier(data.get("scoring", {}), tiers, where)
    seam = {str(k): str(v) for k, v in data.get("seam", {}).items()}
    if set(seam) - set(SEAM_PARTS):
        raise ValueError(f"exercise.toml's [seam] names unknown parts: {sorted(set(seam) - set(SEAM_PARTS))}")
    for part, name in seam.items():
        if Path(name).is_absolute() or ".." in Path(name).parts:
            raise ValueError(f"exercise.toml's [seam] {part} must be a path inside the exercise folder: {name!r}")
    # One way to show a failing property test's example since 2026-11-28 (docs/memo.md); the old key
    # is read only to say so.
    counterexample = data["hypothesis"].get("counterexample", "smallest-drawn")
    if counterexample != "smallest-drawn":
        raise ValueError(
            f"exercise.toml's [hypothesis] counterexample = {counterexample!r} is no longer a setting: a failing "
            "property test shows the simplest failing example drawn (KIT_REPLAY=0 runs hypothesis itself, shrinking "
            "included). Remove the line."
        )
    return Exercise(
        id=data["id"],
        title=data["title"],
        difficulty=data["difficulty"],
        function=data["function"],
        signature=data["signature"],
        call_timeout=float(limits["call_timeout"]),
        budget=float(limits["budget"]),
        browser_test_timeout=float(limits["browser_test_timeout"]),
        memory_mb=int(limits["memory_mb"]),
        hypothesis_examples=int(data["hypothesis"]["examples"]),
        private_examples=int(data["hypothesis"]["private_examples"]),
        tiers=tiers,
        scoring=data.get("scoring", {}),
        submission_file=data.get("submission", {}).get("file") or None,
        browser_run_budget=float(limits.get("browser_run_budget", 20.0)),
        after_timeout=after_timeout(limits, where),
        root=root,
        seam=seam,
    )


def after_timeout(limits: dict, where: Path) -> float:
    """`[limits] after_timeout`: CPU seconds each call of a submission has at least once one of its calls timed out.

    Such a submission most likely hangs again, so its later calls get ten times its slowest answer, and
    at least this: each later hang costs this much. Ten times the reference's slowest call at least
    (`meteor-kit audit` checks), so that a correct call is never cut short.
    """
    value = limits.get("after_timeout", AFTER_TIMEOUT)
    if type(value) not in (int, float) or not 0 < value <= float(limits["call_timeout"]):
        raise ValueError(f"{where}: [limits] after_timeout must be a number of seconds above 0, at most call_timeout")
    return float(value)


def parse_tiers(tables: Any, where: Path) -> dict[str, Tier]:
    """The `[tiers.<name>]` tables of the exercise.toml at `where`, in the order declared; a ValueError names the file and the tier."""
    if not isinstance(tables, dict) or not tables:
        raise ValueError(f"{where}: no tiers: declare each as a table [tiers.<name>] with its points")
    return {name: parse_tier(name, table, where) for name, table in tables.items()}


def parse_tier(name: str, table: Any, where: Path) -> Tier:
    """One `[tiers.<name>]` table, checked field by field (docs/tests-and-tiers.md says what each does)."""
    if not TIER_NAME.fullmatch(name):
        raise ValueError(
            f"{where}: [tiers.{name}]: a tier's name is lower-case letters, digits and underscores, starting with a letter"
        )
    if not isinstance(table, dict):
        raise ValueError(f"{where}: [tiers.{name}] must be a table of fields, not {table!r}")
    unknown = sorted(set(table) - set(TIER_FIELDS))
    if unknown:
        raise ValueError(f"{where}: [tiers.{name}] has unknown field(s) {unknown}; a tier's fields are {list(TIER_FIELDS)}")
    fields: dict[str, Any] = {"name": name}
    for field_name, (kind, default) in TIER_FIELDS.items():
        if field_name not in table:
            if default is None:
                raise ValueError(f"{where}: [tiers.{name}] needs {field_name}")
            fields[field_name] = default(fields) if callable(default) else default
            continue
        value = table[field_name]
        numeric = kind is float and isinstance(value, int | float) and not isinstance(value, bool)
        if not (numeric or isinstance(value, kind)):
            raise ValueError(f"{where}: [tiers.{name}] {field_name} must be {_KINDS[kind]}, not {value!r}")
        fields[field_name] = float(value) if kind is float else value
    tier = Tier(**fields)
    if not tier.points >= 0:  # also refuses nan
        raise ValueError(f"{where}: [tiers.{name}] points must be a number of at least 0, not {tier.points!r}")
    if tier.gradescope_visibility not in GRADESCOPE_VISIBILITIES:
        raise ValueError(
            f"{where}: [tiers.{name}] gradescope_visibility must be one of {list(GRADESCOPE_VISIBILITIES)}, "
            f"not {tier.gradescope_visibility!r}"
        )
    # What students may read follows from where the inputs go: each needs the one before it.
    if tier.shows_inputs and not tier.public:
        raise ValueError(f"{where}: [tiers.{name}]: a tier that never ships to the page (browser = false) cannot show its inputs")
    for needs_inputs in ("shows_printed", "feeds_diagnosis"):
        if getattr(tier, needs_inputs) and not tier.shows_inputs:
            raise ValueError(
                f"{where}: [tiers.{name}]: {needs_inputs} = true quotes its inputs to students: it needs shows_inputs = true"
            )
    return tier


_KINDS = {float: "a number", bool: "true or false", str: "a string"}


def secret_tiers(tiers: dict[str, Tier]) -> list[str]:
    """The tiers whose inputs students never get (browser = false), in the order declared."""
    return [name for name, tier in tiers.items() if not tier.public]


def check_twin_tier(scoring: dict, tiers: dict[str, Tier], where: Path) -> None:
    """[scoring] twin_tier names a secret tier; it may be left out where the exercise has one (grader/core/scoring.py)."""
    named = scoring.get("twin_tier")
    if named is None:
        if scoring and len(secret_tiers(tiers)) > 1:
            raise ValueError(
                f"{where}: [scoring] twin_tier must say which of the secret tiers {secret_tiers(tiers)} holds the twins"
            )
        return
    if named not in tiers or tiers[named].public:
        raise ValueError(
            f"{where}: [scoring] twin_tier must name a tier with browser = false (the twins' inputs are secret), not {named!r}"
        )


def load(folder: str | Path) -> Exercise:
    """The exercise in `folder` (its problem/exercise.toml), read once per folder."""
    return _load(Path(folder).resolve())


@cache
def _load(folder: Path) -> Exercise:
    with open(folder / "problem" / "exercise.toml", "rb") as f:
        return parse(tomllib.load(f), folder)


def holding(path: str | Path) -> Exercise:
    """The exercise whose folder holds `path` (a test module, a seam module): the nearest folder above it with
    problem/exercise.toml. How an exercise's own files find their exercise, wherever it is, the page included."""
    for folder in Path(path).resolve().parents:
        if (folder / "problem" / "exercise.toml").is_file():
            return load(folder)
    raise LookupError(f"no exercise folder (one with problem/exercise.toml) holds {path}")
