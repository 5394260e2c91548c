"""The interpreter the jail runs, and what of its trees the jail must show and hide."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PYTHON_PREFIX = Path(sys.base_prefix).resolve()


@dataclass(frozen=True)
class Interpreter:
    """What the jail must show of this Python (read-only) and what it must hide under that."""

    executable: Path
    roots: tuple[Path, ...]  # trees the interpreter runs from: its prefix and any stdlib entry outside it
    hidden: tuple[Path, ...]  # existing directories inside those trees: site-packages, the kit, the venv


def _interpreter_executable(base_prefix: Path) -> Path:
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    candidates = [base_prefix / "bin" / version, Path(getattr(sys, "_base_executable", "") or sys.executable)]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    return candidates[0]


PYTHON = _interpreter_executable(PYTHON_PREFIX).resolve()  # the interpreter the jail runs


def under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def describe_interpreter(
    prefix: str = sys.prefix,
    base_prefix: str = sys.base_prefix,
    base_exec_prefix: str = sys.base_exec_prefix,
    path: list[str] | None = None,
    stdlib: list[str] | None = None,
    executable: Path | None = None,
) -> Interpreter:
    """The trees this interpreter really uses, from sys.prefix, sys.base_prefix and sys.path.

    Nothing is assumed to exist: Debian's Python has dist-packages and no site-packages, and
    bubblewrap cannot bind or cover a missing path under a read-only /usr ("Can't mkdir").
    """
    import site
    import sysconfig

    def real(text: str) -> Path | None:
        try:
            found = Path(text).resolve()
        except (OSError, RuntimeError):
            return None
        return found if text and found.exists() else None

    base = real(base_prefix) or Path(base_prefix)
    executable = (executable or _interpreter_executable(base)).resolve()
    if stdlib is None:  # the base interpreter's: in a venv, sysconfig's platstdlib is under the venv
        bases = {
            "base": base_prefix,
            "platbase": base_exec_prefix,
            "installed_base": base_prefix,
            "installed_platbase": base_exec_prefix,
        }
        stdlib = [sysconfig.get_path(name, vars=bases) for name in ("stdlib", "platstdlib")]
    stdlib_dirs = [p for p in map(real, stdlib) if p]
    entries = [p for p in map(real, path if path is not None else sys.path) if p]
    is_stdlib = lambda p: any(under(p, s) for s in stdlib_dirs)  # noqa: E731
    roots = [Path("/usr")]
    for candidate in [base, real(base_exec_prefix), executable.parent.parent, *stdlib_dirs, *filter(is_stdlib, entries)]:
        if candidate is not None and candidate != Path("/") and not any(under(candidate, r) for r in roots):
            roots = [r for r in roots if not under(r, candidate)] + [candidate]
    # What the jail must not see although it lies in a tree it gets: every import location
    # that is not the standard library (pytest, the grader, its dependencies), the venv, the kit.
    import grader

    package = Path(grader.__file__).resolve().parent
    others = [e for e in entries if not is_stdlib(e) and e.is_dir()]
    others += [p for p in map(real, site.getsitepackages([base_prefix, base_exec_prefix])) if p]
    others += [p for p in (real(prefix), package, package.parent) if p]
    keep = [executable, *stdlib_dirs, *roots]
    hidden = sorted({h for h in others if h.is_dir() and any(under(h, r) for r in roots) and not any(under(k, h) for k in keep)})
    return Interpreter(executable, tuple(sorted(roots)), tuple(hidden))


@cache
def interpreter() -> Interpreter:
    return describe_interpreter(executable=PYTHON)
