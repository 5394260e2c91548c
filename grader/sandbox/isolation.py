"""Which isolation mode this run uses: the first of order() that works here, said on stderr when it is less than the full jail."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from grader.sandbox.bubblewrap import Bubblewrap, fix
from grader.sandbox.modes import Mode, facts
from grader.sandbox.separate_uid import SeparateUid
from grader.sandbox.unisolated import Unisolated


def order() -> list[Mode]:
    """The modes in the order they are tried: the first that works is the one used."""
    return [Bubblewrap(), SeparateUid(), Unisolated()]


def get(name: str) -> Mode:
    for mode in order():
        if mode.name == name:
            return mode
    raise ValueError(f"no isolation mode named {name!r}")


@dataclass(frozen=True)
class Probe:
    mode: str  # the name of the mode chosen
    problem: str = ""  # why the full jail is not used: bubblewrap's own error, as it printed it


@cache
def probe() -> Probe:
    """Which isolation works here: the first mode of order() that does."""
    problems = []
    for mode in order():
        problem = mode.problem()
        if problem is None:
            return Probe(mode.name, problems[0] if problems else "")
        problems.append(problem)
    raise AssertionError("the unisolated mode always works")


def chosen() -> Mode:
    return get(probe().mode)


def isolation() -> str:
    """The name of the mode that works here: "bubblewrap", else "separate-uid" as root, "none" otherwise."""
    return probe().mode


def isolation_note(mode: str | None = None) -> str:
    """What each submission gets in this mode on this machine, in one paragraph."""
    return get(mode or isolation()).describe(facts())


def refusal(command: str) -> str:
    """Why `command` will not run submissions here, and what would fix it (not root, no usable bubblewrap)."""
    return (
        f"{command}: refusing to run submissions without isolation: {probe().problem}.\n"
        f"To fix it, {fix()}.\n"
        f"To run anyway, NOT isolated (a submission can then read the hidden tests and your files), "
        f"pass --no-sandbox."
    )


def enter_mode(command: str, allow_none: bool, hidden: list[Path], create: tuple[Path, ...] = ()) -> str | None:
    """The isolation mode of this run, said on stderr when it is less than the full jail; None when it must refuse.

    The mode gets ready first: in separate-uid mode, the kit and `hidden` are made unreadable to
    the jails (`create`: folders to make before that, such as --out).
    """
    mode = chosen()
    if mode.level == "none" and not allow_none:
        print(refusal(command), file=sys.stderr)
        return None
    if mode.level != "full" or not facts().capped:
        print(isolation_note(mode.name), file=sys.stderr)
    mode.prepare(hidden, create)
    return mode.name
