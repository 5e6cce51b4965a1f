"""The builder's summarizer call, falling back to trimming when it fails (private to `context`).

A summary is an improvement over cutting the packets that did not fit, never a
requirement: a summarizer that raises (a provider outage, a refusal, a timeout) must
not stop the run. The build then trims as it would without a summarizer, and says so
in the log.
"""

from __future__ import annotations

import logging
from typing import Any

from langgraph.errors import GraphBubbleUp

from langgraph_context.context.compress import asummarize_lines, summarize_lines

__all__ = ["asummary_or_trim", "summary_or_trim"]

logger = logging.getLogger(__name__)


def _warn(exc: Exception) -> str:
    logger.warning("context summarizer failed; the left-out packets are trimmed instead: %r", exc)
    return ""


def summary_or_trim(lines: list[str], **kwargs: Any) -> str:
    """`summarize_lines`, or "" (trim instead) when the summarizer raises."""
    try:
        return summarize_lines(lines, **kwargs)
    except GraphBubbleUp:  # an interrupt or a parent command is control flow
        raise
    except Exception as exc:
        return _warn(exc)


async def asummary_or_trim(lines: list[str], **kwargs: Any) -> str:
    """Async twin of `summary_or_trim`."""
    try:
        return await asummarize_lines(lines, **kwargs)
    except GraphBubbleUp:
        raise
    except Exception as exc:
        return _warn(exc)
