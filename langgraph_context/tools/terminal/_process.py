"""The terminal's child processes: resource limits, stdin feeding, output reading, killing.

Output is decoded as UTF-8 while it streams, so the terminal's cap is in characters.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

from langgraph_context.errors import LangGraphContextError
from langgraph_context.tools.terminal import _landlock

__all__ = [
    "SYSTEM_READ_EXEC",
    "SYSTEM_READ_ONLY",
    "Enforcement",
    "KernelSandboxUnavailableError",
    "Launch",
    "collect_output",
    "feed_stdin",
    "kill_group",
    "resolve_enforcement",
    "start_pipeline",
]

_READ_CHUNK = 65_536
Enforcement = Literal["landlock", "policy-only"]
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
    """How children are started: environment, limits, and the Landlock ABI (0: none)."""

    env: dict[str, str]
    abi: int
    cpu_seconds: int
    memory_bytes: int
    root_fd: int

    def prefix(self) -> list[str]:
        """The launcher command that confines itself, then execs what follows."""
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
        return [sys.executable, "-I", "-S", _LAUNCHER, *spec]


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
            proc = subprocess.Popen(
                [*launch.prefix(), *argv],
                stdin=previous,
                stdout=subprocess.PIPE,
                stderr=err_write,
                cwd=cwd,
                env=launch.env,
                close_fds=True,
                pass_fds=(launch.root_fd,),
                process_group=procs[0].pid if procs else 0,
            )
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
        raise
    return procs


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
