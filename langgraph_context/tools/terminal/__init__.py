"""A read-only terminal confined to a workspace, for agents."""

from langgraph_context.tools.terminal.tool import (
    Enforcement,
    KernelSandboxUnavailableError,
    Terminal,
    TerminalResult,
    TerminalStateMixin,
    create_terminal_tool,
    keep_latest_cwd,
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
