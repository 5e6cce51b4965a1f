"""The terminal's child processes: resource limits, stdin feeding, output reading, killing.

Output is decoded as UTF-8 while it streams, so the terminal's cap is in characters.
"""

from __future__ import annotations

import codecs
import contextlib
import functools
import json
import os
import select
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
import warnings
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

from langgraph_context.errors import LangGraphContextError
from langgraph_context.tools.terminal import _landlock

__all__ = [
    "SYSTEM_READ_EXEC",
    "SYSTEM_READ_ONLY",
    "Containment",
    "Enforcement",
    "KernelSandboxUnavailableError",
    "Launch",
    "Launcher",
    "LauncherChoice",
    "await_sandboxes",
    "collect_output",
    "feed_stdin",
    "kill_group",
    "resolve_enforcement",
    "resolve_launcher",
    "start_pipeline",
    "stop_pipeline",
]

_READ_CHUNK = 65_536
Enforcement = Literal["landlock", "policy-only"]
Launcher = Literal["bubblewrap", "stdlib"]
LauncherChoice = Literal["auto", "bubblewrap", "stdlib"]
Containment = Literal["pid-namespace", "process-tree", "process-group"]
_PROBE_TIMEOUT = 10.0
_warned_policy_only = False


class KernelSandboxUnavailableError(LangGraphContextError, RuntimeError):
    """`require_kernel_sandbox=True` on a host without Landlock."""


def resolve_enforcement(require: bool) -> tuple[Enforcement, int]:
    """Return the enforcement this host gives and its Landlock ABI; warn once if none.

    Raises:
        KernelSandboxUnavailableError: If `require` and the kernel has no Landlock.
    """
    global _warned_policy_only  # noqa: PLW0603 - one warning per process
    abi = _landlock.landlock_abi()
    if abi > 0:
        return "landlock", abi
    if require:
        msg = (
            "require_kernel_sandbox=True but this kernel has no Landlock (Linux >= 5.13 "
            "with landlock in the LSM list); commands would be checked by the policy only"
        )
        raise KernelSandboxUnavailableError(msg)
    if not _warned_policy_only:
        _warned_policy_only = True
        warnings.warn(
            "Landlock is unavailable: the terminal enforces read-only by its command "
            "policy only (enforcement='policy-only')",
            RuntimeWarning,
            stacklevel=3,
        )
    return "policy-only", 0


_LAUNCHER = str(Path(_landlock.__file__).resolve())
# What the allowed binaries need: programs and libraries (read + execute), the dynamic
# linker's cache, time zone and magic data (read). Not /etc/passwd: `ls -l` then shows
# numeric owners, and the account list stays out of reach.
SYSTEM_READ_EXEC: tuple[str, ...] = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64")
SYSTEM_READ_ONLY: tuple[str, ...] = (
    "/etc/ld.so.cache",
    "/etc/localtime",
    "/etc/magic",
    "/etc/magic.mime",
)


@dataclass(frozen=True)
class Launch:
    """How children are started: launcher, environment, limits, Landlock ABI (0: none)."""

    env: dict[str, str]
    abi: int
    cpu_seconds: int
    memory_bytes: int
    root_fd: int
    launcher: Launcher = "stdlib"
    containment: Containment = "pid-namespace"

    def prefix(self, cwd: Path, *, info_fd: int | None = None) -> list[str]:
        """The launcher command that contains and confines itself, then execs what follows.

        `info_fd`: bubblewrap writes the sandbox's init pid there (`await_sandboxes`).
        """
        limits = {
            "CPU": self.cpu_seconds,
            "AS": self.memory_bytes,
            "FSIZE": 0,
            "CORE": 0,
            "NPROC": 0,
        }
        # The workspace rule is bound to the directory opened when the terminal was
        # made (its inherited descriptor), not to a name another process could swap.
        read_only = [*SYSTEM_READ_ONLY, f"@{self.root_fd}"]
        spec = _landlock.launcher_args(self.abi, limits, list(SYSTEM_READ_EXEC), read_only)
        python = [sys.executable, "-I", "-S", _LAUNCHER]
        if self.launcher == "stdlib":
            mode = {"pid-namespace": "contain", "process-tree": "tree"}.get(
                self.containment, "direct"
            )
            return [*python, mode, *spec]
        return [*_bwrap_prefix(str(cwd), info_fd), *python, "direct", *spec]


