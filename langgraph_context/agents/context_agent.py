"""`create_context_agent`: LangChain's `create_agent` with this package's middleware.

The agent is `create_agent(model, tools, middleware=[*yours, *ours])`, as deepagents'
`create_deep_agent` is; it returns what `create_agent` returns (a compiled graph).
Your middleware run outside ours: a `wrap_model_call` of yours sees the request
before the context is assembled (what it adds is budgeted with the rest) and the
answer after it is stamped. Ours, outermost first:

0. `TerminalStateMiddleware`: the terminal's `terminal_cwd` state key (no hooks).
1. `StateToolsMiddleware`: `write_plan`/`update_plan` and the state note tools, with
   the `plan` and `note` state keys (`plan_tools`, `note_tools`, `note_prefix`).
2. `PinnedMiddleware`: `record_constraint`/`resolve_constraint` and the
   hot-issue watch over `checks` (`constraint_tools`, `checks`).
3. `RecallMiddleware`: a long tool result is cut as its tool returns it, its full
   text kept under a handle the notice names; what compaction evicts is archived
   too; `read_tool_output` and `search_history` read both back (`recall`,
   `tool_output_limit`). With `recall=False`, `ToolOutputLimitMiddleware` only cuts.
4. `CompactionMiddleware`: compacts the history in state before a model call when it
   passes its high mark; on a provider's overflow refusal, compacts the history and
   retries once (the state keeps the compacted history) (`compaction`).
5. `ContextMiddleware`: stamps arrivals, repairs the history, assembles the model
   input within `max_tokens`, marks the prompt cache, records the reported usage of
   the request as sent (`context`, `cache_breakpoints`).
6. `PromptCacheMiddleware`: sets an OpenAI model's `prompt_cache_key` to the thread's
   id and records what the provider's cache read and wrote per call, with the reason
   when it served less than the request repeated (`prompt_cache_key`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import SystemMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langgraph.cache.base import BaseCache
from langgraph.store.base import BaseStore
from langgraph.types import Checkpointer

from langgraph_context.agents._budget import AgentBudget, check_positive_int, fixed_tokens
from langgraph_context.agents._hooks import drop_hooks
from langgraph_context.agents._tool_check import check_tools_at_build
from langgraph_context.agents.compaction_middleware import CompactionMiddleware
from langgraph_context.agents.context_middleware import ContextMiddleware
from langgraph_context.agents.output_limit import ToolOutputLimitMiddleware
from langgraph_context.agents.tool_middleware import (
    ConstraintStoreMiddleware,
    PinnedMiddleware,
    StateToolsMiddleware,
    TerminalStateMiddleware,
    state_tools,
)
from langgraph_context.compaction.options import Archive
from langgraph_context.context import CacheBreakpoints, ContextBuilder
from langgraph_context.context.breakpoints import cache_control_for
from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.pinned.watch import CheckSelector
from langgraph_context.providers.models import ModelFactory, agent_model
from langgraph_context.providers.prompt_cache import PromptCacheMiddleware
from langgraph_context.recall import RecallMiddleware
from langgraph_context.tokens import count_tool_tokens, model_window, resolve_counter
from langgraph_context.toolkit import check_distinct_tools

__all__ = ["create_context_agent"]


def create_context_agent(
    model: str | BaseChatModel | Runnable[Any, Any] | ModelFactory,
    tools: Sequence[BaseTool | Callable[..., Any]] = (),
    *,
    system_prompt: str | SystemMessage | None = None,
    max_tokens: int | None = None,
    middleware: Sequence[AgentMiddleware[Any, Any]] = (),
    response_format: Any = None,
    state_schema: type[Any] | None = None,
    context_schema: type[Any] | None = None,
    checkpointer: Checkpointer | None = None,
    store: BaseStore | None = None,
    interrupt_before: list[str] | None = None,
    interrupt_after: list[str] | None = None,
    debug: bool = False,
    name: str | None = None,
    cache: BaseCache[Any] | None = None,
    plan_tools: bool = True,
    note_tools: bool = True,
    note_prefix: str | None = None,
    constraint_tools: bool = True,
    checks: CheckSelector | None = None,
    compaction: bool | CompactionMiddleware | None = True,
    context: bool | ContextBuilder | ContextMiddleware | None = True,
    tool_output_limit: int | bool | None = True,
    recall: bool | RecallMiddleware | None = True,
    context_window: int | None = None,
    cache_breakpoints: CacheBreakpoints = None,
    prompt_cache_key: bool | str = True,
) -> Any:
    """Build an agent whose every model call is assembled within one token budget.

    Args:
        model: A chat model or a model name (as `create_agent`), a chat model under
            `with_retry`/`with_fallbacks`, or a factory building one from the run's
            config (such as `resolve_chat_model`), called once per model call.
        tools: The agent's own tools, added to the plan, note and constraint tools.
        system_prompt: Instructions, first in the system message of every call.
        max_tokens: The most tokens one model call is sent (the input budget; on a
            LangChain chat model `max_tokens` means output tokens, here it never
            does). `None`: the model's window when known (`context_window` or the
            model's profile), else 3,000. The history's high mark (`compaction=True`)
            is that budget less what every request carries besides the history (a
            string system prompt, the hardening line, the tool definitions, 200
            tokens for the plan), never below a quarter of it; a compaction aims at
            40% of the high mark.
        middleware: Your own `AgentMiddleware` (human in the loop, model fallback,
            retries, limits, ...), run outside ours.
        response_format: As `create_agent`'s: the final answer is parsed into
            `structured_response`.
        state_schema: As `create_agent`'s (the middleware add their own keys).
        context_schema: The run context's schema, e.g. `ContextSettings` (a model
            factory is handed its values laid over `configurable`).
        checkpointer: As `create_agent`'s.
        store: As `create_agent`'s. With `constraint_tools`, the constraints are kept in it
            per user (`ConstraintStoreMiddleware`, unless `middleware` holds your own);
            each run must then name its user (`configurable["user_id"]`).
        interrupt_before: As `create_agent`'s.
        interrupt_after: As `create_agent`'s.
        debug: As `create_agent`'s.
        name: The agent's name, set on every AI message it writes.
        cache: As `create_agent`'s.
        plan_tools: Include `write_plan` and `update_plan`.
        note_tools: Include `write_note`, `ls`, `query_note` and `update_note`.
        note_prefix: Name the note tools `<note_prefix>_write_note`, ...
        constraint_tools: Include `record_constraint` and `resolve_constraint`.
        checks: Tools whose results are checks (a name, names, or a predicate): a
            failing check opens a hot issue, a passing one resolves it.
        compaction: `True` for `CompactionMiddleware` sized by `max_tokens`, `False`
            (or `None`) for none (nor the overflow retry), or your own
            `CompactionMiddleware`.
        context: `True` for `ContextMiddleware(max_tokens)`, `False` (or `None`) to send the
            prompt, a `[State]` block and the whole history, a `ContextBuilder` of
            your own, or your own `ContextMiddleware`.
        tool_output_limit: `True` cuts a tool result longer than a tenth of the
            budget (at most 1,000 tokens) as its tool returns it; an int sets that
            limit in tokens; `False`/`None` keeps results whole.
        recall: `True` keeps the full text of each cut result (whose ends then
            keep half the limit) and the messages a compaction evicts (in `store` per
            user and thread when the run names its user, else in the thread's
            state) and binds `read_tool_output` and
            `search_history` (`RecallMiddleware`); your own `RecallMiddleware`;
            `False`/`None` for none (a cut result's middle is then lost). Only an
            agent with tools gets it.
        context_window: The model's window in tokens (`None`: its profile's).
        cache_breakpoints: Prompt-cache marks: `None` for Anthropic models only,
            `True` or a mark for every model, `False` for none.
        prompt_cache_key: For OpenAI models, send the thread's id as
            `prompt_cache_key` (a string: prefixed with it; `False`: send none).
            The cache figures are recorded either way (`cache_usage` in state).

    Returns:
        What `create_agent` returns: a compiled graph.

    Raises:
        TypeError: If `model` is neither a chat model, a name nor a factory, or
            `compaction`/`context`/`recall`/`prompt_cache_key` has the wrong type.
        ValueError: If two tools share a name, `checks` names a tool the agent does
            not have, `max_tokens`, `context_window` or `tool_output_limit` is not a
            positive int, `max_tokens` sizes nothing (both parts are your own), `name`
            is blank, or `cache_breakpoints` is invalid.

    Example:
        >>> from langgraph_context.testing import ScriptedChatModel
        >>> from langchain_core.messages import AIMessage
        >>> agent = create_context_agent(ScriptedChatModel(responses=[AIMessage("hello")]))
        >>> agent.invoke({"messages": [("user", "hi")]})["messages"][-1].content
        'hello'
    """
    chat = agent_model(model)
    cache_control_for(cache_breakpoints, None)  # refuse a bad setting now
    metering = PromptCacheMiddleware(prompt_cache_key=prompt_cache_key)
    _check_args(name, max_tokens, compaction, context)
    own = _tool_list(tools, plan_tools, note_tools, constraint_tools, note_prefix, checks)
    recall_tools = _recall_tools(recall, own)
    own = [*own, *recall_tools]
    budget = _budget(model, max_tokens, context_window, system_prompt, own)
    ours: list[AgentMiddleware[Any, Any]] = [TerminalStateMiddleware()]
    if plan_tools or note_tools:
        ours.append(
            StateToolsMiddleware(
                plan_tools=plan_tools, note_tools=note_tools, note_prefix=note_prefix
            )
        )
    if constraint_tools or checks is not None:
        ours.append(PinnedMiddleware(checks=checks, constraint_tools=constraint_tools))
    if store is not None and constraint_tools and not _has(middleware, ConstraintStoreMiddleware):
        ours.append(ConstraintStoreMiddleware())  # constraints carry over to the user's threads
    limit = _output_limit(tool_output_limit, budget)
    cut = _recall(recall, limit, recall_tools) or limit  # recall cuts, and keeps what it cut
    if cut is not None and own:  # with no tools, a tool wrapper would add a tools node
        ours.append(cut)
    keeper = cut if isinstance(cut, RecallMiddleware) else None
    step = _compaction(compaction, budget, context_window, keeper)
    if step is not None:
        ours.append(step)
        if step.summarizes and step.prefix_cache is None:
            step.prefix_cache = metering  # the summarizer is sent the agent's own prefix
    read_tool = f"{note_prefix}_query_note" if note_prefix else "query_note"
    made = _context(context, budget, bool(own), (cache_breakpoints, context_window), read_tool)
    ours += [made, metering]  # the meter innermost: it sees the request as sent
    return create_agent(
        chat,
        list(tools),
        system_prompt=system_prompt,
        middleware=check_tools_at_build(tools, middleware, ours),
        response_format=response_format,
        state_schema=state_schema,
        context_schema=context_schema,
        checkpointer=checkpointer,
        store=store,
        interrupt_before=interrupt_before,
        interrupt_after=interrupt_after,
        debug=debug,
        name=name,
        cache=cache,
    )


def _check_args(name: str | None, max_tokens: int | None, compaction: Any, context: Any) -> None:
    """Refuse a blank `name`, and a `max_tokens` that sizes neither of our two parts."""
    if name is not None and (not isinstance(name, str) or not name.strip()):
        msg = f"name must be a non-empty string, got {name!r}"
        raise InvalidArgumentError(msg)
    if max_tokens is not None and compaction is not True and context is not True:
        msg = "max_tokens sizes compaction=True and context=True; here neither is True"
        raise InvalidArgumentError(msg)


def _tool_list(
    tools: Sequence[Any],
    plan_tools: bool,
    note_tools: bool,
    constraint_tools: bool,
    note_prefix: str | None,
    checks: CheckSelector | None,
) -> list[Any]:
    """Every tool the model is bound to; refuse shared names and unknown checks."""
    own = [(f"tools[{i}]", t) for i, t in enumerate(tools)]
    made = state_tools(plan_tools, note_tools, constraint_tools, note_prefix=note_prefix)
    check_distinct_tools([*own, *made])
    every = [t for _, t in [*own, *made]]
    if checks is not None and not callable(checks):
        wanted = [checks] if isinstance(checks, str) else list(checks)
        names = [getattr(t, "name", getattr(t, "__name__", "")) for t in every]
        unknown = sorted({str(n) for n in wanted} - set(names))
        if unknown:
            msg = f"checks must name the agent's tools; unknown: {unknown}; tools: {sorted(names)}"
            raise InvalidArgumentError(msg)
    return every


def _budget(
    model: Any,
    max_tokens: int | None,
    context_window: int | None,
    system_prompt: str | SystemMessage | None,
    tools: list[Any],
) -> AgentBudget:
    """The agent's budget: the call's, the history's high and low marks."""
    check_positive_int(context_window, "context_window")
    window = context_window if context_window is not None else model_window(model)
    counter = resolve_counter(None)
    schemas = count_tool_tokens(
        [t for t in tools if isinstance(t, BaseTool)], token_counter=counter
    )
    prompt = system_prompt.content if isinstance(system_prompt, SystemMessage) else system_prompt
    return AgentBudget.of(max_tokens, window, fixed_tokens(prompt, schemas, counter))


