"""What the tests call: a submission's function, wherever it actually runs."""

from __future__ import annotations

import difflib
import importlib.util
import sys
import traceback
import types
from typing import Any, Protocol

from grader.core.checks import Opaque

SUBMISSION_FILENAME = "submission.py"


class SubmissionError(Exception):
    """A call into the submission did not return; `kind` says how it ended."""

    STATUSES = {"exception": "error", "crash": "error", "timeout": "timeout", "not_run": "not_run"}

    def __init__(self, kind: str, message: str, traceback: str = ""):
        super().__init__(message)
        self.kind = kind
        self.message = message  # a test may add to it ("expected 0.5, but ...")
        self.reason = message  # as the sandbox said it
        self.traceback = traceback

    @property
    def status(self) -> str:
        return self.STATUSES[self.kind]


class LoadError(Exception):
    """The submission could not be loaded at all (syntax error, no such function, ...)."""


class Submission(Protocol):
    function: str

    def call(self, *args: Any, **kwargs: Any) -> Any: ...


class CallsByName:
    """The exercise's function by its own name: `submission.<function>(...)` is `submission.call(...)`."""

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("_") and name not in ("function", "call") and name == self.function:
            return self.call
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def to_plain(value: Any) -> Any:
    """What may cross from the submission to the judge: plain data only, never live objects."""
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return value
    if isinstance(value, float):
        return float.__float__(value)
    if kind in (list, tuple):
        return [to_plain(v) for v in value[:100]]
    return Opaque(f"{kind.__module__}.{kind.__qualname__}".removeprefix("builtins."))


def missing_function_message(names: list[str], wanted: str) -> str:
    close = difflib.get_close_matches(wanted, names, n=1, cutoff=0.6)
    hint = f"; did you mean to name {close[0]!r} {wanted!r}?" if close else ""
    return f"no function named {wanted!r} is defined{hint}"


def student_traceback(exc: BaseException, filename: str = SUBMISSION_FILENAME) -> str:
    """The traceback lines that point into the student's file, and the exception itself."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    lines = traceback.format_list(frames) if frames else []
    lines += traceback.format_exception_only(type(exc), exc)
    return "".join(lines).rstrip()


class LocalSubmission(CallsByName):
    """Runs trusted or practice code in this process: the browser, where a student can only cheat themselves."""

    def __init__(self, source: str, function: str, filename: str = SUBMISSION_FILENAME):
        self.function = function
        self.filename = filename
        module = types.ModuleType("submission")
        module.__file__ = filename
        namespace: dict[str, Any] = module.__dict__
        try:
            code = compile(source, filename, "exec")
        except SyntaxError as exc:
            raise LoadError(f"syntax error on line {exc.lineno}: {exc.msg}") from None
        # @dataclass (and typing) look the class's module up in sys.modules while the file runs.
        previous = sys.modules.get("submission")
        sys.modules["submission"] = module
        try:
            exec(code, namespace)
        except BaseException as exc:
            raise LoadError(f"running the file failed: {student_traceback(exc, filename)}") from None
        finally:
            if previous is None:
                sys.modules.pop("submission", None)
            else:
                sys.modules["submission"] = previous
        if function not in namespace:
            names = [n for n, v in namespace.items() if callable(v) and not n.startswith("__")]
            raise LoadError(missing_function_message(names, function))
        if not callable(namespace[function]):
            raise LoadError(f"{function!r} is defined but is not a function")
        self._function = namespace[function]

    def call(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return self._function(*args, **kwargs)
        except KeyboardInterrupt:
            raise SubmissionError("timeout", "the call was interrupted: it ran past the time limit") from None
        except BaseException as exc:
            raise SubmissionError(
                "exception",
                f"{self.function} raised {type(exc).__name__}: {exc}",
                student_traceback(exc, self.filename),
            ) from None


def load_local(path: str, function: str) -> LocalSubmission:
    """Trusted code from a file that defines `function`, decoded as CPython decodes source (a BOM, a coding line)."""
    with open(path, "rb") as f:
        return LocalSubmission(importlib.util.decode_source(f.read()), function, filename=path)
