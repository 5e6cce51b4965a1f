"""`ContextResult`: a built context with the statistics of how it was made."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langgraph_context.context.gather import SourceFailure
from langgraph_context.context.select import Drop
from langgraph_context.packet import ContextPacket
from langgraph_context.safety.sanitize import InjectionFinding

__all__ = ["ContextResult"]


@dataclass(frozen=True)
class ContextResult:
    """A built context and how it was made.

    Attributes:
        text: The assembled context, at most `max_tokens` tokens.
        tokens: Its token count by the builder's counter.
        max_tokens: The ceiling it was built for.
        section_tokens: Tokens of each non-empty section (header included).
        selected: Packets that made it into the text, in gather order.
        dropped: Packets left out, with the reason.
        failures: Sources that raised and were skipped.
        gathered: How many packets were gathered.
        truncated: Whether even the protected sections had to be cut.
        findings: What the injection detector found in untrusted packets shown
            unchanged inside the fence: `(packet source or type, finding)` pairs.
        elapsed_ms: Build time.
    """

    text: str
    tokens: int
    max_tokens: int
    section_tokens: Mapping[str, int]
    selected: tuple[ContextPacket, ...]
    dropped: tuple[Drop, ...] = field(default_factory=tuple)
    failures: tuple[SourceFailure, ...] = field(default_factory=tuple)
    gathered: int = 0
    truncated: bool = False
    findings: tuple[tuple[str, InjectionFinding], ...] = field(default_factory=tuple)
    elapsed_ms: float = 0.0

    @property
    def budget_use(self) -> float:
        """Share of `max_tokens` used, in [0, 1]."""
        return self.tokens / self.max_tokens

    @property
    def stats(self) -> dict[str, Any]:
        """A JSON-ready summary: counts, drops by reason, tokens per section."""
        return {
            "gathered": self.gathered,
            "selected": len(self.selected),
            "dropped": dict(Counter(d.reason for d in self.dropped)),
            "failed_sources": [f.source for f in self.failures],
            "section_tokens": dict(self.section_tokens),
            "tokens": self.tokens,
            "max_tokens": self.max_tokens,
            "budget_use": round(self.budget_use, 4),
            "truncated": self.truncated,
            "findings": sorted({f"{name}: {f.kind}" for name, f in self.findings}),
            "elapsed_ms": round(self.elapsed_ms, 3),
        }
