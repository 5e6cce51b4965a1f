"""`langgraph-context xray FILE`: look inside a transcript's context.

Loads an OpenAI-format transcript (a list of messages, or tau-bench trajectories that
hold one under `traj`), a Claude Code session (JSONL) or an OpenHands trajectory (its
event list: actions become tool calls, observations their results), and reports tokens
by role and by tool, history validity, what `ContextBuilder` would select for a query,
and what `compact_messages` would do at a budget; on request it prints the assembled
context and the compaction's state snapshot.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from rich.markup import escape
from rich.table import Table

from langgraph_context.cli._errors import CLIError
from langgraph_context.cli._render import console, usage_bar
from langgraph_context.compaction import compact_messages
from langgraph_context.context import ContextBuilder, ContextConfig
from langgraph_context.messages import content_text, validate_history
from langgraph_context.tokens import default_counter
from langgraph_context.transcripts import (
    is_openhands_events,
    load_claude_code_session,
    load_openai_transcript,
    load_openhands_trajectory,
)

__all__ = ["DEFAULT_BUDGET", "FORMATS", "TranscriptFormat", "run_xray", "xray_summary"]

TranscriptFormat = Literal["auto", "openai", "claude", "openhands"]
FORMATS: tuple[TranscriptFormat, ...] = get_args(TranscriptFormat)
DEFAULT_BUDGET = 4000
_ROLE_NAMES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


@dataclass(frozen=True)
class _Loaded:
    messages: list[BaseMessage]
    fmt: str
    detail: str


def _first_line(exc: Exception) -> str:
    """The first line of an error (LangChain appends a troubleshooting link)."""
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _read_text(path: Path) -> str:
    if not path.exists():
        raise CLIError(f"{path}: no such file")
    if not path.is_file():
        raise CLIError(f"{path}: not a file")
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CLIError(f"{path}: cannot read ({exc})") from exc


# OpenHands' text-only chat exports write tool calls and their output into the text
_TEXT_TOOL_MARKERS = ("<function=", "EXECUTION RESULT of [", "OBSERVATION:\n")


def _refuse_text_tool_calls(picked: Any, path: Path) -> None:
    """Refuse a conversation whose tool calls exist only as text (OpenHands SFT exports)."""
    items = picked.get("messages", picked.get("traj")) if isinstance(picked, Mapping) else picked
    if not isinstance(items, list):
        return
    structured = any(isinstance(m, Mapping) and (m.get("tool_calls") or m.get("role") == "tool")
                     for m in items)  # fmt: skip
    texts = (m.get("content") for m in items if isinstance(m, Mapping))
    marked = any(isinstance(c, str) and any(k in c for k in _TEXT_TOOL_MARKERS) for c in texts)
    if marked and not structured:
        msg = (
            f"{path}: its tool calls and their output are written as text inside the "
            "messages (an OpenHands chat export): xray would count tool output as user "
            "turns and find no tool call. Pass the trajectory's event list (OpenHands "
            "`history`, read with --format openhands) instead"
        )
        raise CLIError(msg)


def _pick_messages(data: Any, index: int, path: Path) -> tuple[Any, str]:
    """Find the message list in parsed OpenAI-format JSON (list, trajectory or list of them)."""
    if isinstance(data, Mapping):
        return data, "one trajectory" if "traj" in data else "one conversation"
    if isinstance(data, list) and data and all(isinstance(d, Mapping) for d in data):
        if all("role" in d for d in data):
            return data, "a message list"
        if all("traj" in d or "messages" in d for d in data):
            if not 0 <= index < len(data):
                msg = f"{path}: --index {index} is out of range (0..{len(data) - 1})"
                raise CLIError(msg)
            return data[index], f"trajectory {index} of {len(data)}"
    raise CLIError(
        f"{path}: not an OpenAI-format transcript (expected a list of messages, "
        "or trajectories holding one under 'traj' or 'messages')"
    )


# Loaders meet arbitrary JSON: a wrong type anywhere must be one line, not a traceback.
_LOAD_ERRORS = (ValueError, TypeError, KeyError, AttributeError)


def _load_error(exc: Exception) -> str:
    if isinstance(exc, ValueError):
        return _first_line(exc)
    return f"malformed transcript ({type(exc).__name__}: {_first_line(exc)})"


def _jsonl_like(text: str) -> bool:
    """Whether `text` is not one JSON document but its first line parses alone (JSONL)."""
    try:
        json.loads(text)
    except json.JSONDecodeError:
        first = text.lstrip().split("\n", 1)[0]
        try:
            json.loads(first)
        except json.JSONDecodeError:
            return False
        return True
    return False


def load_transcript(path: Path, *, fmt: TranscriptFormat = "auto", index: int = 0) -> _Loaded:
    """Load `path` as OpenAI JSON or a Claude Code JSONL session.

    Args:
        path: The transcript file.
        fmt: `auto` (`.jsonl` is Claude; anything else is OpenAI JSON unless the text
            is not one JSON document but its first line is, e.g. a session saved as
            `.json`; an OpenHands event list is recognized), `openai`, `claude` or
            `openhands`.
        index: Which trajectory to take from a list of trajectories.

    Returns:
        The messages, the format used and a short description of what was read.

    Raises:
        CLIError: If the file is missing, unreadable, not valid JSON, or not a transcript.
    """
    text = _read_text(path)
    if not text.strip():
        raise CLIError(f"{path}: the file is empty")
    if fmt == "auto":
        fmt = "claude" if path.suffix == ".jsonl" else "openai"
        if fmt == "openai" and _jsonl_like(text):
            fmt = "claude"  # several JSON documents, one per line
    if fmt == "claude":
        try:
            messages = load_claude_code_session(text.splitlines())
        except _LOAD_ERRORS as exc:
            raise CLIError(f"{path}: {_load_error(exc)}") from exc
        if not messages:
            raise CLIError(f"{path}: no user or assistant messages found in the session")
        return _Loaded(messages, "claude", "Claude Code session")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        msg = f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        raise CLIError(msg) from exc
    if fmt == "openhands" or _has_openhands_events(data):
        return _load_openhands(data, path)
    picked, detail = _pick_messages(data, index, path)
    _refuse_text_tool_calls(picked, path)
    try:
        messages = load_openai_transcript(picked)
    except _LOAD_ERRORS as exc:
        raise CLIError(f"{path}: {_load_error(exc)}") from exc
    if not messages:
        raise CLIError(f"{path}: the transcript holds no messages")
    return _Loaded(messages, "openai", detail)


def _has_openhands_events(data: Any) -> bool:
    if isinstance(data, Mapping):
        return any(is_openhands_events(data.get(k)) for k in ("history", "trajectory", "events"))
    return is_openhands_events(data)


def _load_openhands(data: Any, path: Path) -> _Loaded:
    try:
        messages = load_openhands_trajectory(data)
    except _LOAD_ERRORS as exc:
        raise CLIError(f"{path}: {_load_error(exc)}") from exc
    if not messages:
        raise CLIError(f"{path}: the OpenHands trajectory holds no messages or tool calls")
    calls = sum(len(m.tool_calls) for m in messages if isinstance(m, AIMessage))
    return _Loaded(messages, "openhands", f"OpenHands trajectory, {calls:,} tool calls")


def _last_user_text(messages: Sequence[BaseMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            text = content_text(message.content).strip()
            if text:
                return text
    return ""


def xray_summary(
    messages: Sequence[BaseMessage],
    *,
    query: str | None = None,
    budget: int = DEFAULT_BUDGET,
    include_text: bool = False,
) -> dict[str, Any]:
    """Measure a transcript: tokens by role and tool, validity, context build, compaction.

    Args:
        messages: The transcript.
        query: The query the context is built for (default: the last user message).
        budget: Token budget of the context build and of the compaction.
        include_text: Also return the assembled context (`context_text`) and the
            compaction's rendered state snapshot (`snapshot_text`, `None` when nothing
            was evicted).

    Returns:
        A JSON-ready summary.

    Raises:
        CLIError: If `budget` is below 1.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> xray_summary([HumanMessage("hi")], budget=100)["messages"]
        1
    """
    if budget < 1:
        raise CLIError(f"--budget must be a positive number of tokens, got {budget}")
    counter = default_counter()
    by_role: Counter[str] = Counter()
    role_tokens: Counter[str] = Counter()
    tools: dict[str, dict[str, int]] = {}
    call_names: dict[str, str] = {}

    def tool(name: str) -> dict[str, int]:
        return tools.setdefault(
            name, {"calls": 0, "call_tokens": 0, "results": 0, "result_tokens": 0}
        )

    for message in messages:
        tokens = int(counter([message]))
        role = _ROLE_NAMES.get(message.type, message.type)
        by_role[role] += 1
        role_tokens[role] += tokens
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                call_names[str(call.get("id"))] = call["name"]
                entry = tool(call["name"])
                entry["calls"] += 1
                entry["call_tokens"] += int(counter(json.dumps(call.get("args", {}))))
        elif isinstance(message, ToolMessage):
            name = message.name or call_names.get(message.tool_call_id, "?")
            entry = tool(name)
            entry["results"] += 1
            entry["result_tokens"] += tokens
    total = int(counter(list(messages)))
    violations = validate_history(messages)
    query = query if query else _last_user_text(messages) or "(no user message)"
    builder = ContextBuilder(config=ContextConfig(max_tokens=budget), token_counter=counter)
    built = builder.build_result(query, conversation_history=list(messages))
    compacted = compact_messages(messages, target_tokens=budget, token_counter=counter)
    return {
        "messages": len(messages),
        "tokens": total,
        "roles": {
            r: {"messages": by_role[r], "tokens": role_tokens[r]}
            for r in sorted(by_role, key=lambda r: -role_tokens[r])
        },
        "tools": dict(
            sorted(tools.items(), key=lambda kv: -(kv[1]["call_tokens"] + kv[1]["result_tokens"]))
        ),
        "valid": not violations,
        "violations": [str(v) for v in violations],
        "context": {
            "query": query,
            **built.stats,
            "dropped_packets": [
                {"type": d.packet.type, "reason": d.reason, "tokens": d.packet.token_count}
                for d in built.dropped
            ],
        },
        "compaction": compacted.stats.as_dict(),
        **(
            {
                "context_text": built.text,
                "snapshot_text": compacted.snapshot.render() if compacted.snapshot else None,
            }
            if include_text
            else {}
        ),
    }


def _table(title: str, columns: Sequence[str]) -> Table:
    table = Table(title=title, title_justify="left", title_style="bold")
    for i, column in enumerate(columns):
        table.add_column(column, justify="left" if i == 0 else "right")
    return table


def _print_summary(summary: Mapping[str, Any], loaded: _Loaded, path: Path, budget: int) -> None:
    out = console()
    out.print(f"[bold]{escape(path.name)}[/bold]: {loaded.detail}")
    out.print(f"{summary['messages']:,} messages, {summary['tokens']:,} tokens (cl100k)")
    roles = _table("Tokens by role", ["role", "messages", "tokens", "share"])
    for role, row in summary["roles"].items():
        share = row["tokens"] / summary["tokens"] if summary["tokens"] else 0.0
        roles.add_row(role, f"{row['messages']:,}", f"{row['tokens']:,}", f"{share:.0%}")
    out.print(roles)
    if summary["tools"]:
        tools = _table(
            "Tokens by tool", ["tool", "calls", "call tokens", "results", "result tokens"]
        )
        for name, row in summary["tools"].items():
            tools.add_row(
                escape(name),
                f"{row['calls']:,}",
                f"{row['call_tokens']:,}",
                f"{row['results']:,}",
                f"{row['result_tokens']:,}",
            )
        out.print(tools)
    if summary["valid"]:
        out.print("[green]Validity: OK[/green] (every tool call is answered, in order)")
    else:
        shown = summary["violations"][:5]
        more = len(summary["violations"]) - len(shown)
        out.print(f"[red]Validity: {len(summary['violations'])} violation(s)[/red]")
        for line in shown:
            out.print(f"  - {escape(line)}")
        if more:
            out.print(f"  ... and {more} more")
    ctx = summary["context"]
    query = " ".join(ctx["query"].split())
    query = query if len(query) <= 70 else query[:67] + "..."
    out.print(f"\n[bold]ContextBuilder[/bold] at {budget:,} tokens")
    out.print(f"query: {escape(repr(query))}")
    sections = _table("Context by section", ["section", "tokens"])
    for name, tokens in ctx["section_tokens"].items():
        sections.add_row(name, f"{tokens:,}")
    sections.add_row("[bold]total[/bold]", f"[bold]{ctx['tokens']:,}[/bold]")
    out.print(sections)
    out.print(f"gathered {ctx['gathered']} packets, selected {ctx['selected']}")
    if ctx["truncated"]:
        out.print(
            "[yellow]the protected sections alone exceed the budget: the text was cut[/yellow]"
        )
    if ctx["dropped_packets"]:
        drops = _table("Packets dropped", ["reason", "packets", "tokens"])
        counts: Counter[str] = Counter()
        tokens_by: Counter[str] = Counter()
        for drop in ctx["dropped_packets"]:
            counts[drop["reason"]] += 1
            tokens_by[drop["reason"]] += drop["tokens"] or 0
        for reason, n in counts.most_common():
            drops.add_row(reason, f"{n:,}", f"{tokens_by[reason]:,}")
        out.print(drops)
    out.print(usage_bar(ctx["tokens"], budget))
    out.print(f"\n[bold]compact_messages[/bold] at {budget:,} tokens")
    comp = summary["compaction"]
    table = _table("Compaction", ["", "value"])
    for label, value in (
        ("strategy", comp["strategy"]),
        ("tokens before", f"{comp['tokens_before']:,}"),
        ("tokens after", f"{comp['tokens_after']:,}"),
        ("messages before -> after", f"{comp['messages_before']:,} -> {comp['messages_after']:,}"),
        ("messages dropped", f"{comp['messages_dropped']:,}"),
        ("tool rounds dropped", f"{comp['tool_rounds_dropped']:,}"),
        ("tool results cleared", f"{comp['tool_results_cleared']:,}"),
        ("snapshot tokens", f"{comp['snapshot_tokens']:,}"),
        ("repairs", f"{len(comp['repairs'])}"),
        ("within budget", "yes" if comp["within_budget"] else "[red]no[/red]"),
    ):
        table.add_row(label, value)
    out.print(table)
    out.print(usage_bar(comp["tokens_after"], budget))
    if comp["note"]:
        out.print(f"note: {comp['note']}")
    _print_texts(summary)


def _print_texts(summary: Mapping[str, Any]) -> None:
    """The assembled context and the state snapshot, when they were asked for."""
    out = console()
    if "context_text" in summary:
        out.rule("assembled context (what the model would be sent)")
        out.print(summary["context_text"], markup=False, highlight=False)
    if "snapshot_text" in summary:
        out.rule("state snapshot (what compaction keeps of the evicted messages)")
        text = summary["snapshot_text"]
        out.print(text or "(nothing was evicted at this budget: no snapshot)", markup=False)


def run_xray(
    path: Path,
    *,
    query: str | None = None,
    budget: int = DEFAULT_BUDGET,
    fmt: TranscriptFormat = "auto",
    index: int = 0,
    as_json: bool = False,
    show_context: bool = False,
    show_snapshot: bool = False,
) -> int:
    """Load a transcript and print its x-ray (rich tables, or JSON with `as_json`).

    Args:
        path: The transcript file.
        query: Query for the context build (default: the last user message).
        budget: Token budget for the context build and the compaction.
        fmt: `auto`, `openai`, `claude` or `openhands`.
        index: Trajectory to take from a list of trajectories.
        as_json: Print a machine-readable summary instead of tables.
        show_context: Also print the assembled context (in JSON: `context_text`).
        show_snapshot: Also print the compaction's state snapshot (`snapshot_text`).

    Returns:
        The exit code (0).

    Raises:
        CLIError: On a bad file, format, budget or index.
    """
    if fmt not in FORMATS:
        raise CLIError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if budget < 1:
        raise CLIError(f"--budget must be a positive number of tokens, got {budget}")
    if index < 0:
        raise CLIError(f"--index must be >= 0, got {index}")
    loaded = load_transcript(path, fmt=fmt, index=index)
    texts = show_context or show_snapshot
    summary = xray_summary(loaded.messages, query=query, budget=budget, include_text=texts)
    if not show_context:
        summary.pop("context_text", None)
    if not show_snapshot:
        summary.pop("snapshot_text", None)
    if as_json:
        print(json.dumps({"file": str(path), "format": loaded.fmt, **summary}, indent=2))
    else:
        _print_summary(summary, loaded, path, budget)
    return 0