def _has(middleware: Sequence[AgentMiddleware[Any, Any]], kind: type[Any]) -> bool:
    """Whether the caller's middleware already holds one of `kind` (theirs is kept)."""
    return any(isinstance(m, kind) for m in middleware)


def _output_limit(
    limit: int | bool | None, budget: AgentBudget
) -> ToolOutputLimitMiddleware | None:
    """The tool-output limit for `tool_output_limit` (`None`: results kept whole)."""
    if limit is None or limit is False:
        return None
    if limit is True:
        return ToolOutputLimitMiddleware(budget.tool_output_limit)
    check_positive_int(limit, "tool_output_limit")
    return ToolOutputLimitMiddleware(limit)


def _context(
    context: Any,
    budget: AgentBudget,
    has_tools: bool,
    call: tuple[CacheBreakpoints, int | None],
    read_tool: str,
) -> ContextMiddleware:
    """The context middleware for the `context` argument.

    Raises:
        TypeError: If `context` is neither a bool, a `ContextBuilder` nor a
            `ContextMiddleware`.
    """
    cache_breakpoints, window = call
    if isinstance(context, ContextMiddleware):
        return context
    if context is None:
        context = False
    if isinstance(context, ContextBuilder):
        return ContextMiddleware(
            builder=context,
            cache_breakpoints=cache_breakpoints,
            context_window=window,
            read_tool=read_tool,
        )
    if not isinstance(context, bool):
        msg = f"context must be a bool, a ContextBuilder or a ContextMiddleware, got {context!r}"
        raise InvalidTypeError(msg)
    return ContextMiddleware(
        budget.call if context else None,
        assemble=context,
        harden_from_start=has_tools,
        cache_breakpoints=cache_breakpoints,
        context_window=window,
        read_tool=read_tool,
    )


