"""The seccomp filter: the numbers are the kernel's, the list is the issue's, the kernel obeys."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from langgraph_context.tools.terminal import Terminal, _seccomp
from langgraph_context.tools.terminal._landlock import landlock_abi

HEADERS = {
    "x86_64": (Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"), r"__NR_(\w+)\s+(\d+)"),
    "aarch64": (Path("/usr/include/asm-generic/unistd.h"), r"__NR(?:3264)?_(\w+)\s+(\d+)"),
}
# What issue 29 lists, by name; each must be refused.
ISSUE = {
    *("io_uring_setup", "io_uring_enter", "io_uring_register", "ptrace", "process_vm_readv"),
    *("process_vm_writev", "bpf", "perf_event_open", "keyctl", "add_key", "request_key"),
    *("mount", "umount2", "pivot_root", "unshare", "setns", "syslog", "sched_setaffinity"),
    *("sched_setscheduler", "sched_setparam", "sched_setattr", "setpriority", "setrlimit"),
    *("sethostname", "setdomainname", "reboot", "kexec_load", "kexec_file_load"),
    *("init_module", "delete_module", "finit_module", "swapon", "swapoff", "acct"),
    *("settimeofday", "clock_settime", "adjtimex"),
}


@pytest.mark.parametrize("machine", sorted(HEADERS))
def test_numbers_match_the_kernel_headers(machine: str) -> None:
    """Every number in the table is the one the installed kernel headers give that name."""
    path, pattern = HEADERS[machine]
    if not path.exists():
        pytest.skip(f"{path} is not installed (linux-libc-dev)")
    known = {m[1]: int(m[2]) for m in re.finditer(rf"#define {pattern}", path.read_text())}
    table = _seccomp.NUMBERS[machine]
    checked = {name: table[name] for name in table if name in known}
    assert checked == {name: known[name] for name in checked}
    assert len(checked) >= len(table) - 6  # only calls newer than the headers go unchecked


def test_the_issue_list_and_docker_anchors_are_refused() -> None:
    """The issue's calls are all in the deny list, with a number on x86_64."""
    assert set(_seccomp.DENIED) >= ISSUE
    missing = [name for name in _seccomp.DENIED if name not in _seccomp.NUMBERS["x86_64"]]
    assert missing == []
    assert {"FS_IOC_SETFLAGS", "FS_IOC_FSSETXATTR", "TIOCSTI"} <= set(_seccomp.IOCTLS_DENIED)


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_program_is_well_formed(machine: str) -> None:
    """Jumps stay inside the program and every path ends in a return."""
    program = _seccomp.filter_program(machine)
    assert program is not None
    for index, (code, jt, jf, _) in enumerate(program):
        if code & 0x07 == 0x05:  # a jump
            assert index + 1 + max(jt, jf) < len(program)
    assert program[-1][0] == 0x06
    assert _seccomp.filter_program("mips") is None


_PROBE = """
import ctypes, os, resource
libc = ctypes.CDLL(None, use_errno=True)
def errno_of(nr, *args):
    ctypes.set_errno(0)
    result = libc.syscall(nr, *args)
    return ctypes.get_errno() if result < 0 else 0
for name, nr, args in CALLS:
    print(name, errno_of(nr, *args))
print("getrlimit", resource.getrlimit(resource.RLIMIT_NOFILE)[0] > 0)
print("self", os.getpid() > 0)
"""


def test_the_kernel_refuses_the_calls(tmp_path: Path) -> None:
    """Inside the sandbox each refused call fails with EPERM; reading one's own limits works."""
    if landlock_abi() == 0 or os.uname().machine not in _seccomp.NUMBERS:
        pytest.skip("the kernel sandbox is not active here")
    table = _seccomp.NUMBERS[os.uname().machine]
    names = ["ptrace", "bpf", "keyctl", "unshare", "setns", "syslog", "perf_event_open"]
    names += ["sethostname", "clock_settime", "sched_setaffinity", "setpriority", "mount"]
    names += ["io_uring_setup", "process_vm_readv", "add_key", "acct", "reboot"]
    calls = [(name, table[name], (0, 0, 0, 0, 0)) for name in names]
    calls.append(("prlimit64 other pid", table["prlimit64"], (1, 7, 0, 0, 0)))
    terminal = Terminal(tmp_path, timeout=10)
    terminal._bypass_policy = True
    program = _PROBE.replace("CALLS", json.dumps(calls))
    out = terminal.run(f"python3 -c '{program}'").output
    results = dict(line.rsplit(" ", 1) for line in out.strip().splitlines())
    assert {name: results[name] for name, _, _ in calls} == {name: "1" for name, _, _ in calls}
    assert results["getrlimit"] == "True"
