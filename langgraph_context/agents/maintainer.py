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
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ModelCallResult, OmitFromInput
from langchain_core.language_models import BaseChatModel, BaseLanguageModel
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import run_in_executor
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore
from langgraph.types import Checkpointer

from langgraph_context._steps import signed
from langgraph_context.agents._maintainer_prompts import (
    BASE_INSTRUCTIONS,
    EXPLORER_DESCRIPTION,
    EXPLORER_INSTRUCTIONS,
    MODE_INSTRUCTIONS,
    MaintainerMode,
    check_mode,
)

# Constants of a private module, importable from here (not in `__all__`).
from langgraph_context.agents._maintainer_prompts import (
    MAINTAINER_MODES as MAINTAINER_MODES,  # noqa: PLC0414 (re-export)
)
from langgraph_context.agents.briefing import (
    DEFAULT_MAX_BRIEFING_TOKENS,
    briefing_packets,
    build_briefing,
)
from langgraph_context.agents.compaction_middleware import CompactionMiddleware
from langgraph_context.agents.context_agent import create_context_agent
from langgraph_context.agents.context_middleware import ContextMiddleware
from langgraph_context.agents.session import SessionMiddleware
from langgraph_context.agents.subagent import DEFAULT_MAX_RESULT_TOKENS, create_subagent_tool
from langgraph_context.agents.tool_middleware import ConstraintStoreMiddleware
from langgraph_context.context import ContextBuilder, ContextConfig
from langgraph_context.context.gather import DEFAULT_STATE_SOURCES
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.messages import content_text
from langgraph_context.notebook.files import FileNotebookStore
from langgraph_context.notebook.langgraph_store import (
    NOTEBOOK_NAMESPACE,
    LangGraphNotebookStore,
    resolve_notebook_namespace,
)
from langgraph_context.notebook.model import NotebookStore
from langgraph_context.notebook.tool import create_notebook_tools
from langgraph_context.packet import ContextPacket
from langgraph_context.pinned.watch import CheckSelector
from langgraph_context.providers.models import ModelFactory
from langgraph_context.safety import fenced_block
from langgraph_context.state import get_state_value
from langgraph_context.tokens import TokenCounter, resolve_counter
from langgraph_context.tools import Terminal, create_terminal_tool

__all__ = [
    "MaintainerMiddleware",
    "MaintainerMode",
    "MaintainerOptions",
    "MaintainerState",
    "create_codebase_maintainer_graph",
]

DEFAULT_HISTORY_TOKENS = 12_000
"""The history's high mark of the default compaction (`compaction=True`)."""
DEFAULT_MAINTAINER_MAX_TOKENS = 8000
DEFAULT_MAINTAINER_OUTPUT_CHARS = 12_000
DEFAULT_MAINTAINER_TIMEOUT = 30.0
DEFAULT_KEEP_LAST = 4
_CHARS_PER_TOKEN = 4

NotesLike = NotebookStore | BaseStore | str | os.PathLike[str] | None
"""Where the maintainer's notes live (see `create_codebase_maintainer_graph`)."""


class MaintainerState(AgentState[Any]):
    """The maintainer's own state keys: the mode (an input) and the turn's briefing."""

    mode: NotRequired[str]
    briefing: NotRequired[Annotated[str, OmitFromInput]]


@dataclass(frozen=True, kw_only=True)
class MaintainerOptions:
    """The maintainer's rarely changed knobs.

    Attributes:
        keep_last: Recent messages the default context node passes on verbatim.
        max_briefing_tokens: Cap on each turn's briefing.
        explorer_result_tokens: Cap on the explorer's report (with `explorer=True`).
        terminal_timeout: Seconds a terminal command may run.
        max_output_chars: Cap on one terminal command's output. With the default
            context node it is clamped (never rejected) to fit the room `max_tokens`
            leaves after the instructions: about half of it at four characters a
            token, so one file read cannot crowd out the context.

    Raises:
        ValueError: If `max_briefing_tokens` is not a positive int.

    Example:
        >>> MaintainerOptions(max_briefing_tokens=500).max_briefing_tokens
        500
    """

    keep_last: int = DEFAULT_KEEP_LAST
    max_briefing_tokens: int = DEFAULT_MAX_BRIEFING_TOKENS
    explorer_result_tokens: int = DEFAULT_MAX_RESULT_TOKENS
    terminal_timeout: float = DEFAULT_MAINTAINER_TIMEOUT
    max_output_chars: int = DEFAULT_MAINTAINER_OUTPUT_CHARS

    def __post_init__(self) -> None:
        """Check the briefing cap (the terminal checks its own options)."""
        cap = self.max_briefing_tokens
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
            msg = f"max_briefing_tokens must be a positive int, got {cap!r}"
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
    compaction: bool | CompactionMiddleware, summarizer: BaseChatModel | None, token_counter: Any
) -> bool | CompactionMiddleware:
    """The compaction for `compaction=True/False/middleware`."""
    if compaction is True:
        return CompactionMiddleware(
            DEFAULT_HISTORY_TOKENS, model=summarizer, token_counter=token_counter
        )
    return compaction


