"""Leaves code behind for the next submission in the same jail: in System V shared memory, a
message queue and a semaphore, and in files in /tmp, /var/tmp and /dev/shm.

The tests append this to a correct solution and call leave() with that solution's text: the
leaver earns its own grade, and reads_leftovers.py must find none of it.
"""
import ctypes
import os

KEY = 0x4D455445  # "METE"


def leave(code):
    data = code.encode()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    shm = libc.shmget(KEY, 1 << 16, 0o1000 | 0o666)  # IPC_CREAT
    if shm >= 0:
        address = libc.shmat(shm, None, 0)
        if address not in (None, ctypes.c_void_p(-1).value):
            ctypes.memmove(address, data + b"\0", min(len(data) + 1, 1 << 16))
    libc.msgget(KEY, 0o1000 | 0o666)
    libc.semget(KEY, 1, 0o1000 | 0o666)
    for place in ("/tmp", "/var/tmp", "/dev/shm"):
        try:
            os.makedirs(f"{place}/meteor-leftovers", exist_ok=True)
            with open(f"{place}/meteor-leftovers/code.py", "w") as f:
                f.write(code)
            os.chmod(f"{place}/meteor-leftovers/code.py", 0o644)
            os.chmod(f"{place}/meteor-leftovers", 0o755)
        except OSError:
            pass
