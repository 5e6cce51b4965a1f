"""`create_agent` middleware that adds tools and their state keys: plan, notes, pinned items.

`StateToolsMiddleware` adds the plan and note tools with `plan`/`note`;
`PinnedMiddleware` adds the constraint tools and a hot-issue watch;
`ConstraintStoreMiddleware` keeps the constraints per user in the graph's store.
"""

from __future__ import annotations

from typing import Annotated, Any

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
)
from langchain.agents.middleware.types import OmitFromInput
from langchain_core.messages import ToolMessage
from langchain_core.runnables.config import run_in_executor
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.runtime import Runtime

from langgraph_context.agents._hooks import drop_before_model
from langgraph_context.agents._tool_check import (
    _CheckedModelCall,
    require_own_tools,
)
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.notebook import create_load_notes_node, create_save_notes_node
from langgraph_context.notebook.sync import STATE_NOTES_NAMESPACE
from langgraph_context.pinned import (
    PinnedStateMixin,
    create_hot_issue_node,
    create_record_constraint_tool,
    create_resolve_constraint_tool,
)
from langgraph_context.pinned.store import (
    DEFAULT_WORKSPACE_KEY,
    async_constraints,
    constraint_store_namespace,
    sync_constraints,
)
from langgraph_context.pinned.watch import CheckSelector
from langgraph_context.state import NoteStateMixin, PlanStateMixin
from langgraph_context.toolkit import tool_name
from langgraph_context.tools import (
    create_ls_tool,
    create_query_note_tool,
    create_update_note_tool,
    create_update_plan_tool,
    create_write_note_tool,
    create_write_plan_tool,
)
from langgraph_context.tools.terminal import keep_latest_cwd

__all__ = [
    "ConstraintStoreMiddleware",
    "ConstraintStoreState",
    "NoteSyncMiddleware",
    "PinnedAgentState",
    "PinnedMiddleware",
    "StateToolsMiddleware",
    "StateToolsState",
    "TerminalStateMiddleware",
    "state_tools",
]


def state_tools(
    plan_tools: bool, note_tools: bool, constraint_tools: bool, *, note_prefix: str | None = None
) -> list[tuple[str, BaseTool]]:
    """The plan, note and constraint tools switched on, each with where it comes from.

    Args:
        plan_tools: `write_plan`, `update_plan`.
        note_tools: `write_note`, `ls`, `query_note`, `update_note`.
        constraint_tools: `record_constraint`, `resolve_constraint`.
        note_prefix: Name the note tools `<note_prefix>_<name>` (e.g. `notes_ls`).

    Returns:
        `(origin, tool)` pairs, for `toolkit.check_distinct_tools`.
    """
    tools: list[tuple[str, BaseTool]] = []
    if constraint_tools:
        tools += [
            ("constraint tool", create_record_constraint_tool()),
            ("constraint tool", create_resolve_constraint_tool()),
        ]
    if plan_tools:
        tools += [("plan tool", create_write_plan_tool()), ("plan tool", create_update_plan_tool())]
    if note_tools:
        made = [
            create_write_note_tool(prefix=note_prefix),
            create_ls_tool(prefix=note_prefix),
            create_query_note_tool(prefix=note_prefix),
            create_update_note_tool(prefix=note_prefix),
        ]
        tools += [("note tool", t) for t in made]
    return tools


class StateToolsState(AgentState[Any], PlanStateMixin, NoteStateMixin):
    """Agent state plus `plan` and `note`."""


class TerminalAgentState(AgentState[Any]):
    """Agent state plus `terminal_cwd`, internal: not part of the graph's input."""

    # The reducer must come last: LangGraph reads a reducer from the last metadata item.
    terminal_cwd: Annotated[str, OmitFromInput, keep_latest_cwd]


class TerminalStateMiddleware(AgentMiddleware[TerminalAgentState, Any]):
    """Give a `create_agent` agent the terminal's `terminal_cwd` state key; nothing else.

    The read-only terminal keeps each thread's working directory in checkpointed
    state (so a `cd` survives a worker change or a restart) and refuses `cd` on a graph
    without the key. This middleware has no hooks, so it adds no node to the graph.
    """

    state_schema = TerminalAgentState


class PinnedAgentState(AgentState[Any], PinnedStateMixin):
    """Agent state plus pinned items: `constraints` and `hot_issues`."""


