"""Loading a submission in a fresh child: what the child is sent, and what its answer means."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from grader.core.submission import LoadError, missing_function_message
from grader.sandbox import wire
from grader.sandbox.pipes import ChildPipes
from grader.sandbox.timing import wall_cap
from grader.sandbox.wire import ProtocolError


@dataclass(frozen=True)
class Loading:
    """The submission as the child loads it: its code, the function the tests call and how they call it."""

    source: str = field(repr=False)  # shown in tracebacks otherwise, whole
    filename: str
    function: str
    signature: str
    modules: dict[str, str] = field(default_factory=dict, repr=False)  # helper modules it may import, by name

    def time_limit(self, timeout: float) -> float:
        """Seconds a load may take, for calls limited to `timeout`."""
        return max(timeout * 5, 5.0)

    def load(
        self, pipes: ChildPipes, seq: int, limit: float, cap: float | None = None, meanwhile: Callable[[], None] | None = None
    ) -> dict | str | None:
        """The child's checked load answer; "malformed", or None when none came within `limit` seconds of CPU time
        (or `cap` of its own time: see ChildPipes.read_answer). LoadError if the child is gone."""
        positional, keywords = parameters(self.signature)
        request = {
            "source": self.source,
            "filename": self.filename,
            "function": self.function,
            "positional": positional,
            "keywords": keywords,
            "seq": seq,
            "modules": self.modules,
        }
        try:
            # The code goes to the child alone: the server never holds a submission.
            pipes.request(request, time.monotonic() + (wall_cap(limit) if cap is None else cap))
            if meanwhile is not None:
                meanwhile()  # the grader's own work while the child loads the file
            payload = pipes.read_answer(seq, limit, cap)
            return None if payload is None else wire.check_load(payload)
        except TimeoutError:
            return None  # it did not even read its code in time
        except OSError:
            raise LoadError("the sandbox did not start") from None
        except ProtocolError:
            return "malformed"

    def resume(self, pipes: ChildPipes, seq: int, limit: float, last: bool = False) -> dict | str | None:
        """A woken copy's load answer (it loaded the file before it was set aside): as `load`'s.

        `last`: no fresh child is expected after this one, so it sets no copy of itself aside (a
        fresh child asked for all the same is loaded anew).
        """
        try:
            request = {"seq": seq, "resume": True, **({"last": True} if last else {})}
            pipes.request(request, time.monotonic() + wall_cap(limit))
            payload = pipes.read_answer(seq, limit)
            return None if payload is None else wire.check_load(payload)
        except TimeoutError:
            return None
        except OSError:
            raise LoadError("the sandbox did not start") from None
        except ProtocolError:
            return "malformed"

    def check(self, load: dict | str) -> None:
        """LoadError unless the answer says the function is there and takes the tests' calls."""
        if not isinstance(load, dict):
            raise LoadError("the sandbox sent a malformed answer while loading the file")
        if load.get("ok"):
            return
        if isinstance(load.get("signature"), str):
            raise LoadError(f"{self.function} takes {load['signature'][:200]}, but the tests call {self.signature}")
        if isinstance(load.get("error"), str):
            raise LoadError(load["error"][:2000])
        if not load.get("defined"):
            raise LoadError(missing_function_message(load["names"], self.function))
        raise LoadError(f"{self.function!r} is defined but is not a function")


def parameters(signature: str) -> tuple[int, list[str]]:
    """From "f(a, b, c=1)": how many positional arguments the tests pass, and the keyword names."""
    inside = signature[signature.index("(") + 1 : signature.rindex(")")]
    params = [p.strip() for p in inside.split(",") if p.strip()]
    return sum("=" not in p for p in params), [p.split("=")[0].strip() for p in params if "=" in p]
