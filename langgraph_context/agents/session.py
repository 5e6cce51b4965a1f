"""Session statistics of an agent thread: what it ran, wrote, found, sent and compacted.

A `session_stats` step after each model call (`SessionMiddleware` for `create_agent`
and `create_context_agent`, the maintainer has it; `create_session_stats_node` for your
own `StateGraph` with `SessionStateMixin` in the state) counts, once each:

* the tool round the model just answered: terminal commands run and notes created or
  updated (tool results without `status="error"`),
* the model call itself and the input tokens its provider reported
  (`AIMessage.usage_metadata["input_tokens"]`),
* the hot issues open now (by id), so an issue resolved later still counts as found.

`session_stats(state)` adds what the state already knows (issues still open, the
compaction count) and `session_report(state)` renders it in a few lines.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, cast

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.middleware.types import OmitFromInput
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from langgraph_context.messages import as_messages
from langgraph_context.providers.prompt_cache import (
    CACHE_USAGE_KEY,
    CacheUsage,
    Prices,
    cache_cost,
    cache_hit_rate,
    merge_cache_usage,
)
from langgraph_context.state import get_state_value

__all__ = [
    "SessionCounts",
    "SessionMiddleware",
    "SessionStateMixin",
    "create_session_stats_node",
    "merge_session_counts",
    "session_report",
    "session_stats",
]

_COUNTERS = ("model_calls", "tokens_sent", "commands", "notes_created", "notes_updated")


class SessionCounts(TypedDict, total=False):
    """Running counts of one thread (summed by `merge_session_counts`).

    Attributes:
        model_calls: Model calls made.
        tokens_sent: Input tokens the provider reported over those calls.
        commands: Terminal commands that ran.
        notes_created: Notes created.
        notes_updated: Notes updated.
        issues_seen: Ids of every hot issue seen open, first-seen order.
    """

    model_calls: int
    tokens_sent: int
    commands: int
    notes_created: int
    notes_updated: int
    issues_seen: list[str]


def merge_session_counts(left: SessionCounts | None, right: SessionCounts | None) -> SessionCounts:
    """Sum the counters and unite the issue ids; `None` on either side is empty.

    Example:
        >>> both = merge_session_counts(
        ...     {"commands": 1, "issues_seen": ["a"]}, {"commands": 2, "issues_seen": ["a", "b"]}
        ... )
        >>> both["commands"], both["issues_seen"]
        (3, ['a', 'b'])
    """
    a: dict[str, Any] = dict(left or {})
    b: dict[str, Any] = dict(right or {})
    merged: dict[str, Any] = {k: int(a.get(k, 0)) + int(b.get(k, 0)) for k in _COUNTERS}
    merged["issues_seen"] = list(
        dict.fromkeys([*a.get("issues_seen", []), *b.get("issues_seen", [])])
    )
    return cast("SessionCounts", merged)


class SessionStateMixin(TypedDict, total=False):
    """Adds `session`, the running counts the `session_stats` step keeps."""

    session: Annotated[SessionCounts, merge_session_counts]


def _last_round(messages: list[BaseMessage]) -> list[tuple[str, ToolMessage]]:
    """The tool results answering the AI turn before the newest message, by call name."""
    calls: dict[str, str] = {}
    results: list[ToolMessage] = []
    for message in reversed(messages[:-1]):
        if isinstance(message, ToolMessage):
            results.append(message)
            continue
        if isinstance(message, AIMessage):
            calls = {str(tc.get("id")): tc["name"] for tc in message.tool_calls}
        break
    return [(calls[r.tool_call_id], r) for r in results if r.tool_call_id in calls]


def create_session_stats_node(
    *,
    terminal_name: str = "terminal",
    notebook_prefix: str = "notebook",
    messages_key: str = "messages",
    hot_issues_key: str = "hot_issues",
) -> Callable[[Any], dict[str, Any]]:
    """Create the step that counts the newest model call and the round before it.

    Args:
        terminal_name: Name of the terminal tool (its results are commands run).
        notebook_prefix: Prefix of the note tools (`<prefix>_create`, `<prefix>_update`).
        messages_key: State key of the messages.
        hot_issues_key: State key of the hot issues.

    Returns:
        A node returning `{"session": <counts of this step>}`; run it after the model.

    Example:
        >>> from langchain_core.messages import AIMessage
        >>> create_session_stats_node()({"messages": [AIMessage("hi")]})["session"]["model_calls"]
        1
    """

    def session_stats_step(state: Any) -> dict[str, Any]:
        messages = as_messages(get_state_value(state, messages_key, []))
        names = [name for name, r in _last_round(messages) if r.status != "error"]
        newest = messages[-1] if messages else None
        usage = getattr(newest, "usage_metadata", None) or {}
        issues = get_state_value(state, hot_issues_key, []) or []
        counts = SessionCounts(
            model_calls=1 if isinstance(newest, AIMessage) else 0,
            tokens_sent=int(usage.get("input_tokens", 0)),
            commands=names.count(terminal_name),
            notes_created=names.count(f"{notebook_prefix}_create"),
            notes_updated=names.count(f"{notebook_prefix}_update"),
            issues_seen=[str(i["id"]) for i in issues if i.get("status", "active") == "active"],
        )
        return {"session": counts}

    return session_stats_step


class SessionAgentState(AgentState[Any]):
    """Agent state plus `session`, the running counts (not an input key)."""

    session: Annotated[SessionCounts, OmitFromInput, merge_session_counts]


class SessionMiddleware(AgentMiddleware[SessionAgentState, Any]):
    """Count what a `create_agent` agent ran, wrote and sent (`session_report` reads it).

    An `after_model` hook running the `create_session_stats_node` step.

    Args:
        terminal_name: Name of the terminal tool (its results are commands run).
        notebook_prefix: Prefix of the file/store note tools (`<prefix>_create`, ...).

    Example:
        >>> SessionMiddleware().name
        'session'
    """

    state_schema = SessionAgentState

    def __init__(
        self, *, terminal_name: str = "terminal", notebook_prefix: str = "notebook"
    ) -> None:
        super().__init__()
        self._step = create_session_stats_node(
            terminal_name=terminal_name, notebook_prefix=notebook_prefix
        )
        self.tools = []

    @property
    def name(self) -> str:
        """The middleware's name in the agent graph."""
        return "session"

    def after_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Count the newest model call and the tool round before it."""
        return self._step(state)

    async def aafter_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Async twin of `after_model`."""
        return self._step(state)


