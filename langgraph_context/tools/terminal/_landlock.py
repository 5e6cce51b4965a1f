"""Kernel half of the terminal sandbox: containment, privileges, Landlock, seccomp, `exec`.

This file is run as a script, `python -I -S _landlock.py MODE SPEC BINARY ARGS...`, in
every child the terminal starts. It imports only the standard library (and its two
sibling files `_privileges.py` and `_seccomp.py`, loaded by path). In mode `contain`
(the standard-library launcher) it first puts the command in its own user + PID
namespace, or under a subreaper where the host forbids that (`_privileges.supervise`);
in mode `direct` bubblewrap has done so already. Then, before it `execv`s the command:

* drops every capability (bounding, ambient, inheritable, permitted, effective);
* sets `no_new_privs` (no setuid gain, and required for the filters below);
* sets resource limits (CPU seconds, address space, `RLIMIT_FSIZE=0`, no child
  processes, no core dumps);
* restricts itself with Landlock: read (and execute) beneath the system directories
  the tools need, read beneath the workspace, nothing else; no write, truncate,
  remove or make anywhere; no TCP bind/connect (ABI >= 4); signals and abstract unix
  sockets scoped to the sandbox (ABI >= 6); no device ioctls (ABI >= 5);
* installs the seccomp filter of `_seccomp` (Docker's default profile and what
  Landlock does not cover: inode changes, sockets, io_uring, other processes).

Running a separate launcher instead of a `preexec_fn` keeps the parent fork-safe: the
terminal runs in LangGraph's thread pools, and Python code between `fork` and `exec`
in a threaded parent can deadlock on a lock another thread held. The ctypes layer is
our own, about a hundred lines over three syscalls whose numbers and structures are
the kernel's stable ABI: it is small enough to review, and the `landlock` binding on
PyPI could not be vetted offline here (and would be one more dependency in the child).

Every failure exits with code 126 and a message: the command never runs unconfined.
"""

from __future__ import annotations

import ctypes
import importlib
import importlib.util
import os
import resource
import signal
import stat
import sys
from types import ModuleType
from typing import NoReturn

__all__ = [
    "LAUNCHER_EXIT",
    "apply_sandbox",
    "landlock_abi",
    "launcher_args",
    "main",
]

LAUNCHER_EXIT = 126

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # same on every architecture
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# Filesystem access rights, by the ABI version that introduced them.
_FS_EXECUTE, _FS_WRITE_FILE, _FS_READ_FILE, _FS_READ_DIR = 1, 2, 4, 8
_FS_ABI1 = (1 << 13) - 1  # execute ... make_sym
_FS_REFER, _FS_TRUNCATE, _FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_FILE_RIGHTS = _FS_EXECUTE | _FS_WRITE_FILE | _FS_READ_FILE | _FS_TRUNCATE | _FS_IOCTL_DEV
_NET_BIND_TCP, _NET_CONNECT_TCP = 1, 2
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1, 2

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
# `contain`: this launcher isolates the command (namespaces, else a subreaper); `tree`:
# the subreaper only (the host forbids namespaces); `direct`: bubblewrap did it.
_MODES = ("contain", "tree", "direct")


