"""The command line's error type: one clear line on stderr and a non-zero exit."""

from __future__ import annotations

from langgraph_context.errors import LangGraphContextError


class CLIError(LangGraphContextError):
    """A user-facing failure of a command (bad input, unreadable file, unreachable model).

    Attributes:
        exit_code: The process exit code to return (default 1).
    """

    def __init__(self, message: str, *, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code
