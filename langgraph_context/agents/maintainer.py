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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
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
    EXPLORER_DESCRIPTION,
    EXPLORER_INSTRUCTIONS,
    MAINTAINER_MODES,
    MODE_INSTRUCTIONS,
    MaintainerMode,
    check_mode,
)
from langgraph_context.agents.briefing import (
    DEFAULT_BRIEFING_MAX_TOKENS,
    briefing_packets,
    build_briefing,
)
from langgraph_context.agents.context_agent import (
    ContextAgentState,
    StepsLike,
    create_context_agent,
)
from langgraph_context.agents.models import ModelFactory
from langgraph_context.agents.session import SessionStateMixin, create_session_stats_node
from langgraph_context.agents.subagent import DEFAULT_MAX_RESULT_TOKENS, create_subagent_tool
from langgraph_context.compaction import create_compaction_node
from langgraph_context.context import (
    DEFAULT_STATE_SOURCES,
    ContextBuilder,
    ContextConfig,
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
from langgraph_context.notes.model import NoteStore
from langgraph_context.notes.tool import create_note_tools
from langgraph_context.state import get_state_value
from langgraph_context.tokens import TokenCounter, resolve_counter
from langgraph_context.tools import Terminal, create_terminal_tool

__all__ = [
    "DEFAULT_HISTORY_TOKENS",
    "DEFAULT_MAINTAINER_MAX_TOKENS",
    "DEFAULT_MAINTAINER_OUTPUT_CHARS",
    "DEFAULT_MAINTAINER_TIMEOUT",
    "MAINTAINER_MODES",
    "MaintainerMode",
    "MaintainerOptions",
    "MaintainerState",
    "create_codebase_maintainer_graph",
]

DEFAULT_HISTORY_TOKENS = 12_000
"""History budget of the default compaction node (`compaction=True`)."""
DEFAULT_MAINTAINER_MAX_TOKENS = 8000
DEFAULT_MAINTAINER_OUTPUT_CHARS = 12_000
DEFAULT_MAINTAINER_TIMEOUT = 30.0
DEFAULT_KEEP_LAST = 4
_CHARS_PER_TOKEN = 4

NotesLike = NoteStore | BaseStore | str | os.PathLike[str] | None
"""Where the maintainer's notes live (see `create_codebase_maintainer_graph`)."""


class MaintainerState(ContextAgentState, SessionStateMixin):
    """State of the maintainer: the context agent's, the mode, the briefing, the session counts."""

    mode: NotRequired[str]
    briefing: NotRequired[str]


@dataclass(frozen=True, kw_only=True)
class MaintainerOptions:
    """The maintainer's rarely changed knobs.

    Attributes:
        keep_last: Recent messages the default context node passes on verbatim.
        briefing_max_tokens: Cap on each turn's briefing.
        explorer_result_tokens: Cap on the explorer's report (with `explorer=True`).
        terminal_timeout: Seconds a terminal command may run.
        max_output_chars: Cap on one terminal command's output. With the default
            context node it is clamped (never rejected) to fit the room `max_tokens`
            leaves after the instructions: about half of it at four characters a
            token, so one file read cannot crowd out the context.

    Raises:
        ValueError: If `briefing_max_tokens` is not a positive int.

    Example:
        >>> MaintainerOptions(briefing_max_tokens=500).briefing_max_tokens
        500
    """

    keep_last: int = DEFAULT_KEEP_LAST
    briefing_max_tokens: int = DEFAULT_BRIEFING_MAX_TOKENS
    explorer_result_tokens: int = DEFAULT_MAX_RESULT_TOKENS
    terminal_timeout: float = DEFAULT_MAINTAINER_TIMEOUT
    max_output_chars: int = DEFAULT_MAINTAINER_OUTPUT_CHARS

    def __post_init__(self) -> None:
        """Check the briefing cap (the terminal checks its own options)."""
        cap = self.briefing_max_tokens
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
            msg = f"briefing_max_tokens must be a positive int, got {cap!r}"
            raise InvalidArgumentError(msg)


def _output_chars_cap(room_tokens: int) -> int:
    """Largest terminal output (in characters) the maintainer allows for a context room.

    Half of `room_tokens` at about four characters a token, at least 1,000 characters.

    Example:
        >>> _output_chars_cap(4000)
        8000
    """
    return max(1_000, room_tokens // 2 * _CHARS_PER_TOKEN)


def _last_request(state: Any) -> str | None:
    messages = get_state_value(state, "messages", [])
    if messages and isinstance(messages[-1], HumanMessage):
        return content_text(messages[-1].content)
    return None


def _compaction_step(
    compaction: Any, summarizer: BaseChatModel | None, token_counter: Any
) -> Any | None:
    """The compaction node for `compaction=True/False/node` (or `None`)."""
    if compaction is True:
        return create_compaction_node(
            max_tokens=DEFAULT_HISTORY_TOKENS,
            mode="replace",
            model=summarizer,
            token_counter=token_counter,
        )
    return None if compaction is False else compaction


def _context_step(
    context: Any, max_tokens: int, project: str, token_counter: Any, options: MaintainerOptions
) -> tuple[Any | None, int]:
    """The context node for `context=True/False/node`, and the terminal's output cap.

    The default node gets what `max_tokens` leaves after the longest mode's
    instructions; the output cap is clamped to fit that room.
    """
    max_output_chars = options.max_output_chars
    if context is False:
        return None, max_output_chars
    if context is not True:
        return context, max_output_chars
    count = resolve_counter(token_counter)
    prompt_cost = max(
        count(f"{BASE_INSTRUCTIONS.format(project=project)}\n\n{text}\n\n")
        for text in MODE_INSTRUCTIONS.values()
    )
    if max_tokens <= prompt_cost:
        msg = f"max_tokens must exceed the instructions' {prompt_cost} tokens, got {max_tokens!r}"
        raise InvalidArgumentError(msg)
    builder = ContextBuilder(
        config=ContextConfig(max_tokens=max_tokens - prompt_cost),
        token_counter=count,
        state_sources=(*DEFAULT_STATE_SOURCES, briefing_packets),
    )
    if isinstance(max_output_chars, int) and not isinstance(max_output_chars, bool):
        # Anything else is left for the terminal to reject with its own message.
        max_output_chars = min(max_output_chars, _output_chars_cap(max_tokens - prompt_cost))
    return create_context_node(builder, keep_last=options.keep_last), max_output_chars


def _note_source(notes: NotesLike) -> NoteStore | BaseStore | None:
    """A directory becomes a `FileNoteStore` (created if missing); the rest is kept."""
    if isinstance(notes, (str, os.PathLike)):
        Path(notes).mkdir(parents=True, exist_ok=True)
        return FileNoteStore(Path(notes))
    return notes


def _brief_node(
    notes: NoteStore | BaseStore | None,
    namespace: tuple[str, ...],
    terminal: Terminal,
    mode: MaintainerMode,
    max_tokens: int,
    token_counter: Any,
) -> Callable[..., dict[str, Any]]:
    """The `brief` step: write the turn's briefing when a user request starts a turn."""

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
        current = check_mode(get_state_value(state, "mode", mode), "state['mode']")
        text = build_briefing(
            current,
            request,
            terminal=terminal,
            notes=note_store(config, store),
            max_tokens=max_tokens,
            token_counter=token_counter,
        )
        return {"briefing": text}

    return brief


def _instructions(
    project: str, mode: MaintainerMode, *, briefing_in_prompt: bool
) -> Callable[[Any], str]:
    """The system prompt: base and mode instructions (and the briefing, without a context node)."""

    def instructions(state: Any) -> str:
        current = check_mode(get_state_value(state, "mode", mode), "state['mode']")
        parts = [BASE_INSTRUCTIONS.format(project=project), MODE_INSTRUCTIONS[current]]
        briefing = get_state_value(state, "briefing", "")
        if briefing and briefing_in_prompt:  # a context node renders it as a packet
            parts.append(briefing)
        return "\n\n".join(parts)

    return instructions


def _explorer_tool(
    model: BaseChatModel | ModelFactory,
    root: Path,
    project: str,
    max_output_chars: int,
    token_counter: Any,
    options: MaintainerOptions,
) -> BaseTool:
    """`delegate_exploration`: a sub-agent with its own read-only terminal."""
    terminal = create_terminal_tool(
        root, timeout=options.terminal_timeout, max_output_chars=max_output_chars
    )
    return create_subagent_tool(
        model,
        tools=[terminal],
        system_prompt=EXPLORER_INSTRUCTIONS.format(project=project),
        max_result_tokens=options.explorer_result_tokens,
        token_counter=token_counter,
        name="delegate_exploration",
        description=EXPLORER_DESCRIPTION,
    )


def _pre_model_steps(brief: Any, pre_model: StepsLike | None) -> dict[str, Any]:
    """The briefing step, then the user's `pre_model` steps (`brief` is reserved)."""
    steps: dict[str, Any] = {"brief": brief}
    if not pre_model:
        return steps
    extra = (
        dict(pre_model)
        if isinstance(pre_model, Mapping)
        else {f"pre_model_{i}": step for i, step in enumerate(pre_model, 1)}
    )
    if "brief" in extra:
        msg = "pre_model step name 'brief' is reserved for the maintainer's briefing"
        raise InvalidArgumentError(msg)
    return steps | extra


def create_codebase_maintainer_graph(
    model: BaseChatModel | ModelFactory,
    *,
    workspace: str | os.PathLike[str],
    notes: NotesLike = None,
    note_namespace: Sequence[str] = DEFAULT_NOTE_NAMESPACE,
    project_name: str | None = None,
    default_mode: MaintainerMode = "auto",
    tools: Sequence[BaseTool] = (),
    explorer: bool = False,
    compaction: Any = True,
    summarizer: BaseChatModel | None = None,
    context: Any = True,
    max_tokens: int = DEFAULT_MAINTAINER_MAX_TOKENS,
    pre_model: StepsLike | None = None,
    post_tools: StepsLike | None = None,
    token_counter: TokenCounter | BaseLanguageModel | None = None,
    state_schema: type[Any] = MaintainerState,
    context_schema: type[Any] | None = None,
    options: MaintainerOptions | None = None,
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
        compaction: `True` for the default compaction node (replace mode, keeping the
            history under `DEFAULT_HISTORY_TOKENS`), `False` for none, or your own
            node, such as `create_compaction_node(max_tokens=...)` for another
            history budget. It runs first before each model call.
        summarizer: Chat model the default compaction node summarizes with when
            rule-based compaction is not enough (`None`: rules only).
        context: `True` for the default context node (a `ContextBuilder` whose
            sources include pinned memory and the turn's briefing, untrusted packets
            wrapped in per-build boundaries), `False` for none (the briefing then goes
            into the system prompt), or your own node. It runs last before each
            model call.
        max_tokens: With the default context node, the most tokens one model call
            is sent (the mode instructions are counted in it).
        pre_model: Extra steps run after the briefing, before `context`.
        post_tools: Steps run after each tool round.
        token_counter: Counter for the briefing cap and the default compaction and
            context nodes (`None` = offline tiktoken).
        state_schema: The graph state (extend `MaintainerState` to add keys).
        context_schema: The run context's schema (e.g. `ContextSettings`), as in
            `create_context_agent`.
        options: The rarely changed knobs (`MaintainerOptions`: recent messages kept,
            briefing cap, explorer report cap, terminal timeout and output cap).

    Returns:
        A `StateGraph`; compile it with a persistent checkpointer (and a store when
        notes live in one).

    Raises:
        ValueError: If `default_mode`, `max_tokens`, the workspace or a step is
            invalid, or `pre_model` uses the name `brief`.
        TypeError: If `notes` has an unsupported type.
    """
    opts = options or MaintainerOptions()
    mode = check_mode(default_mode, "default_mode")
    compaction = _compaction_step(compaction, summarizer, token_counter)
    project = project_name or Path(workspace).resolve().name
    context, output_chars = _context_step(context, max_tokens, project, token_counter, opts)
    root = Path(workspace)
    terminal_tool = create_terminal_tool(
        root, timeout=opts.terminal_timeout, max_output_chars=output_chars
    )
    terminal = Terminal(root, timeout=opts.terminal_timeout, max_output_chars=output_chars)
    store = _note_source(notes)
    namespace = tuple(note_namespace)
    note_tools = create_note_tools(store, namespace=namespace)
    brief = _brief_node(store, namespace, terminal, mode, opts.briefing_max_tokens, token_counter)
    extra_tools = list(tools)
    if explorer:
        extra_tools.append(_explorer_tool(model, root, project, output_chars, token_counter, opts))
    return create_context_agent(
        model,
        [terminal_tool, *note_tools, *extra_tools],
        system_prompt=_instructions(project, mode, briefing_in_prompt=context is None),
        plan_tools=True,
        note_tools=False,
        compaction=compaction,
        context=context,
        tool_output_limit=False,  # the terminal caps its own output (`max_output_chars`)
        pre_model=_pre_model_steps(brief, pre_model),
        post_model={"session_stats": create_session_stats_node()},
        post_tools=post_tools,
        state_schema=state_schema,
        context_schema=context_schema,
    )
