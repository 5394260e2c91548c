"""The jail's protocol, spoken by the grader (host.py) and the untrusted child (child.py): standard library only.

Messages are a 4-byte big-endian length, then the body: JSON for control messages, marshal for the
grader's requests to the child (see `request`), which only the child reads. Answers are lines:
"SEQ f:REPR" for a float returned with nothing printed (most answers), else "SEQ j:JSON".
A returned value crosses as plain data within the bounds below; past them, as opaque.

The child is bound into the jail next to this file (/jail/wire.py), so this module must stay
importable alone: it imports nothing but the standard library.
"""

from __future__ import annotations

import json
import marshal
import os
import select
import struct
import time

# What the child sends at most.
STR_LIMIT = 1000  # characters of a string value, an error message
OUTPUT_HEAD = 400  # bytes of printed output kept per call; the grader is told the full size
TOOK_FROM = 0.001  # CPU seconds from which an answer says how long its call took (timing.Pace.took reads it)
# Bounds on a returned value (both sides): containers nest at most PLAIN_DEPTH deep and hold
# PLAIN_ITEMS values in all, and the whole encodes to at most PLAIN_BYTES.
PLAIN_DEPTH, PLAIN_ITEMS, PLAIN_BYTES = 16, 2000, 64 * 1024
# What the trusted side reads from pipes the submission can write on is capped: no line, string
# or message it sends can make the grader hold more than this.
LINE_LIMIT = 256 * 1024  # one answer line (the child's largest, a traceback of 4000 characters, is under 50 KB)
CONTROL_LIMIT = 64 * 1024  # one control message of the fork server (an event: a few dozen bytes)
REQUEST_LIMIT = 64 * 1024 * 1024  # one request to the child (the grader's own: a batch of calls, a source)
READ_SIZE = 64 * 1024  # bytes read from the answer pipe at once
ERROR_LIMIT, TRACEBACK_LIMIT, OUTPUT_LIMIT = 2000, 8000, 2000  # characters (the child sends at most 1000, 4000, 400)
_HEAD = struct.Struct(">I")
# The calls the protocol is read and written with, taken when this module loads: in the jail it loads
# before the submission, which may replace os.read and os.write for its own code, never for ours.
_read, _write, _unmarshal = os.read, os.write, marshal.loads


class ProtocolError(Exception):
    """The other side sent something that is not a well-formed message or answer."""


# ---------------------------------------------------------------- messages: length, then JSON


def frame(message: dict) -> bytes:
    return framed(json.dumps(message).encode())


def framed(body: bytes) -> bytes:
    return _HEAD.pack(len(body)) + body


def send(fd: int, message: dict, deadline: float | None = None) -> None:
    """Write one message; with a deadline, TimeoutError if the reader has not taken it all by then."""
    write_all(fd, frame(message), deadline)


def write_all(fd: int, data: bytes, deadline: float | None = None) -> None:
    """Write `data`; with a deadline, never blocking past it (TimeoutError then).

    A submission can shrink a pipe it reads to one page and stop reading: a blocking write
    of a large request would then hold the grader forever, budget or not.
    """
    if deadline is None:
        while data:
            data = data[_write(fd, data) :]
        return
    if os.get_blocking(fd):
        os.set_blocking(fd, False)
    view = memoryview(data)
    while view:
        try:
            view = view[_write(fd, view) :]
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [fd], [], left)[1]:
                raise TimeoutError("the sandbox stopped reading") from None


def request(message: dict) -> bytes:
    """A request to the child (a submission's code, a batch of calls), framed.

    marshal, flagged "m": the tests' values arrive as they passed them (tuples, sets, bytes,
    dicts with keys that are not strings: JSON made lists and strings of these, and refused
    sets and bytes), and a batch of 929 calls encodes in 0.07 ms rather than 0.76 ms and
    decodes in 0.27 ms rather than 0.48 ms. What marshal cannot write (a subclass: a namedtuple,
    an enum) goes as JSON, flagged "j", as before. Nothing the grader reads is marshal: a
    request only ever travels from the grader to the child.
    """
    try:
        return framed(b"m" + marshal.dumps(message))
    except ValueError:
        return framed(b"j" + json.dumps(message).encode())


def send_request(fd: int, message: dict, deadline: float | None = None) -> None:
    write_all(fd, request(message), deadline)