def _bwrap_prefix(cwd: str, info_fd: int | None = None) -> list[str]:
    """bubblewrap: new user, PID, network, IPC, UTS namespaces, no capabilities.

    A user namespace even for root: without it bubblewrap leaves root's bounding set
    full. The whole file system is bound read-only (a third layer under Landlock and
    the policy) with a fresh /proc for the new PID namespace and a minimal /dev.
    `--die-with-parent` kills the sandbox if the server dies; `--new-session` keeps it
    off the server's terminal. Our launcher still runs inside (mode `direct`) for the
    limits, Landlock and seccomp.
    """
    bwrap = bubblewrap_path()
    assert bwrap is not None
    info = [] if info_fd is None else ["--info-fd", str(info_fd)]
    return [
        bwrap,
        *info,
        *("--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc"),
        *("--unshare-uts", "--unshare-cgroup-try", "--cap-drop", "ALL"),
        *("--die-with-parent", "--new-session"),
        *("--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--chdir", cwd, "--"),
    ]


def bubblewrap_path() -> str | None:
    """Where `bwrap` is installed, or None."""
    return shutil.which("bwrap")


@functools.cache
def probe_launchers() -> tuple[Containment, bool]:
    """How the stdlib launcher contains a command here, and whether bubblewrap works.

    Probed once per process: bubblewrap may be installed but unable to create its
    namespaces (a container without the privilege, a host that forbids unprivileged
    user namespaces), and then it is not used.
    """
    probe = [sys.executable, "-I", "-S", _LAUNCHER, "--probe"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=_PROBE_TIMEOUT, check=False)
        found = done.stdout.strip().decode(errors="replace")
        containment: Containment = "process-tree"
        if found in ("pid-namespace", "process-group"):
            containment = "pid-namespace" if found == "pid-namespace" else "process-group"
    except (OSError, subprocess.SubprocessError):
        containment = "process-tree"
    works = False
    if bubblewrap_path() is not None:
        argv = [*_bwrap_prefix("/"), sys.executable, "-I", "-S", "-c", "pass"]
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            done = subprocess.run(argv, capture_output=True, timeout=_PROBE_TIMEOUT, check=False)
            works = done.returncode == 0
    return containment, works


def resolve_launcher(choice: LauncherChoice) -> tuple[Launcher, Containment]:
    """Pick the launcher: bubblewrap when it works here, else the standard-library one.

    bubblewrap is preferred because it is a small, widely reviewed setuid-free tool
    (Flatpak's sandbox) doing exactly this job; our own launcher does the same with
    the standard library where it is missing.

    Raises:
        KernelSandboxUnavailableError: If `choice` is "bubblewrap" and it cannot run.
    """
    containment, bwrap_works = probe_launchers()
    if choice == "stdlib" or (choice == "auto" and not bwrap_works):
        return "stdlib", containment
    if not bwrap_works:
        msg = "launcher='bubblewrap' but bwrap is not installed or cannot create namespaces here"
        raise KernelSandboxUnavailableError(msg)
    return "bubblewrap", "pid-namespace"


def start_pipeline(
    argvs: Sequence[list[str]], *, cwd: Path, launch: Launch, stdin_pipe: bool, err_write: int
) -> list[subprocess.Popen[bytes]]:
    """Start every stage through the launcher, piped together, in one process group.

    Raises:
        OSError: If a stage cannot be started (the started ones are killed).
    """
    procs: list[subprocess.Popen[bytes]] = []
    previous: IO[bytes] | int = subprocess.PIPE if stdin_pipe else subprocess.DEVNULL
    try:
        for argv in argvs:
            info = os.pipe() if launch.launcher == "bubblewrap" else None
            try:
                proc = subprocess.Popen(
                    [*launch.prefix(cwd, info_fd=None if info is None else info[1]), *argv],
                    stdin=previous,
                    stdout=subprocess.PIPE,
                    stderr=err_write,
                    cwd=cwd,
                    env=launch.env,
                    close_fds=True,
                    pass_fds=(launch.root_fd,) if info is None else (launch.root_fd, info[1]),
                    process_group=procs[0].pid if procs else 0,
                )
            except BaseException:
                if info is not None:
                    os.close(info[0])
                raise
            finally:
                if info is not None:
                    os.close(info[1])
            if info is not None:
                _INFO_FDS[proc] = info[0]
            if procs and procs[-1].stdout is not None:
                procs[-1].stdout.close()  # the next stage owns the read end now
            procs.append(proc)
            assert proc.stdout is not None
            previous = proc.stdout
    except BaseException:
        if procs:
            kill_group(procs[0].pid)
            for proc in procs:
                if proc.stdout is not None:
                    proc.stdout.close()
                if proc.stdin is not None:
                    proc.stdin.close()
                proc.wait()
            await_sandboxes(procs)
        raise
    return procs


SANDBOX_GONE_WAIT = 2.0
"""Seconds a call waits, at most, for its bubblewrap sandboxes to be empty."""
# The read end of each bubblewrap stage's `--info-fd` pipe, until `await_sandboxes`.
_INFO_FDS: weakref.WeakKeyDictionary[subprocess.Popen[bytes], int] = weakref.WeakKeyDictionary()


