"""The untrusted side: a fork server that loads one submission in a child and answers calls.

Runs inside the sandbox only, standalone on purpose (the standard library and the protocol,
wire.py, nothing else from the grader): the sandbox sees these two files and the submission's
text, nothing else. Its configuration (the descriptors of its pipes, the limits) arrives on
standard input.

Two processes live here. The server starts first (as root under bubblewrap), sets the rlimits,
drops to an unprivileged uid, and then only forks: one child per load of the submission. A
restart after a timeout or a crash costs a fork, not a new interpreter. The child loads the
submission and answers calls. Everything travels on pipes (wire.py: length-prefixed JSON, and
a line per answer) whose descriptors the grader passed in, never on stdout: what the submission prints goes to a memfd
behind descriptors 1 and 2, and comes back as data, cut to its head.
"""

import builtins
import io
import json
import os
import resource
import select
import signal
import sys
import time

if __name__ == "__main__":
    # The jail's script, /jail/jail_child.py, with wire.py bound beside it (or this file run from
    # grader/sandbox/ without a jail). Python's -I keeps a script's folder off sys.path: put it
    # there for this one import, and take the module's name back so a submission's own `wire`
    # (a helper module) is not shadowed.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import wire

    del sys.path[0], sys.modules["wire"]
else:
    from grader.sandbox import wire

# Python's built-ins as the server found them. A submission may replace some at import (to
# make any answer look right, say); the sandbox's own code then runs with these, and the
# submission's function with its own (see Builtins).
ORIGINAL_BUILTINS = dict(builtins.__dict__)
STR_LIMIT = wire.STR_LIMIT
TOOK_FROM = wire.TOOK_FROM


def read_message(fd):
    """The grader's next message; None at the end of the pipe, or for one that is malformed (then we stop)."""
    try:
        return wire.read_message(fd, wire.REQUEST_LIMIT)
    except wire.ProtocolError:
        return None


def write_message(fd, message):
    wire.write_all(fd, wire.frame(message))


def write_answer(fd, seq, answer):
    wire.write_all(fd, wire.answer_line(seq, answer))


# ---------------------------------------------------------------- the server


# /proc as the server opened it before a chroot (None: the path /proc is the real one). The
# children close it at once: through it, a process could walk back out of the chroot.
PROC = [None]


def read_config():
    """The grader's configuration, from standard input (never the command line, which anyone can read)."""
    chunks = []
    while True:
        part = os.read(0, 65536)
        if not part:
            break
        chunks.append(part)
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return json.loads(b"".join(chunks))


def main():
    config = read_config()
    ctl_in, ctl_out, req_r, resp_w = config["fds"]
    set_limits(config["limits"])
    if config.get("root"):
        # Root without bubblewrap: the submissions get a root directory holding only the standard
        # library, so no path leads to the kit, the class or any other file of the machine.
        PROC[0] = os.open("/proc", os.O_RDONLY | os.O_DIRECTORY)
        os.chroot(config["root"])
        os.chdir("/")
    if os.getuid() == 0 and config.get("uid") is not None:
        # Under bubblewrap as root there is no user namespace: this is a real uid change, so
        # RLIMIT_NPROC applies and no capability is left (bubblewrap set no_new_privs already).
        os.setgroups([])
        os.setgid(config["uid"])
        os.setuid(config["uid"])
    try:
        os.setpriority(os.PRIO_PROCESS, 0, config.get("nice", 0))
    except OSError:
        pass
    if config.get("uid") is None:
        no_ptrace()  # a uid change (above) already made it so
    if not (config["pidns"] or config.get("own_uid")):
        subreaper()
    # The server shares its uid with the submissions, which may change its limits, priority or
    # cores (prlimit, setpriority, sched_setaffinity on its pid): every fork would inherit that.
    # Compared after each submission; a change ends the server, and the grader starts a new jail.
    expected = own_state(config["limits"])
    preload()
    # Whose leftovers to remove: the jail's own uid only (never the grader's own user's files).
    own = config["pidns"] or config.get("own_uid")
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    child = None
    while True:
        try:
            ready = select.select([ctl_in, wake_r], [], [])[0]
        except InterruptedError:
            continue
        if wake_r in ready:
            os.read(wake_r, 4096)
            for pid, status in reap():
                if pid == child:
                    child = None
                    write_message(ctl_out, {"event": "exit", "pid": pid, "status": describe_status(status)})
        if ctl_in not in ready:
            continue
        message = read_message(ctl_in)
        if message is None or message.get("op") == "quit":
            kill_others(config, keep=None)
            os._exit(0)
        if message["op"] == "kill":
            # Two steps, so the grader can drop what the dead child left half-written in the
            # answer pipe before a new child writes anything there.
            kill_others(config, keep=None, child=child)
            reap()
            drain(req_r)
            child = None
            if own and (remove_leftovers(os.getuid()) or own_state(config["limits"]) != expected):
                os._exit(3)  # not a clean slate: the grader sees the jail end and starts a fresh one
            write_message(ctl_out, {"event": "killed"})
        elif message["op"] == "spawn":
            child = os.fork()
            if child == 0:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                for fd in (ctl_in, ctl_out, wake_r, wake_w):
                    os.close(fd)
                if PROC[0] is not None:
                    os.close(PROC[0])  # a way out of the chroot: closed before any submission code runs
                init = read_message(req_r)  # the code comes to the child, never to the server
                if init is not None:
                    run_child(init, req_r, resp_w)
                os._exit(0)
            write_message(ctl_out, {"event": "spawned", "pid": child})
        elif message["op"] == "sweep":
            kill_others(config, keep=child)
            write_message(ctl_out, {"event": "swept"})