def read_request(fd: int, limit: int) -> dict | None:
    """The child's next request (see `request`), None at the end of the pipe; ProtocolError if malformed."""
    body = read_body(fd, limit)
    if body is None:
        return None
    if body[:1] == b"j":
        return parse_message(body[1:])
    try:
        message = _unmarshal(memoryview(body)[1:]) if body[:1] == b"m" else None
    except (ValueError, EOFError, TypeError):
        message = None
    if not isinstance(message, dict):
        raise ProtocolError("not a request")
    return message


def read_exact(fd: int, n: int, deadline: float | None = None) -> bytes | None:
    """`n` bytes, or None at the end of the pipe (or, with a deadline, once it passed)."""
    chunks = []
    while n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
        try:
            part = _read(fd, min(n, 1 << 20))
        except InterruptedError:
            continue
        if not part:
            return None
        chunks.append(part)
        n -= len(part)
    return b"".join(chunks)


def read_message(fd: int, limit: int, deadline: float | None = None) -> dict | None:
    """The next message, None at the end of the pipe or past the deadline; ProtocolError if malformed."""
    body = read_body(fd, limit, deadline)
    return None if body is None else parse_message(body)


def read_body(fd: int, limit: int, deadline: float | None = None) -> bytes | None:
    """A message's body (its length first, at most `limit`), None at the end of the pipe or past the deadline."""
    head = read_exact(fd, 4, deadline)
    if head is None:
        return None
    size = _HEAD.unpack(head)[0]
    if size > limit:
        raise ProtocolError("message too large")
    return read_exact(fd, size, deadline)


def parse_message(body: bytes) -> dict:
    try:
        message = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"not JSON: {type(exc).__name__}") from None
    if not isinstance(message, dict):
        raise ProtocolError("not an object")
    return message


# ---------------------------------------------------------------- answers: one line each


# A request may ask the child to gather its answers and write them a block at a time (GATHER_BYTES,
# or what GATHER_SECONDS gave, and at its end), not one write each: for calls no timeout will be
# blamed on, the memo's check. A slow call's answer still comes soon after it, not as a stall.
GATHER_BYTES = 32 * 1024
GATHER_SECONDS = 0.02


def answer_line(seq: int, answer: dict) -> bytes:
    """One line: "SEQ f:REPR" for a float returned with nothing printed, else "SEQ j:JSON".

    JSON never holds a raw newline, so a line is always one whole answer.
    """
    value = answer.get("value")
    if answer.get("ok") and len(answer) == 2 and type(value) is dict and "float" in value:
        return f"{seq} f:{value['float']}\n".encode()
    return f"{seq} j:{json.dumps(answer)}\n".encode()


class AnswerLines:
    """The answer pipe as the grader reads it: whole lines, each for the request in flight, bounded.

    Read only while no whole line is buffered, a bounded amount at a time: what the grader
    holds stays under a line and a read, whatever the child writes.
    """

    def __init__(self) -> None:
        self._data = bytearray()
        self._at = 0  # lines before this offset are taken

    def clear(self) -> None:
        self._data.clear()
        self._at = 0

    def feed(self, part: bytes) -> None:
        if self._at:
            del self._data[: self._at]  # once per read, not once per line
            self._at = 0
        self._data += part

    def has_line(self) -> bool:
        return self._data.find(b"\n", self._at) >= 0

    def next(self, seq: int) -> bytes | None:
        """The payload of the next whole line (after "SEQ "); None if no line is whole yet.

        Every line must answer the request in flight: one for another request (a guess, one
        written ahead, one too many for the last request) is malformed.
        """
        end = self._data.find(b"\n", self._at)
        if (end if end >= 0 else len(self._data)) - self._at > LINE_LIMIT:
            raise ProtocolError(f"an answer line longer than {LINE_LIMIT} bytes")
        if end < 0:
            return None
        line = bytes(self._data[self._at : end])
        self._at = end + 1
        if self._at == len(self._data):
            self.clear()
        mine = b"%d " % seq
        if not line.startswith(mine):
            raise ProtocolError("an answer to a call that was never made")
        return line[len(mine) :]


