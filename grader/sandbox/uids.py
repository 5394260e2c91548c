"""Uids for submissions that belong to nobody: no account, no /etc/subuid range, no directory-service entry, no process.

As root, each submission runs as a uid of its own, so RLIMIT_NPROC counts its processes alone
and it can signal nothing else. Where the jail has no pid namespace, its processes are found and
killed by that uid: a uid that a real person held would get their processes killed. So a uid is
taken only after the machine says nobody holds it, from a range above what distributions,
systemd and directory services (SSSD maps up to 2,000,200,000) hand out; and the grader never
kills or deletes by a uid it did not choose this way.
"""

from __future__ import annotations

import grp
import os
import pwd
import secrets
import time
from functools import cache

LOW, HIGH = 0x8000_0000, 0xFFFE_0000  # below (uid_t)-2 and -1, which mean "nobody" and "no change"
TRIES = 64
# The processes' uids are read again after this long: a scan of /proc costs a few ms, and a uid of
# this range held by no account and no subordinate range is one only another such tool would use.
LIVE_FOR = 10.0
_live: dict[str, object] = {"at": -LIVE_FOR, "uids": set()}


@cache
def _ranges() -> list[tuple[int, int]]:
    """The subordinate id ranges of /etc/subuid and /etc/subgid (user namespaces' ids of real users)."""
    found = []
    for name in ("/etc/subuid", "/etc/subgid"):
        try:
            with open(name) as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        for line in lines:
            parts = line.split(":")
            if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
                found.append((int(parts[1]), int(parts[1]) + int(parts[2])))
    return found


def _live_uids() -> set[int]:
    """The real, effective and saved uids of every process /proc shows."""
    held = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", "rb") as f:
                status = f.read(2048)
            line = status[status.index(b"\nUid:") + 5 :].split(b"\n", 1)[0]
            held.update(int(u) for u in line.split())
        except (OSError, ValueError):
            continue
    return held


def held(uid: int, live: set[int] | None = None) -> bool:
    """Whether anyone holds `uid` (or the gid of the same number): an account, a group, a subordinate range, a process."""
    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        pass
    try:
        grp.getgrgid(uid)
        return True
    except KeyError:
        pass
    if any(low <= uid < high for low, high in _ranges()):
        return True
    return uid in (_live_uids() if live is None else live)


def free_uid(taken: set[int] = frozenset()) -> int:  # type: ignore[assignment]
    """A uid nobody holds (nor `taken`, the ones this run gave out and has not taken back)."""
    if time.monotonic() - float(_live["at"]) >= LIVE_FOR:  # type: ignore[arg-type]
        _live.update(at=time.monotonic(), uids=_live_uids())
    live: set[int] = _live["uids"]  # type: ignore[assignment]
    for _ in range(TRIES):
        uid = LOW + secrets.randbelow(HIGH - LOW)
        if uid not in taken and not held(uid, live):
            return uid
    raise OSError("no free uid found for a submission: every one tried is held on this machine")
