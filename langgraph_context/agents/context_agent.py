"""`create_context_agent`: a tool-calling loop whose every model call is prepared.

The graph::

    START -> [pre_model ...] -> model -> [post_model ...] -> tools -> [post_tools ...] -+
                  ^                                    |                               |
                  |                                    +-> END (no tool calls)         |
                  +--------------------------------------------------------------------+

* `pre_model` steps are ordinary LangGraph nodes run in order before every model
  call: this is where a `replace`-mode compaction node (which rewrites `messages`)
  plugs in. A `view`-mode compaction node runs inside the model step instead, like
  the context node, so its view is never checkpointed.
* The `context` node is not a graph node: the model node runs it on the state for
  every call and sends its output to the model. The assembled input is computed per
  call, never written to state (so never checkpointed) and never streamed as a
  message (`stream_mode="messages"` shows the model's answer, not the prompt). Opt in
  to a stored copy for debugging with `store_view=True`.
* A `pre_model` step that wants the model to see something other than `messages` may
  still write it to `llm_input_messages` (`create_react_agent`'s `pre_model_hook`
  contract); the model node consumes that view once and clears it.
* `post_tools` steps run after each tool round (for example a watcher that opens a
  hot issue when a check tool fails); `post_model` steps run after every model
  answer (for example `safety.create_output_guard_node`).
* A tool call whose arguments are not valid JSON (`invalid_tool_calls`, as
  `langchain-openai` parses a malformed reply) is answered at once with an error
  `ToolMessage` the model can act on, and the loop goes on: the turn never ends
  silently on a call nothing ran, and the next request stays valid for the provider.
* Plan tools and note tools are on by default and each can be switched off.
* With a view, the system prompt goes first in the view's system message.
* Without any step writing a view, the model sees the system prompt, a short
  `[State]` block with the plan and the note names (`state_in_prompt`), and the
  messages.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NotRequired

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableLambda
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.pregel.protocol import PregelProtocol

from langgraph_context.agents._model_call import (
    DEFAULT_MAX_NOTE_NAMES,
    LLM_INPUT_KEY,
    ModelInput,
    PromptLike,
    render_state_block,
)
from langgraph_context.agents._model_call import model_node as _model_node
from langgraph_context.agents._overflow import Window
from langgraph_context.agents.models import ModelFactory, is_chat_model
from langgraph_context.compaction import CompactionNode, CompactionStateMixin
from langgraph_context.context import ContextBuilder, ContextConfig, create_context_node
from langgraph_context.context.config import DEFAULT_MAX_TOKENS
from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.memory import (
    MemoryStateMixin,
    create_hot_issue_node,
    create_record_constraint_tool,
    create_resolve_constraint_tool,
)
from langgraph_context.memory.watch import CheckSelector
from langgraph_context.state import NoteStateMixin, PlanStateMixin, get_state_value
from langgraph_context.tokens import model_window, resolve_counter
from langgraph_context.tools import (
    create_ls_tool,
    create_query_note_tool,
    create_update_note_tool,
    create_update_plan_tool,
    create_write_note_tool,
    create_write_plan_tool,
)

__all__ = [
    "DEFAULT_MAX_NOTE_NAMES",
    "LLM_INPUT_KEY",
    "ContextAgentState",
    "PromptLike",
    "StepsLike",
    "create_context_agent",
    "default_context_node",
    "render_state_block",
]

_RESERVED_NODES = frozenset({"model", "tools"})

StepsLike = Mapping[str, Any] | Sequence[Any]
"""Graph nodes to run in order: a name -> node mapping, or a sequence (auto-named)."""


class ContextAgentState(
    MessagesState, PlanStateMixin, NoteStateMixin, MemoryStateMixin, CompactionStateMixin
):
    """State of `create_context_agent`: messages, plan, notes, pinned memory, view.

    `llm_input_messages` holds what the next model call sees when a pre-model step
    prepared it; the model node clears it after use. `compaction` and
    `compaction_requested` belong to the compaction node.
    """

    llm_input_messages: NotRequired[list[AnyMessage]]


def _named_steps(steps: StepsLike | None, prefix: str) -> list[tuple[str, Any]]:
    if not steps:
        return []
    if isinstance(steps, Mapping):
        named = [(str(k), v) for k, v in steps.items()]
    elif isinstance(steps, Sequence) and not isinstance(steps, str):
        named = [(f"{prefix}_{i}", step) for i, step in enumerate(steps, 1)]
    else:
        msg = f"{prefix} must be a mapping of name -> node or a sequence of nodes, got {steps!r}"
        raise InvalidTypeError(msg)
    for step_name, step in named:
        if step_name in _RESERVED_NODES:
            msg = f"{prefix} step name {step_name!r} is reserved; avoid {sorted(_RESERVED_NODES)}"
            raise InvalidArgumentError(msg)
        if not callable(step) and not hasattr(step, "invoke"):
            msg = f"{prefix} step {step_name!r} must be a node (callable or runnable), got {step!r}"
            raise InvalidTypeError(msg)
    return named


def default_context_node(max_tokens: int | None = None) -> Any:
    """Return the context node `context=True` uses.

    A default `ContextBuilder`: messages, plan, notes and pinned memory (constraints,
    hot issues) are its sources, and untrusted packets are fenced in a fresh random
    boundary on every build.

    Args:
        max_tokens: Budget of the assembled model input (context plus recent
            messages); `None` for the builder's default (`ContextConfig().max_tokens`).

    Returns:
        The node, writing `llm_input_messages`.

    Raises:
        ValueError: If `max_tokens` is not a positive int.
    """
    if max_tokens is None:
        return create_context_node(ContextBuilder())
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        msg = f"max_tokens must be a positive int, got {max_tokens!r}"
        raise InvalidArgumentError(msg)
    return create_context_node(ContextBuilder(config=ContextConfig(max_tokens=max_tokens)))


def _context_step(context: Any, max_tokens: int | None) -> Any:
    """The context node for the `context`/`max_tokens` arguments (or `None`)."""
    if context is True:
        return default_context_node(max_tokens)
    if max_tokens is not None:
        msg = "max_tokens only applies with context=True (size your own node's builder)"
        raise InvalidArgumentError(msg)
    if context is False or context is None:
        return None
    if isinstance(context, ContextBuilder):
        return create_context_node(context)
    return context


def _check_model(model: Any) -> None:
    if isinstance(model, PregelProtocol) or not (is_chat_model(model) or callable(model)):
        msg = f"model must be a chat model or a factory taking a config, got {model!r}"
        raise InvalidTypeError(msg)


def _agent_tools(
    tools: Sequence[BaseTool], plan_tools: bool, note_tools: bool, memory_tools: bool
) -> list[BaseTool]:
    """The agent's tools followed by the state tools switched on; names must differ."""
    all_tools = [*tools, *_state_tools(plan_tools, note_tools, memory_tools)]
    names = [t.name for t in all_tools]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        msg = f"tools must have distinct names; repeated: {repeated}"
        raise InvalidArgumentError(msg)
    return all_tools


