"""Runs a command as a container with Docker's default seccomp profile would: no namespace can be made.

python tests/no_namespaces.py COMMAND [ARG...]
"""

import errno
import os
import sys

import pyseccomp as seccomp

NAMESPACES = (0x20000, 0x2000000, 0x4000000, 0x8000000, 0x10000000, 0x20000000, 0x40000000)  # CLONE_NEW*

refuse = seccomp.ERRNO(errno.EPERM)
f = seccomp.SyscallFilter(seccomp.ALLOW)
for name in ("unshare", "setns", "mount", "umount2", "pivot_root"):
    f.add_rule(refuse, name)
for flag in NAMESPACES:
    f.add_rule(refuse, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
f.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
f.load()
os.execvp(sys.argv[1], sys.argv[1:])
