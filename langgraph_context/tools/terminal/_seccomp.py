"""The terminal's seccomp filter: the system calls a sandboxed command may never make.

Standard library only: the launcher (`_landlock.py`, run as a script) loads this file.

The anchor is Docker's default seccomp profile (moby `profiles/seccomp/default.json`,
documented at https://docs.docker.com/engine/security/seccomp/): every call it leaves
out of its allow list for a container without extra capabilities is refused here too
(kernel modules, kexec, reboot, mount and the new mount API, namespaces after setup,
keyrings, bpf, perf, ptrace and cross-process memory, clock setting, swap, accounting,
quotas, handle-based opens, userfaultfd, NUMA policy of other processes, obsolete
calls), plus io_uring (which Docker dropped in 2023: its operations skip this filter).
Docker's profile is an allow list; this is a deny list written for this terminal, so
that the programs it runs keep every ordinary call. On top of the profile, calls that
only a root-started child could abuse or that Landlock does not cover:

* changing modes, owners, times, extended attributes, truncating (Landlock handles
  writes and truncation by path, not these inode changes);
* sockets of any family (no network, no unix socket to a host service);
* the scheduler, priority and resource limits of any process (`renice`, `taskset`,
  `prlimit --pid`): `prlimit64` passes only when it reads the caller's own limits,
  which is how glibc's `getrlimit` works;
* `sethostname`, `setdomainname`, `syslog` (the kernel log, `dmesg`), `vhangup`;
* the ioctls that set inode flags and project attributes (`chattr +i/+a`) and push
  bytes into a terminal's input (TIOCSTI, TIOCLINUX);
* `clone` with a namespace flag, and `clone3` answered with ENOSYS (its flags sit in
  memory a filter cannot read; glibc then falls back to `clone`), as Docker does.

Numbers are the kernel's stable ABI for each architecture (the tests check them
against the installed kernel headers).
"""

from __future__ import annotations

import ctypes
import os
import struct

__all__ = ["AUDIT_ARCH", "DENIED", "IOCTLS_DENIED", "NUMBERS", "filter_program", "install"]