# Standard modules that submissions import most, and that the sandbox itself needs when a call
# raises (traceback): loaded once by the server, so that each child, a fork, has them already.
# In a fresh child `from dataclasses import dataclass` took 7.5 ms, `fractions` 1.9 ms, and a
# child is started for each submission two or three times. None of them draws random numbers
# or keeps per-process state when imported (random would: each child would then draw the same
# numbers), and a helper module can never take a standard module's name (install_helpers).
PRELOAD = (
    "bisect", "collections", "copy", "dataclasses", "decimal", "enum", "fractions", "functools", "heapq",
    "itertools", "math", "operator", "string", "traceback", "typing", "unicodedata",
)  # fmt: skip


def preload():
    for name in PRELOAD:
        try:
            __import__(name)
        except Exception:
            pass  # a Python built without it, or a root without it: the submission's own import says so


def set_limits(limits):
    for name, value in limits.items():
        resource.setrlimit(getattr(resource, name), (value, value))


def reap():
    done = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return done
        if pid == 0:
            return done
        done.append((pid, status))


def describe_status(status):
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return {"signal": number, "name": name, "text": signal.strsignal(number) or name}
    return {"exit": os.waitstatus_to_exitcode(status)}


def own_state(limits):
    """What a process of our uid could change about this server and every child it forks."""
    try:
        tracer = [line for line in wire.proc_read("self/status", PROC[0]).splitlines() if line.startswith(b"TracerPid:")]
    except OSError:
        tracer = None
    return (
        [resource.getrlimit(getattr(resource, name)) for name in sorted(limits)],
        os.getpriority(os.PRIO_PROCESS, 0),
        os.sched_getscheduler(0),
        sorted(os.sched_getaffinity(0)),
        tracer,
    )


def no_ptrace():
    """Not dumpable: a process of the same uid can no longer ptrace the server nor write its memory."""
    import ctypes

    PR_SET_DUMPABLE = 4
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def subreaper():
    """Orphans of our descendants are reparented to us, not to init: kill_others still finds them."""
    import ctypes

    PR_SET_CHILD_SUBREAPER = 36
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


LEFTOVER_DIRS = ("/tmp", "/var/tmp", "/dev/shm")


def remove_leftovers(uid, root=""):
    """Remove what `uid` left in the shared places (files, System V IPC); return how much is left."""
    return sum(wipe_own(root + d, uid) for d in LEFTOVER_DIRS) + remove_ipc(uid)


def wipe_own(directory, uid, depth=0):
    """Remove every entry of `uid` under `directory`; return how many remain.

    Besides its own directories, `uid` can only have written into world-writable ones (like
    /tmp itself), so only those are searched: a big /tmp costs one listing.
    """
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    left = 0
    for entry in entries:
        try:
            st = entry.stat(follow_symlinks=False)
            if st.st_uid == uid:
                if entry.is_dir(follow_symlinks=False):
                    os.chmod(entry.path, 0o700)
                    wipe(entry.path)
                    os.rmdir(entry.path)
                else:
                    os.unlink(entry.path)
            elif entry.is_dir(follow_symlinks=False) and st.st_mode & 0o002 and depth < 8:
                left += wipe_own(entry.path, uid, depth + 1)
        except OSError:
            left += os.path.lexists(entry.path) and _owner(entry.path) == uid
    return left


