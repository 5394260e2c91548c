"""The exercise's metadata, read from problem/exercise.toml (the one source of truth), and its seam."""

from __future__ import annotations

import ast
import importlib.util
import os
import sys
import tomllib
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from types import ModuleType
from typing import Any

KIT_ROOT = Path(__file__).resolve().parents[2]  # the engine's own folder (and its default exercise)
ENGINE_ROOT = KIT_ROOT
TIERS = ("examples", "hidden", "properties", "private")
# The exercise folder chosen with --exercise; inherited by every process the command starts.
EXERCISE_ENV = "GRADER_EXERCISE_DIR"
# The seam's parts (exercise.toml's [seam]) and whether each may ship to the page.
SEAM_PARTS = {"values": True, "trusted": False, "page": False, "explain": False, "widget": True}


def exercise_root() -> Path:
    """The folder holding problem/, solutions/ and hidden_tests/: --exercise's, else the kit's own."""
    chosen = os.environ.get(EXERCISE_ENV)
    return Path(chosen).resolve() if chosen else KIT_ROOT


@dataclass(frozen=True)
class Tier:
    name: str
    points: float
    browser: bool  # its tests, inputs included, ship to the page: students can read its inputs
    description: str
    # A failure's message names the input (the statement's examples, a property's counterexample):
    # it is shown whole. Only a tier that ships to the page can show its inputs.
    shows_inputs: bool = False

    @property
    def public(self) -> bool:
        """Whether students can get its inputs: what the submission says in its tests may quote nothing secret."""
        return self.browser


@dataclass(frozen=True)
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
    root: Path = KIT_ROOT
    seam: dict[str, str] = field(default_factory=dict)  # part -> path in the exercise folder
    counterexample: str = "smallest-drawn"  # [hypothesis] counterexample: "smallest-drawn" (replay.SIMPLEST_STEPS) or "shrunk" (as hypothesis shrinks it)

    @property
    def browser_tiers(self) -> tuple[str, ...]:
        return tuple(name for name, tier in self.tiers.items() if tier.browser)

    @cached_property
    def stages(self) -> tuple[tuple[str, ...], ...]:
        """The tiers in the order they run, grouped by the child that answers them (docs/tests-and-tiers.md).

        First every public tier, in exercise.toml's order, in one child; then each tier whose
        inputs students never get, in a fresh child of its own. So a child that has seen a
        secret input never answers a call of a public test afterwards, and what a submission
        says in a public test can quote only public inputs.
        """
        public = tuple(name for name, tier in self.tiers.items() if tier.public)
        secret = tuple((name,) for name, tier in self.tiers.items() if not tier.public)
        return ((public,) if public else ()) + secret

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
        return [a.id for a in _signature_call(self.signature).args]

    @property
    def defaults(self) -> dict[str, Any]:
        """The signature's keyword parameters and their defaults: the one source of them."""
        return {k.arg: ast.literal_eval(k.value) for k in _signature_call(self.signature).keywords}

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
    return node


@cache
def _load_module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while it runs
    spec.loader.exec_module(module)
    return module


def parse(data: dict, root: Path = KIT_ROOT) -> Exercise:
    limits = data["limits"]
    tiers = {
        name: Tier(name, float(t["points"]), bool(t["browser"]), t.get("description", ""), bool(t.get("shows_inputs", False)))
        for name, t in data["tiers"].items()
    }
    unknown = set(tiers) - set(TIERS)
    if unknown:
        raise ValueError(f"exercise.toml names unknown tiers: {sorted(unknown)}")
    shown_secret = sorted(name for name, tier in tiers.items() if tier.shows_inputs and not tier.public)
    if shown_secret:
        raise ValueError(f"exercise.toml: a tier that never ships to the page cannot show its inputs: {shown_secret}")
    seam = {str(k): str(v) for k, v in data.get("seam", {}).items()}
    if set(seam) - set(SEAM_PARTS):
        raise ValueError(f"exercise.toml's [seam] names unknown parts: {sorted(set(seam) - set(SEAM_PARTS))}")
    for part, name in seam.items():
        if Path(name).is_absolute() or ".." in Path(name).parts:
            raise ValueError(f"exercise.toml's [seam] {part} must be a path inside the exercise folder: {name!r}")
    counterexample = str(data["hypothesis"].get("counterexample", "smallest-drawn"))
    if counterexample not in ("shrunk", "smallest-drawn"):
        raise ValueError(f'exercise.toml\'s [hypothesis] counterexample must be "shrunk" or "smallest-drawn": {counterexample!r}')
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
        root=root,
        seam=seam,
        counterexample=counterexample,
    )


def load(path: Path | None = None) -> Exercise:
    if path is not None:
        return _load(path)
    # Asked again for each test of each result (the Gradescope files: 29,000 times for a class of
    # 290), the choice is looked up, not resolved on the disk again.
    chosen = os.environ.get(EXERCISE_ENV)
    return _chosen(chosen, os.getcwd() if chosen and not os.path.isabs(chosen) else None)


@cache
def _chosen(chosen: str | None, cwd: str | None) -> Exercise:
    """The exercise --exercise named (`chosen`; None: the kit's own); `cwd` tells a relative choice apart."""
    return _load(exercise_root() / "problem" / "exercise.toml")


@cache
def _load(path: Path) -> Exercise:
    with open(path, "rb") as f:
        return parse(tomllib.load(f), Path(path).resolve().parent.parent)