def _context_step(
    context: bool | ContextMiddleware,
    max_tokens: int,
    project: str,
    token_counter: Any,
    options: MaintainerOptions,
) -> tuple[bool | ContextMiddleware, int]:
    """The context for `context=True/False/middleware`, and the terminal's output cap.

    The default node gets what `max_tokens` leaves after the longest mode's
    instructions; the output cap is clamped to fit that room.
    """
    max_output_chars = options.max_output_chars
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
    middleware = ContextMiddleware(builder=builder, keep_last=options.keep_last)
    return middleware, max_output_chars


def _note_source(notes: NotesLike) -> NotebookStore | BaseStore | None:
    """A directory becomes a `FileNotebookStore` (created if missing); the rest is kept."""
    if isinstance(notes, (str, os.PathLike)):
        Path(notes).mkdir(parents=True, exist_ok=True)
        return FileNotebookStore(Path(notes))
    return notes


def _constraint_store(store: BaseStore | None, root: Path) -> list[AgentMiddleware[Any, Any]]:
    """With a store: constraints kept per user and per workspace (its resolved path)."""
    return [] if store is None else [ConstraintStoreMiddleware(workspace=str(root.resolve()))]


class MaintainerMiddleware(AgentMiddleware[MaintainerState, Any]):
    """The maintainer's turn: a briefing when a request starts it, instructions by mode.

    `before_model` writes the turn's briefing (`briefing`) when the newest message is
    the user's; `wrap_model_call` sets the system prompt to the base and mode
    instructions (and the briefing, when no context middleware renders it).

    Args:
        notes: The note store, a LangGraph store, or `None` for the graph's store.
        namespace: Namespace template of store-backed notes.
        terminal: The read-only terminal the briefing lists and greps with.
        mode: The mode when the state names none.
        project: The project's name in the instructions.
        max_briefing_tokens: Cap on each turn's briefing.
        briefing_in_prompt: Put the briefing in the system prompt.
        token_counter: Counter for the briefing cap.

    Raises:
        ValueError: At run time, if notes live in the graph's store and it has none.
    """

    state_schema = MaintainerState

    def __init__(
        self,
        *,
        notes: NotebookStore | BaseStore | None,
        namespace: tuple[str, ...],
        terminal: Terminal,
        mode: MaintainerMode,
        project: str,
        max_briefing_tokens: int,
        briefing_in_prompt: bool,
        token_counter: Any = None,
    ) -> None:
        super().__init__()
        self._notes = notes
        self._namespace = namespace
        self._terminal = terminal
        self._mode = mode
        self._project = project
        self._cap = max_briefing_tokens
        self._in_prompt = briefing_in_prompt
        self._counter = token_counter
        self.tools = []

    @property
    def name(self) -> str:
        """The middleware's name in the agent graph."""
        return "maintainer"

    def _note_store(self, config: RunnableConfig, store: BaseStore | None) -> NotebookStore | None:
        if isinstance(self._notes, NotebookStore):
            return self._notes
        backing = self._notes if isinstance(self._notes, BaseStore) else store
        if backing is None:
            return None
        namespace = resolve_notebook_namespace(self._namespace, config)
        return LangGraphNotebookStore(backing, namespace=namespace)

    def before_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Write the turn's briefing when a user request starts a turn."""
        if self._notes is None and runtime.store is None:
            # Fail before the model runs, so no note tool call is left unanswered.
            msg = (
                "the maintainer keeps its notes in the graph's store (notes=None), but the "
                "graph was compiled without one: pass store=... or notes="
            )
            raise InvalidArgumentError(msg)
        request = _last_request(state)
        if request is None:
            return None  # a later model call of the same turn keeps the turn's briefing
        current = check_mode(get_state_value(state, "mode", self._mode), "state['mode']")
        text = build_briefing(
            current,
            request,
            terminal=self._terminal,
            notes=self._note_store(get_config(), runtime.store),
            max_briefing_tokens=self._cap,
            token_counter=self._counter,
        )
        return {"briefing": text}

    async def abefore_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Async twin of `before_model`: the terminal and note reads run in a worker thread."""
        return await run_in_executor(get_config(), self.before_model, state, runtime)

    def _instructed(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        """The request with the base and mode instructions as its system prompt."""
        state = request.state
        current = check_mode(get_state_value(state, "mode", self._mode), "state['mode']")
        parts = [BASE_INSTRUCTIONS.format(project=self._project), MODE_INSTRUCTIONS[current]]
        briefing = get_state_value(state, "briefing", "")
        if briefing and self._in_prompt:  # a context middleware renders it as a packet
            # TODO lines and file names come from the repository: data, fenced.
            parts.append(fenced_block([ContextPacket(briefing, type="briefing", source="repo")]))
        return request.override(system_message=SystemMessage("\n\n".join(parts)))

    @signed
    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelCallResult[Any]:
        """Call the model with the mode's instructions."""
        return handler(self._instructed(request))

    @signed
    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelCallResult[Any]:
        """Async twin of `wrap_model_call`."""
        return await handler(self._instructed(request))


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


