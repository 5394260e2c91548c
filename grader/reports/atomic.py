"""Writing a file or a folder so that no reader ever sees it half-written, and a failed writer costs only its own file."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from grader.core.results import Unwritten
from grader.core.safe_text import valid

# The folders replace_folder stages (mkdtemp's 8 random characters after the prefix).
_STAGING = re.compile(r"\.(gradescope|report|feedback)(-old)?\.[a-z0-9_]{8}")


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write a sibling temporary file, then rename it over `path` (rename is atomic). Bytes are written as they are."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.fchmod(fd, 0o666 & ~_umask())  # mkstemp's 0600 would hide the results from other readers
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def _umask() -> int:
    """The process's umask (reading it means setting it: set it straight back)."""
    umask = os.umask(0)
    os.umask(umask)
    return umask


def attempt(unwritten: list[Unwritten], output: str, write: Callable[[], object]) -> bool:
    """Run `write`; if it fails, add `output` and the error to `unwritten` rather than stop the run."""
    try:
        write()
    except Exception as exc:  # whatever stops one file must not stop the others
        unwritten.append(Unwritten(output, valid(f"{type(exc).__name__}: {exc}")))
        return False
    return True


def replace_folder(target: Path, fill: Callable[[Path], None]) -> None:
    """`target` replaced whole by a folder `fill` makes: a reader sees the old one or the new one, never a mix.

    Nothing of a failed attempt stays behind: the staging folder is removed, and the old folder,
    if it was moved aside, is put back.
    """
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    aside = None
    try:
        staging.chmod(0o777 & ~_umask())  # mkdtemp's 0700 would hide the files from other readers
        fill(staging)
        if os.path.lexists(target):
            aside = Path(tempfile.mkdtemp(prefix=f".{target.name}-old.", dir=target.parent))
            os.replace(target, aside / target.name)
            try:
                os.replace(staging, target)
            except BaseException:
                os.replace(aside / target.name, target)
                raise
        else:
            os.replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # gone already once swapped in
        if aside is not None:
            shutil.rmtree(aside, ignore_errors=True)


def sweep(out: Path) -> None:
    """Remove the staging folders a killed run left in `out` (`replace_folder` removes its own)."""
    for path in out.iterdir():
        if _STAGING.fullmatch(path.name) and path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