def _pre_model_steps(pre_model: StepsLike | None, compaction: Any) -> list[tuple[str, Any]]:
    """Named steps before the model: compaction first, then `pre_model`."""
    before = _named_steps(pre_model, "pre_model")
    if compaction is None:
        return before
    if "compaction" in {n for n, _ in before}:
        msg = "pre_model step name 'compaction' is taken by the compaction argument"
        raise InvalidArgumentError(msg)
    (checked,) = _named_steps({"compaction": compaction}, "compaction")
    return [checked, *before]


def _view_compaction(compaction: Any) -> CompactionNode | None:
    """A view-mode compaction node, which the model step runs per call (never a graph node)."""
    if isinstance(compaction, CompactionNode) and compaction.mode == "view":
        return compaction
    return None


def _context_runnable(context: Any, max_tokens: int | None) -> Runnable[Any, Any] | None:
    """The context node for the `context`/`max_tokens` arguments, as a runnable (or `None`)."""
    step = _context_step(context, max_tokens)
    if step is None:
        return None
    if isinstance(step, Runnable):
        return step
    if not callable(step):
        msg = f"context must be a node, a ContextBuilder or True, got {step!r}"
        raise InvalidTypeError(msg)
    return RunnableLambda(step, name="context")


def _post_tools_steps(
    post_tools: StepsLike | None, checks: CheckSelector | None, tool_names: list[str]
) -> list[tuple[str, Any]]:
    """Named steps after each tool round: the check watcher first, then `post_tools`."""
    after = _named_steps(post_tools, "post_tools")
    if checks is None:
        return after
    if "watch_checks" in {n for n, _ in after}:
        msg = "post_tools step name 'watch_checks' is taken by the checks argument"
        raise InvalidArgumentError(msg)
    after = [("watch_checks", create_hot_issue_node(checks)), *after]
    _check_selector(checks, tool_names)
    return after


def _check_selector(checks: CheckSelector, names: list[str]) -> None:
    """Refuse check names that are not among the agent's tools (a typo would be silent)."""
    if callable(checks):
        return
    wanted = [checks] if isinstance(checks, str) else list(checks)
    unknown = sorted({str(n) for n in wanted} - set(names))
    if unknown:
        msg = f"checks must name the agent's tools; unknown: {unknown}; tools: {sorted(names)}"
        raise InvalidArgumentError(msg)


