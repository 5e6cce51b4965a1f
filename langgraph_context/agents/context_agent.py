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

from collections.abc import Callable, Sequence
from typing import Any, NotRequired

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.pregel.protocol import PregelProtocol

from langgraph_context.agents._budget import (
    AgentBudget,
    check_sized,
    compaction_step,
    context_runnable,
    default_context_node,
    fixed_tokens,
    output_limiter,
)
from langgraph_context.agents._model_call import (
    DEFAULT_MAX_NOTE_NAMES,
    LLM_INPUT_KEY,
    ModelInput,
    PromptLike,
    render_state_block,
)
from langgraph_context.agents._model_call import model_node as _model_node
from langgraph_context.agents._overflow import Window
from langgraph_context.agents._parts import (
    StepsLike,
    agent_tools,
    distinct_steps,
    named_steps,
    post_tools_steps,
    with_first_step,
)
from langgraph_context.agents._schemas import public_input_schema
from langgraph_context.agents.models import ModelFactory, is_chat_model
from langgraph_context.agents.output_limit import ToolOutputLimitMiddleware
from langgraph_context.compaction import CompactionNode, CompactionStateMixin
from langgraph_context.context.breakpoints import CacheBreakpoints, cache_control_for
from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.memory import (
    MemoryStateMixin,
)
from langgraph_context.memory.watch import CheckSelector
from langgraph_context.state import NoteStateMixin, PlanStateMixin, get_state_value
from langgraph_context.tokens import count_tool_tokens, model_window, resolve_counter
from langgraph_context.tools.terminal import TerminalStateMixin

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


class ContextAgentState(
    MessagesState,
    PlanStateMixin,
    NoteStateMixin,
    MemoryStateMixin,
    CompactionStateMixin,
    TerminalStateMixin,
):
    """State of `create_context_agent`: messages, plan, notes, pinned memory, view.

    `terminal_cwd` is the terminal's working directory, kept with the thread.

    `llm_input_messages` holds what the next model call sees when a pre-model step
    prepared it; the model node clears it after use. `compaction` and
    `compaction_requested` belong to the compaction node.
    """

    llm_input_messages: NotRequired[list[AnyMessage]]


def _check_model(model: Any) -> None:
    if isinstance(model, PregelProtocol) or not (is_chat_model(model) or callable(model)):
        msg = f"model must be a chat model or a factory taking a config, got {model!r}"
        raise InvalidTypeError(msg)


def _pre_model_steps(pre_model: StepsLike | None, compaction: Any) -> list[tuple[str, Any]]:
    """Named steps before the model: compaction first, then `pre_model`."""
    before = named_steps(pre_model, "pre_model")
    if compaction is None:
        return before
    (checked,) = named_steps({"compaction": compaction}, "compaction")  # a node name
    return with_first_step(before, checked, kind="pre_model", owner="compaction")


def _view_compaction(compaction: Any) -> CompactionNode | None:
    """A view-mode compaction node, which the model step runs per call (never a graph node)."""
    if isinstance(compaction, CompactionNode) and compaction.mode == "view":
        return compaction
    return None


