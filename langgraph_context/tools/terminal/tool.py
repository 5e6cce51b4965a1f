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
   inside the workspace; `cd` is confined the same way and kept in the thread's
   checkpointed state (`TerminalStateMixin`), so it survives a worker change.
4. Every process starts in its own user and PID namespace (bubblewrap when the host
   has it, else the standard-library launcher), with no capabilities at all even when
   the server runs as root, and everything it started dies with it. Through the
   `_landlock` launcher, on Linux with Landlock it can read only the workspace and
   the system directories, write nothing anywhere, open no socket, and a seccomp
   filter refuses what Landlock does not cover (`enforcement == "landlock"`);
   everywhere it gets a scrubbed environment, `no_new_privs`, CPU/memory/file-size/
   process limits, no inherited descriptors and stdin closed.
5. Output (stdout then stderr) is decoded as UTF-8 as it streams and capped in
   characters; the command is stopped once the cap is reached, and a marker says so.
   Exit codes are reported.

Refusals come back to the model as error tool messages saying why and what is allowed.
Names that are not UTF-8 are shown escaped, as `ls -b` shows them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Annotated, Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId
from langgraph.prebuilt import ToolRuntime
from langgraph.types import Command

from langgraph_context.toolkit import ToolSpec

# Constants of a private module, importable from here (not in `__all__`).
from langgraph_context.tools.terminal._binaries import (
    SANDBOX_PATH as SANDBOX_PATH,  # noqa: PLC0414 (re-export)
)
from langgraph_context.tools.terminal._binaries import (
    SUPPORTED_COMMANDS as SUPPORTED_COMMANDS,  # noqa: PLC0414 (re-export)
)
from langgraph_context.tools.terminal._process import (
    Enforcement,
    KernelSandboxUnavailableError,
    LauncherChoice,
)
from langgraph_context.tools.terminal._result import TerminalResult
from langgraph_context.tools.terminal._state import (
    TERMINAL_CWD_KEY,
    TerminalStateMixin,
    keep_latest_cwd,
)
from langgraph_context.tools.terminal._terminal import (
    DEFAULT_MAX_OUTPUT_CHARS,
    DEFAULT_MEMORY_LIMIT,
    DEFAULT_TIMEOUT,
    Terminal,
)

__all__ = [
    "Enforcement",
    "KernelSandboxUnavailableError",
    "Terminal",
    "TerminalResult",
    "TerminalStateMixin",
    "create_terminal_tool",
    "keep_latest_cwd",
]

DEFAULT_TERMINAL_NAME = "terminal"
DEFAULT_TERMINAL_DESCRIPTION = (
    "Run one read-only command in the project workspace to explore files: ls, tree, cat, "
    "head, tail, wc, grep, find, sort, uniq, cut, awk, sed, file, stat, du, pwd, cd, echo "
    "and similar. Pipes between these commands work (grep -rn TODO . | head -20); "
    "chaining (;, &&), redirection, $(...) and writing files do not. Paths must stay "
    "inside the workspace."
)

_TERMINAL = ToolSpec(DEFAULT_TERMINAL_NAME, DEFAULT_TERMINAL_DESCRIPTION)
_NO_STATE_KEY = (
    "Refused: cd cannot be kept here: this graph's state has no {key!r} key, so the "
    "directory would be lost after this call (the developer can add TerminalStateMixin "
    "from langgraph_context.tools.terminal to the state schema). Use paths from the "
    "workspace root instead, e.g. `ls src/pkg`."
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
    launcher: LauncherChoice = "auto",
    name: str | None = None,
    description: str | None = None,
    messages_key: str | None = None,
) -> BaseTool:
    """Create the sandboxed read-only terminal tool.

    In a graph the working directory is the thread's `terminal_cwd` state key (add
    `TerminalStateMixin` to the state schema): it is checkpointed with the thread, so
    a `cd` survives a worker change or a restart. LangGraph drops update keys a state
    schema does not declare without a word (`_get_updates` in `langgraph.graph.state`
    keeps only the schema's keys), so on a graph without that key every command runs
    from the workspace and a `cd` comes back as an error message saying why and what
    to do, never as a success that the next call forgets. Called directly, outside a
    graph, the terminal remembers the directory in this process.

    Args:
        workspace: The directory commands are confined to.
        timeout: Seconds before a command and everything it started are killed.
        max_output_chars: Cap on output characters per command (a marker says when cut).
        allow_cd: Whether `cd` may change the current directory.
        allowed_commands: Commands to allow (default: all of `SUPPORTED_COMMANDS` that
            are installed).
        memory_limit: Address-space limit of each command, in bytes.
        require_kernel_sandbox: Raise `KernelSandboxUnavailableError` instead of
            falling back to the policy checks alone when the kernel has no Landlock.
        launcher: `"auto"`, `"bubblewrap"` or `"stdlib"` (see `Terminal`).
        name: Tool name (default `terminal`).
        description: Tool description.
        messages_key: State key of the messages (default `messages`).

    Returns:
        A tool taking `command`; refusals and timeouts come back as error tool messages.

    Raises:
        ValueError: On a bad workspace, limit, command list, launcher, name or
            description.

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
        launcher=launcher,
    )
    spec = _TERMINAL.customize(name=name, description=description)
    key = messages_key or "messages"

    def run_terminal(
        command: str,
        tool_call_id: Annotated[str, InjectedToolCallId],
        runtime: ToolRuntime = None,  # type: ignore[assignment]  # None: called directly
    ) -> ToolMessage | Command[Any]:
        """Run a read-only command."""
        if runtime is None:
            return _message(terminal, terminal.run(command), tool_call_id)
        before = _state_cwd(runtime.state)
        thread = (runtime.config.get("configurable") or {}).get("thread_id")
        session = None if thread is None else str(thread)
        result = terminal.run(command, session=session, cwd=before or "")
        if before is None and result.relative_cwd:
            text = _NO_STATE_KEY.format(key=TERMINAL_CWD_KEY)
            return ToolMessage(text, tool_call_id=tool_call_id, status="error")
        message = _message(terminal, result, tool_call_id)
        if before is None or result.relative_cwd == before:
            return message
        return Command(update={TERMINAL_CWD_KEY: result.relative_cwd, key: [message]})

    tool = spec.build(run_terminal)
    tool.metadata = {"terminal": terminal}
    return tool


def _state_cwd(state: object) -> str | None:
    """The thread's working directory from the injected state; None when undeclared."""
    if isinstance(state, Mapping):
        if TERMINAL_CWD_KEY not in state:
            return None
        found = state[TERMINAL_CWD_KEY]
    elif hasattr(state, TERMINAL_CWD_KEY):
        found = getattr(state, TERMINAL_CWD_KEY)
    else:
        return None
    return found if isinstance(found, str) else ""


def _message(terminal: Terminal, result: TerminalResult, tool_call_id: str) -> ToolMessage:
    failed = result.refused is not None or result.timed_out
    text = result.render()
    if result.refused is not None and "Allowed:" not in text:
        text += f"\nAllowed commands: {', '.join(sorted(terminal.allowed))}."
    # Whatever slipped through unescaped, no lone surrogate reaches a message.
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return ToolMessage(
        text,
        tool_call_id=tool_call_id,
        status="error" if failed else "success",
        artifact=_artifact(result),
    )


def _artifact(result: TerminalResult) -> dict[str, Any]:
    return {
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "truncated": result.truncated,
        "refused": result.refused,
        "cwd": result.cwd,
        "relative_cwd": result.relative_cwd,
    }
