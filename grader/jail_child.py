"""The untrusted side: loads a submission and answers calls. Runs inside the sandbox only.

Standalone on purpose (no imports from the grader): the sandbox sees this file and the
submission, nothing else. Requests and answers travel on two pipes whose
descriptors are given on the command line, as length-prefixed JSON, so nothing the submission prints can be mistaken for an answer.
"""

import io
import json
import os
import struct
import sys
import traceback

OUTPUT_LIMIT = 4096


def read_message(fd):
    head = _read_exact(fd, 4)
    if head is None:
        return None
    return json.loads(_read_exact(fd, struct.unpack(">I", head)[0]))


def _read_exact(fd, n):
    chunks = b""
    while len(chunks) < n:
        part = os.read(fd, n - len(chunks))
        if not part:
            return None
        chunks += part
    return chunks


def write_message(fd, message):
    data = json.dumps(message).encode()
    os.write(fd, struct.pack(">I", len(data)) + data)


def plain(value, depth=0):
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return value if kind is not str else value[:1000]
    if isinstance(value, float):
        return {"float": repr(float.__float__(value))}
    return {"opaque": f"{kind.__module__}.{kind.__qualname__}".removeprefix("builtins.")}


def student_traceback(exc, filename):
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    lines = traceback.format_list(frames) + traceback.format_exception_only(type(exc), exc)
    return "".join(lines).rstrip()


def main():
    path, function = sys.argv[1], sys.argv[2]
    global REQ_FD, RESP_FD
    REQ_FD, RESP_FD = int(sys.argv[3]), int(sys.argv[4])
    filename = os.path.basename(path)
    buffer = io.StringIO()
    sys.stdout = sys.stderr = buffer
    try:
        with open(path, "rb") as f:
            source = f.read().decode("utf-8")
        namespace = {"__name__": "submission", "__file__": filename}
        exec(compile(source, filename, "exec"), namespace)
        fn = namespace.get(function)
        load = {"ok": callable(fn), "names": [n for n in namespace if not n.startswith("__")],
                "callable": callable(fn), "defined": function in namespace}
    except SyntaxError as exc:
        load = {"ok": False, "error": f"syntax error on line {exc.lineno}: {exc.msg}"}
    except UnicodeDecodeError as exc:
        load = {"ok": False, "error": f"the file is not UTF-8 text ({exc.reason} at byte {exc.start})"}
    except BaseException as exc:
        load = {"ok": False, "error": "running the file failed: " + student_traceback(exc, filename)}
    load["output"] = buffer.getvalue()[:OUTPUT_LIMIT]
    write_message(RESP_FD, load)
    while True:
        request = read_message(REQ_FD)
        if request is None:
            return
        buffer.seek(0)
        buffer.truncate()
        try:
            value = fn(*request["args"], **request["kwargs"])
            answer = {"ok": True, "value": plain(value)}
        except BaseException as exc:
            answer = {"ok": False, "kind": "exception",
                      "error": f"meteor_score raised {type(exc).__name__}: {exc}",
                      "traceback": student_traceback(exc, filename)}
        answer["output"] = buffer.getvalue()[:OUTPUT_LIMIT]
        write_message(RESP_FD, answer)


if __name__ == "__main__":
    main()
