"""A read-only, sandboxed terminal for just-in-time file exploration.

`create_terminal_tool(workspace)` gives an agent `ls`, `tree`, `cat`, `head`, `tail`,
`wc`, `grep`, `find`, `sort`, `uniq`, `cut`, `awk`, `sed`, `file`, `stat`, `du`,
`pwd`, `cd`, `echo` and a few more, confined to one directory. Layers:

1. No shell: the command line is parsed to argv vectors; `|` pipes between allowed
   commands are connected directly. Chaining, substitution, variables, redirection,
   background jobs and line breaks are refused (see `_sandbox`).
2. An allow-list of commands, each with a table of the options it accepts (no `sed -i`,
   no `find -exec/-delete/-fprint`, no `sort -o`, no file-list options, no pagers, no
   `tail -f`). awk programs run as given under Landlock (the kernel contains them);
   without it awk runs as `gawk --sandbox`, or is refused when gawk is missing.
3. Every path argument (globs expanded first) is resolved with symlinks and must be
   inside the workspace; `cd` is confined the same way and kept per LangGraph thread.
4. Every process starts through the `_landlock` launcher: on Linux with Landlock it
   can read only the workspace and the system directories, write nothing anywhere,
   open no TCP connection or socket (`enforcement == "landlock"`); everywhere it gets
   a scrubbed environment, `no_new_privs`, CPU/memory/file-size/process limits, no
   inherited descriptors, stdin closed, its own process group (killed on timeout).
5. Output (stdout then stderr) is decoded as UTF-8 as it streams and capped in
   characters; the command is stopped once the cap is reached, and a marker says so.
   Exit codes are reported.

Refusals come back to the model as error tool messages saying why and what is allowed.
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
from typing import Annotated, Any

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, InjectedToolCallId

from langgraph_context.errors import InvalidArgumentError
from langgraph_context.toolkit import ToolSpec, check_workspace
from langgraph_context.tools.terminal._binaries import (
    SANDBOX_PATH,
    SUPPORTED_COMMANDS,
    awk_mode,
    find_binaries,
)
from langgraph_context.tools.terminal._policies import BUILTINS
from langgraph_context.tools.terminal._process import (
    Enforcement,
    KernelSandboxUnavailableError,
    Launch,
    collect_output,
    feed_stdin,
    kill_group,
    resolve_enforcement,
    start_pipeline,
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
    "DEFAULT_TERMINAL_DESCRIPTION",
    "DEFAULT_TERMINAL_NAME",
    "DEFAULT_TIMEOUT",
    "SANDBOX_PATH",
    "SUPPORTED_COMMANDS",
    "Enforcement",
    "KernelSandboxUnavailableError",
    "Terminal",
    "TerminalResult",
    "create_terminal_tool",
]

DEFAULT_MEMORY_LIMIT = 512 * 1024 * 1024
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_OUTPUT_CHARS = 20_000
DEFAULT_TERMINAL_NAME = "terminal"
MAX_COMMAND_CHARS = 100_000
MAX_SESSIONS = 10_000
_TRUNCATION_MARKER = "\n[output truncated at {cap} characters; narrow the command (head, grep -m)]"
_KILL_GRACE = 2.0
DEFAULT_TERMINAL_DESCRIPTION = (
    "Run one read-only command in the project workspace to explore files: ls, tree, cat, "
    "head, tail, wc, grep, find, sort, uniq, cut, awk, sed, file, stat, du, pwd, cd, echo "
    "and similar. Pipes between these commands work (grep -rn TODO . | head -20); "
    "chaining (;, &&), redirection, $(...) and writing files do not. Paths must stay "
    "inside the workspace."
)

_TERMINAL = ToolSpec(DEFAULT_TERMINAL_NAME, DEFAULT_TERMINAL_DESCRIPTION)


class Terminal:
    r"""A sandboxed read-only terminal over one workspace; keeps its own `cd` state.

    Args:
        workspace: The directory the terminal is confined to (must exist).
        timeout: Seconds a call may take, parsing and globbing included, before its
            process group is killed.
        max_output_chars: Cap on output characters (stdout + stderr) returned per
            command.
        allow_cd: Whether `cd` may change the current directory.
        allowed_commands: Commands to allow (default: all supported and installed).
        memory_limit: Address-space limit of each command, in bytes.
        require_kernel_sandbox: Refuse to start without Landlock.

    Attributes:
        enforcement: `"landlock"` when the kernel confines every command too,
            `"policy-only"` when only the command checks do.

    Raises:
        ValueError: If the workspace is not a directory, a limit is not positive, or a
            command is unsupported or not installed.
        KernelSandboxUnavailableError: If `require_kernel_sandbox` and no Landlock.

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
        self.enforcement, self._abi = resolve_enforcement(require_kernel_sandbox)
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
        self._cwd = self.root
        # One current directory per session (a LangGraph thread), most recent last.
        self._cwds: OrderedDict[str | None, Path] = OrderedDict()
        self._lock = threading.Lock()
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
        """The current directory of `session` (the workspace until it runs `cd`)."""
        with self._lock:
            return self._cwds.get(session, self.root)

    def run(self, command: str, *, session: str | None = None) -> TerminalResult:
        """Vet and run one command line.

        Args:
            command: The command line.
            session: Whose current directory `cd` and relative paths use; the tool
                passes the LangGraph thread id, so threads never share a `cd`.

        Returns:
            The result (refusals included; this never raises for the model's input).
        """
        with self._lock:
            self._cwd = self._cwds.get(session, self.root)
            try:
                return self._run(command)
            finally:
                self._cwds[session] = self._cwd
                self._cwds.move_to_end(session)
                while len(self._cwds) > MAX_SESSIONS:
                    self._cwds.popitem(last=False)

    def _run(self, command: str) -> TerminalResult:
        """Run `command` in `self._cwd`, the lock held."""
        deadline = time.monotonic() + self.timeout
        try:
            if not isinstance(command, str):
                raise CommandRefused("the command must be a string")
            _check_text(command)
            self._recheck_directories()
            if self._bypass_policy:
                argv = ["/bin/sh", "-c", command]
                return self._execute(command, [Stage("sh", tuple(argv))], deadline)
            stages = plan_command(
                command,
                cwd=self._cwd,
                root=self.root,
                allowed=self.allowed,
                deadline=deadline,
                awk_mode=self._awk_mode,
            )
            if stages[0].name == "cd":
                return self._cd(command, stages[0].args)
            return self._execute(command, stages, deadline)
        except CommandRefused as refusal:
            return TerminalResult(command, "", None, refused=str(refusal), cwd=str(self._cwd))

    def _recheck_directories(self) -> None:
        """Re-resolve the workspace and current directory: either may have been swapped."""
        try:
            root_now = Path(os.path.realpath(self.root))
            same_root = root_now == self.root and _identity(os.stat(root_now)) == self._root_id
        except OSError:
            same_root = False
        if not same_root:
            raise CommandRefused("the workspace directory was moved or replaced; recreate the tool")
        try:
            self._cwd = confine(str(self._cwd), self.root, self.root)
            if not self._cwd.is_dir():
                raise CommandRefused("not a directory")
        except CommandRefused:
            self._cwd = self.root
            msg = "the current directory left the workspace or was removed; back at the root"
            raise CommandRefused(msg) from None

    # -- builtins -------------------------------------------------------------------------
    def _cd(self, command: str, args: tuple[str, ...]) -> TerminalResult:
        if len(args) > 1:
            raise CommandRefused("cd takes one directory")
        target = confine(args[0], self._cwd, self.root) if args else self.root
        if not target.is_dir():
            raise CommandRefused(f"cd: {args[0]!r} is not a directory in the workspace")
        self._cwd = target
        return TerminalResult(command, f"{target}\n", 0, cwd=str(target))

    def _builtin_output(self, stage: Stage, deadline: float) -> bytes:
        if stage.name == "pwd":
            if stage.args:
                raise CommandRefused("pwd takes no arguments")
            return f"{self._cwd}\n".encode()
        limit = self.max_output_chars * 4
        return render_tree(stage.args, self._cwd, self.root, limit, deadline).encode()

    # -- processes --------------------------------------------------------------------------
    def _execute(self, command: str, stages: list[Stage], deadline: float) -> TerminalResult:
        feed: bytes | None = None
        if stages[0].builtin:
            feed = self._builtin_output(stages[0], deadline)
            stages = stages[1:]
            if not stages:
                text = feed.decode("utf-8", errors="replace")
                return self._finish(command, text, "", 0, timed_out=False)
        argvs = [[self._binaries.get(s.name, s.name), *s.args] for s in stages]
        if self._bypass_policy:
            argvs = [list(stages[0].args)]
        launch = Launch(
            env=self.env,
            abi=self._abi,
            cpu_seconds=int(self.timeout) + 1,
            memory_bytes=self.memory_limit,
            root_fd=self._root_fd,
        )
        err_read, err_write = os.pipe()
        try:
            procs = start_pipeline(
                argvs,
                cwd=self._cwd,
                launch=launch,
                stdin_pipe=feed is not None,
                err_write=err_write,
            )
        except (OSError, ValueError) as error:
            os.close(err_read)
            raise CommandRefused(f"could not start the command: {error}") from error
        finally:
            os.close(err_write)
        if feed is not None:
            feed_stdin(procs[0], feed)
        cap = self.max_output_chars
        out, err, truncated, timed_out = collect_output(procs[-1], err_read, cap, deadline)
        if truncated or timed_out:
            kill_group(procs[0].pid)
        for proc in procs:
            try:
                proc.wait(timeout=_KILL_GRACE)
            except subprocess.TimeoutExpired:
                kill_group(procs[0].pid)
                proc.wait()
        code = procs[-1].returncode
        return self._finish(command, out, err, code, timed_out=timed_out, truncated=truncated)

    def _finish(
        self,
        command: str,
        out: str,
        err: str,
        code: int | None,
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
        return TerminalResult(
            command,
            text,
            None if timed_out else code,
            timed_out=timed_out,
            truncated=truncated,
            cwd=str(self._cwd),
        )


def create_terminal_tool(
    workspace: str | os.PathLike[str],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
    allow_cd: bool = True,
    allowed_commands: Iterable[str] | None = None,
    memory_limit: int = DEFAULT_MEMORY_LIMIT,
    require_kernel_sandbox: bool = False,
    name: str | None = None,
    description: str | None = None,
) -> BaseTool:
    """Create the sandboxed read-only terminal tool.

    Args:
        workspace: The directory commands are confined to.
        timeout: Seconds before a command's process group is killed.
        max_output_chars: Cap on output characters per command (a marker says when cut).
        allow_cd: Whether `cd` may change the current directory; each LangGraph thread
            (`config["configurable"]["thread_id"]`) has its own.
        allowed_commands: Commands to allow (default: all of `SUPPORTED_COMMANDS` that
            are installed).
        memory_limit: Address-space limit of each command, in bytes.
        require_kernel_sandbox: Raise `KernelSandboxUnavailableError` instead of
            falling back to the policy checks alone when the kernel has no Landlock.
        name: Tool name (default `terminal`).
        description: Tool description.

    Returns:
        A tool taking `command`; refusals and timeouts come back as error tool messages.

    Raises:
        ValueError: On a bad workspace, limit, command list, name or description.

    Example:
        >>> import tempfile
        >>> create_terminal_tool(tempfile.mkdtemp()).name
        'terminal'
    """
    terminal = Terminal(
        workspace,
        timeout=timeout,
        max_output_chars=max_output_chars,
        allow_cd=allow_cd,
        allowed_commands=allowed_commands,
        memory_limit=memory_limit,
        require_kernel_sandbox=require_kernel_sandbox,
    )
    spec = _TERMINAL.customize(name=name, description=description)

    def run_terminal(
        command: str, tool_call_id: Annotated[str, InjectedToolCallId], config: RunnableConfig
    ) -> ToolMessage:
        """Run a read-only command."""
        thread = (config.get("configurable") or {}).get("thread_id")
        result = terminal.run(command, session=None if thread is None else str(thread))
        failed = result.refused is not None or result.timed_out
        allowed = ", ".join(sorted(terminal.allowed))
        text = result.render()
        if result.refused is not None and "Allowed:" not in text:
            text += f"\nAllowed commands: {allowed}."
        return ToolMessage(
            text,
            tool_call_id=tool_call_id,
            status="error" if failed else "success",
            artifact=_artifact(result),
        )

    tool = spec.build(run_terminal)
    tool.metadata = {"terminal": terminal}
    return tool


def _artifact(result: TerminalResult) -> dict[str, Any]:
    return {
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "truncated": result.truncated,
        "refused": result.refused,
        "cwd": result.cwd,
    }


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