def _owner(path):
    try:
        return os.lstat(path).st_uid
    except OSError:
        return None


def wipe(directory):
    """Remove everything under `directory` that we own, even what was made unreadable."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                os.chmod(entry.path, 0o700)
                wipe(entry.path)
                os.rmdir(entry.path)
            else:
                os.unlink(entry.path)
        except OSError:
            pass


def ipc_objects(uid):
    """(kind, id) of the System V IPC objects `uid` owns or created, as /proc/sysvipc lists them."""
    found = []
    for kind in ("shm", "msg", "sem"):
        try:
            header, *rows = wire.proc_read(f"sysvipc/{kind}", PROC[0], size=1 << 24).decode().splitlines()
        except (OSError, ValueError):
            continue
        names = header.split()
        for row in rows:
            fields = dict(zip(names, row.split()))
            if str(uid) in (fields.get("uid"), fields.get("cuid")):
                found.append((kind, int(row.split()[1])))
    return found


def remove_ipc(uid):
    """Remove `uid`'s System V shared memory, message queues and semaphores; return how many remain."""
    objects = ipc_objects(uid)
    if not objects:
        return 0
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    IPC_RMID = 0
    for kind, ident in objects:
        if kind == "shm":
            libc.shmctl(ident, IPC_RMID, None)
        elif kind == "msg":
            libc.msgctl(ident, IPC_RMID, None)
        else:
            libc.semctl(ident, 0, IPC_RMID)
    # A segment still attached stays listed until its last process is gone: they are all dead here.
    return len(ipc_objects(uid))


def drain(fd):
    os.set_blocking(fd, False)
    try:
        while os.read(fd, 1 << 16):
            pass
    except BlockingIOError:
        pass
    finally:
        os.set_blocking(fd, True)


def kill_others(config, keep, child=None):
    """Kill every process of the submission but `keep`: its strays too, wherever they went.

    `child`, the one we forked, is waited for: once it is gone a second look usually finds
    nobody, and the kill costs no sleep.
    """
    me = os.getpid()
    # Our uid is the jail's own (or the pid namespace holds only us): kill(-1) reaches exactly
    # the submission's processes, but never the caller. Unisolated, our uid is the grader's:
    # only our descendants are the submission's (orphans come back to us, a subreaper).
    confined = config["pidns"] or config.get("own_uid")
    whole = keep is None and confined
    for attempt in range(500):
        found = same_uid_processes() if confined else descendants(me)
        victims = [pid for pid in found if pid not in (1, me, keep)]
        if not victims:
            return
        if whole:
            try:
                os.kill(-1, signal.SIGKILL)
            except OSError:
                pass
        else:
            for pid in victims:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        if child is not None and child in victims:
            try:
                os.waitpid(child, 0)
            except ChildProcessError:
                pass
        reap()
        if attempt:
            time.sleep(0.002)


def descendants(me):
    children = wire.children_of(wire.processes(PROC[0]))
    found, level = set(), {me}
    while level:
        level = {c for pid in level for c in children.get(pid, ())} - found
        found |= level
    return sorted(found)


def same_uid_processes():
    """Live processes running as our uid."""
    mine = os.getuid()
    return [p.pid for p in wire.processes(PROC[0]) if p.uid == mine and not p.zombie]


# ---------------------------------------------------------------- the child


SOURCE = [""]