class PinnedMiddleware(_CheckedModelCall, AgentMiddleware[PinnedAgentState, Any]):
    """Pinned items for `create_agent`: constraint tools and a hot-issue watch.

    Args:
        checks: Tools whose results are checks (a name, names, or a predicate); the
            results of each tool round are watched before the next model call.
        constraint_tools: Add `record_constraint` and `resolve_constraint`.
        name: Middleware name in the agent graph (`pinned.before_model`).

    Raises:
        ValueError: If there would be nothing to add, `checks` names no tool, or (at
            the first model call) one of its tools shares a name with another.
    """

    state_schema = PinnedAgentState

    def __init__(
        self,
        *,
        checks: CheckSelector | None = None,
        constraint_tools: bool = True,
        name: str = "pinned",
    ) -> None:
        super().__init__()
        if checks is None and not constraint_tools:
            msg = "checks is None and constraint_tools is False: the middleware would add nothing"
            raise InvalidArgumentError(msg)
        self._name = _check_name(name)
        made = state_tools(plan_tools=False, note_tools=False, constraint_tools=constraint_tools)
        self.tools = [t for _, t in made]
        self._watch = create_hot_issue_node(checks) if checks is not None else None
        named = {checks} if isinstance(checks, str) else checks
        self._check_names = frozenset() if callable(named) or named is None else frozenset(named)
        self._checked = False
        if self._watch is None:
            drop_before_model(self)  # no checks: the hook would do nothing per call

    @property
    def name(self) -> str:
        """The middleware's name in the agent graph (`pinned.before_model`)."""
        return self._name

    def _check_request(self, request: ModelRequest) -> None:
        """Raise if `checks` names a tool the agent does not have (known at the first call).

        Raises:
            ValueError: Naming the missing checks and the agent's tools.
        """
        if self._checked:
            return
        require_own_tools(self, request)
        self._checked = True  # the tools are fixed per agent
        if not self._check_names:
            return
        names = {tool_name(tool) for tool in request.tools}
        missing = sorted(self._check_names - names)
        if missing:
            msg = (
                f"checks names {missing}, which this agent has no tool for; "
                f"its tools: {sorted(n for n in names if n)}"
            )
            raise InvalidArgumentError(msg)

    def before_model(self, state: PinnedAgentState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Open or resolve hot issues from the last tool round's check results."""
        if self._watch is None:
            return None
        return self._watch(state) or None

    async def abefore_model(
        self, state: PinnedAgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Async twin of `before_model`."""
        return self.before_model(state, runtime)


class ConstraintStoreState(PinnedAgentState):
    """`PinnedAgentState` plus `stored_constraints`, internal: not part of the input."""

    stored_constraints: Annotated[list[str], OmitFromInput]


class ConstraintStoreMiddleware(AgentMiddleware[ConstraintStoreState, Any]):
    """Keep the user's constraints in the graph's store, so they reach their next threads.

    Before each model call it reconciles the thread's `constraints` with the store
    (`pinned.store.sync_constraints`): a rule recorded here is stored, one set in
    another thread of the same user (and workspace) is added, a resolution in either
    is carried to the other. The user is `config["configurable"]["user_id"]` (or the
    run context's `user_id`); a run on a graph with a store that names no user is
    refused with `InvalidArgumentError`, so users never share rules. A graph compiled
    without a store runs as if this middleware were absent.

    It is its own class, not a `PinnedMiddleware` option, so an agent without a
    store carries no hook node and no `stored_constraints` key.

    Args:
        workspace: A fixed workspace label (the maintainer's workspace path); `None`
            reads `configurable["workspace"]` (or the context's) when the run names one.
        name: Middleware name in the agent graph (`constraint_store.before_model`).
    """

    state_schema = ConstraintStoreState

    def __init__(self, *, workspace: str | None = None, name: str = "constraint_store") -> None:
        super().__init__()
        if workspace is not None and (not isinstance(workspace, str) or not workspace):
            msg = f"workspace must be a non-empty string or None, got {workspace!r}"
            raise InvalidArgumentError(msg)
        self._workspace = workspace
        self._name = _check_name(name)

    @property
    def name(self) -> str:
        """The middleware's name in the agent graph (`constraint_store.before_model`)."""
        return self._name

    def _namespace(self, runtime: Runtime[Any]) -> tuple[str, ...]:
        """The run's namespace; raises `InvalidArgumentError` if the run names no user."""
        config: dict[str, Any] = dict(get_config())
        if self._workspace is not None:
            configurable = {**(config.get("configurable") or {})}
            configurable[DEFAULT_WORKSPACE_KEY] = self._workspace
            config["configurable"] = configurable
        return constraint_store_namespace(config, getattr(runtime, "context", None))

    @staticmethod
    def _update(seen: list[str], update: list[Any], after: list[str]) -> dict[str, Any] | None:
        """The state write of one sync, or `None` when nothing changed (no write)."""
        out: dict[str, Any] = {"constraints": update} if update else {}
        if sorted(seen) != after:
            out["stored_constraints"] = after
        return out or None

    def before_model(
        self, state: ConstraintStoreState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Reconcile the thread's constraints with the store (see the class)."""
        if runtime.store is None:
            return None
        seen = list(state.get("stored_constraints") or [])
        update, after = sync_constraints(
            runtime.store,
            self._namespace(runtime),
            constraints=state.get("constraints") or [],
            seen=seen,
        )
        return self._update(seen, update, after)

    async def abefore_model(
        self, state: ConstraintStoreState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Async twin of `before_model` (the store's async methods)."""
        if runtime.store is None:
            return None
        seen = list(state.get("stored_constraints") or [])
        update, after = await async_constraints(
            runtime.store,
            self._namespace(runtime),
            constraints=state.get("constraints") or [],
            seen=seen,
        )
        return self._update(seen, update, after)


class StateToolsMiddleware(_CheckedModelCall, AgentMiddleware[StateToolsState, Any]):
    """Give a `create_agent` agent the plan and/or note tools and their state keys.

    Args:
        plan_tools: Add `write_plan` and `update_plan`.
        note_tools: Add the note tools, named `notes_write_note`, `notes_ls`,
            `notes_query_note` and `notes_update_note` by default.
        note_prefix: Prefix of the note tools' names (`<note_prefix>_<name>`);
            `None` gives the bare names (`ls`, ...). The default is `"notes"`
            because `create_agent` keeps only the last of two same-named tools
            before any middleware sees the list: bare `ls` placed after deepagents'
            `FilesystemMiddleware` would drop its filesystem `ls` with no way for
            this middleware to notice.
        name: Middleware name, unique per agent.

    Raises:
        ValueError: If both kinds of tools are switched off, or (at the first model
            call) one of its tools shares a name with another tool of the agent.
    """

    state_schema = StateToolsState

    def __init__(
        self,
        *,
        plan_tools: bool = True,
        note_tools: bool = True,
        note_prefix: str | None = "notes",
        name: str = "state_tools",
    ) -> None:
        super().__init__()
        if not plan_tools and not note_tools:
            msg = "plan_tools and note_tools are both False: the middleware would add nothing"
            raise InvalidArgumentError(msg)
        self._name = _check_name(name)
        made = state_tools(plan_tools, note_tools, constraint_tools=False, note_prefix=note_prefix)
        self.tools = [t for _, t in made]
        self._checked = False

    @property
    def name(self) -> str:
        """The middleware's name in the agent graph."""
        return self._name

    def _check_request(self, request: ModelRequest) -> None:
        """`require_own_tools`, once: the agent's tools are fixed."""
        if not self._checked:
            require_own_tools(self, request)
            self._checked = True


def _check_name(name: str) -> str:
    """Refuse an empty middleware name.

    Raises:
        ValueError: If `name` is not a non-empty string.
    """
    if not isinstance(name, str) or not name.strip():
        msg = f"name must be a non-empty string, got {name!r}"
        raise InvalidArgumentError(msg)
    return name


class NoteSyncMiddleware(AgentMiddleware[StateToolsState, Any]):
    """Keep the `note` state in step with the graph's store, so notes outlive a thread.

    Before each model call after a tool round, the notes it created or changed are
    saved to the store; then the store's notes are loaded into `note` (the store wins
    over a stale thread; the cores of
    `notes.create_save_notes_node` and `notes.create_load_notes_node`). Notes live
    under `(*namespace, <user>)`; a run naming no user fails before the model call.
    A graph without a store runs as if the middleware were absent.

    Args:
        namespace: Namespace prefix of the notes in the store.
        user_key: `configurable` (or run context) key naming the user; `None` for
            one namespace shared by every user.

    Raises:
        ValueError: If `namespace` or `user_key` is invalid.
    """

    state_schema = StateToolsState

    def __init__(
        self,
        *,
        namespace: tuple[str, ...] = STATE_NOTES_NAMESPACE,
        user_key: str | None = "user_id",
    ) -> None:
        super().__init__()
        self._load = create_load_notes_node(namespace=namespace, user_key=user_key)
        self._save = create_save_notes_node(namespace=namespace, user_key=user_key)
        self.tools = []

    @property
    def name(self) -> str:
        """The middleware's name in the agent graph."""
        return "note_sync"

    def before_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Save the notes the last tool round wrote, then load the store's notes."""
        config = get_config()
        messages = state.get("messages") or []
        if messages and isinstance(messages[-1], ToolMessage):
            self._save(state, config, runtime)
        return self._load(state, config, runtime) or None

    async def abefore_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Async twin of `before_model`: the store calls run in a worker thread."""
        return await run_in_executor(get_config(), self.before_model, state, runtime)