def session_stats(state: Any) -> dict[str, int]:
    """Return the thread's statistics from its state.

    Args:
        state: Agent state with `session` (`SessionStateMixin`), and optionally
            `hot_issues` and `compaction`.

    Returns:
        `model_calls`, `tokens_sent`, `commands`, `notes_created`, `notes_updated`,
        `issues_found`, `issues_resolved` (found and no longer open) and `compactions`.

    Example:
        >>> stats = session_stats({"session": {"commands": 2, "issues_seen": ["check:tests"]}})
        >>> stats["commands"], stats["issues_found"], stats["issues_resolved"]
        (2, 1, 1)
    """
    counts: dict[str, Any] = dict(
        merge_session_counts(get_state_value(state, "session", None), None)
    )
    seen = counts["issues_seen"]
    issues = get_state_value(state, "hot_issues", []) or []
    open_ids = {str(i["id"]) for i in issues if i.get("status", "active") == "active"}
    record = get_state_value(state, "compaction", None) or {}
    stats = {k: int(counts[k]) for k in _COUNTERS}
    stats["issues_found"] = len(set(seen) | open_ids)
    stats["issues_resolved"] = len(set(seen) - open_ids)
    stats["compactions"] = int(record.get("count", 0))
    return stats


def session_report(state: Any, *, prices: Prices | None = None) -> str:
    """Return the thread's statistics as a short report.

    With a cache record in state (`PromptCacheMiddleware`, which `create_context_agent`
    adds), a line gives the provider's measured cache hit rate, and at `prices` what
    the calls cost.

    Args:
        state: Agent state (see `session_stats`), optionally with `cache_usage`.
        prices: A price table (USD per million tokens) to cost the recorded calls.

    Returns:
        The report.

    Raises:
        ValueError: If a price in `prices` is missing or negative.

    Example:
        >>> counts = {"model_calls": 3, "tokens_sent": 1200, "commands": 4}
        >>> print(session_report({"session": counts}))
        session: 3 model calls, 1,200 input tokens sent, 0 compactions
        commands run: 4; notes created: 0, updated: 0
        hot issues found: 0, resolved: 0
    """
    s = session_stats(state)
    return (
        f"session: {s['model_calls']} model calls, {s['tokens_sent']:,} input tokens sent, "
        f"{s['compactions']} compactions\n"
        f"commands run: {s['commands']}; notes created: {s['notes_created']}, "
        f"updated: {s['notes_updated']}\n"
        f"hot issues found: {s['issues_found']}, resolved: {s['issues_resolved']}"
        + _cache_line(get_state_value(state, CACHE_USAGE_KEY, None), prices)
    )


def _cache_line(record: Any, prices: Prices | None) -> str:
    """The report's prompt-cache line (`""` without a record)."""
    own = cast("CacheUsage", record) if isinstance(record, dict) else None
    usage = merge_cache_usage(own, None)
    rate = cache_hit_rate(usage)
    if not usage["calls"] or rate is None:
        return ""
    line = (
        f"\nprompt cache: {rate:.0%} of {usage['input']:,} input tokens read from cache "
        f"({usage['cache_read']:,} read, {usage['cache_write']:,} written, "
        f"{usage['calls']} calls, {usage['misses']} misses)"
    )
    if prices is not None:
        line += f"; cost ${cache_cost(usage, prices):.4f}"
    return line
