"""The red team's attacks of issue 29, as root: privileges, io_uring, leftovers, names.

Every command here runs with the policy bypassed (a real `sh -c` inside the sandbox,
the kernel layer alone), on both launchers where the host has them. The victims are
processes of the same user as the server (a sleeping child of the test stands in for
the server, so a failure never wrecks the test process itself). Each attack worked
before the terminal dropped capabilities, got its own PID namespace and refused
io_uring, the scheduler and rlimit calls and the file-attribute ioctls.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from langgraph_context.tools.terminal import Terminal, _landlock, _process
from langgraph_context.tools.terminal._process import LauncherChoice
from tests.test_terminal_attacks import launcher_params

ROOT = os.geteuid() == 0
FS_IOC_GETFLAGS = 0x80086601
IMMUTABLE, APPEND = 0x10, 0x20
_GONE_WAIT = 5.0


@pytest.fixture(params=launcher_params())
def terminal(tmp_path: Path, request: pytest.FixtureRequest) -> Terminal:
    ws = tmp_path / "ws"
    (ws / "notes").mkdir(parents=True)
    (ws / "a.txt").write_text("hello\n")
    (ws / "notes" / ".notes.lock").write_text("")
    terminal = Terminal(ws, timeout=5, launcher=request.param)
    terminal._bypass_policy = True
    return terminal


@pytest.fixture
def victim() -> Iterator[int]:
    """A process of the server's user, standing in for the server."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


def _limits(pid: int) -> str:
    return Path(f"/proc/{pid}/limits").read_text()


def test_prlimit_on_the_server_changes_nothing(terminal: Terminal, victim: int) -> None:
    """`prlimit --pid <server>` cannot lower the server's open-file limit."""
    before = _limits(victim)
    terminal.run(f"prlimit --pid {victim} --nofile=5:5; echo done")
    assert _limits(victim) == before


def test_prlimit_through_awk_system_changes_nothing(tmp_path: Path, victim: int) -> None:
    """The issue's path: awk's system() (which the policy allows) runs prlimit: no effect."""
    ws = tmp_path / "ws"
    ws.mkdir()
    terminal = Terminal(ws, timeout=5)
    if terminal._awk_mode != "kernel":
        pytest.skip("awk programs run unchecked only under Landlock")
    before = _limits(victim)
    result = terminal.run(f"awk 'BEGIN{{system(\"prlimit --pid {victim} --nofile=5:5\")}}'")
    assert result.refused is None
    assert _limits(victim) == before


def test_renice_and_taskset_on_the_server_change_nothing(terminal: Terminal, victim: int) -> None:
    """Neither the server's priority nor its CPU set can be changed."""
    priority = os.getpriority(os.PRIO_PROCESS, victim)
    cpus = os.sched_getaffinity(victim)
    first = min(cpus)
    terminal.run(f"renice -n 15 -p {victim}; taskset -p -c {first} {victim}; echo done")
    assert os.getpriority(os.PRIO_PROCESS, victim) == priority
    assert os.sched_getaffinity(victim) == cpus


def test_renice_of_itself_is_refused_too(terminal: Terminal) -> None:
    """The scheduler calls are refused outright, even on the command's own process."""
    result = terminal.run("exec renice -n 5 -p $$")  # exec: no fork, which NPROC=0 may forbid
    assert "Operation not permitted" in result.output


@pytest.fixture
def own_uts_namespace() -> None:
    """Give this test process its own host name, so a failure renames nothing real."""
    if not ROOT:
        pytest.skip("only root can rename the host; an unprivileged user never could")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(0x04000000) != 0:  # CLONE_NEWUTS
        pytest.skip("cannot create a UTS namespace here")


@pytest.mark.usefixtures("own_uts_namespace")
def test_hostname_cannot_be_changed(terminal: Terminal) -> None:
    """`hostname x` as root does not rename the machine."""
    before = socket.gethostname()
    terminal.run("hostname lgc-pwned; echo done")
    assert socket.gethostname() == before


def _flags(path: Path) -> int:
    buffer = bytearray(8)
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, FS_IOC_GETFLAGS, buffer)
    except OSError as error:
        pytest.skip(f"this file system has no inode flags: {error}")
    finally:
        os.close(fd)
    return int.from_bytes(buffer[:4], sys.byteorder)


def test_chattr_cannot_make_workspace_files_immutable(terminal: Terminal) -> None:
    """`chattr +i` and `chattr +a` leave the workspace file's flags as they were."""
    target = terminal.root / "a.txt"
    before = _flags(target)
    try:
        terminal.run("chattr +i a.txt; chattr +a a.txt; echo done")
        after = _flags(target)
    finally:
        if _flags(target) & (IMMUTABLE | APPEND):
            subprocess.run(["chattr", "-i", "-a", str(target)], check=False)
    assert after == before
    assert after & (IMMUTABLE | APPEND) == 0


def test_dmesg_does_not_read_the_kernel_log(terminal: Terminal) -> None:
    """`dmesg` (a read outside the workspace) shows no kernel log line."""
    result = terminal.run("dmesg | head -n 5")
    assert not re.search(r"^\[\s*\d+\.\d+\]", result.output, re.MULTILINE), result.output
    assert "Linux version" not in result.output
    assert "BOOT_IMAGE" not in result.output


