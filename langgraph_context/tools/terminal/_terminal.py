"""The `Terminal` class: vet a command line, run it sandboxed, report what it did.

Concurrency: each session (a LangGraph thread) has its own lock, so one thread runs
one command at a time (the per-thread limit) while different threads run at once.
The working directory of a call is an argument (`cwd=`, as the tool reads it from the
thread's state) or, for direct callers, remembered per session in this process.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path

from langgraph_context.errors import InvalidArgumentError
from langgraph_context.toolkit import check_workspace
from langgraph_context.tools.terminal._binaries import (
    SANDBOX_PATH,
    awk_mode,
    find_binaries,
)
from langgraph_context.tools.terminal._names import escape_name, unescape_name
from langgraph_context.tools.terminal._policies import BUILTINS
from langgraph_context.tools.terminal._process import (
    Launch,
    LauncherChoice,
    await_sandboxes,
    collect_output,
    feed_stdin,
    resolve_enforcement,
    resolve_launcher,
    start_pipeline,
    stop_pipeline,
)
from langgraph_context.tools.terminal._result import TerminalResult
from langgraph_context.tools.terminal._sandbox import (
    CommandRefused,
    Stage,
    confine,
    plan_command,
)
from langgraph_context.tools.terminal._tree import render_tree

__all__ = [
    "DEFAULT_MAX_OUTPUT_CHARS",
    "DEFAULT_MEMORY_LIMIT",
    "DEFAULT_TIMEOUT",
    "MAX_SESSIONS",
    "Terminal",
]

DEFAULT_MEMORY_LIMIT = 512 * 1024 * 1024
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_OUTPUT_CHARS = 20_000
MAX_COMMAND_CHARS = 100_000
MAX_SESSIONS = 10_000
_TRUNCATION_MARKER = "\n[output truncated at {cap} characters; narrow the command (head, grep -m)]"
_KILL_GRACE = 2.0
_LAUNCHERS = ("auto", "bubblewrap", "stdlib")


class _SessionLock:
    """One session's lock (a plain object so the lock table can hold it weakly)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()


