"""`create_codebase_maintainer_graph`: the book's long-horizon codebase maintainer.

One graph combines the read-only sandboxed terminal (just-in-time file access),
persistent structured notes (Markdown files or a LangGraph store), the plan tools and
compaction of the history (on by default: rule-based, plus a summarizer model when
given) and GSSC context assembly before each model call (on by default: a budgeted
system message with the plan, the briefing and older history, then the recent
messages). Compile it with a persistent checkpointer (SQLite, Postgres) and a thread
can be continued days later in another process: messages, plan and mode come back
from the checkpoint, notes from their store.

Each user turn starts with a briefing step: by mode it lists the Python files
(`explore`, `auto`), greps TODO/FIXME markers (`analyze`) or lists task-state notes
and the latest notes (`plan`), and always adds the open blockers and the notes most
relevant to the request.
The briefing is capped in tokens and marked as data, not instructions. The model, not
keyword matching, decides what becomes a note: it has the note tools and instructions
on note types.

The mode is graph state: pass `{"mode": "analyze", "messages": [...]}` to switch it;
it stays until changed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NotRequired

from langchain_core.language_models import BaseChatModel, BaseLanguageModel
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.graph import StateGraph
from langgraph.store.base import BaseStore

from langgraph_context.agents._maintainer_prompts import (
    BASE_INSTRUCTIONS,
    BRIEFING_HEADER,
    EXPLORER_DESCRIPTION,
    EXPLORER_INSTRUCTIONS,
    MAINTAINER_MODES,
    MODE_INSTRUCTIONS,
    MaintainerMode,
)
from langgraph_context.agents.context_agent import (
    ContextAgentState,
    StepsLike,
    create_context_agent,
)
from langgraph_context.agents.models import ModelFactory
from langgraph_context.agents.subagent import (
    DEFAULT_MAX_RESULT_TOKENS,
    TRUNCATION_MARKER,
    create_subagent_tool,
)
from langgraph_context.compaction import create_compaction_node
from langgraph_context.context import (
    DEFAULT_STATE_SOURCES,
    ContextBuilder,
    ContextConfig,
    ContextPacket,
    create_context_node,
)
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.messages import content_text
from langgraph_context.notes.files import FileNoteStore
from langgraph_context.notes.langgraph_store import (
    DEFAULT_NOTE_NAMESPACE,
    LangGraphNoteStore,
    resolve_note_namespace,
)
from langgraph_context.notes.model import Note, NoteStore
from langgraph_context.notes.tool import create_note_tools
from langgraph_context.state import get_state_value
from langgraph_context.tokens import TokenCounter, resolve_counter, truncate_text
from langgraph_context.tools import Terminal, create_terminal_tool

__all__ = [
    "BRIEFING_PACKET_TYPE",
    "DEFAULT_BRIEFING_TOKENS",
    "DEFAULT_CONTEXT_TOKENS",
    "DEFAULT_HISTORY_TOKENS",
    "DEFAULT_MAINTAINER_OUTPUT_CHARS",
    "DEFAULT_MAINTAINER_TIMEOUT",
    "MAINTAINER_MODES",
    "MaintainerMode",
    "MaintainerState",
    "briefing_packets",
    "build_briefing",
    "create_codebase_maintainer_graph",
]

DEFAULT_BRIEFING_TOKENS = 1000
DEFAULT_HISTORY_TOKENS = 12_000
DEFAULT_CONTEXT_TOKENS = 8000
DEFAULT_MAINTAINER_OUTPUT_CHARS = 12_000
DEFAULT_KEEP_LAST = 4
BRIEFING_PACKET_TYPE = "workspace"
DEFAULT_MAINTAINER_TIMEOUT = 30.0
_BLOCKERS = 3
_RELEVANT = 3
_TASKS = 5
_SNIPPET = 200
_CHARS_PER_TOKEN = 4
_MODE_COMMANDS: dict[str, tuple[str, ...]] = {
    "explore": ("find . -type f -name '*.py' | sort | head -n 60",),
    "auto": ("find . -type f -name '*.py' | sort | head -n 60",),
    "analyze": (
        "grep -rn -E 'TODO|FIXME|XXX|HACK' --include=*.py . | head -n 30",
        "find . -type f -name 'test_*.py' | sort | head -n 30",
    ),
    "plan": (),
}


class MaintainerState(ContextAgentState):
    """State of the maintainer: the context agent's, plus the mode and the briefing."""

    mode: NotRequired[str]
    briefing: NotRequired[str]


