"""The seccomp filter every submission runs under, built with libseccomp (pyseccomp) from the policy below.

The policy is an allow list modelled on Docker's default profile (moby's
profiles/seccomp/default.json): the system calls it allows a container without added
capabilities, less those a submission never needs and a neighbour could be reached through.
Everything else fails with EPERM, so a submission gets an error, never a crash of the grader.
The trusted side builds the filter once and hands its BPF program to the jail, whose child
installs it with prctl (the jail imports nothing but the standard library).
"""

from __future__ import annotations

import errno
import tempfile
from dataclasses import dataclass
from functools import cache

# Docker's default allow list, less what is taken out below.
DOCKER_DEFAULT = """
accept accept4 access adjtimex alarm bind brk capget capset chdir chmod chown chown32 clock_adjtime
clock_adjtime64 clock_getres clock_getres_time64 clock_gettime clock_gettime64 clock_nanosleep
clock_nanosleep_time64 close close_range connect copy_file_range creat dup dup2 dup3 epoll_create
epoll_create1 epoll_ctl epoll_ctl_old epoll_pwait epoll_pwait2 epoll_wait epoll_wait_old eventfd eventfd2
execve execveat exit exit_group faccessat faccessat2 fadvise64 fadvise64_64 fallocate fanotify_mark fchdir
fchmod fchmodat fchown fchown32 fchownat fcntl fcntl64 fdatasync fgetxattr flistxattr flock fork
fremovexattr fsetxattr fstat fstat64 fstatat64 fstatfs fstatfs64 fsync ftruncate ftruncate64 futex
futex_time64 futex_waitv futimesat getcpu getcwd getdents getdents64 getegid getegid32 geteuid geteuid32
getgid getgid32 getgroups getgroups32 getitimer getpeername getpgid getpgrp getpid getppid getpriority
getrandom getresgid getresgid32 getresuid getresuid32 getrlimit get_robust_list getrusage getsid
getsockname getsockopt get_thread_area gettid gettimeofday getuid getuid32 getxattr inotify_add_watch
inotify_init inotify_init1 inotify_rm_watch io_cancel ioctl io_destroy io_getevents io_pgetevents
io_pgetevents_time64 ioprio_get ioprio_set io_setup io_submit io_uring_enter io_uring_register
io_uring_setup ipc kill landlock_add_rule landlock_create_ruleset landlock_restrict_self lchown lchown32
lgetxattr link linkat listen listxattr llistxattr _llseek lremovexattr lseek lsetxattr lstat lstat64
madvise membarrier memfd_create memfd_secret mincore mkdir mkdirat mknod mknodat mlock mlock2 mlockall mmap
mmap2 mprotect mq_getsetattr mq_notify mq_open mq_timedreceive mq_timedreceive_time64 mq_timedsend
mq_timedsend_time64 mq_unlink mremap msgctl msgget msgrcv msgsnd msync munlock munlockall munmap
name_to_handle_at nanosleep newfstatat _newselect open openat openat2 pause pidfd_open pidfd_send_signal
pipe pipe2 pkey_alloc pkey_free pkey_mprotect poll ppoll ppoll_time64 prctl pread64 preadv preadv2
prlimit64 process_mrelease pselect6 pselect6_time64 pwrite64 pwritev pwritev2 read readahead readlink
readlinkat readv recv recvfrom recvmmsg recvmmsg_time64 recvmsg remap_file_pages removexattr rename
renameat renameat2 restart_syscall rmdir rseq rt_sigaction rt_sigpending rt_sigprocmask rt_sigqueueinfo
rt_sigreturn rt_sigsuspend rt_sigtimedwait rt_sigtimedwait_time64 rt_tgsigqueueinfo sched_getaffinity
sched_getattr sched_getparam sched_get_priority_max sched_get_priority_min sched_getscheduler
sched_rr_get_interval sched_rr_get_interval_time64 sched_setaffinity sched_setattr sched_setparam
sched_setscheduler sched_yield seccomp select semctl semget semop semtimedop semtimedop_time64 send
sendfile sendfile64 sendmmsg sendmsg sendto setfsgid setfsgid32 setfsuid setfsuid32 setgid setgid32
setgroups setgroups32 setitimer setpgid setpriority setregid setregid32 setresgid setresgid32 setresuid
setresuid32 setreuid setreuid32 setrlimit set_robust_list setsid setsockopt set_thread_area
set_tid_address setuid setuid32 setxattr shmat shmctl shmdt shmget shutdown sigaltstack signalfd
signalfd4 sigprocmask sigreturn socketcall socketpair splice stat stat64 statfs statfs64 statx symlink
symlinkat sync sync_file_range syncfs sysinfo tee tgkill time timer_create timer_delete timer_getoverrun
timer_gettime timer_gettime64 timer_settime timer_settime64 timerfd_create timerfd_gettime
timerfd_gettime64 timerfd_settime timerfd_settime64 times tkill truncate truncate64 ugetrlimit umask uname
unlink unlinkat utime utimensat utimensat_time64 utimes vfork vmsplice wait4 waitid waitpid write writev
arch_prctl modify_ldt
""".split()