def float_text(payload: bytes) -> str | None:
    """The REPR of an "f:REPR" payload, checked; None for a payload of another kind."""
    if not payload.startswith(b"f:"):
        return None
    text = payload[2:].decode("ascii", "replace")
    check_value({"float": text})
    return text


def json_payload(payload: bytes) -> dict:
    if not payload.startswith(b"j:"):
        raise ProtocolError("not an answer")
    return parse_message(payload[2:])


def check_answer(raw: dict) -> dict:
    """A "j:" answer's fields, checked: ok, the value or the error, the printed output as text."""
    if not isinstance(raw.get("ok"), bool):
        raise ProtocolError("not an answer")
    output, took = output_text(raw), raw.get("took", 0.0)
    # What the child says of its own speed only sets its later calls' limits after a timeout (timing.Pace.limit): checked here.
    if type(took) is not float or not 0.0 <= took < 1e9:  # NaN fails too
        raise ProtocolError("malformed call time")
    if raw["ok"]:
        value = raw.get("value")
        check_value(value)
        return {"ok": True, "value": value, "output": output, "took": took}
    error, trace = raw.get("error"), raw.get("traceback", "")
    if type(error) is not str or type(trace) is not str or len(error) > ERROR_LIMIT or len(trace) > TRACEBACK_LIMIT:
        raise ProtocolError("malformed error")
    return {"ok": False, "error": error, "traceback": trace, "output": output, "took": took}


def check_load(payload: bytes) -> dict:
    """The load answer's fields, checked: its printed output as text, and the names it defined."""
    load = json_payload(payload).get("load")
    if not isinstance(load, dict) or not isinstance(load.get("names", []), list):
        raise ProtocolError("not a load answer")
    names = [n[:100] for n in load.get("names", [])[:200] if isinstance(n, str)]
    return {**load, "output": output_text(load), "names": names}


def output_text(raw: dict) -> str:
    text, size = raw.get("output", ""), raw.get("output_size", 0)
    if type(text) is not str or type(size) is not int or len(text) > OUTPUT_LIMIT or not 0 <= size < 2**63:
        raise ProtocolError("malformed printed output")
    shown = len(text.encode("utf-8", "replace"))
    if size > shown:
        text += f"\n... [{size - shown} more bytes cut, {size} printed in all]\n"
    return text


# ---------------------------------------------------------------- values: plain data, bounded


class TooBig(Exception):
    pass


def plain(value: object) -> object:
    """A returned value as plain data: numbers, strings, bools, None, lists, tuples, dicts; else opaque."""
    if type(value) is float:
        return {"float": repr(value)}  # most answers, as _plain writes them
    try:
        encoded = _plain(value, 0, [PLAIN_ITEMS])
        if type(value) in (list, tuple, dict) and len(json.dumps(encoded)) > PLAIN_BYTES:
            raise TooBig
        return encoded
    except (TooBig, RecursionError):
        return opaque(type(value))


def opaque(kind: type) -> dict:
    return {"opaque": f"{kind.__module__}.{kind.__qualname__}".removeprefix("builtins.")[:200]}


def _plain(value, depth, left):
    kind = type(value)
    if value is None or kind is bool:
        return value
    if kind is int:
        return value if -(2**63) < value < 2**63 else {"float": repr(float(value)) if abs(value) < 1e308 else "inf"}
    if kind is str:
        return value[:STR_LIMIT]
    if isinstance(value, float):
        return {"float": repr(float.__float__(value))}
    # Only the exact built-in containers: a subclass's own methods are the submission's code.
    if kind in (list, tuple, dict):
        left[0] -= len(value)
        if depth >= PLAIN_DEPTH or left[0] < 0:
            raise TooBig
        if kind is dict:
            return {"dict": [[_plain(k, depth + 1, left), _plain(v, depth + 1, left)] for k, v in dict.items(value)]}
        items = [_plain(v, depth + 1, left) for v in (list.__iter__(value) if kind is list else tuple.__iter__(value))]
        return items if kind is list else {"tuple": items}
    return opaque(kind)


