"""Commands run as in the places the kit is run without bubblewrap: root in a container (Docker, Gradescope)."""

from __future__ import annotations

import sys
from pathlib import Path

# Root with bubblewrap present but failing, as in Docker or on Gradescope.
NO_BWRAP = [
    "unshare",
    "-m",
    "--propagation",
    "private",
    "sh",
    "-c",
    'mount --bind /bin/false "$(command -v bwrap)" && exec "$@"',
    "sh",
]

# The same, and as a container with Docker's default seccomp profile and a read-only /sys/fs/cgroup
# (Gradescope's): no namespace can be made, no cgroup joined.
LIKE_GRADESCOPE = [
    "unshare",
    "-m",
    "--propagation",
    "private",
    "sh",
    "-c",
    'mount --bind /bin/false "$(command -v bwrap)"'
    " && for m in $(awk '$3 ~ /^cgroup/ {print $2}' /proc/self/mounts); do mount -o remount,bind,ro \"$m\"; done"
    ' && exec "$@"',
    "sh",
    sys.executable,
    str(Path(__file__).with_name("no_namespaces.py")),
]