def _recall_tools(recall: Any, own: list[Any]) -> list[BaseTool]:
    """The tools `recall` binds (none when off or the agent has no tools of its own).

    Raises:
        TypeError: If `recall` is neither a bool, `None` nor a `RecallMiddleware`.
        ValueError: If one of its tools shares a name with another tool.
    """
    if recall is not None and not isinstance(recall, (bool, RecallMiddleware)):
        msg = f"recall must be a bool or a RecallMiddleware, got {recall!r}"
        raise InvalidTypeError(msg)
    if not recall or not own:  # with no tools, its tools would add a tools node
        return []
    made = recall.tools if isinstance(recall, RecallMiddleware) else RecallMiddleware().tools
    check_distinct_tools([*(("tools", t) for t in own), *(("recall", t) for t in made)])
    return list(made)


def _recall(
    recall: Any, limit: ToolOutputLimitMiddleware | None, tools: list[BaseTool]
) -> RecallMiddleware | None:
    """The recall middleware: yours, or one cutting at the agent's tool-output limit."""
    if not tools:
        return None
    if isinstance(recall, RecallMiddleware):
        return recall
    keeper = RecallMiddleware(None if limit is None else limit.max_result_tokens)
    # it recalls nothing into model calls (its caps are checked per tool call): no wrapper
    drop_hooks(keeper, "wrap_model_call", "awrap_model_call")
    return keeper


def _compaction(
    compaction: Any, budget: AgentBudget, window: int | None, keeper: RecallMiddleware | None
) -> CompactionMiddleware | None:
    """The compaction middleware for the `compaction` argument (`None`: none).

    Raises:
        TypeError: If `compaction` is neither a bool nor a `CompactionMiddleware`.
    """
    if isinstance(compaction, CompactionMiddleware):
        return compaction
    if compaction is None:
        return None
    if not isinstance(compaction, bool):
        msg = f"compaction must be a bool or a CompactionMiddleware, got {compaction!r}"
        raise InvalidTypeError(msg)
    if not compaction:
        return None
    archive = Archive(sink=keeper.archive_sink) if keeper is not None else None
    return CompactionMiddleware(
        budget.history, target_tokens=budget.target, context_window=window, archive=archive
    )
