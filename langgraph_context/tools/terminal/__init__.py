"""A read-only terminal confined to a workspace, for agents."""

from langgraph_context.tools.terminal.tool import (
    DEFAULT_MAX_OUTPUT_CHARS,
    DEFAULT_MEMORY_LIMIT,
    DEFAULT_TERMINAL_DESCRIPTION,
    DEFAULT_TERMINAL_NAME,
    DEFAULT_TIMEOUT,
    SANDBOX_PATH,
    SUPPORTED_COMMANDS,
    Enforcement,
    KernelSandboxUnavailableError,
    Terminal,
    TerminalResult,
    create_terminal_tool,
)

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
