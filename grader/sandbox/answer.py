"""What came back from one call, as the judge sees it: a plain value or how the call ended."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from grader.core.checks import Opaque
from grader.core.submission import SubmissionError
from grader.sandbox import wire


@dataclass
class Answer:
    """What came back from one call: a plain value, or how the call ended."""

    ok: bool
    value: Any = None  # as encoded on the wire (JSON); `decode` turns it into a Python value
    kind: str = ""
    error: str = ""
    traceback: str = ""
    output: str = ""
    took: float = field(default=0.0, compare=False)  # seconds the call took, as the child said (TOOK_FROM or more)
    _key: str = field(default="", repr=False, compare=False)  # key(), when known in advance

    def key(self) -> str:
        """Everything a verdict can depend on (not the printed output). Distinct answers, distinct keys.

        A long key is kept as its hash: the memo holds one per call it remembers.
        """
        if self._key:
            return self._key
        if self.ok:
            value = self.value
            if type(value) is dict:  # {"float": text} or {"opaque": name}: the common case, made cheap
                ((tag, text),) = value.items()
                return f"{tag[0]}:{text}"
            key = "v:" + json.dumps(value)
        else:
            key = json.dumps(["e", self.kind, self.error, self.traceback])
        return key if len(key) <= 200 else "#" + hashlib.sha256(key.encode()).hexdigest()

    def result(self) -> Any:
        if self.ok:
            return decode(self.value)
        raise SubmissionError(self.kind, self.error, self.traceback)


_FLOATS: dict[bytes, Answer] = {}  # "f:REPR" payloads already checked: a class repeats a few thousand
# Other payloads already checked, with their keys: a crash answers alike call after call (145
# diverse files: 36,748 such answers, 96 distinct, each key a json.dumps before). Short ones only,
# and at most so many, so that a worker holds a few MB of them at most.
_OTHERS: dict[bytes, Answer] = {}
OTHERS_KEPT = 4096
OTHER_KEPT_BYTES = 2048


def answer_from(payload: bytes) -> Answer:
    """An answer line's payload: "f:REPR" (a float returned, nothing printed: most answers) or "j:JSON".

    Answers seen before are shared, checked once: nobody changes an Answer.
    """
    answer = _FLOATS.get(payload) or _OTHERS.get(payload)
    if answer is not None:
        return answer
    text = wire.float_text(payload)
    if text is None:
        raw = wire.check_answer(wire.json_payload(payload))
        if raw["ok"]:
            answer = Answer(True, value=raw["value"], output=raw["output"], took=raw["took"])
        else:
            answer = Answer(
                False, kind="exception", error=raw["error"], traceback=raw["traceback"], output=raw["output"], took=raw["took"]
            )
        if len(payload) <= OTHER_KEPT_BYTES:
            if len(_OTHERS) >= OTHERS_KEPT:
                _OTHERS.clear()
            answer._key = answer.key()
            _OTHERS[payload] = answer
        return answer
    if len(_FLOATS) > 100_000:
        _FLOATS.clear()
    answer = _FLOATS[payload] = Answer(True, value={"float": text}, _key=f"f:{text}")
    return answer


def decode(value: Any) -> Any:
    """Plain data from a checked answer: floats, tuples and dicts as the child tagged them, Opaque for objects."""
    return wire.decode(value, Opaque)
