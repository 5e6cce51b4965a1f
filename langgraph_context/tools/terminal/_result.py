"""What one terminal command did, and how it is shown to the model."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TerminalResult"]


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
        cwd: The current directory after the command (names escaped as `ls -b`
            shows them).
        relative_cwd: The same, relative to the workspace (`""`: the workspace);
            what the tool keeps in the thread's state.
    """

    command: str
    output: str
    exit_code: int | None
    refused: str | None = None
    timed_out: bool = False
    truncated: bool = False
    cwd: str = ""
    relative_cwd: str = ""

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