def _output_chars_cap(room_tokens: int) -> int:
    """Largest terminal output (in characters) the maintainer allows for a context room.

    Half of `room_tokens` at about four characters a token, at least 1,000 characters.

    Example:
        >>> _output_chars_cap(4000)
        8000
    """
    return max(1_000, room_tokens // 2 * _CHARS_PER_TOKEN)


def _check_mode(value: Any, parameter: str) -> MaintainerMode:
    if value not in MAINTAINER_MODES:
        msg = f"{parameter} must be one of {list(MAINTAINER_MODES)}, got {value!r}"
        raise InvalidArgumentError(msg)
    return value  # type: ignore[no-any-return]


def _note_line(note: Note) -> str:
    text = " ".join(note.content.split())
    snippet = text if len(text) <= _SNIPPET else text[: _SNIPPET - 3] + "..."
    return f"- [{note.type}] {note.title} (id {note.id}): {snippet}"


def build_briefing(
    mode: MaintainerMode,
    request: str,
    *,
    terminal: Terminal | None = None,
    notes: NoteStore | None = None,
    max_tokens: int = DEFAULT_BRIEFING_TOKENS,
    token_counter: TokenCounter | BaseLanguageModel | None = None,
) -> str:
    """Gather the workspace facts and notes one request starts from.

    Args:
        mode: `explore`, `analyze`, `plan` or `auto`.
        request: The user's request (used to find relevant notes).
        terminal: The sandboxed terminal to run the mode's commands in.
        notes: The note store to read blockers and relevant notes from.
        max_tokens: Cap on the briefing.
        token_counter: Counter for the cap (`None` = offline tiktoken).

    Returns:
        The briefing text: a header marking it as data, then the facts cut to fit
        (empty when there is nothing to report or not even the header fits).

    Raises:
        ValueError: If `mode` is not a maintainer mode.
    """
    _check_mode(mode, "mode")
    sections: list[str] = []
    if terminal is not None:
        for command in _MODE_COMMANDS[mode]:
            result = terminal.run(command)
            if result.output.strip():
                sections.append(f"$ {command}\n{result.render().rstrip()}")
    if notes is not None:
        chosen: dict[str, Note] = {}
        for note in notes.list(note_type="blocker", limit=_BLOCKERS):
            chosen.setdefault(note.id, note)
        if mode == "plan":
            for note in notes.list(note_type="task_state", limit=_TASKS):
                chosen.setdefault(note.id, note)
            for note in notes.list(limit=_TASKS):  # the latest work, whatever its type
                chosen.setdefault(note.id, note)
        if request.strip():
            for note, _score in notes.search(request, limit=_RELEVANT):
                chosen.setdefault(note.id, note)
        if chosen:
            lines = [_note_line(n) for n in chosen.values()]
            sections.append("Notes to keep in mind:\n" + "\n".join(lines))
    if not sections:
        return ""
    count = resolve_counter(token_counter)
    head = f"{BRIEFING_HEADER}\n\n"
    room = max_tokens - count(head)
    if room < 1:
        return ""  # the data marking must never be cut off, so nothing fits
    body = truncate_text("\n\n".join(sections), room, token_counter=count, marker=TRUNCATION_MARKER)
    while body and count(head + body) > max_tokens:
        room -= 1
        body = truncate_text(body, max(room, 0), token_counter=count, marker=TRUNCATION_MARKER)
    return head + body if body else ""


def briefing_packets(state: Any) -> list[ContextPacket]:
    """Context-builder state source: the turn's briefing as one pinned, untrusted packet.

    Args:
        state: Graph state with an optional `briefing`.

    Returns:
        Zero or one packet of type `workspace` (rendered in [Evidence]).
    """
    briefing = get_state_value(state, "briefing", "")
    if not briefing:
        return []
    return [
        ContextPacket(
            briefing, type=BRIEFING_PACKET_TYPE, source="briefing", pinned=True, relevance=1.0
        )
    ]


def _last_request(state: Any) -> str | None:
    messages = get_state_value(state, "messages", [])
    if messages and isinstance(messages[-1], HumanMessage):
        return content_text(messages[-1].content)
    return None


def create_codebase_maintainer_graph(
    model: BaseChatModel | ModelFactory,
    *,
    workspace: str | os.PathLike[str],
    notes: NoteStore | BaseStore | str | os.PathLike[str] | None = None,
    note_namespace: Sequence[str] = DEFAULT_NOTE_NAMESPACE,
    project_name: str | None = None,
    default_mode: MaintainerMode = "auto",
    tools: Sequence[BaseTool] = (),
    explorer: bool = False,
    explorer_result_tokens: int = DEFAULT_MAX_RESULT_TOKENS,
    compaction: Any = True,
    history_tokens: int = DEFAULT_HISTORY_TOKENS,
    summarizer: BaseChatModel | None = None,
    context: Any = True,
    context_tokens: int = DEFAULT_CONTEXT_TOKENS,
    keep_last: int = DEFAULT_KEEP_LAST,
    pre_model: StepsLike | None = None,
    post_tools: StepsLike | None = None,
    briefing_tokens: int = DEFAULT_BRIEFING_TOKENS,
    token_counter: TokenCounter | BaseLanguageModel | None = None,
    terminal_timeout: float = DEFAULT_MAINTAINER_TIMEOUT,
    max_output_chars: int = DEFAULT_MAINTAINER_OUTPUT_CHARS,
    state_schema: type[Any] = MaintainerState,
) -> StateGraph[Any, Any, Any, Any]:
    """Build (uncompiled) the long-horizon codebase maintainer.

    Args:
        model: A chat model, or a factory building one from the run's config.
        workspace: The codebase directory (the terminal is confined to it).
        notes: Where notes persist: a directory (Markdown files), a `NoteStore`, a
            LangGraph `BaseStore`, or `None` for the store the graph is compiled with
            (a run of a graph compiled without one fails with `ValueError` at its
            first step, before the model is called).
        note_namespace: Namespace template for store-backed notes (`{user_id}`-style
            parts are filled from `configurable`).
        project_name: Name used in the instructions (default: the workspace's name).
        default_mode: Mode when the state names none.
        tools: Extra tools for the model.
        explorer: Add `delegate_exploration`, a sub-agent with its own read-only
            terminal that answers one exploration question in a clean context
            window and returns a condensed report (the book's third long-horizon
            strategy next to compaction and notes).
        explorer_result_tokens: Cap on the explorer's report.
        compaction: `True` for the default compaction node (replace mode, triggered
            when the history reaches `history_tokens`), `False` for none, or your
            own node. It runs first before each model call.
        history_tokens: Budget of the history kept in state by the default
            compaction node.
        summarizer: Chat model the default compaction node summarizes with when
            rule-based compaction is not enough (`None`: rules only).
        context: `True` for the default context node (a `ContextBuilder` of
            `context_tokens` whose sources include pinned memory and the turn's
            briefing, untrusted packets wrapped in per-build boundaries), `False` for
            none (the briefing then goes into the system prompt), or your own node.
            It runs last before each model call.
        context_tokens: Budget of the whole model input with the default context node
            (the mode instructions are counted in it).
        keep_last: Recent messages the default context node passes on verbatim.
        pre_model: Extra steps run after the briefing, before `context`.
        post_tools: Steps run after each tool round.
        briefing_tokens: Cap on each turn's briefing.
        token_counter: Counter for the briefing cap (`None` = offline tiktoken).
        terminal_timeout: Seconds a terminal command may run.
        max_output_chars: Cap on one terminal command's output. With the default
            context node it is clamped (never rejected) to fit the
            room `context_tokens` leaves after the instructions: about half of it at
            four characters a token, so one file read cannot crowd out the context.
        state_schema: The graph state (extend `MaintainerState` to add keys).

    Returns:
        A `StateGraph`; compile it with a persistent checkpointer (and a store when
        notes live in one).

    Raises:
        ValueError: If `default_mode`, `briefing_tokens`, `history_tokens`, the
            workspace or a step is invalid, or `pre_model` uses the name `brief`.
        TypeError: If `notes` has an unsupported type.
    """
    mode = _check_mode(default_mode, "default_mode")
    if compaction is True:
        compaction = create_compaction_node(
            max_tokens=history_tokens, mode="replace", model=summarizer, token_counter=token_counter
        )
    elif compaction is False:
        compaction = None
    project = project_name or Path(workspace).resolve().name
    if context is True:
        count = resolve_counter(token_counter)
        prompt_cost = max(
            count(f"{BASE_INSTRUCTIONS.format(project=project)}\n\n{text}\n\n")
            for text in MODE_INSTRUCTIONS.values()
        )
        if context_tokens <= prompt_cost:
            msg = (
                f"context_tokens must exceed the instructions' {prompt_cost} tokens, "
                f"got {context_tokens!r}"
            )
            raise InvalidArgumentError(msg)
        builder = ContextBuilder(
            config=ContextConfig(max_tokens=context_tokens - prompt_cost),
            token_counter=resolve_counter(token_counter),
            state_sources=(*DEFAULT_STATE_SOURCES, briefing_packets),
        )
        context = create_context_node(builder, keep_last=keep_last)
        if isinstance(max_output_chars, int) and not isinstance(max_output_chars, bool):
            # Anything else is left for the terminal to reject with its own message.
            cap = _output_chars_cap(context_tokens - prompt_cost)
            max_output_chars = min(max_output_chars, cap)
    elif context is False:
        context = None
    if isinstance(briefing_tokens, bool) or not isinstance(briefing_tokens, int):
        msg = f"briefing_tokens must be a positive int, got {briefing_tokens!r}"
        raise InvalidArgumentError(msg)
    if briefing_tokens < 1:
        msg = f"briefing_tokens must be a positive int, got {briefing_tokens!r}"
        raise InvalidArgumentError(msg)
    root = Path(workspace)
    terminal_tool = create_terminal_tool(
        root, timeout=terminal_timeout, max_output_chars=max_output_chars
    )
    briefing_terminal = Terminal(root, timeout=terminal_timeout, max_output_chars=max_output_chars)
    if isinstance(notes, (str, os.PathLike)):
        Path(notes).mkdir(parents=True, exist_ok=True)
        notes = FileNoteStore(Path(notes))
    namespace = tuple(note_namespace)
    note_tools = create_note_tools(notes, namespace=namespace)

    def note_store(config: RunnableConfig, store: BaseStore | None) -> NoteStore | None:
        if isinstance(notes, NoteStore):
            return notes
        backing = notes if isinstance(notes, BaseStore) else store
        if backing is None:
            return None
        return LangGraphNoteStore(backing, namespace=resolve_note_namespace(namespace, config))

    def brief(state: Any, config: RunnableConfig, *, store: BaseStore) -> dict[str, Any]:
        if notes is None and store is None:
            # Fail before the model runs, so no note tool call is left unanswered.
            msg = (
                "the maintainer keeps its notes in the graph's store (notes=None), but the "
                "graph was compiled without one: compile with store=... or pass notes="
            )
            raise InvalidArgumentError(msg)
        request = _last_request(state)
        if request is None:
            return {}  # a later model call of the same turn keeps the turn's briefing
        current = _check_mode(get_state_value(state, "mode", mode), "state['mode']")
        text = build_briefing(
            current,
            request,
            terminal=briefing_terminal,
            notes=note_store(config, store),
            max_tokens=briefing_tokens,
            token_counter=token_counter,
        )
        return {"briefing": text}

    def instructions(state: Any) -> str:
        current = _check_mode(get_state_value(state, "mode", mode), "state['mode']")
        parts = [BASE_INSTRUCTIONS.format(project=project), MODE_INSTRUCTIONS[current]]
        briefing = get_state_value(state, "briefing", "")
        if briefing and context is None:  # a context node renders it as a packet
            parts.append(briefing)
        return "\n\n".join(parts)

    extra_tools = list(tools)
    if explorer:
        extra_tools.append(
            create_subagent_tool(
                model,
                tools=[
                    create_terminal_tool(
                        root, timeout=terminal_timeout, max_output_chars=max_output_chars
                    )
                ],
                system_prompt=EXPLORER_INSTRUCTIONS.format(project=project),
                max_result_tokens=explorer_result_tokens,
                token_counter=token_counter,
                name="delegate_exploration",
                description=EXPLORER_DESCRIPTION,
            )
        )
    steps: dict[str, Any] = {"brief": brief}
    if pre_model:
        extra = (
            dict(pre_model)
            if isinstance(pre_model, Mapping)
            else {f"pre_model_{i}": step for i, step in enumerate(pre_model, 1)}
        )
        if "brief" in extra:
            msg = "pre_model step name 'brief' is reserved for the maintainer's briefing"
            raise InvalidArgumentError(msg)
        steps.update(extra)
    return create_context_agent(
        model,
        [terminal_tool, *note_tools, *extra_tools],
        system_prompt=instructions,
        plan_tools=True,
        note_tools=False,
        compaction=compaction,
        context=context,
        pre_model=steps,
        post_tools=post_tools,
        state_schema=state_schema,
    )