def await_sandboxes(procs: Sequence[subprocess.Popen[bytes]]) -> None:
    """Return once each bubblewrap stage's PID namespace is empty (bounded wait).

    bubblewrap's monitor exits when the command does; the sandbox's init exits after
    it, and only then does the kernel kill the rest of its PID namespace. A process the
    command left behind (`setsid -f`) could run for those milliseconds after the call
    returned. The init's host pid comes from `--info-fd`; the kernel turns it into a
    zombie (or frees it) only once the namespace is empty. A stage without the pipe
    (the stdlib launcher waits for its namespace itself) is skipped.
    """
    deadline = time.monotonic() + SANDBOX_GONE_WAIT
    for proc in procs:
        fd = _INFO_FDS.pop(proc, None)
        if fd is None:
            continue
        try:
            pid = _sandbox_pid(fd, deadline)
        finally:
            os.close(fd)
        while pid is not None and _running(pid) and time.monotonic() < deadline:
            time.sleep(0.001)


def _sandbox_pid(fd: int, deadline: float) -> int | None:
    """The `child-pid` bubblewrap wrote to its info pipe (`None`: none by the deadline)."""
    data = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 4096)
        if not chunk:
            return None
        data += chunk
        with contextlib.suppress(ValueError):
            found = json.loads(data).get("child-pid")
            return found if isinstance(found, int) else None


def _running(pid: int) -> bool:
    """Whether `pid` is a live process (not gone, not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            state = stat.read().rpartition(b")")[2].split()[:1]
    except OSError:
        return False
    return state not in ([b"Z"], [b"X"])


def feed_stdin(proc: subprocess.Popen[bytes], data: bytes) -> None:
    """Write `data` to the process's stdin from a thread, then close it."""

    def write() -> None:
        assert proc.stdin is not None
        with contextlib.suppress(OSError):
            proc.stdin.write(data)
        with contextlib.suppress(OSError):
            proc.stdin.close()

    threading.Thread(target=write, daemon=True).start()


class _TextPipe:
    """One output pipe decoded as UTF-8 while it streams, so its length is in characters."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._parts: list[str] = []
        self.chars = 0

    def feed(self, chunk: bytes, *, final: bool = False) -> None:
        """Decode `chunk` (a split multi-byte character waits for its next bytes)."""
        text = self._decoder.decode(chunk, final=final)
        self._parts.append(text)
        self.chars += len(text)

    def text(self) -> str:
        """Return everything read, a dangling partial character shown as U+FFFD."""
        self.feed(b"", final=True)
        return "".join(self._parts)


def collect_output(
    last: subprocess.Popen[bytes], err_fd: int, cap: int, deadline: float
) -> tuple[str, str, bool, bool]:
    """Read stdout and stderr until both close, `cap` characters pass, or the deadline.

    Returns:
        `(stdout, stderr, truncated, timed_out)`; the texts may exceed `cap` by one read.
    """
    assert last.stdout is not None
    out_fd = last.stdout.fileno()
    pipes = {out_fd: _TextPipe(), err_fd: _TextPipe()}
    selector = selectors.DefaultSelector()
    selector.register(out_fd, selectors.EVENT_READ)
    selector.register(err_fd, selectors.EVENT_READ)
    open_fds = {out_fd, err_fd}
    truncated = timed_out = False
    try:
        while open_fds:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            for key, _ in selector.select(timeout=min(remaining, 0.5)):
                fd = int(key.fd)
                chunk = os.read(fd, _READ_CHUNK)
                if not chunk:
                    selector.unregister(fd)
                    open_fds.discard(fd)
                    continue
                pipes[fd].feed(chunk)
            if pipes[out_fd].chars + pipes[err_fd].chars > cap:
                truncated = True
                break
    finally:
        selector.close()
        os.close(err_fd)
        last.stdout.close()
    return pipes[out_fd].text(), pipes[err_fd].text(), truncated, timed_out


def kill_group(pgid: int) -> None:
    """Kill the whole process group `pgid`; a group already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def stop_pipeline(procs: Sequence[subprocess.Popen[bytes]], grace: float) -> None:
    """Stop every stage and everything it started; return when they are reaped.

    SIGTERM first goes to each launcher (the stdlib supervisor kills its namespace or
    its whole tree, bubblewrap dies and takes its namespace along); after `grace`
    seconds the process group is killed outright.
    """
    for proc in procs:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
    end = time.monotonic() + grace
    for proc in procs:
        try:
            proc.wait(timeout=max(0.0, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            break
    kill_group(procs[0].pid)
    for proc in procs:
        proc.wait()