_IO_URING = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
fd = libc.syscall(425, 8, params)
print("io_uring fd", fd, "errno", ctypes.get_errno())
"""


def test_io_uring_is_refused(terminal: Terminal) -> None:
    """io_uring_setup fails with EPERM: no ring, so no socket or write through one."""
    result = terminal.run(f"exec python3 -c '{_IO_URING}'")
    assert re.search(r"io_uring fd -1 errno 1\b", result.output), result.output


def _marker() -> str:
    """A sleep duration no other process on the host uses, to find leftovers by."""
    return f"{900 + uuid.uuid4().int % 99}.{uuid.uuid4().int % 10**6:06d}"


def _processes_with(marker: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        with contextlib.suppress(OSError):
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            stat = Path(f"/proc/{name}/stat").read_bytes().rpartition(b")")[2].split()
            if marker.encode() in cmdline.split(b"\0") and stat[0] != b"Z":
                found.append(int(name))
    return found


def _assert_nothing_left(marker: str) -> None:
    """No process with the marker runs once the call returned (killed ones may be reaped late)."""
    deadline = time.monotonic() + _GONE_WAIT
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = _processes_with(marker)
    for pid in left:  # do not leave them behind even when the test fails
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert left == []


# A sandboxed shell cannot use `&`: dash points a background job's stdin at /dev/null,
# which Landlock does not let it open. Python's fork is the red team's way round.
_FORK_CLOSED = """
import os
if os.fork() == 0:
    os.closerange(0, 3)
    os.execv("/bin/sleep", ["sleep", "{m}"])
print("started")
"""
_DOUBLE_FORK = """
import os
if os.fork() == 0:
    if os.fork() == 0:
        os.closerange(0, 3)
        os.execv("/bin/sleep", ["sleep", "{m}"])
    os._exit(0)
os.wait()
print("started")
"""
ESCAPES = {
    "background, output closed": f"python3 -c '{_FORK_CLOSED}'",
    "setsid -f": "setsid -f sleep {m} >&- 2>&-; echo started",
    "double fork": f"python3 -c '{_DOUBLE_FORK}'",
    "own group, output closed": "setsid -f sh -c 'exec sleep {m}' >&- 2>&-; echo started",
}


@pytest.mark.parametrize("template", ESCAPES.values(), ids=ESCAPES.keys())
def test_nothing_the_command_started_outlives_the_call(terminal: Terminal, template: str) -> None:
    """Background children, `setsid -f` and double forks are gone when the call returns."""
    marker = _marker()
    start = time.monotonic()
    result = terminal.run(template.format(m=marker))
    assert time.monotonic() - start < terminal.timeout  # it returned, not timed out
    assert not result.timed_out, result.output
    _assert_nothing_left(marker)


def test_without_namespaces_the_process_tree_is_killed(tmp_path: Path) -> None:
    """Without namespaces the subreaper fallback kills setsid'd and orphaned children."""
    terminal = Terminal(tmp_path, timeout=5, launcher="stdlib")
    terminal.containment = "process-tree"  # as on a host without user namespaces
    terminal._bypass_policy = True
    for template in ESCAPES.values():
        marker = _marker()
        assert not terminal.run(template.format(m=marker)).timed_out
        _assert_nothing_left(marker)


def test_a_leftover_cannot_hold_the_notes_lock(terminal: Terminal) -> None:
    """A background `flock` on the notes lock inside the workspace dies with the call:
    the lock is free the moment the call returns, ten calls in a row.

    With bubblewrap the call waits for the sandbox's PID namespace to be empty
    (`await_sandboxes`): its monitor returns when the command exits, before the kernel
    kills what the command left; this check then failed in 23 of 40 calls.
    """
    lock = terminal.root / "notes" / ".notes.lock"
    for _ in range(10):
        marker = _marker()
        terminal.run(f"setsid -f flock notes/.notes.lock sleep {marker} >&- 2>&-; echo started")
        fd = os.open(lock, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a note write gets the lock now
        finally:
            os.close(fd)
        _assert_nothing_left(marker)


def test_a_timed_out_command_takes_its_children_along(terminal: Terminal) -> None:
    """At the timeout the command and what it started in the background are all killed."""
    marker = _marker()
    result = terminal.run(f"setsid -f sleep {marker} >&- 2>&-; cat /dev/zero > /dev/null; sleep 60")
    assert result.timed_out or result.exit_code is not None
    _assert_nothing_left(marker)


def test_the_command_has_no_capabilities_and_its_own_pid_namespace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No capability at all, no_new_privs, a fresh PID namespace (seen with Landlock off)."""
    monkeypatch.setattr(_landlock, "landlock_abi", lambda: 0)
    monkeypatch.setattr(_process, "_warned_policy_only", True)
    launchers: list[LauncherChoice] = ["stdlib"]
    if _process.probe_launchers()[1]:
        launchers.append("bubblewrap")
    for launcher in launchers:
        terminal = Terminal(tmp_path, launcher=launcher)
        terminal._bypass_policy = True
        status = terminal.run("exec cat /proc/self/status").output
        fields = dict(re.findall(r"^(\w+):\s*(.*)$", status, re.MULTILINE))
        for name in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
            if name == "CapBnd" and not ROOT:
                continue  # an unprivileged user cannot empty it; no_new_privs makes it moot
            assert int(fields[name], 16) == 0, (launcher, name, fields[name])
        assert fields["NoNewPrivs"] == "1"
        # The command is pid 2 or 3 of its namespace (after its init, and bubblewrap's).
        assert int(fields["NSpid"].split()[-1]) <= 3, fields["NSpid"]