def create_codebase_maintainer_graph(
    model: BaseChatModel | ModelFactory,
    *,
    workspace: str | os.PathLike[str],
    notes: NotesLike = None,
    note_namespace: Sequence[str] = NOTEBOOK_NAMESPACE,
    project_name: str | None = None,
    default_mode: MaintainerMode = "auto",
    tools: Sequence[BaseTool] = (),
    checks: CheckSelector | None = None,
    explorer: bool = False,
    compaction: bool | CompactionMiddleware = True,
    summarizer: BaseChatModel | None = None,
    context: bool | ContextMiddleware = True,
    max_tokens: int = DEFAULT_MAINTAINER_MAX_TOKENS,
    middleware: Sequence[AgentMiddleware[Any, Any]] = (),
    token_counter: TokenCounter | BaseLanguageModel | None = None,
    context_schema: type[Any] | None = None,
    checkpointer: Checkpointer | None = None,
    store: BaseStore | None = None,
    name: str | None = None,
    options: MaintainerOptions | None = None,
) -> Any:
    """Build the long-horizon codebase maintainer (a `create_context_agent`).

    Args:
        model: A chat model, or a factory building one from the run's config.
        workspace: The codebase directory (the terminal is confined to it).
        notes: Where notes persist: a directory (Markdown files), a `NotebookStore`, a
            LangGraph `BaseStore`, or `None` for the graph's store (a run of a graph
            without one fails with `ValueError` before the model is called).
        note_namespace: Namespace template for store-backed notes (`{user_id}`-style
            parts are filled from `configurable`).
        project_name: Name used in the instructions (default: the workspace's name).
        default_mode: Mode when the state names none.
        tools: Extra tools for the model.
        checks: Tools whose results are checks (a name, names, or a predicate): a
            failing check opens a hot issue, a passing one resolves it.
        explorer: Add `delegate_exploration`, a sub-agent with its own read-only
            terminal that answers one exploration question in a clean context
            window and returns a condensed report.
        compaction: `True` for the default compaction (replace mode, the history's
            high mark at 12,000 tokens), `False` for none, or your own
            `CompactionMiddleware`.
        summarizer: Chat model the default compaction summarizes with when
            rule-based compaction is not enough (`None`: rules only).
        context: `True` for the default context (pinned items and the turn's
            briefing among its sources), `False` for none (the briefing then goes into
            the system prompt), or your own `ContextMiddleware`.
        max_tokens: With the default context, the most tokens one model call is sent
            (the mode instructions are counted in it).
        middleware: Your own `AgentMiddleware`, run outside the maintainer's.
        token_counter: Counter for the briefing cap and the default compaction and
            context (`None` = offline tiktoken).
        context_schema: The run context's schema (e.g. `ContextSettings`).
        checkpointer: A persistent checkpointer (SQLite, Postgres) to continue a
            thread days later.
        store: The LangGraph store (where notes live with `notes=None`); constraints
            are kept in it per user and workspace, so each run names its user
            (`configurable["user_id"]`).
        name: The compiled graph's name.
        options: The rarely changed knobs (`MaintainerOptions`).

    Returns:
        The compiled graph.

    Raises:
        ValueError: If `default_mode`, `max_tokens` or the workspace is invalid.
        TypeError: If `notes` has an unsupported type.
    """
    opts = options or MaintainerOptions()
    mode = check_mode(default_mode, "default_mode")
    project = project_name or Path(workspace).resolve().name
    context, output_chars = _context_step(context, max_tokens, project, token_counter, opts)
    root = Path(workspace)
    terminal_tool = create_terminal_tool(
        root, timeout=opts.terminal_timeout, max_output_chars=output_chars
    )
    terminal = Terminal(root, timeout=opts.terminal_timeout, max_output_chars=output_chars)
    note_store = _note_source(notes)
    namespace = tuple(note_namespace)
    note_tools = create_notebook_tools(note_store, namespace=namespace)
    maintainer = MaintainerMiddleware(
        notes=note_store,
        namespace=namespace,
        terminal=terminal,
        mode=mode,
        project=project,
        max_briefing_tokens=opts.max_briefing_tokens,
        briefing_in_prompt=context is False,
        token_counter=token_counter,
    )
    extra_tools = list(tools)
    if explorer:
        extra_tools.append(_explorer_tool(model, root, project, output_chars, token_counter, opts))
    graph = create_context_agent(
        model,
        [terminal_tool, *note_tools, *extra_tools],
        middleware=[*middleware, maintainer, SessionMiddleware(), *_constraint_store(store, root)],
        note_tools=False,
        checks=checks,
        compaction=_compaction_step(compaction, summarizer, token_counter),
        context=context,
        tool_output_limit=False,  # the terminal caps its own output (`max_output_chars`)
        context_schema=context_schema,
        checkpointer=checkpointer,
        store=store,
    )
    if name is not None:
        graph.name = name
    return graph