def run_child(init, req_r, resp_w):
    os.setsid()  # a session of its own: no terminal, no process group shared with the server
    # What it creates is its own: without a private /tmp (separate-uid mode), a submission graded
    # at the same moment, under another uid, cannot read it.
    os.umask(0o077)
    SOURCE[0] = init["source"]
    me = os.getpid()
    out = Output()
    filename, function = init["filename"], init["function"]
    namespace = {"__name__": "submission", "__file__": filename, "__builtins__": __builtins__}
    fn = None
    swap = Builtins()
    try:
        try:
            if init.get("modules"):
                install_helpers(init["modules"])
            exec(compile(init["source"], filename, "exec"), namespace)
        finally:
            swap.after_load()
        fn = namespace.get(function)
        # For "did you mean": bounded, as everything the grader reads is.
        names = [n[:64] for n, v in namespace.items() if not n.startswith("__") and callable(v)][:200]
        load = {"ok": callable(fn), "defined": function in namespace, "names": names}
        takes = signature_problem(fn, init["positional"], init["keywords"]) if callable(fn) else None
        if takes is not None:
            load = {"ok": False, "signature": takes}
    except SyntaxError as exc:
        load = {"ok": False, "error": f"syntax error on line {exc.lineno}: {exc.msg}"}
    except BaseException as exc:
        load = {"ok": False, "error": load_failure(exc, filename)}
    if os.getpid() != me:
        os._exit(0)
    load.update(out.take())
    write_answer(resp_w, init["seq"], {"load": load})
    while True:
        request = read_message(req_r)
        if os.getpid() != me:
            os._exit(0)
        if request is None:
            os._exit(0)
        # Each answer is written as soon as it is known: held back, the answers before a call
        # that hangs would never arrive, and that call's timeout would be blamed on an earlier one.
        # Unless the grader gathers them: it blames no call then (the memo's check, wire.GATHER_BYTES).
        gathered = bytearray() if request.get("gather") is True else None
        flushed = time.perf_counter()
        for args, kwargs in request["calls"]:
            began = time.perf_counter()
            answer = call(fn, args, kwargs, filename, function, swap)
            took = time.perf_counter() - began
            if os.getpid() != me:  # a fork inside the call returned twice; the copy must not answer
                os._exit(0)
            answer.update(out.take())
            if took >= TOOK_FROM:  # the grader gives a slow submission's calls longer before they yield
                answer["took"] = took
            if gathered is None:
                write_answer(resp_w, request["seq"], answer)
                continue
            gathered += wire.answer_line(request["seq"], answer)
            if len(gathered) >= wire.GATHER_BYTES or began + took - flushed >= wire.GATHER_SECONDS:
                wire.write_all(resp_w, bytes(gathered))
                gathered.clear()
                flushed = time.perf_counter()
        if gathered:
            wire.write_all(resp_w, bytes(gathered))


class Helpers:
    """Finds and loads the student's helper modules from the source sent with the submission (no file is read)."""

    def __init__(self, sources):
        self.sources = sources

    def find_spec(self, name, path=None, target=None):
        if name not in self.sources:
            return None
        from importlib.machinery import ModuleSpec

        return ModuleSpec(name, self, origin=name + ".py")

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.__file__ = module.__name__ + ".py"
        exec(compile(self.sources[module.__name__], module.__file__, "exec"), module.__dict__)


def install_helpers(modules):
    """Helpers importable by plain names that shadow nothing (the grader checked as much: checked again)."""
    sources = {}
    for name, source in modules.items():
        if (
            isinstance(name, str)
            and isinstance(source, str)
            and name.isidentifier()
            and name.isascii()
            and not name.startswith("_")
            and name not in sys.stdlib_module_names
            and name not in sys.modules
        ):
            sources[name] = source
    # Last on the path: a helper can never stand in for a module Python itself would find.
    sys.meta_path.append(Helpers(sources))


def signature_problem(fn, positional, keywords):
    """How `fn` takes its arguments, if the tests' calls cannot bind to it; else None.

    Read from the code object (inspect would cost every start more than the check itself).
    Callables without one (a class, a partial) are left to their first call.
    """
    code = getattr(fn, "__code__", None)
    if code is None or not isinstance(getattr(code, "co_varnames", None), tuple):
        return None
    count, posonly, kwonly = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
    names = code.co_varnames[: count + kwonly]
    varargs, varkw = bool(code.co_flags & 0x04), bool(code.co_flags & 0x08)
    defaults = len(getattr(fn, "__defaults__", None) or ())
    kwdefaults = getattr(fn, "__kwdefaults__", None) or {}
    fits = count >= positional or varargs
    fits = fits and count - defaults <= positional  # no other required positional parameter
    for name in keywords:
        index = names.index(name) if name in names else -1
        fits = fits and (positional <= index < count and index >= posonly or index >= count or varkw)
    fits = fits and all(n in kwdefaults for n in names[count:])
    if fits:
        return None
    shown = list(names[:count])
    for i in range(count - defaults, count):
        shown[i] += "=..."
    if varargs:
        shown.append("*args")
    shown += [n + ("=..." if n in kwdefaults else "") for n in names[count:]]
    if varkw:
        shown.append("**kwargs")
    return "(" + ", ".join(shown) + ")"