class Terminal:
    r"""A sandboxed read-only terminal over one workspace.

    Args:
        workspace: The directory the terminal is confined to (must exist).
        timeout: Seconds a call may take, parsing and globbing included, before its
            processes are killed.
        max_output_chars: Cap on output characters (stdout + stderr) returned per
            command.
        allow_cd: Whether `cd` may change the current directory.
        allowed_commands: Commands to allow (default: all supported and installed).
        memory_limit: Address-space limit of each command, in bytes.
        require_kernel_sandbox: Refuse to start without Landlock.
        launcher: `"auto"` (bubblewrap when it works on this host, else the
            standard-library launcher), `"bubblewrap"` or `"stdlib"`.

    Attributes:
        enforcement: `"landlock"` when the kernel confines every command too,
            `"policy-only"` when only the command checks do.
        launcher: The launcher in use, `"bubblewrap"` or `"stdlib"`.
        containment: `"pid-namespace"` when every command runs in its own PID
            namespace (nothing it starts outlives it), `"process-tree"` when the host
            forbids namespaces and the launcher kills the command's process tree,
            `"process-group"` off Linux (the group is killed on timeout or cap).

    Raises:
        ValueError: If the workspace is not a directory, a limit is not positive, a
            command is unsupported or not installed, or the launcher is unknown.
        KernelSandboxUnavailableError: If `require_kernel_sandbox` and no Landlock,
            or `launcher="bubblewrap"` and bubblewrap cannot run here.

    Example:
        >>> import tempfile, pathlib
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (root / "a.txt").write_text("hello\n")
        >>> Terminal(root).run("cat a.txt").output
        'hello\n'
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str],
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
        allow_cd: bool = True,
        allowed_commands: Iterable[str] | None = None,
        memory_limit: int = DEFAULT_MEMORY_LIMIT,
        require_kernel_sandbox: bool = False,
        launcher: LauncherChoice = "auto",
    ) -> None:
        check_workspace(workspace)
        root = Path(workspace).expanduser()
        if not root.is_dir():
            msg = f"workspace must be an existing directory, got {str(workspace)!r}"
            raise InvalidArgumentError(msg)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            msg = f"timeout must be a positive number of seconds, got {timeout!r}"
            raise InvalidArgumentError(msg)
        for label, value in (
            ("max_output_chars", max_output_chars),
            ("memory_limit", memory_limit),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                msg = f"{label} must be a positive integer, got {value!r}"
                raise InvalidArgumentError(msg)
        if launcher not in _LAUNCHERS:
            msg = f"launcher must be one of {', '.join(_LAUNCHERS)}, got {launcher!r}"
            raise InvalidArgumentError(msg)
        self.enforcement, self._abi = resolve_enforcement(require_kernel_sandbox)
        self.launcher, self.containment = resolve_launcher(launcher)
        self.root = Path(os.path.realpath(root))
        self.timeout = float(timeout)
        self.max_output_chars = max_output_chars
        self.memory_limit = memory_limit
        self.allow_cd = allow_cd
        self._binaries = find_binaries(allowed_commands)
        names = set(self._binaries) | (
            BUILTINS if allowed_commands is None else BUILTINS & set(allowed_commands)
        )
        if not allow_cd:
            names.discard("cd")
        self.allowed: frozenset[str] = frozenset(names)
        self._awk_mode = awk_mode(self.enforcement, self._binaries)
        # Direct callers' directories, one per session, most recent last.
        self._cwds: OrderedDict[str | None, Path] = OrderedDict()
        # One lock per session, alive while a call holds it or waits for it.
        self._locks: weakref.WeakValueDictionary[str | None, _SessionLock] = (
            weakref.WeakValueDictionary()
        )
        self._table_lock = threading.Lock()
        # The workspace as opened now: the kernel rule and the per-call check use this
        # directory, whatever its name points at later.
        self._root_fd = os.open(self.root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        weakref.finalize(self, os.close, self._root_fd)
        self._root_id = _identity(os.stat(self._root_fd))
        # Test hook: True hands the raw line to `sh -c` inside the kernel sandbox,
        # skipping every policy check, to show what the kernel layer alone stops.
        self._bypass_policy = False

    @property
    def env(self) -> dict[str, str]:
        """The whole environment commands see: nothing is inherited from the parent."""
        return {
            "PATH": SANDBOX_PATH,
            "HOME": str(self.root),
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "TERM": "dumb",
            "TZ": "UTC",
            # Not a directory and cannot become one: a command that wants a temporary
            # file (tac on a pipe, sort spilling to disk) fails instead of writing.
            "TMPDIR": "/dev/null/no-temporary-files",
        }

    @property
    def cwd(self) -> Path:
        """The current directory of the default session (`run` without `session`)."""
        return self.cwd_of(None)

    def cwd_of(self, session: str | None) -> Path:
        """The current directory `session` last reached through `run` without `cwd`."""
        with self._table_lock:
            return self._cwds.get(session, self.root)

    def run(
        self, command: str, *, session: str | None = None, cwd: str | None = None
    ) -> TerminalResult:
        """Vet and run one command line.

        Args:
            command: The command line.
            session: Who is calling (the tool passes the LangGraph thread): calls of
                one session run one at a time, different sessions run at once.
            cwd: Where to start, relative to the workspace and escaped as
                `TerminalResult.relative_cwd` is (`""`: the workspace). None: the
                directory this session last reached here (kept in this process).

        Returns:
            The result (refusals included; this never raises for the model's input).
        """
        with self._table_lock:
            holder = self._locks.get(session)
            if holder is None:
                holder = self._locks[session] = _SessionLock()
            start = self._cwds.get(session, self.root) if cwd is None else None
        with holder.lock:
            result = self._run(command, start, cwd)
        if cwd is None:
            with self._table_lock:
                self._cwds[session] = self._from_relative(result.relative_cwd)
                self._cwds.move_to_end(session)
                while len(self._cwds) > MAX_SESSIONS:
                    self._cwds.popitem(last=False)
        return result

    def _from_relative(self, relative: str) -> Path:
        return self.root / unescape_name(relative) if relative else self.root

    def _run(self, command: str, start: Path | None, relative: str | None) -> TerminalResult:
        """Run `command` from `start` (or the escaped workspace-relative `relative`)."""
        deadline = time.monotonic() + self.timeout
        cwd = self.root
        try:
            if not isinstance(command, str):
                raise CommandRefused("the command must be a string")
            _check_text(command)
            cwd = self._recheck_directories(start, relative)
            if self._bypass_policy:
                argv = ["/bin/sh", "-c", command]
                return self._execute(command, [Stage("sh", tuple(argv))], cwd, deadline)
            stages = plan_command(
                command,
                cwd=cwd,
                root=self.root,
                allowed=self.allowed,
                deadline=deadline,
                awk_mode=self._awk_mode,
            )
            if stages[0].name == "cd":
                cwd = self._cd(stages[0].args, cwd)
                return self._result(command, f"{escape_name(str(cwd))}\n", 0, cwd)
            return self._execute(command, stages, cwd, deadline)
        except CommandRefused as refusal:
            return self._result(command, "", None, cwd, refused=str(refusal))

    def _result(
        self,
        command: str,
        output: str,
        code: int | None,
        cwd: Path,
        *,
        refused: str | None = None,
        timed_out: bool = False,
        truncated: bool = False,
    ) -> TerminalResult:
        relative = "" if cwd == self.root else escape_name(str(cwd.relative_to(self.root)))
        return TerminalResult(
            command,
            output,
            code,
            refused=refused,
            timed_out=timed_out,
            truncated=truncated,
            cwd=escape_name(str(cwd)),
            relative_cwd=relative,
        )

    def _recheck_directories(self, start: Path | None, relative: str | None) -> Path:
        """Re-resolve the workspace and the starting directory: either may have changed."""
        try:
            root_now = Path(os.path.realpath(self.root))
            same_root = root_now == self.root and _identity(os.stat(root_now)) == self._root_id
        except OSError:
            same_root = False
        if not same_root:
            raise CommandRefused("the workspace directory was moved or replaced; recreate the tool")
        try:
            if start is None:
                start = self._from_relative(relative or "")
            cwd = confine(str(start), self.root, self.root)
            if not cwd.is_dir():
                raise CommandRefused("not a directory")
        except (CommandRefused, ValueError):
            msg = "the current directory left the workspace or was removed; back at the root"
            raise CommandRefused(msg) from None
        return cwd

    # -- builtins -------------------------------------------------------------------------
    def _cd(self, args: tuple[str, ...], cwd: Path) -> Path:
        if len(args) > 1:
            raise CommandRefused("cd takes one directory")
        target = confine(args[0], cwd, self.root) if args else self.root
        if not target.is_dir():
            raise CommandRefused(f"cd: {args[0]!r} is not a directory in the workspace")
        return target

    def _builtin_output(self, stage: Stage, cwd: Path, deadline: float) -> bytes:
        if stage.name == "pwd":
            if stage.args:
                raise CommandRefused("pwd takes no arguments")
            return f"{escape_name(str(cwd))}\n".encode()
        limit = self.max_output_chars * 4
        return render_tree(stage.args, cwd, self.root, limit, deadline).encode()

    # -- processes --------------------------------------------------------------------------
    def _execute(
        self, command: str, stages: list[Stage], cwd: Path, deadline: float
    ) -> TerminalResult:
        feed: bytes | None = None
        if stages[0].builtin:
            feed = self._builtin_output(stages[0], cwd, deadline)
            stages = stages[1:]
            if not stages:
                text = feed.decode("utf-8", errors="replace")
                return self._finish(command, text, "", 0, cwd, timed_out=False)
        argvs = [[self._binaries.get(s.name, s.name), *s.args] for s in stages]
        if self._bypass_policy:
            argvs = [list(stages[0].args)]
        launch = Launch(
            env=self.env,
            abi=self._abi,
            cpu_seconds=int(self.timeout) + 1,
            memory_bytes=self.memory_limit,
            root_fd=self._root_fd,
            launcher=self.launcher,
            containment=self.containment,
        )
        err_read, err_write = os.pipe()
        try:
            procs = start_pipeline(
                argvs, cwd=cwd, launch=launch, stdin_pipe=feed is not None, err_write=err_write
            )
        except (OSError, ValueError) as error:
            os.close(err_read)
            raise CommandRefused(f"could not start the command: {error}") from error
        finally:
            os.close(err_write)
        if feed is not None:
            feed_stdin(procs[0], feed)
        cap = self.max_output_chars
        try:
            out, err, truncated, timed_out = collect_output(procs[-1], err_read, cap, deadline)
            if truncated or timed_out:
                stop_pipeline(procs, _KILL_GRACE)
            for proc in procs:
                try:
                    proc.wait(timeout=_KILL_GRACE)
                except subprocess.TimeoutExpired:
                    stop_pipeline(procs, _KILL_GRACE)
        finally:
            await_sandboxes(procs)  # nothing the command started runs once the call returns
        code = procs[-1].returncode
        return self._finish(command, out, err, code, cwd, timed_out=timed_out, truncated=truncated)

    def _finish(
        self,
        command: str,
        out: str,
        err: str,
        code: int | None,
        cwd: Path,
        *,
        timed_out: bool,
        truncated: bool = False,
    ) -> TerminalResult:
        cap = self.max_output_chars
        if len(out) + len(err) > cap:
            truncated = True
            out = out[:cap]
            err = err[: max(0, cap - len(out))]
        text = out
        if err:
            text += ("" if not text or text.endswith("\n") else "\n") + "[stderr]\n" + err
        if truncated:
            text += _TRUNCATION_MARKER.format(cap=cap)
        code = None if timed_out else code
        return self._result(command, text, code, cwd, timed_out=timed_out, truncated=truncated)


def _identity(info: os.stat_result) -> tuple[int, int]:
    return info.st_dev, info.st_ino


def _check_text(command: str) -> None:
    """Refuse text that cannot become an argument: surrogates, over-long lines."""
    if len(command) > MAX_COMMAND_CHARS:
        msg = f"the command is longer than {MAX_COMMAND_CHARS} characters; shorten it"
        raise CommandRefused(msg)
    if "\x00" in command:
        raise CommandRefused("NUL bytes are not allowed")
    try:
        command.encode("utf-8")
    except UnicodeEncodeError:
        raise CommandRefused("the command is not valid Unicode text (lone surrogate)") from None
