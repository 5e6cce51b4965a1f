"""A read-only terminal confined to a workspace, for agents."""

from langgraph_context.tools.terminal.tool import (
    DEFAULT_MAX_OUTPUT_CHARS,
    DEFAULT_MEMORY_LIMIT,
    DEFAULT_TERMINAL_DESCRIPTION,
    DEFAULT_TERMINAL_NAME,
    DEFAULT_TIMEOUT,
    SANDBOX_PATH,
    SUPPORTED_COMMANDS,
    TERMINAL_CWD_KEY,
    Enforcement,
    KernelSandboxUnavailableError,
    Terminal,
    TerminalResult,
    TerminalStateMixin,
    create_terminal_tool,
    keep_latest_cwd,
)

__all__ = [
    "DEFAULT_MAX_OUTPUT_CHARS",
    "DEFAULT_MEMORY_LIMIT",
    "DEFAULT_TERMINAL_DESCRIPTION",
    "DEFAULT_TERMINAL_NAME",
    "DEFAULT_TIMEOUT",
    "SANDBOX_PATH",
    "SUPPORTED_COMMANDS",
    "TERMINAL_CWD_KEY",
    "Enforcement",
    "KernelSandboxUnavailableError",
    "Terminal",
    "TerminalResult",
    "TerminalStateMixin",
    "create_terminal_tool",
    "keep_latest_cwd",
]
