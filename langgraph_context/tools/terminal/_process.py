"""The terminal's child processes: resource limits, stdin feeding, output reading, killing.

Output is decoded as UTF-8 while it streams, so the terminal's cap is in characters.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import resource
import selectors
import signal
import subprocess
import threading
import time

__all__ = ["collect_output", "feed_stdin", "kill_group", "limit_child"]

_READ_CHUNK = 65_536


def limit_child(cpu_seconds: int) -> None:  # pragma: no cover - runs in the child
    """Forbid file growth and core dumps and cap CPU time (called in the child)."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))


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
