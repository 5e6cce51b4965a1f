"""Privileges and containment for the terminal's launcher (standard library only).

The launcher (`_landlock.py`, run as a script) loads this file. Two jobs:

* **No capabilities.** Started as root (a container's default user, CI), a child keeps
  root's capabilities unless told otherwise: it could renice or re-limit the server,
  rename the host, `chattr +i` workspace files. `drop_capabilities` empties the
  bounding, ambient, inheritable, permitted and effective sets and locks root's
  special exec rules off with securebits, then checks the result. It keeps uid 0
  rather than switching to `nobody`: the workspace is often root's own 0700 folder
  (CI's temporary directories, `/root/...` in containers), which `nobody` could not
  read at all; without capabilities uid 0 reads only what its owner bits allow,
  Landlock confines reads to the workspace, and the calls that act on other processes
  of the same uid are closed by the PID namespace, Landlock's signal scope and the
  seccomp filter.
* **Nothing outlives the call.** `supervise` starts the command in a new user + PID
  (+ network, IPC, UTS) namespace through an unprivileged user namespace: a small
  init (pid 1) waits for the command, and when it exits the kernel kills everything
  left in the namespace (`setsid`, double forks, closed descriptors change nothing).
  Where namespaces are unavailable (a seccomp-confined container, a distribution that
  forbids unprivileged user namespaces) the supervisor becomes a child subreaper and
  kills every descendant that re-parented to it; `Terminal.containment` says which.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import struct
from collections.abc import Callable
from typing import NoReturn

__all__ = ["drop_capabilities", "enter_namespaces", "supervise"]

_CLONE_NEWNS_FLAGS = {
    "user": 0x10000000,
    "pid": 0x20000000,
    "net": 0x40000000,
    "ipc": 0x08000000,
    "uts": 0x04000000,
}
_PR_SET_PDEATHSIG, _PR_CAPBSET_READ, _PR_CAPBSET_DROP = 1, 23, 24
_PR_SET_SECUREBITS, _PR_SET_CHILD_SUBREAPER, _PR_CAP_AMBIENT = 28, 36, 47
_PR_CAP_AMBIENT_IS_SET, _PR_CAP_AMBIENT_CLEAR_ALL = 1, 4
# NOROOT, NO_SETUID_FIXUP, KEEP_CAPS off, NO_CAP_AMBIENT_RAISE, each with its lock.
_SECUREBITS_LOCKED = 0xEF
_CAP_VERSION_3 = 0x20080522
_MAX_CAP = 63
_KILL_ROUNDS = 1000


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    )


def _fail(what: str) -> NoReturn:
    errno = ctypes.get_errno()
    raise OSError(errno, f"{what}: {os.strerror(errno)}")


def enter_namespaces(libc: ctypes.CDLL) -> bool:
    """Unshare user, PID, network, IPC and UTS namespaces; False when the host forbids it.

    The caller's uid and gid map to themselves, so files keep their owners; the next
    child forked is pid 1 of the new PID namespace.
    """
    uid, gid = os.geteuid(), os.getegid()
    if uid == 0:
        os.setgroups([])  # root's supplementary groups grant access too
    if libc.unshare(sum(_CLONE_NEWNS_FLAGS.values())) != 0:
        return False
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1")):
        _write_proc(name, text)
    _write_proc("gid_map", f"{gid} {gid} 1")
    return True


def _write_proc(name: str, text: str) -> None:
    fd = os.open(f"/proc/self/{name}", os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def drop_capabilities(libc: ctypes.CDLL) -> None:
    """Empty every capability set of this process, then check that they are empty.

    Raises:
        OSError: If a set cannot be emptied (the command must not run then).
    """
    for cap in range(_MAX_CAP + 1):
        if libc.prctl(_PR_CAPBSET_READ, cap, 0, 0, 0) == 1 and (
            libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and os.geteuid() == 0
        ):
            _fail(f"dropping capability {cap} from the bounding set")
    if libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0:
        _fail("clearing the ambient set")
    header, data = _CapHeader(_CAP_VERSION_3, 0), (_CapData * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        _fail("capget")
    if any(d.effective or d.permitted for d in data):
        # Needs CAP_SETPCAP, which is about to go: root's exec no longer grants anything.
        if libc.prctl(_PR_SET_SECUREBITS, _SECUREBITS_LOCKED, 0, 0, 0) != 0:
            _fail("securebits")
        if libc.capset(ctypes.byref(header), (_CapData * 2)()) != 0:
            _fail("capset")
    _check_empty(libc)


def _check_empty(libc: ctypes.CDLL) -> None:
    header, data = _CapHeader(_CAP_VERSION_3, 0), (_CapData * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        _fail("capget")
    left = any(d.effective or d.permitted or d.inheritable for d in data)
    for cap in range(_MAX_CAP + 1):
        ambient = libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_IS_SET, cap, 0, 0) == 1
        bounding = libc.prctl(_PR_CAPBSET_READ, cap, 0, 0, 0) == 1
        # The bounding set limits what exec may grant: for uid 0 it must be empty; an
        # unprivileged user without CAP_SETPCAP cannot empty it, and no_new_privs
        # already keeps exec from granting anything.
        left = left or ambient or (bounding and os.geteuid() == 0)
    if left:
        raise OSError(1, "capabilities remain after dropping them")


def supervise(start: Callable[[], NoReturn], *, libc: ctypes.CDLL, namespaces: bool) -> int:
    """Run `start()` contained; return its wait status once nothing it started is left.

    With namespaces: this process forks pid 1 of a new PID namespace, which forks the
    command and waits for it; when pid 1 exits the kernel kills the namespace. Without:
    this process is a child subreaper and kills whatever re-parents to it (also when
    `namespaces` is False).
    """
    contained = namespaces and enter_namespaces(libc)
    if not contained:
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    status_read, status_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        os.close(status_read)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if contained:
            _init(start, status_write)
        os.close(status_write)
        start()
    os.close(status_write)
    _quiet_stdio()

    def stop(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        if not contained:
            _kill_children()
        os._exit(128 + signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, stop)
    _, status = os.waitpid(pid, 0)
    if contained:
        relayed = os.read(status_read, 4)
        if len(relayed) == 4:
            status = struct.unpack("=i", relayed)[0]
    else:  # with namespaces the kernel killed everything when pid 1 exited
        _kill_children()
    return status


def _init(start: Callable[[], NoReturn], status_write: int) -> NoReturn:  # pragma: no cover
    """Pid 1 of the namespace: fork the command, reap, pass its status out, exit."""
    pid = os.fork()
    if pid == 0:
        os.close(status_write)
        start()
    _quiet_stdio()
    while True:
        try:
            got, status = os.waitpid(-1, 0)
        except ChildProcessError:
            status = 0xFF00  # cannot happen: the command is our child until reaped
            break
        if got == pid:
            break
    os.write(status_write, struct.pack("=i", status))
    os._exit(0)


def _quiet_stdio() -> None:
    """Give up our copies of the command's stdin and stdout so EOF comes with it."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(null, fd)
    os.close(null)


def _kill_children() -> None:
    """Kill and reap every child until none is left (orphans re-parent to us meanwhile)."""
    me = os.getpid()
    for _ in range(_KILL_ROUNDS):
        children = _children_of(me)
        if not children:
            try:
                while os.waitpid(-1, os.WNOHANG)[0]:
                    pass
            except ChildProcessError:
                return  # no child at all, running or not
            continue
        for child in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
        for child in children:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(child, 0)


def _children_of(parent: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rpartition(b")")[2].split()
        except OSError:
            continue
        if len(fields) > 1 and int(fields[1]) == parent:
            found.append(int(name))
    return found
