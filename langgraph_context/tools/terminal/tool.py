"""A read-only, sandboxed terminal for just-in-time file exploration.

`create_terminal_tool(workspace)` gives an agent `ls`, `tree`, `cat`, `head`, `tail`,
`wc`, `grep`, `find`, `sort`, `uniq`, `cut`, `awk`, `sed`, `file`, `stat`, `du`,
`pwd`, `cd`, `echo` and a few more, confined to one directory. Layers:

1. No shell: the command line is parsed to argv vectors; `|` pipes between allowed
   commands are connected directly. Chaining, substitution, variables, redirection,
   background jobs and line breaks are refused (see `_sandbox`).
2. An allow-list of commands, each with an option policy (no `sed -i`, no awk
   `system`/`getline`/redirection, no `find -exec/-delete/-fprint`, no `sort -o`, no
   file-list options, no pagers, no `tail -f`).
3. Every path argument (globs expanded first) is resolved with symlinks and must be
   inside the workspace; `cd` is confined the same way and kept per tool instance.
4. The process runs with a scrubbed environment (no secrets from the parent), stdin
   closed, in its own process group, with `RLIMIT_FSIZE=0` (it cannot grow any file)
   and no core dumps; on timeout the whole group is killed.
5. Output (stdout then stderr) is decoded as UTF-8 as it streams and capped in
   characters; the command is stopped once the cap is reached, and a marker says so.
   Exit codes are reported.

Refusals come back to the model as error tool messages saying why and what is allowed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Annotated, Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId

from langgraph_context.errors import InvalidArgumentError
from langgraph_context.toolkit import ToolSpec, check_workspace
from langgraph_context.tools.terminal._policies import BUILTINS, POLICIES
from langgraph_context.tools.terminal._process import (
    collect_output,
    feed_stdin,
    kill_group,
    limit_child,
)
from langgraph_context.tools.terminal._sandbox import CommandRefused, Stage, confine, plan_command
from langgraph_context.tools.terminal._tree import render_tree

__all__ = [
    "DEFAULT_MAX_OUTPUT_CHARS",
    "DEFAULT_TERMINAL_DESCRIPTION",
    "DEFAULT_TERMINAL_NAME",
    "DEFAULT_TIMEOUT",
    "SANDBOX_PATH",
    "SUPPORTED_COMMANDS",
    "Terminal",
    "TerminalResult",
    "create_terminal_tool",
]

DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_OUTPUT_CHARS = 20_000
DEFAULT_TERMINAL_NAME = "terminal"
SANDBOX_PATH = "/usr/bin:/bin"
SUPPORTED_COMMANDS: frozenset[str] = frozenset(POLICIES) | BUILTINS
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


@dataclass(frozen=True)
class TerminalResult:
    """What one command did.

    Attributes:
        command: The command line.
        output: Stdout, then stderr under a `[stderr]` line, capped, plus markers.
        exit_code: The last stage's exit code (negative: killed by that signal);
            None when refused or for builtins that failed.
        refused: Why the command was refused, or None.
        timed_out: Whether it was killed at the timeout.
        truncated: Whether output was cut at the cap.
        cwd: The current directory after the command.
    """

    command: str
    output: str
    exit_code: int | None
    refused: str | None = None
    timed_out: bool = False
    truncated: bool = False
    cwd: str = ""

    @property
    def ok(self) -> bool:
        """Whether the command ran to completion with exit code 0."""
        return self.refused is None and not self.timed_out and self.exit_code == 0

    def render(self) -> str:
        """Return the text shown to the model."""
        if self.refused is not None:
            return f"Refused: {self.refused}"
        parts = [self.output] if self.output else []
        if self.timed_out:
            parts.append("[command killed: timeout reached]")
        elif self.exit_code not in (0, None):
            parts.append(f"[exit code {self.exit_code}]")
        return "\n".join(parts) if parts else "(no output)"


class Terminal:
    r"""A sandboxed read-only terminal over one workspace; keeps its own `cd` state.

    Args:
        workspace: The directory the terminal is confined to (must exist).
        timeout: Seconds a command may run before its process group is killed.
        max_output_chars: Cap on output characters (stdout + stderr) returned per
            command.
        allow_cd: Whether `cd` may change the current directory.
        allowed_commands: Commands to allow (default: all supported and installed).

    Raises:
        ValueError: If the workspace is not a directory, a limit is not positive, or a
            command is unsupported or not installed.

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
    ) -> None:
        check_workspace(workspace)
        root = Path(workspace).expanduser()
        if not root.is_dir():
            msg = f"workspace must be an existing directory, got {str(workspace)!r}"
            raise InvalidArgumentError(msg)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            msg = f"timeout must be a positive number of seconds, got {timeout!r}"
            raise InvalidArgumentError(msg)
        if (
            isinstance(max_output_chars, bool)
            or not isinstance(max_output_chars, int)
            or max_output_chars <= 0
        ):
            msg = f"max_output_chars must be a positive integer, got {max_output_chars!r}"
            raise InvalidArgumentError(msg)
        self.root = Path(os.path.realpath(root))
        self.timeout = float(timeout)
        self.max_output_chars = max_output_chars
        self.allow_cd = allow_cd
        self._binaries: dict[str, str] = {}
        requested = None if allowed_commands is None else list(allowed_commands)
        for name in sorted(SUPPORTED_COMMANDS) if requested is None else requested:
            if name not in SUPPORTED_COMMANDS:
                msg = (
                    f"allowed_commands: {name!r} is not supported; choose from "
                    f"{', '.join(sorted(SUPPORTED_COMMANDS))}"
                )
                raise InvalidArgumentError(msg)
            if name in BUILTINS:
                continue
            policy = POLICIES[name]
            binary = shutil.which(policy.binary or name, path=SANDBOX_PATH)
            if binary is None:
                if requested is not None:
                    msg = f"allowed_commands: {name!r} is not installed in {SANDBOX_PATH}"
                    raise InvalidArgumentError(msg)
                continue
            self._binaries[name] = binary
        names = set(self._binaries) | (BUILTINS if requested is None else BUILTINS & set(requested))
        if not allow_cd:
            names.discard("cd")
        self.allowed: frozenset[str] = frozenset(names)
        self.cwd = self.root
        self._lock = threading.Lock()

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

    def run(self, command: str) -> TerminalResult:
        """Vet and run one command line.

        Args:
            command: The command line.

        Returns:
            The result (refusals included; this never raises for the model's input).
        """
        with self._lock:
            try:
                if not isinstance(command, str):
                    raise CommandRefused("the command must be a string")
                stages = plan_command(command, cwd=self.cwd, root=self.root, allowed=self.allowed)
                if stages[0].name == "cd":
                    return self._cd(command, stages[0].args)
                return self._execute(command, stages)
            except CommandRefused as refusal:
                return TerminalResult(command, "", None, refused=str(refusal), cwd=str(self.cwd))

    # -- builtins -------------------------------------------------------------------------
    def _cd(self, command: str, args: tuple[str, ...]) -> TerminalResult:
        if len(args) > 1:
            raise CommandRefused("cd takes one directory")
        target = confine(args[0], self.cwd, self.root) if args else self.root
        if not target.is_dir():
            raise CommandRefused(f"cd: {args[0]!r} is not a directory in the workspace")
        self.cwd = target
        return TerminalResult(command, f"{target}\n", 0, cwd=str(target))

    def _builtin_output(self, stage: Stage) -> bytes:
        if stage.name == "pwd":
            if stage.args:
                raise CommandRefused("pwd takes no arguments")
            return f"{self.cwd}\n".encode()
        return render_tree(stage.args, self.cwd, self.root).encode()

    # -- processes --------------------------------------------------------------------------
    def _execute(self, command: str, stages: list[Stage]) -> TerminalResult:
        feed: bytes | None = None
        if stages[0].builtin:
            feed = self._builtin_output(stages[0])
            stages = stages[1:]
            if not stages:
                text = feed.decode("utf-8", errors="replace")
                return self._finish(command, text, "", 0, timed_out=False)
        cap = self.max_output_chars
        deadline = time.monotonic() + self.timeout
        err_read, err_write = os.pipe()
        procs: list[subprocess.Popen[bytes]] = []
        previous: IO[bytes] | int = subprocess.DEVNULL if feed is None else subprocess.PIPE
        cpu = int(self.timeout) + 1
        try:
            for stage in stages:
                proc = subprocess.Popen(
                    [self._binaries[stage.name], *stage.args],
                    stdin=previous,
                    stdout=subprocess.PIPE,
                    stderr=err_write,
                    cwd=self.cwd,
                    env=self.env,
                    close_fds=True,
                    process_group=procs[0].pid if procs else 0,
                    preexec_fn=lambda: limit_child(cpu),  # noqa: PLW1509 - only setrlimit
                )
                if procs and procs[-1].stdout is not None:
                    procs[-1].stdout.close()  # the next stage owns the read end now
                procs.append(proc)
                assert proc.stdout is not None
                previous = proc.stdout
        except OSError as error:
            if procs:
                kill_group(procs[0].pid)
            os.close(err_read)
            raise CommandRefused(f"could not start the command: {error}") from error
        finally:
            os.close(err_write)
        if feed is not None:
            feed_stdin(procs[0], feed)
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
            cwd=str(self.cwd),
        )


def create_terminal_tool(
    workspace: str | os.PathLike[str],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
    allow_cd: bool = True,
    allowed_commands: Iterable[str] | None = None,
    name: str | None = None,
    description: str | None = None,
) -> BaseTool:
    """Create the sandboxed read-only terminal tool.

    Args:
        workspace: The directory commands are confined to.
        timeout: Seconds before a command's process group is killed.
        max_output_chars: Cap on output characters per command (a marker says when cut).
        allow_cd: Whether `cd` may change the tool's current directory.
        allowed_commands: Commands to allow (default: all of `SUPPORTED_COMMANDS` that
            are installed).
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
    )
    spec = _TERMINAL.customize(name=name, description=description)

    def run_terminal(command: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> ToolMessage:
        """Run a read-only command."""
        result = terminal.run(command)
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
