"""A submission running in a separate process: arguments go in, plain data comes out."""

from __future__ import annotations

import json
import os
import select
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from grader.checks import Opaque
from grader.submission import LoadError, SubmissionError, missing_function_message

CHILD = Path(__file__).with_name("jail_child.py")


class SandboxedSubmission:
    """One sandboxed process per submission; the judge only ever sees plain values."""

    def __init__(self, path: str | os.PathLike, function: str = "meteor_score", timeout: float = 2.0):
        self.path = Path(path).resolve()
        self.function = function
        self.timeout = timeout
        self._proc: subprocess.Popen | None = None
        self._start()

    def _start(self) -> None:
        req_r, self._req_w = os.pipe()
        self._resp_r, resp_w = os.pipe()
        self._proc = subprocess.Popen(
            [sys.executable, "-I", "-S", str(CHILD), str(self.path), self.function, str(req_r), str(resp_w)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(req_r, resp_w), start_new_session=True, env={},
        )
        os.close(req_r)
        os.close(resp_w)
        load = self._receive(self.timeout * 5)
        if load is None:
            raise LoadError("loading the file did not finish in time or crashed")
        if not load.get("ok"):
            if "error" in load:
                raise LoadError(load["error"])
            if not load["defined"]:
                raise LoadError(missing_function_message(load["names"], self.function))
            raise LoadError(f"{self.function!r} is defined but is not a function")

    def _receive(self, timeout: float) -> dict | None:
        deadline = time.monotonic() + timeout
        data = b""
        need = 4
        while len(data) < need:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._resp_r], [], [], left)[0]:
                return None
            part = os.read(self._resp_r, need - len(data))
            if not part:
                return None
            data += part
            if len(data) == 4 and need == 4:
                need = 4 + struct.unpack(">I", data)[0]
        return json.loads(data[4:])

    def meteor_score(self, *args: Any, **kwargs: Any) -> Any:
        message = json.dumps({"args": list(args), "kwargs": kwargs}).encode()
        try:
            os.write(self._req_w, struct.pack(">I", len(message)) + message)
        except OSError:
            self._restart()
            raise SubmissionError("crash", "the submission's process had ended") from None
        answer = self._receive(self.timeout)
        if answer is None:
            code = self._proc.poll()
            self._restart()
            if code is None:
                raise SubmissionError("timeout", f"the call took longer than {self.timeout:g} s")
            raise SubmissionError("crash", f"the submission's process ended (exit status {code})")
        if answer.get("output"):
            sys.stdout.write(answer["output"])
        if not answer["ok"]:
            raise SubmissionError(answer["kind"], answer["error"], answer.get("traceback", ""))
        return decode(answer["value"])

    def _restart(self) -> None:
        self.close()
        self._start()

    def close(self) -> None:
        if self._proc and self._proc.poll() is None:
            os.killpg(self._proc.pid, signal.SIGKILL)
            self._proc.wait()
        for fd in (self._req_w, self._resp_r):
            try:
                os.close(fd)
            except OSError:
                pass


def decode(value: Any) -> Any:
    if isinstance(value, dict):
        if "float" in value:
            return float(value["float"])
        return Opaque(value["opaque"])
    return value