def create_context_agent(
    model: BaseChatModel | Runnable[Any, Any] | ModelFactory,
    tools: Sequence[BaseTool] = (),
    *,
    system_prompt: PromptLike = None,
    plan_tools: bool = True,
    note_tools: bool = True,
    note_prefix: str | None = None,
    memory_tools: bool = True,
    checks: CheckSelector | None = None,
    compaction: Any = True,
    context: Any = True,
    max_tokens: int | None = None,
    tool_output_limit: int | bool | None = True,
    pre_model: StepsLike | None = None,
    post_model: StepsLike | None = None,
    post_tools: StepsLike | None = None,
    state_schema: type[Any] = ContextAgentState,
    context_schema: type[Any] | None = None,
    input_schema: type[Any] | None = None,
    state_in_prompt: bool = True,
    store_view: bool = False,
    context_window: int | None = None,
    name: str | None = None,
    cache_breakpoints: CacheBreakpoints = None,
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
        note_prefix: Name the note tools `<note_prefix>_write_note`, ... (e.g.
            `"notes"` gives `notes_ls`), to compose with a toolset of its own `ls`.
        memory_tools: Include `record_constraint` and `resolve_constraint` (pinned
            user rules, shown on every call until resolved).
        checks: Tools whose results are checks (a name, names, or a predicate): a
            failing check opens a hot issue, a passing one resolves it (a
            `watch_checks` step after each tool round).
        compaction: `True` (default) for rule-based compaction of the stored
            history (`create_compaction_node(max_tokens=<high mark>,
            target_tokens=<low mark>)`, replace mode: see `max_tokens`), `False` for
            none, or your own compaction node, run first before every model call. A
            `replace`-mode node is the graph node `compaction`, rewriting the history;
            a `view`-mode node runs inside the model step, once per call, and its view
            goes to the model (or to the context node) without being written to
            state; only its record (the running summary) is.
        context: `True` (default) for `default_context_node(<call budget>)` (default
            builder plus pinned memory), `False` for none (the model sees the
            prompt, a `[State]` block and the history), a `ContextBuilder` (wrapped
            in `create_context_node`) or your own context node. The model node runs
            it on the state (after the `pre_model` steps, so on the compacted
            history, or on the view of a view-mode compaction) and sends the
            `llm_input_messages` it returns; nothing of it is written to state or
            streamed. The system prompt is put before the assembled context in one
            system message.
        max_tokens: The one budget of the default parts: the most tokens one model
            call is sent. `None`: the model's window when known (`context_window` or
            the model's profile), else 3,000 (`ContextConfig().max_tokens`). The
            stored history's high mark (`compaction=True`) is that budget less what
            every request carries besides the history (a string system prompt, the
            hardening line, the tool definitions, 200 tokens for the plan), never
            below a quarter of it; a compaction aims at 40% of the high mark. Under
            the high mark the history is sent whole, so the provider's prompt cache
            keeps it between calls, and the rewrites are few.
        tool_output_limit: `True` (default) cuts a tool result longer than a tenth of
            the budget (at most 1,000 tokens) to its two ends as the agent's
            `ToolNode` returns it (`ToolOutputLimitMiddleware.wrap_tool_call`, no
            extra graph step), so the model never reads the long text; the notice
            asks the model for a narrower part. A JSON result is minified first
            (whitespace outside strings dropped: lossless, and cheaper on every
            later call). An int sets the limit in tokens;
            `False` or `None` keeps results whole (pass it when your own
            `create_tool_output_limit_node(note_key=...)` should see the full text).
        pre_model: Further nodes, run in order after `compaction`.
        post_model: Nodes run in order after every model answer, before its tool
            calls run (e.g. `safety.create_output_guard_node(action="replace")`,
            which can drop the tool calls of a flagged answer).
        post_tools: Nodes run in order after every tool round.
        state_schema: The graph state; must hold `messages`, plus `plan`/`note` when
            those tools are on and `llm_input_messages` when a step writes a view.
        context_schema: The run context's schema (LangGraph's `Runtime.context`), e.g.
            `ContextSettings`: runs pass `context={...}`, Studio and the SDK list its
            keys (`get_context_jsonschema()`), and a model factory is handed its
            values laid over `config["configurable"]` (the context wins).
        input_schema: What a client may send; `None` for the state's keys minus the
            agents' internal ones (`llm_input_messages`, `compaction`,
            `compaction_requested`, `token_usage`, `briefing`, `session`,
            `injection_flags`), so `get_input_jsonschema()` lists only the public
            keys. Internal keys in an input are ignored; set them with
            `graph.update_state`.
        state_in_prompt: Without a prepared view, add pinned memory, the plan and the
            note names to the system message (`render_state_block`).
        store_view: Debugging only: also write every model input, as sent, to
            `llm_input_messages` (checkpointed, and visible to API clients).
        context_window: The model's context window in tokens; `None` reads it from
            the model's profile (`profile["max_input_tokens"]`) when it has one. It
            sizes the default compaction and context without `max_tokens`, is
            recorded with the provider-reported usage in `token_usage` (where a
            compaction node's fraction trigger finds it), and sets the target of
            the overflow retry.
        name: The agent's name, set on every AI message it writes (a supervisor
            tells its agents apart by it); name the compiled graph with
            `compile(name=...)`.
        cache_breakpoints: Prompt-cache marks in each request
            (`context.mark_cache_breakpoints`: the system message and the end of
            the history, before the plan's closing message). `None` (default):
            for Anthropic models only, whose cache reads a prefix only where a
            request marks one; `True` or a mark such as
            `{"type": "ephemeral", "ttl": "1h"}`: always; `False`: never.

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
            a step name is used twice (two tools sharing a name are both named in
            the error), `tool_output_limit` is an int below 1,
            or `max_tokens` is not a positive int or is given while neither
            `compaction` nor `context` is `True`, `context_window` is not a positive
            int, `name` is blank, or `cache_breakpoints` is not `None`, a bool or
            a mapping.

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
    cache_control_for(cache_breakpoints, None)  # refuse a bad setting now, not per call
    all_tools = agent_tools(tools, plan_tools, note_tools, memory_tools, note_prefix)
    window = _window(model, context_window, all_tools)
    check_sized(compaction, context, max_tokens)
    fixed = fixed_tokens(system_prompt, window.tool_tokens, window.token_counter)
    budget = AgentBudget.of(max_tokens, window.context_window, fixed)
    compactor = compaction_step(compaction, budget, window.context_window)
    in_call = _view_compaction(compactor)
    before = _pre_model_steps(pre_model, None if in_call else compactor)
    view = context_runnable(context, budget, tools=bool(all_tools))
    answered = named_steps(post_model, "post_model")
    after = post_tools_steps(post_tools, checks, [t.name for t in all_tools])
    limiter = output_limiter(tool_output_limit, budget)
    distinct_steps(before, answered, after)
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
            read_tool=f"{note_prefix}_query_note" if note_prefix else "query_note",
            compaction=in_call,
            cache_breakpoints=cache_breakpoints,
        ),
    )
    graph: StateGraph[Any, Any, Any, Any] = StateGraph(
        state_schema,
        context_schema=context_schema,
        input_schema=input_schema or public_input_schema(state_schema, "ContextAgentInput"),
    )
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
    graph.add_node("tools", _tool_node(all_tools, limiter))
    graph.add_conditional_edges(last, _router(entry), list(dict.fromkeys(["tools", entry, END])))
    _chain(graph, "tools", after, entry)
    return graph