class Builtins:
    """Keeps the sandbox's code on the original built-ins when the submission replaced some.

    Checked once, after the file ran: a submission that left them alone pays nothing per call.
    One that replaced some gets its own back for each call, and the originals after it.
    """

    def __init__(self):
        self.theirs = None

    def after_load(self):
        current = builtins.__dict__
        if len(current) != len(ORIGINAL_BUILTINS) or any(current.get(k) is not v for k, v in ORIGINAL_BUILTINS.items()):
            self.theirs = dict(current)
            _install(ORIGINAL_BUILTINS)

    def __enter__(self):
        if self.theirs is not None:
            _install(self.theirs)

    def __exit__(self, *exc):
        if self.theirs is not None:
            _install(ORIGINAL_BUILTINS)


def _install(names):
    current = builtins.__dict__
    current.clear()
    current.update(names)


def call(fn, args, kwargs, filename, function, swap):
    try:
        if swap.theirs is None:
            value = fn(*args, **kwargs)
        else:
            with swap:
                value = fn(*args, **kwargs)
        return {"ok": True, "value": wire.plain(value)}
    except BaseException as exc:
        try:
            error = f"{function} raised {type(exc).__name__}: {exc}"[:STR_LIMIT]
            return {
                "ok": False,
                "kind": "exception",
                "error": error,
                "traceback": student_traceback(exc, filename)[: 4 * STR_LIMIT],
            }
        except BaseException:
            return {
                "ok": False,
                "kind": "exception",
                "error": f"{function} raised an exception that cannot be shown",
                "traceback": "",
            }


def load_failure(exc, filename):
    """One line: where in the file loading failed, and the exception."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    where = f" on line {line}" if line else ""
    try:
        text = " ".join(f"{type(exc).__name__}: {exc}".split())
    except BaseException:
        text = type(exc).__name__
    return f"running the file failed{where}: {text}"[:STR_LIMIT]


# The student's frames of a traceback, formatted, by where each of its frames stood (code object and
# instruction) and the traceback limit: a submission raises from the same few places again and
# again, and formatting (the source line, Python 3.11's carets) was most of what such a call cost.
FORMATTED_FRAMES = {}
FORMATTED_LIMIT = 1000  # entries kept; past that, tracebacks are formatted each time


def student_traceback(exc, filename):
    # Imported only when something failed: most calls never need it, and every start pays for imports.
    import linecache
    import traceback

    if filename not in linecache.cache:
        linecache.cache[filename] = (len(SOURCE[0]), None, SOURCE[0].splitlines(True), filename)
    where = [getattr(sys, "tracebacklimit", None)]
    tb = exc.__traceback__
    while tb is not None:
        where.append((tb.tb_frame.f_code, tb.tb_lasti))
        tb = tb.tb_next
    key = tuple(where)
    frames = FORMATTED_FRAMES.get(key)
    if frames is None:
        frames = "".join(traceback.format_list([f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]))
        if len(FORMATTED_FRAMES) < FORMATTED_LIMIT:
            FORMATTED_FRAMES[key] = frames
    return (frames + "".join(traceback.format_exception_only(type(exc), exc))).rstrip()


NOTHING_PRINTED = {}  # an answer without output fields printed nothing (most answers: kept short)


class Output:
    """Descriptors 1 and 2 point at a memfd, so prints of child processes are caught too."""

    def __init__(self):
        self.fd = os.memfd_create("output")
        os.dup2(self.fd, 1)
        os.dup2(self.fd, 2)
        # Unbuffered text streams: nothing printed can linger past the call that printed it.
        self.stdout = io.TextIOWrapper(
            io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="backslashreplace", write_through=True
        )
        self.stderr = io.TextIOWrapper(
            io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace", write_through=True
        )
        sys.stdout, sys.stderr = self.stdout, self.stderr

    def take(self):
        # Our own streams write through; only streams the submission put in their place buffer.
        for stream in (sys.stdout, sys.stderr):
            if stream is not self.stdout and stream is not self.stderr:
                try:
                    stream.flush()
                except BaseException:
                    pass
        try:
            size = os.fstat(self.fd).st_size
            if not size:
                return NOTHING_PRINTED
            head = os.pread(self.fd, wire.OUTPUT_HEAD, 0)
            os.ftruncate(self.fd, 0)
            os.lseek(self.fd, 0, os.SEEK_SET)
        except OSError:
            return NOTHING_PRINTED
        return {"output": head.decode("utf-8", "replace"), "output_size": size}


if __name__ == "__main__":
    main()