def _state_tools(plan_tools: bool, note_tools: bool, memory_tools: bool) -> list[BaseTool]:
    tools: list[BaseTool] = []
    if memory_tools:
        tools += [create_record_constraint_tool(), create_resolve_constraint_tool()]
    if plan_tools:
        tools += [create_write_plan_tool(), create_update_plan_tool()]
    if note_tools:
        tools += [
            create_write_note_tool(),
            create_ls_tool(),
            create_query_note_tool(),
            create_update_note_tool(),
        ]
    return tools


def create_context_agent(
    model: BaseChatModel | Runnable[Any, Any] | ModelFactory,
    tools: Sequence[BaseTool] = (),
    *,
    system_prompt: PromptLike = None,
    plan_tools: bool = True,
    note_tools: bool = True,
    memory_tools: bool = True,
    checks: CheckSelector | None = None,
    compaction: Any | None = None,
    context: Any = None,
    max_tokens: int | None = None,
    pre_model: StepsLike | None = None,
    post_model: StepsLike | None = None,
    post_tools: StepsLike | None = None,
    state_schema: type[Any] = ContextAgentState,
    state_in_prompt: bool = True,
    store_view: bool = False,
    context_window: int | None = None,
    name: str | None = None,
) -> StateGraph[Any, Any, Any, Any]:
    """Build (uncompiled) a tool-calling agent with plan/note tools and pre-model steps.

    Args:
        model: A chat model (also one wrapped by `with_retry`, `with_fallbacks` or a
            configurable `init_chat_model`: any runnable but a compiled graph), or a
            factory building one from the run's config (such as
            `resolve_chat_model`), called once per model step.
        tools: The agent's own tools, added to the plan, note and memory tools.
        system_prompt: Instructions, or a function of the state returning them.
        plan_tools: Include `write_plan` and `update_plan`.
        note_tools: Include `write_note`, `ls`, `query_note` and `update_note`.
        memory_tools: Include `record_constraint` and `resolve_constraint` (pinned
            user rules, shown on every call until resolved).
        checks: Tools whose results are checks (a name, names, or a predicate): a
            failing check opens a hot issue, a passing one resolves it (a
            `watch_checks` step after each tool round).
        compaction: A compaction node (`create_compaction_node(...)`), run first
            before every model call; `None` for none. A `replace`-mode node is a
            graph node rewriting the history; a `view`-mode node runs inside the
            model step, once per call, and its view goes to the model (or to the
            context node) without being written to state; only its record (the
            running summary) is.
        context: A context node (`create_context_node(...)`), a `ContextBuilder`
            (wrapped in `create_context_node`), or `True` for
            `default_context_node(max_tokens)` (default builder plus pinned
            memory). The model node runs it on the state (after the `pre_model`
            steps, so on the compacted history) and sends the `llm_input_messages`
            it returns; nothing of it is written to state or streamed. The system
            prompt is put before the assembled context in one system message.
        max_tokens: With `context=True`, the most tokens one model call is sent (the
            budget of the assembled view; keep it below the model's window minus the
            system prompt and the reply); `None` for the builder's default.
        pre_model: Further nodes, run in order after `compaction`.
        post_model: Nodes run in order after every model answer, before its tool
            calls run (e.g. `safety.create_output_guard_node(action="replace")`,
            which can drop the tool calls of a flagged answer).
        post_tools: Nodes run in order after every tool round.
        state_schema: The graph state; must hold `messages`, plus `plan`/`note` when
            those tools are on and `llm_input_messages` when a step writes a view.
        state_in_prompt: Without a prepared view, add pinned memory, the plan and the
            note names to the system message (`render_state_block`).
        store_view: Debugging only: also write every model input, as sent, to
            `llm_input_messages` (checkpointed, and visible to API clients).
        context_window: The model's context window in tokens; `None` reads it from
            the model's profile (`profile["max_input_tokens"]`) when it has one. It
            sizes `context=True` without `max_tokens` (at most half the window), is
            recorded with the provider-reported usage in `token_usage` (where a
            compaction node's fraction trigger finds it), and sets the target of
            the overflow retry.
        name: The agent's name, set on every AI message it writes (a supervisor
            tells its agents apart by it); name the compiled graph with
            `compile(name=...)`.

    Every answer's reported input tokens are kept in `token_usage` with the offline
    count of the same request; the compaction node multiplies its counts by that
    ratio. When the provider refuses a request as over the window (OpenAI's
    `context_length_exceeded`, Anthropic's "prompt is too long"), the history is
    compacted rule-based to half of what fits (half the window in counted tokens,
    at most half the refused history), the state's history is replaced by it, and
    the call is made once more; a second refusal raises `ContextWindowError`.

    Returns:
        A `StateGraph`; compile it with your checkpointer and store.

    Raises:
        TypeError: If `model` is neither a chat model nor callable (or is a compiled
            graph), cannot bind the tools, or a step is not a node.
        ValueError: If a step uses a reserved node name (`model`, `tools`, and
            `compaction`/`context`/`watch_checks` when those are given), two tools
            share a name, `checks` names a tool the agent does not have (or none),
            a step name is used twice,
            or `max_tokens` is not a positive int or is given without
            `context=True`, `context_window` is not a positive int, or `name` is blank.

    Example:
        >>> from langchain_core.language_models import FakeListChatModel
        >>> chat = FakeListChatModel(responses=["hello"])
        >>> graph = create_context_agent(
        ...     chat, plan_tools=False, note_tools=False, memory_tools=False
        ... ).compile()
        >>> graph.invoke({"messages": [("user", "hi")]})["messages"][-1].content
        'hello'
    """
    _check_model(model)
    window = _window(model, context_window)
    all_tools = _agent_tools(tools, plan_tools, note_tools, memory_tools)
    in_call = _view_compaction(compaction)
    before = _pre_model_steps(pre_model, None if in_call else compaction)
    if context is True and max_tokens is None and window.context_window is not None:
        max_tokens = min(DEFAULT_MAX_TOKENS, window.context_window // 2)
    view = _context_runnable(context, max_tokens)
    answered = _named_steps(post_model, "post_model")
    after = _post_tools_steps(post_tools, checks, [t.name for t in all_tools])
    _distinct_steps(before, answered, after)
    model_node = _model_node(
        model,
        all_tools,
        system_prompt,
        ModelInput(
            view,
            state_in_prompt=state_in_prompt,
            store_view=store_view,
            window=window,
            name=_check_name(name),
            compaction=in_call,
        ),
    )
    graph: StateGraph[Any, Any, Any, Any] = StateGraph(state_schema)
    graph.add_node("model", model_node)
    entry = _chain(graph, START, before, "model")
    last = "model"
    for step_name, step in answered:
        graph.add_node(step_name, step)
        graph.add_edge(last, step_name)
        last = step_name
    if not all_tools:
        graph.add_edge(last, END)
        return graph
    graph.add_node("tools", ToolNode(all_tools))
    graph.add_conditional_edges(last, _router(entry), list(dict.fromkeys(["tools", entry, END])))
    _chain(graph, "tools", after, entry)
    return graph


def _check_name(name: str | None) -> str | None:
    """Refuse a blank agent name.

    Raises:
        ValueError: If `name` is given but not a non-empty string.
    """
    if name is not None and (not isinstance(name, str) or not name.strip()):
        msg = f"name must be a non-empty string, got {name!r}"
        raise InvalidArgumentError(msg)
    return name


def _window(model: Any, context_window: int | None) -> Window:
    """The model's window: `context_window`, else the profile of a fixed chat model."""
    if context_window is not None and (
        isinstance(context_window, bool)
        or not isinstance(context_window, int)
        or context_window < 1
    ):
        msg = f"context_window must be a positive int, got {context_window!r}"
        raise InvalidArgumentError(msg)
    known = context_window if context_window is not None else model_window(model)
    return Window(known, resolve_counter(None))


def _distinct_steps(*groups: list[tuple[str, Any]]) -> None:
    """Refuse a step name used in two of the step groups."""
    names = [n for group in groups for n, _ in group]
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        msg = f"pre_model, post_model and post_tools step names must differ; repeated: {clash}"
        raise InvalidArgumentError(msg)


def _chain(
    graph: StateGraph[Any, Any, Any, Any], source: str, steps: list[tuple[str, Any]], target: str
) -> str:
    """Add `steps` as nodes run in order from `source` to `target`; return the first node."""
    previous = source
    for step_name, step in steps:
        graph.add_node(step_name, step)
        graph.add_edge(previous, step_name)
        previous = step_name
    graph.add_edge(previous, target)
    return steps[0][0] if steps else target


def _router(entry: str) -> Callable[[Any], str]:
    """Route after the model: run its calls, go again after invalid calls, or end."""

    def route(state: Any) -> str:
        messages = list(get_state_value(state, "messages", []))
        answered = False
        while messages and isinstance(messages[-1], ToolMessage):
            messages.pop()
            answered = True  # the model node answered calls whose arguments did not parse
        last = messages[-1] if messages else None
        if isinstance(last, AIMessage) and last.tool_calls:
            return "tools"
        return entry if answered else END

    return route
