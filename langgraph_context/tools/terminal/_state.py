"""The terminal's state key: each thread's working directory, checkpointed with the thread.

The directory lives in the graph's state, not in the server's memory, so a thread keeps
its `cd` when its next turn runs on another worker or after a restart (the
checkpointer carries it). The value is the directory relative to the workspace,
escaped as `escape_name` does (`""` is the workspace itself), so it is plain text any
checkpointer serializes and it means the same on every worker that mounts the
workspace elsewhere.
"""

from __future__ import annotations

from typing import Annotated

from typing_extensions import TypedDict

__all__ = ["TERMINAL_CWD_KEY", "TerminalStateMixin", "keep_latest_cwd"]

TERMINAL_CWD_KEY = "terminal_cwd"


def keep_latest_cwd(left: str | None, right: str | None) -> str:
    """Reduce two writes of the working directory: the latest wins, None keeps the other.

    Example:
        >>> keep_latest_cwd("src", "src/pkg"), keep_latest_cwd("src", None)
        ('src/pkg', 'src')
    """
    if right is not None:
        return right
    return "" if left is None else left


class TerminalStateMixin(TypedDict):
    """Adds `terminal_cwd`, the terminal's working directory for this thread.

    Declared as `str`: LangGraph then starts the channel at `""` (the workspace), so
    the key is present in every state the tool sees, and its absence means the graph
    does not declare it (the tool then refuses loudly instead of losing each `cd`).
    """

    terminal_cwd: Annotated[str, keep_latest_cwd]
