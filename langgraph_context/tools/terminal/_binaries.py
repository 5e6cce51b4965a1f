"""What this host provides the terminal: the allowed binaries and how awk can run."""

from __future__ import annotations

import shutil
from collections.abc import Iterable

from langgraph_context.errors import InvalidArgumentError
from langgraph_context.tools.terminal._policies import BUILTINS, POLICIES
from langgraph_context.tools.terminal._process import Enforcement
from langgraph_context.tools.terminal._sandbox import AwkMode

__all__ = ["SANDBOX_PATH", "SUPPORTED_COMMANDS", "awk_mode", "find_binaries"]

SANDBOX_PATH = "/usr/bin:/bin"
SUPPORTED_COMMANDS: frozenset[str] = frozenset(POLICIES) | BUILTINS


def find_binaries(allowed_commands: Iterable[str] | None) -> dict[str, str]:
    """Map each allowed external command to its binary in `SANDBOX_PATH`."""
    binaries: dict[str, str] = {}
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
        binaries[name] = binary
    return binaries


def awk_mode(enforcement: Enforcement, binaries: dict[str, str]) -> AwkMode:
    """Pick how awk runs: as is under Landlock, else `gawk --sandbox`, else refused."""
    if enforcement == "landlock" or "awk" not in binaries:
        return "kernel"
    gawk = shutil.which("gawk", path=SANDBOX_PATH)
    if gawk is None:
        return "refused"
    binaries["awk"] = gawk
    return "gawk-sandbox"
