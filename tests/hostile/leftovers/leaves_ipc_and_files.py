"""Leaves code behind for the next submission in the same jail: in System V shared memory, a
message queue and a semaphore, a POSIX message queue, the kernel's keyrings (its own user's
and the persistent one), and in files in /tmp, /var/tmp and /dev/shm.

The tests append this to a correct solution and call leave() with that solution's text: the
leaver earns its own grade, and reads_leftovers.py must find none of it.
"""
import ctypes
import os

KEY = 0x4D455445  # "METE"
QUEUE = b"/meteor-leftovers"
KEY_USER_KEYRING, KEY_PERSISTENT = -4, 22  # keyctl: the user keyring's special id; KEYCTL_GET_PERSISTENT


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
    try:
        rt = ctypes.CDLL("librt.so.1", use_errno=True)
        queue = rt.mq_open(QUEUE, os.O_CREAT | os.O_WRONLY, 0o666, None)
        if queue >= 0:
            rt.mq_send(queue, data[:8000], min(len(data), 8000), 0)
    except OSError:
        pass
    # The user keyring, and the persistent keyring of this uid (it outlives every process).
    for ring in (KEY_USER_KEYRING, libc.syscall(250, KEY_PERSISTENT, -1, KEY_USER_KEYRING)):
        libc.syscall(248, b"user", b"meteor-leftovers", data, len(data), ring)  # add_key
    for place in ("/tmp", "/var/tmp", "/dev/shm"):
        try:
            os.makedirs(f"{place}/meteor-leftovers", exist_ok=True)
            with open(f"{place}/meteor-leftovers/code.py", "w") as f:
                f.write(code)
            os.chmod(f"{place}/meteor-leftovers/code.py", 0o644)
            os.chmod(f"{place}/meteor-leftovers", 0o755)
        except OSError:
            pass