# Taken out of Docker's list, and why:
TAKEN_OUT = {
    # One session per submission: with autogroups (Linux's default), the CPU is shared fairly
    # between sessions, so a submission that made a session per process would take a share per process.
    "setsid": "a session per process would take a fair share of the CPU per process",
    # Moving its processes across cores, or raising their scheduling class, is how a hog escapes
    # the share it is given.
    "sched_setaffinity": "spreading its processes over more cores",
    "sched_setattr": "changing its scheduling class",
    "sched_setparam": "changing its scheduling class",
    "sched_setscheduler": "changing its scheduling class",
    # A second kernel interface with its own bugs and its own rules; nothing a submission needs.
    "io_uring_setup": "io_uring",
    "io_uring_enter": "io_uring",
    "io_uring_register": "io_uring",
    # Reads other processes' memory where ptrace would be refused anyway; never needed.
    "process_mrelease": "acts on another process",
    "fanotify_mark": "watches files system-wide",
    "name_to_handle_at": "file handles",
    "memfd_secret": "memory the grader could not read back",
}

# Allowed only where the submission has a namespace of its own for them (else they are shared
# with every other submission graded at the same moment, and outlive it).
IPC = """
ipc msgctl msgget msgrcv msgsnd semctl semget semop semtimedop semtimedop_time64 shmat shmctl shmdt shmget
mq_getsetattr mq_notify mq_open mq_timedreceive mq_timedreceive_time64 mq_timedsend mq_timedsend_time64
mq_unlink
""".split()
SOCKETS = "socket socketcall".split()  # without a network namespace of its own: not even a local socket

AF_VSOCK = 40  # Docker refuses this family: it reaches the host from a VM
# clone's flags that make a namespace (CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET): Docker's mask.
NAMESPACE_FLAGS = 0x7E020000
# personality() values Docker allows: the default, and the ones that only ask, never change what runs.
PERSONALITIES = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)


@dataclass(frozen=True)
class Policy:
    """What the submission's own namespaces make safe to allow."""

    ipc: bool  # its own IPC namespace: System V IPC and POSIX message queues
    network: bool  # its own network namespace: sockets


def allowed(policy: Policy) -> list[str]:
    names = [n for n in DOCKER_DEFAULT if n not in TAKEN_OUT and n not in SOCKETS]
    if not policy.ipc:
        names = [n for n in names if n not in IPC]
    return names


@cache
def bpf(policy: Policy) -> bytes:
    """The filter's BPF program (struct sock_filter[]) for this machine's architecture."""
    import pyseccomp as seccomp

    deny = seccomp.ERRNO(errno.EPERM)
    f = seccomp.SyscallFilter(deny)
    # A binary tree of the allowed calls, not a chain of 300 comparisons run at every call.
    f.set_attr(seccomp.Attr.CTL_OPTIMIZE, 2)
    native = seccomp.system_arch()
    for name in allowed(policy):
        # A name of another architecture (chown32 on x86_64) is not a call here: nothing to allow.
        if seccomp.resolve_syscall(native, name) >= 0:
            f.add_rule(seccomp.ALLOW, name)
    if policy.network:
        f.add_rule(seccomp.ALLOW, "socket", seccomp.Arg(0, seccomp.NE, AF_VSOCK))
    for value in PERSONALITIES:
        f.add_rule(seccomp.ALLOW, "personality", seccomp.Arg(0, seccomp.EQ, value))
    # Threads and processes, never a namespace; clone3 says it does not exist, so glibc falls back to clone.
    f.add_rule(seccomp.ALLOW, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, NAMESPACE_FLAGS, 0))
    f.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    with tempfile.TemporaryFile() as out:
        f.export_bpf(out)
        out.seek(0)
        return out.read()
