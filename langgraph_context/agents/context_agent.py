"""`create_context_agent`: a tool-calling loop whose every model call is prepared.

The graph::

    START -> [pre_model steps ...] -> model -> tools -> [post_tools steps ...] -+
                    ^                    |                                        |
                    |                    +-> END (no tool calls)                  |
                    +-----------------------------------------------------------+
                    +---- (only calls whose arguments did not parse) ---- model

* `pre_model` steps are ordinary LangGraph nodes run in order before every model
  call: this is where the compaction node (which may rewrite `messages`) and the
  context node (which writes the assembled view) plug in. A step that wants the model
  to see something other than `messages` writes it to `llm_input_messages`, the same
  contract as `create_react_agent`'s `pre_model_hook`; the model node consumes that
  view once and clears it, so a view is never reused by a later call.
* `post_tools` steps run after each tool round (for example a watcher that opens a
  hot issue when a check tool fails).
* Plan tools and note tools are on by default and each can be switched off.
* With a view, the system prompt goes first in the view's system message.
* A tool call whose arguments are not valid JSON (`invalid_tool_calls`, as
  `langchain-openai` parses a malformed reply) is answered at once with an error
  `ToolMessage` the model can act on, and the loop goes on: the turn never ends
  silently on a call nothing ran, and the next request stays valid for the provider
  (every call it sends has a result).
* Without any step writing a view, the model sees the system prompt, a short
  `[State]` block with the plan and the note names (`state_in_prompt`), and the
  messages.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NotRequired, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.pregel.protocol import PregelProtocol

from langgraph_context.agents.models import ModelFactory, bind_model_tools, is_chat_model
from langgraph_context.compaction import CompactionStateMixin
from langgraph_context.context import ContextBuilder, ContextConfig, create_context_node
from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.memory import (
    MemoryStateMixin,
    create_hot_issue_node,
    create_record_constraint_tool,
    create_resolve_constraint_tool,
    render_memory,
)
from langgraph_context.memory.watch import CheckSelector
from langgraph_context.messages import content_text, repair_history
from langgraph_context.state import NoteStateMixin, PlanStateMixin, get_state_value, render_plan
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

LLM_INPUT_KEY = "llm_input_messages"
DEFAULT_MAX_NOTE_NAMES = 50
_RESERVED_NODES = frozenset({"model", "tools"})

PromptLike = str | Callable[[Any], str] | None
"""A system prompt, or a function of the state returning one (e.g. per mode)."""

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


def render_state_block(state: Any, *, max_note_names: int = DEFAULT_MAX_NOTE_NAMES) -> str:
    """Render pinned memory, the plan and the note names as a short `[State]` block.

    Args:
        state: Graph state (dict or object) with optional `constraints`,
            `hot_issues`, `plan` and `note`.
        max_note_names: At most this many note names are listed (the rest counted).

    Returns:
        The block, or `""` when all of them are empty.

    Example:
        >>> print(render_state_block({"plan": [{"content": "read", "status": "done"}]}))
        [State]
        Plan:
        1. [done] read
    """
    plan = get_state_value(state, "plan", [])
    notes = get_state_value(state, "note", {})
    lines: list[str] = []
    memory = render_memory(state)
    if memory:
        lines.append(memory)
    if plan:
        lines += ["Plan:", render_plan(list(plan))]
    if notes:
        names = sorted(notes)
        shown = ", ".join(names[:max_note_names])
        more = f" (+{len(names) - max_note_names} more)" if len(names) > max_note_names else ""
        lines.append(f"Notes (read with query_note): {shown}{more}")
    return "\n".join(["[State]", *lines]) if lines else ""


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


def _pre_model_steps(
    pre_model: StepsLike | None, compaction: Any, context: Any, max_tokens: int | None
) -> list[tuple[str, Any]]:
    """Named steps before the model: compaction first, `pre_model`, context last."""
    before = _named_steps(pre_model, "pre_model")
    context = _context_step(context, max_tokens)
    for step_name, step in (("compaction", compaction), ("context", context)):
        if step is None:
            continue
        if step_name in {n for n, _ in before}:
            msg = f"pre_model step name {step_name!r} is taken by the {step_name} argument"
            raise InvalidArgumentError(msg)
        (checked,) = _named_steps({step_name: step}, step_name)
        before = [checked, *before] if step_name == "compaction" else [*before, checked]
    return before


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


def _model_input(state: Any, prompt: PromptLike, state_in_prompt: bool) -> list[BaseMessage]:
    view = get_state_value(state, LLM_INPUT_KEY, None)
    if view:
        messages = list(view)
        text = "" if prompt is None else prompt if isinstance(prompt, str) else prompt(state)
        if not text:
            return messages
        if messages and isinstance(messages[0], SystemMessage):
            # One system message: the agent's instructions first (a stable, cacheable
            # prefix), then the assembled context.
            assembled = content_text(messages[0].content)
            messages[0] = SystemMessage(f"{text}\n\n{assembled}" if assembled else text)
        else:
            messages.insert(0, SystemMessage(text))
        return messages
    parts: list[str] = []
    if prompt is not None:
        parts.append(prompt if isinstance(prompt, str) else prompt(state))
    if state_in_prompt:
        parts.append(render_state_block(state))
    system = "\n\n".join(p for p in parts if p)
    history = list(get_state_value(state, "messages", []))
    return [SystemMessage(system), *history] if system else history


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
    post_tools: StepsLike | None = None,
    state_schema: type[Any] = ContextAgentState,
    state_in_prompt: bool = True,
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
            before every model call; `None` for none.
        context: A context node (`create_context_node(...)`), a `ContextBuilder`
            (wrapped in `create_context_node`), or `True` for
            `default_context_node(max_tokens)` (default builder plus pinned
            memory). It runs last before every model call, so it assembles the view
            from the compacted history. The system prompt is put before the
            assembled context in one system message.
        max_tokens: With `context=True`, the most tokens one model call is sent (the
            budget of the assembled view; keep it below the model's window minus the
            system prompt and the reply); `None` for the builder's default.
        pre_model: Further nodes, run in order between `compaction` and `context`.
        post_tools: Nodes run in order after every tool round.
        state_schema: The graph state; must hold `messages`, plus `plan`/`note` when
            those tools are on and `llm_input_messages` when a step writes a view.
        state_in_prompt: Without a prepared view, add pinned memory, the plan and the
            note names to the system message (`render_state_block`).

    Returns:
        A `StateGraph`; compile it with your checkpointer and store.

    Raises:
        TypeError: If `model` is neither a chat model nor callable (or is a compiled
            graph), cannot bind the tools, or a step is not a node.
        ValueError: If a step uses a reserved node name (`model`, `tools`, and
            `compaction`/`context`/`watch_checks` when those are given), two tools
            share a name, `checks` names a tool the agent does not have (or none),
            or `max_tokens` is not a positive int or is given without
            `context=True`.

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
    all_tools = _agent_tools(tools, plan_tools, note_tools, memory_tools)
    before = _pre_model_steps(pre_model, compaction, context, max_tokens)
    after = _post_tools_steps(post_tools, checks, [t.name for t in all_tools])
    clash = {n for n, _ in before} & {n for n, _ in after}
    if clash:
        msg = f"pre_model and post_tools step names must differ; both use {sorted(clash)}"
        raise InvalidArgumentError(msg)
    model_node = _model_node(
        model, all_tools, system_prompt, state_in_prompt=state_in_prompt, clears_view=bool(before)
    )
    graph: StateGraph[Any, Any, Any, Any] = StateGraph(state_schema)
    graph.add_node("model", model_node)
    entry = _chain(graph, START, before, "model")
    if not all_tools:
        graph.add_edge("model", END)
        return graph
    graph.add_node("tools", ToolNode(all_tools))
    graph.add_conditional_edges("model", _router(entry), list(dict.fromkeys(["tools", entry, END])))
    _chain(graph, "tools", after, entry)
    return graph


def _model_node(
    model: BaseChatModel | Runnable[Any, Any] | ModelFactory,
    tools: list[BaseTool],
    system_prompt: PromptLike,
    *,
    state_in_prompt: bool,
    clears_view: bool,
) -> RunnableLambda[Any, dict[str, Any]]:
    """The `model` node: binds the tools, sends the prepared input, clears the view."""
    fixed = (
        bind_model_tools(cast("Runnable[Any, Any]", model), tools) if is_chat_model(model) else None
    )

    def _chat(config: RunnableConfig) -> Any:
        if fixed is not None:
            return fixed
        return bind_model_tools(model(config), tools)  # type: ignore[operator]

    def _update(response: BaseMessage) -> dict[str, Any]:
        update: dict[str, Any] = {"messages": _answer_invalid_calls(response)}
        if clears_view:
            update[LLM_INPUT_KEY] = []
        return update

    def call_model(state: Any, config: RunnableConfig) -> dict[str, Any]:
        messages = _model_input(state, system_prompt, state_in_prompt)
        return _update(_chat(config).invoke(messages, config))

    async def acall_model(state: Any, config: RunnableConfig) -> dict[str, Any]:
        messages = _model_input(state, system_prompt, state_in_prompt)
        return _update(await _chat(config).ainvoke(messages, config))

    return RunnableLambda(call_model, afunc=acall_model, name="model")


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


def _answer_invalid_calls(response: BaseMessage) -> list[BaseMessage]:
    """The reply, then an error result for each call whose arguments did not parse."""
    if not (isinstance(response, AIMessage) and response.invalid_tool_calls):
        return [response]
    return repair_history([response], allow_pending_tool_calls=True).messages


def _router(entry: str) -> Callable[[Any], str]:
    """Route after the model: run its calls, go again after invalid calls, or end."""

    def route(state: Any) -> str:
        messages = list(get_state_value(state, "messages", []))
        answered = False
        while messages and isinstance(messages[-1], ToolMessage):
            messages.pop()
            answered = True
        last = messages[-1] if messages else None
        if isinstance(last, AIMessage) and last.tool_calls:
            return "tools"
        return entry if answered else END

    return route