def check_value(value: object, depth: int = 0, left: list[int] | None = None) -> None:
    """A returned value as plain() encodes it, within its bounds, or ProtocolError."""
    left = [PLAIN_ITEMS] if left is None else left
    if value is None or type(value) in (bool, int, str):
        if type(value) is int and not -(2**63) < value < 2**63:
            raise ProtocolError("integer out of range")
        if type(value) is str and len(value) > STR_LIMIT:
            raise ProtocolError("a string longer than any answer")
        return
    if type(value) is list:
        items = value
    elif type(value) is dict and len(value) == 1:
        ((tag, text),) = value.items()
        if tag in ("float", "opaque") and type(text) is str and len(text) <= 200:
            if tag == "float":
                try:
                    float(text)
                except ValueError:
                    raise ProtocolError("bad float") from None
            return
        if tag == "tuple" and type(text) is list:
            items = text
        elif tag == "dict" and type(text) is list and all(type(p) is list and len(p) == 2 for p in text):
            items = [x for p in text for x in p]
            left[0] += len(text)  # a pair's key and value count as one item, as plain() counts them
        else:
            raise ProtocolError("not a plain value")
    else:
        raise ProtocolError("not a plain value")
    left[0] -= len(items)
    if depth >= PLAIN_DEPTH or left[0] < 0:
        raise ProtocolError("a value larger than any answer")
    for item in items:
        check_value(item, depth + 1, left)


def decode(value: object, opaque_type) -> object:
    """Python data from a checked value: floats, tuples and dicts as plain() tagged them, `opaque_type(name)` for objects."""
    if type(value) is list:
        return [decode(v, opaque_type) for v in value]
    if type(value) is not dict:
        return value
    ((tag, inner),) = value.items()
    if tag == "float":
        return float(inner)
    if tag == "tuple":
        return tuple(decode(v, opaque_type) for v in inner)
    if tag == "dict":
        pairs = [(decode(k, opaque_type), decode(v, opaque_type)) for k, v in inner]
        try:
            return dict(pairs)
        except TypeError:  # a key that cannot be one here (a list): the value is shown by its type only
            return opaque_type("dict")
    return opaque_type(inner)


# ---------------------------------------------------------------- /proc: the one scanner of processes
# Both sides need to know who runs: the grader to kill a submission's processes by its uid,
# the fork server (which may import only this module) to kill its strays.


class Process:
    """One process as /proc/PID/status shows it (status, not the owner of /proc/PID: that is root's after a uid change)."""

    __slots__ = ("pid", "ppid", "uid", "zombie")

    def __init__(self, pid: int, ppid: int, uid: int, zombie: bool) -> None:
        self.pid, self.ppid, self.uid, self.zombie = pid, ppid, uid, zombie

    def __repr__(self) -> str:
        return f"Process(pid={self.pid}, ppid={self.ppid}, uid={self.uid}, zombie={self.zombie})"


def proc_read(relative: str, proc: int | None = None, size: int = 4096) -> bytes:
    """The head of /proc/`relative`; `proc`, a descriptor of /proc opened before a chroot, when the path is not the real one."""
    if proc is None:
        fd = os.open(f"/proc/{relative}", os.O_RDONLY)
    else:
        fd = os.open(relative, os.O_RDONLY, dir_fd=proc)
    try:
        chunks: list[bytes] = []
        while size > 0:
            part = os.read(fd, min(size, 1 << 16))  # a buffer of `size` bytes would be allocated at each read
            if not part:
                break
            chunks.append(part)
            size -= len(part)
        return b"".join(chunks)
    finally:
        os.close(fd)


def processes(proc: int | None = None) -> list[Process]:
    """Every process /proc lists now (those that end while it is read are left out)."""
    found = []
    for entry in os.listdir("/proc" if proc is None else proc):
        if not entry.isdigit():
            continue
        try:
            # The fields wanted come early; the name a process gives itself comes first, with its
            # newlines escaped, so it cannot forge a line.
            status = proc_read(f"{entry}/status", proc, size=1024)
            state = status[status.index(b"\nState:") + 7 :].lstrip()[:1]
            ppid = int(status[status.index(b"\nPPid:") + 6 : status.index(b"\n", status.index(b"\nPPid:") + 1)])
            uid = int(status[status.index(b"\nUid:") + 5 :].split(None, 1)[0])
        except (OSError, ValueError, IndexError):
            continue
        found.append(Process(int(entry), ppid, uid, state == b"Z"))
    return found


def children_of(found: list[Process]) -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for process in found:
        children.setdefault(process.ppid, []).append(process.pid)
    return children