def _tool_node(tools: list[BaseTool], limiter: ToolOutputLimitMiddleware | None) -> ToolNode:
    """The agent's `ToolNode`; with a limiter, each result is cut as its tool returns it."""
    if limiter is None:
        return ToolNode(tools)
    return ToolNode(
        tools, wrap_tool_call=limiter.wrap_tool_call, awrap_tool_call=limiter.awrap_tool_call
    )


def _check_name(name: str | None) -> str | None:
    """Refuse a blank agent name.

    Raises:
        ValueError: If `name` is given but not a non-empty string.
    """
    if name is not None and (not isinstance(name, str) or not name.strip()):
        msg = f"name must be a non-empty string, got {name!r}"
        raise InvalidArgumentError(msg)
    return name


def _window(model: Any, context_window: int | None, tools: list[BaseTool]) -> Window:
    """The model's window and the tokens of the tool definitions bound to it.

    The window is `context_window`, else the profile of a fixed chat model.
    """
    if context_window is not None and (
        isinstance(context_window, bool)
        or not isinstance(context_window, int)
        or context_window < 1
    ):
        msg = f"context_window must be a positive int, got {context_window!r}"
        raise InvalidArgumentError(msg)
    known = context_window if context_window is not None else model_window(model)
    counter = resolve_counter(None)
    return Window(known, counter, count_tool_tokens(tools, token_counter=counter))


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