# The calls refused outright, by reason.
DENIED: tuple[str, ...] = (
    # inode changes Landlock does not cover, truncation
    *("truncate", "ftruncate", "chmod", "fchmod", "fchmodat", "fchmodat2", "chown"),
    *("fchown", "lchown", "fchownat", "utime", "utimes", "futimesat", "utimensat"),
    *("setxattr", "lsetxattr", "fsetxattr", "setxattrat", "removexattr", "lremovexattr"),
    *("fremovexattr", "removexattrat"),
    # the network and host services
    *("socket", "socketpair"),
    # io_uring: its submissions are not system calls, so nothing here would see them
    *("io_uring_setup", "io_uring_enter", "io_uring_register"),
    # other processes: tracing, their memory, their scheduling and limits
    *("ptrace", "process_vm_readv", "process_vm_writev", "kcmp"),
    *("sched_setaffinity", "sched_setparam", "sched_setscheduler", "sched_setattr"),
    *("setpriority", "ioprio_set", "setrlimit", "migrate_pages", "move_pages"),
    *("mbind", "set_mempolicy"),
    # the kernel: programs, keys, logs, modules, time, swap, accounting
    *("bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key"),
    *("syslog", "init_module", "finit_module", "delete_module", "create_module"),
    *("get_kernel_syms", "query_module", "kexec_load", "kexec_file_load", "reboot"),
    *("settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "swapon", "swapoff"),
    *("acct", "sethostname", "setdomainname", "vhangup", "iopl", "ioperm"),
    *("lookup_dcookie", "nfsservctl", "quotactl", "quotactl_fd", "uselib", "ustat"),
    *("sysfs", "_sysctl", "name_to_handle_at", "open_by_handle_at"),
    # mounts and namespaces (the sandbox is set up before the filter is installed)
    *("mount", "umount2", "pivot_root", "unshare", "setns", "fsopen", "fsconfig"),
    *("fsmount", "fspick", "move_mount", "open_tree", "mount_setattr", "open_tree_attr"),
)

# ioctl requests refused whatever the descriptor (generic encoding: same on both).
IOCTLS_DENIED: dict[str, int] = {
    "FS_IOC_SETFLAGS": 0x40086602,  # chattr +i / +a (64-bit `long` argument)
    "FS_IOC32_SETFLAGS": 0x40046602,
    "FS_IOC_FSSETXATTR": 0x401C5820,  # project id and the same flags, XFS style
    "FS_IOC_SETVERSION": 0x40087602,
    "TIOCSTI": 0x5412,  # type into a terminal's input queue
    "TIOCLINUX": 0x541C,
}
_CLONE_NAMESPACES = 0x7E020000  # NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
# Calls added since 2019 have one number on every architecture.
_COMMON = {
    "fchmodat2": 452,
    "setxattrat": 463,
    "removexattrat": 466,
    "open_tree_attr": 467,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "clone3": 435,
    "mount_setattr": 442,
    "quotactl_fd": 443,
}


def _table(text: str) -> dict[str, int]:
    """Read `name number` pairs separated by white space."""
    words = text.split()
    return {name: int(number) for name, number in zip(words[::2], words[1::2], strict=True)}


# x86_64 from arch/x86/entry/syscalls/syscall_64.tbl; aarch64 from the generic table
# (include/uapi/asm-generic/unistd.h), which has no legacy calls (chmod, utime, ...).
_X86_64 = {
    **_table(
        """
    truncate 76 ftruncate 77 chmod 90 fchmod 91 chown 92 fchown 93 lchown 94
    utime 132 utimes 235 futimesat 261 fchownat 260 fchmodat 268 utimensat 280
    setxattr 188 lsetxattr 189 fsetxattr 190 removexattr 197 lremovexattr 198
    fremovexattr 199 socket 41 socketpair 53 ptrace 101 process_vm_readv 310
    process_vm_writev 311 kcmp 312 sched_setaffinity 203 sched_setparam 142
    sched_setscheduler 144 sched_setattr 314 setpriority 141 ioprio_set 251
    setrlimit 160 migrate_pages 256 move_pages 279 mbind 237 set_mempolicy 238
    bpf 321 perf_event_open 298 userfaultfd 323 keyctl 250 add_key 248
    request_key 249 syslog 103 init_module 175 finit_module 313 delete_module 176
    create_module 174 get_kernel_syms 177 query_module 178 kexec_load 246
    kexec_file_load 320 reboot 169 settimeofday 164 clock_settime 227
    clock_adjtime 305 adjtimex 159 swapon 167 swapoff 168 acct 163 sethostname 170
    setdomainname 171 vhangup 153 iopl 172 ioperm 173 lookup_dcookie 212
    nfsservctl 180 quotactl 179 uselib 134 ustat 136 sysfs 139 _sysctl 156
    name_to_handle_at 303 open_by_handle_at 304 mount 165 umount2 166 pivot_root 155
    unshare 272 setns 308 ioctl 16 prlimit64 302 clone 56
        """
    ),
    **_COMMON,
}
_AARCH64 = {
    **_table(
        """
    truncate 45 ftruncate 46 fchmod 52 fchown 55 fchownat 54 fchmodat 53
    utimensat 88 setxattr 5 lsetxattr 6 fsetxattr 7 removexattr 14 lremovexattr 15
    fremovexattr 16 socket 198 socketpair 199 ptrace 117 process_vm_readv 270
    process_vm_writev 271 kcmp 272 sched_setaffinity 122 sched_setparam 118
    sched_setscheduler 119 sched_setattr 274 setpriority 140 ioprio_set 30
    setrlimit 164 migrate_pages 238 move_pages 239 mbind 235 set_mempolicy 237
    bpf 280 perf_event_open 241 userfaultfd 282 keyctl 219 add_key 217
    request_key 218 syslog 116 init_module 105 finit_module 273 delete_module 106
    kexec_load 104 kexec_file_load 294 reboot 142 settimeofday 170 clock_settime 112
    clock_adjtime 266 adjtimex 171 swapon 224 swapoff 225 acct 89 sethostname 161
    setdomainname 162 vhangup 58 lookup_dcookie 18 nfsservctl 42 quotactl 60
    name_to_handle_at 264 open_by_handle_at 265 mount 40 umount2 39 pivot_root 41
    unshare 97 setns 268 ioctl 29 prlimit64 261 clone 220
        """
    ),
    **_COMMON,
}
NUMBERS: dict[str, dict[str, int]] = {"x86_64": _X86_64, "aarch64": _AARCH64}

_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_EPERM, _ENOSYS = 1, 38
_LD_W_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_NR, _ARCH = 0, 4


# (code, jump if true, jump if false, constant); a jump is 0 or a label.
_Op = tuple[int, "int | str", "int | str", int]


def _arg(index: int, high: bool = False) -> int:
    """Offset of argument `index`'s low (or high) 32 bits in `seccomp_data` (little-endian)."""
    return 16 + 8 * index + (4 if high else 0)


def filter_program(machine: str) -> list[tuple[int, int, int, int]] | None:
    """The BPF program for `machine` as (code, jt, jf, k) tuples; None if unsupported.

    A tiny assembler: jump targets are labels, resolved to the 8-bit offsets BPF wants.
    """
    table = NUMBERS.get(machine)
    if table is None:
        return None
    deny = "deny"
    prog: list[_Op | str] = [
        (_LD_W_ABS, 0, 0, _ARCH),
        (_JEQ, 0, deny, AUDIT_ARCH[machine]),  # i386 or x32 numbers mean other calls
        (_LD_W_ABS, 0, 0, _NR),
        (_JGE, deny, 0, 0x40000000),  # the x32 ABI on x86_64
    ]
    for name in DENIED:
        if name in table:
            prog.append((_JEQ, deny, 0, table[name]))
    prog += [
        (_JEQ, "ioctl", 0, table["ioctl"]),
        (_JEQ, "prlimit", 0, table["prlimit64"]),
        (_JEQ, "clone", 0, table["clone"]),
        (_JEQ, "nosys", 0, table["clone3"]),
        (_RET, 0, 0, _ALLOW),
        "ioctl",
        (_LD_W_ABS, 0, 0, _arg(1)),  # the request is an unsigned int: its low half
        *[(_JEQ, deny, 0, request) for request in IOCTLS_DENIED.values()],
        (_RET, 0, 0, _ALLOW),
        "prlimit",  # prlimit64(0, resource, NULL, old): reading one's own limits
        (_LD_W_ABS, 0, 0, _arg(0)),
        (_JEQ, 0, deny, 0),
        (_LD_W_ABS, 0, 0, _arg(2)),
        (_JEQ, 0, deny, 0),
        (_LD_W_ABS, 0, 0, _arg(2, high=True)),
        (_JEQ, 0, deny, 0),
        (_RET, 0, 0, _ALLOW),
        "clone",
        (_LD_W_ABS, 0, 0, _arg(0)),
        (_JSET, deny, 0, _CLONE_NAMESPACES),
        (_RET, 0, 0, _ALLOW),
        "nosys",
        (_RET, 0, 0, _ERRNO | _ENOSYS),
        deny,
        (_RET, 0, 0, _ERRNO | _EPERM),
    ]
    return _assemble(prog)


def _assemble(prog: list[_Op | str]) -> list[tuple[int, int, int, int]]:
    """Resolve label jumps (a 0 is "next instruction") to relative offsets."""
    labels: dict[str, int] = {}
    count = 0
    for item in prog:
        if isinstance(item, str):
            labels[item] = count
        else:
            count += 1
    out: list[tuple[int, int, int, int]] = []
    for item in prog:
        if isinstance(item, str):
            continue
        code, jt, jf, k = item
        here = len(out)
        offsets = [labels[j] - here - 1 if isinstance(j, str) else 0 for j in (jt, jf)]
        if not all(0 <= o <= 255 for o in offsets):
            raise ValueError("seccomp program too long for 8-bit jumps")
        out.append((code, offsets[0], offsets[1], k))
    return out


def install(libc: ctypes.CDLL) -> bool:
    """Install the filter on the calling thread (no_new_privs must be set); False if no table.

    Raises:
        OSError: If the kernel refuses the filter.
    """
    program = filter_program(os.uname().machine)
    if program is None:
        return False
    code = b"".join(struct.pack("=HBBI", c, jt, jf, k) for c, jt, jf, k in program)
    buffer = ctypes.create_string_buffer(code, len(code))

    class _Prog(ctypes.Structure):
        _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))

    fprog = _Prog(len(program), ctypes.addressof(buffer))
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"seccomp: {os.strerror(errno)}")
    return True