def _sibling(name: str) -> ModuleType:
    """Load a sibling module: from the package when imported, by path when run as a script.

    The script runs under `python -I -S` (no site-packages, no script directory on the
    path, so nothing planted beside the workspace can shadow it); its siblings are
    standard-library-only files of this package, loaded from their own location.
    """
    if __package__:
        return importlib.import_module(f"{__package__}.{name}")
    path = os.path.join(os.path.dirname(os.path.realpath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_lgc_{name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_privileges = _sibling("_privileges")
_seccomp = _sibling("_seccomp")


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class SandboxError(OSError):
    """A kernel restriction could not be applied."""


def _check(result: int, what: str) -> int:
    if result < 0:
        errno = ctypes.get_errno()
        raise SandboxError(errno, f"{what}: {os.strerror(errno)}")
    return result


def landlock_abi() -> int:
    """Return the kernel's Landlock ABI version, 0 when Landlock is unavailable."""
    if not sys.platform.startswith("linux"):
        return 0
    version = int(_libc.syscall(_CREATE_RULESET, None, 0, _CREATE_RULESET_VERSION))
    return max(version, 0)


def _fs_rights(abi: int) -> int:
    rights = _FS_ABI1
    if abi >= 2:
        rights |= _FS_REFER
    if abi >= 3:
        rights |= _FS_TRUNCATE
    if abi >= 5:
        rights |= _FS_IOCTL_DEV
    return rights


def _restrict(abi: int, read_exec: list[str], read_only: list[str]) -> None:
    """Create the ruleset, allow reading beneath the given paths, and enforce it."""
    handled = _fs_rights(abi)
    attr = _RulesetAttr(handled, 0, 0)
    size = 8
    if abi >= 4:
        attr.handled_access_net = _NET_BIND_TCP | _NET_CONNECT_TCP  # no rule: all denied
        size = 16
    if abi >= 6:
        attr.scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL
        size = 24
    ruleset = _check(_libc.syscall(_CREATE_RULESET, ctypes.byref(attr), size, 0), "ruleset")
    try:
        read = _FS_READ_FILE | _FS_READ_DIR
        for paths, rights in ((read_exec, read | _FS_EXECUTE), (read_only, read)):
            for path in paths:
                _allow(ruleset, path, rights)
        _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        _check(_libc.syscall(_RESTRICT_SELF, ruleset, 0), "restrict_self")
    finally:
        os.close(ruleset)


def _allow(ruleset: int, path: str, rights: int) -> None:
    """Allow `rights` beneath `path`, or beneath inherited descriptor N for `@N`."""
    if path.startswith("@"):
        fd = int(path[1:])
    else:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return  # a system directory this host does not have
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= _FILE_RIGHTS
        rule = _PathBeneath(rights, fd)
        _check(_libc.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0), path)
    finally:
        os.close(fd)


def launcher_args(
    abi: int, limits: dict[str, int], read_exec: list[str], read_only: list[str]
) -> list[str]:
    """Encode a sandbox spec as the launcher's leading arguments (no JSON: faster start)."""
    spec = ",".join(f"{name}={value}" for name, value in limits.items())
    return [str(abi), spec, str(len(read_exec)), *read_exec, str(len(read_only)), *read_only]


def _parse(argv: list[str]) -> tuple[int, dict[str, int], list[str], list[str], list[str]]:
    abi, spec = int(argv[0]), argv[1]
    limits = {k: int(v) for k, _, v in (item.partition("=") for item in spec.split(",") if item)}
    n_exec = int(argv[2])
    read_exec = argv[3 : 3 + n_exec]
    n_ro = int(argv[3 + n_exec])
    read_only = argv[4 + n_exec : 4 + n_exec + n_ro]
    command = argv[4 + n_exec + n_ro :]
    if not command:
        raise ValueError("no command given")
    return abi, limits, read_exec, read_only, command


def apply_sandbox(
    abi: int, limits: dict[str, int], read_exec: list[str], read_only: list[str]
) -> None:
    """Drop capabilities, apply limits, `no_new_privs`, then Landlock and seccomp (`abi` > 0)."""
    if sys.platform.startswith("linux"):
        _privileges.drop_capabilities(_libc)
    for name, value in limits.items():
        resource.setrlimit(getattr(resource, f"RLIMIT_{name}"), (value, value))
    if sys.platform.startswith("linux"):
        _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    if abi > 0:
        _restrict(abi, read_exec, read_only)
        _seccomp.install(_libc)


def _confine_and_exec(  # pragma: no cover - runs in the child
    abi: int, limits: dict[str, int], read_exec: list[str], read_only: list[str], command: list[str]
) -> NoReturn:
    try:
        apply_sandbox(abi, limits, read_exec, read_only)
        os.closerange(3, 1 << 16)  # nothing inherited reaches the command
        os.execv(command[0], command)
    except (OSError, ValueError, AttributeError, IndexError) as error:
        os.write(2, f"sandbox: cannot start the command: {error}\n".encode())
    os._exit(LAUNCHER_EXIT)


def probe() -> str:
    """How this host contains a command: `pid-namespace`, `process-tree` or `process-group`."""
    if not sys.platform.startswith("linux"):
        return "process-group"  # no namespaces, no subreaper: the group is killed at the end
    return "pid-namespace" if _privileges.enter_namespaces(_libc) else "process-tree"


def main(argv: list[str]) -> int:  # pragma: no cover - runs in the child
    """Apply the spec in `argv[2:]` in mode `argv[1]`, then exec; exit 126 on any failure."""
    try:
        if argv[1:] == ["--probe"]:
            print(probe())
            return 0
        mode = argv[1]
        if mode not in _MODES:
            raise ValueError(f"unknown launcher mode {mode!r}")
        abi, limits, read_exec, read_only, command = _parse(argv[2:])
        if mode == "direct" or not sys.platform.startswith("linux"):
            _confine_and_exec(abi, limits, read_exec, read_only, command)
        status = _privileges.supervise(
            lambda: _confine_and_exec(abi, limits, read_exec, read_only, command),
            libc=_libc,
            namespaces=mode == "contain",
        )
    except (OSError, ValueError, AttributeError, IndexError) as error:
        os.write(2, f"sandbox: cannot start the command: {error}\n".encode())
        return LAUNCHER_EXIT
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else LAUNCHER_EXIT


if __name__ == "__main__":  # pragma: no cover - the launcher entry point
    sys.exit(main(sys.argv))
