"""The agent configurations the bill compares, each built around the same scripted model.

Every configuration gets the same model script, the same replay tools, the same
system prompt, the same window and, where it summarizes, the same stand-in summarizer
and the same summary instructions. The window is each configuration's budget: the
token trigger of context editing and of LangChain's summarization (which keeps the
last half-window verbatim), the budget of our compaction node and of our assembled
context. The bare agent and llmslim have no budget: calls over the window are counted.
deepagents takes its window from the model's profile (`max_input_tokens`, set to the
window for every configuration) and summarizes with the agent's own model, which hands
those calls to the stand-in summarizer.

Our configurations get the state tools the session calls (plan tools, constraint tools;
the generated threads call them, the recorded sessions do not) and no note tools, as a
user turns on what the work needs: every other configuration gets exactly the session's
tools. `create_context_agent` runs with its defaults and the window as its budget
(rule-based compaction from the window less the fixed part of each request down to half
of that, tool results cut on entry at a tenth of the window, at most 1,000 tokens); the
middleware stack is sized by the same `AgentBudget`.
"""

from __future__ import annotations

import importlib.util
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import (
    ClearToolUsesEdit,
    ContextEditingMiddleware,
    SummarizationMiddleware,
)

from benchmarks.bill import headroom
from benchmarks.bill.replay import CLEARED, SUMMARY_INSTRUCTIONS
from langgraph_context.agents import (
    AgentBudget,
    CompactionMiddleware,
    ContextMiddleware,
    PinnedMiddleware,
    StateToolsMiddleware,
    ToolOutputLimitMiddleware,
    create_context_agent,
)
from langgraph_context.context import ContextBuilder, ContextConfig
from langgraph_context.tokens import default_counter

# The budget keyword of `create_context_agent`: the only place the benchmark names it.
OURS_BUDGET_KEYWORD = "max_tokens"
# Tools our agent provides itself; a session's recorded calls to them go to the real ones.
OURS_NATIVE_TOOLS = frozenset(
    {"write_plan", "update_plan", "record_constraint", "resolve_constraint"}
)


@dataclass(frozen=True)
class Config:
    """One configuration: how to build its graph and what it provides natively."""

    name: str
    build: Callable[..., Any]
    native_tools: frozenset[str] = frozenset()
    summarizes: bool = False
    unbound_summarizes: bool = False  # summarizes with the agent's own (unbound) model
    metered_summaries: bool = False  # summary calls go through the agent's prefix cache


def _bare(*, model: Any, tools: list[Any], system_prompt: str, **_: Any) -> Any:
    return create_agent(model, tools, system_prompt=system_prompt)


def _context_editing(
    *, model: Any, tools: list[Any], system_prompt: str, window: int, **_: Any
) -> Any:
    edit = ClearToolUsesEdit(trigger=window, keep=3, placeholder=CLEARED)
    middleware = ContextEditingMiddleware(edits=[edit], token_counter=default_counter())
    return create_agent(model, tools, system_prompt=system_prompt, middleware=[middleware])


def _summarization(
    *, model: Any, tools: list[Any], system_prompt: str, window: int, summarizer: Any, **_: Any
) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        middleware = SummarizationMiddleware(
            summarizer,
            trigger=("tokens", window),
            keep=("tokens", window // 2),
            token_counter=default_counter(),
            summary_prompt=SUMMARY_INSTRUCTIONS + "\n\n{messages}",
        )
    return create_agent(model, tools, system_prompt=system_prompt, middleware=[middleware])


def _llmslim(*, model: Any, tools: list[Any], system_prompt: str, **_: Any) -> Any:
    from llmslim.integrations.langchain_agents import LLMSlimToolOutputMiddleware

    return create_agent(
        model, tools, system_prompt=system_prompt, middleware=[LLMSlimToolOutputMiddleware()]
    )


def _deepagents(*, model: Any, tools: list[Any], system_prompt: str, **_: Any) -> Any:
    from deepagents import create_deep_agent

    return create_deep_agent(model, tools, system_prompt=system_prompt)


def _state_tools(native: frozenset[str]) -> dict[str, bool]:
    """Our state tools the session calls: a user turns on the tools the work needs."""
    return {
        "plan_tools": bool(native & {"write_plan", "update_plan"}),
        "constraint_tools": bool(native & {"record_constraint", "resolve_constraint"}),
        "note_tools": False,
    }


def _ours_agent(
    *,
    model: Any,
    tools: list[Any],
    system_prompt: str,
    window: int,
    native: frozenset[str] = frozenset(),
    recall: bool = True,
    **_: Any,
) -> Any:
    # The defaults: compaction at the window less the fixed part of every request, down
    # to half of that; the cache layout; tool results cut on entry at a tenth of the
    # window (at most 1,000 tokens). Only the budget is given.
    return create_context_agent(
        model,
        tools=tools,
        system_prompt=system_prompt,
        **_state_tools(native),
        **{OURS_BUDGET_KEYWORD: window},
        # as for a real Anthropic model (the default marks only those); the meter
        # strips the marks for every other price table
        cache_breakpoints=True,
        recall=recall,
    )


def _ours_agent_no_recall(**kwargs: Any) -> Any:
    # The same agent with recall off (issue 33: recall on must not raise the bill).
    return _ours_agent(**kwargs, recall=False)


def _ours_summarizer(
    *,
    model: Any,
    tools: list[Any],
    system_prompt: str,
    window: int,
    summarizer: Any,
    native: frozenset[str] = frozenset(),
    **_: Any,
) -> Any:
    # The agent's defaults with a summarizer: it is sent the agent's own last request
    # with the instruction appended (same system message, tools and history).
    wanted = _state_tools(native)
    own: list[Any] = []
    if wanted["plan_tools"]:
        own += StateToolsMiddleware(note_tools=False).tools
    if wanted["constraint_tools"]:
        own += PinnedMiddleware().tools
    budget = AgentBudget.for_agent(window, system_prompt=system_prompt, tools=[*tools, *own])
    compaction = CompactionMiddleware(budget.history, target_tokens=budget.target, model=summarizer)
    return create_context_agent(
        model,
        tools=tools,
        system_prompt=system_prompt,
        **wanted,
        **{OURS_BUDGET_KEYWORD: window},
        cache_breakpoints=True,
        compaction=compaction,
    )


def _ours_middleware(
    *,
    model: Any,
    tools: list[Any],
    system_prompt: str,
    window: int,
    native: frozenset[str] = frozenset(),
    **_: Any,
) -> Any:
    wanted = _state_tools(native)
    middleware: list[Any] = []
    own_tools: list[Any] = []
    if wanted["plan_tools"]:
        middleware.append(StateToolsMiddleware(note_tools=False))
        own_tools += middleware[-1].tools
    if wanted["constraint_tools"]:
        middleware.append(PinnedMiddleware())
        own_tools += middleware[-1].tools
    # The same budget `create_context_agent` computes for itself.
    budget = AgentBudget.for_agent(window, system_prompt=system_prompt, tools=[*tools, *own_tools])
    middleware += [
        ToolOutputLimitMiddleware(budget.tool_output_limit),
        CompactionMiddleware(trigger_tokens=budget.history, target_tokens=budget.target),
        ContextMiddleware(
            # as the agent does: the line from the first call when there are tools
            builder=ContextBuilder(config=ContextConfig(max_tokens=window)),
            harden_from_start=bool(tools or own_tools),
            cache_breakpoints=True,  # as for a real Anthropic model
        ),
    ]
    return create_agent(model, tools, system_prompt=system_prompt, middleware=middleware)


def available(name: str) -> bool:
    """Whether an optional peer package is installed (found without importing it)."""
    return importlib.util.find_spec(name) is not None


def configurations() -> list[Config]:
    """Every configuration that can run here (peers that do not import are left out)."""
    configs = [
        Config("bare create_agent", _bare),
        Config("LC context editing", _context_editing),
        Config("LC summarization", _summarization, summarizes=True),
    ]
    if available("llmslim"):
        configs.append(Config("llmslim", _llmslim))
    if available("headroom"):
        configs.append(Config("headroom-ai", headroom.build))
    if available("deepagents"):
        configs.append(Config("deepagents", _deepagents, summarizes=True, unbound_summarizes=True))
    configs += [
        Config("ours create_context_agent", _ours_agent, OURS_NATIVE_TOOLS),
        Config("ours, recall off", _ours_agent_no_recall, OURS_NATIVE_TOOLS),
        Config("ours middleware", _ours_middleware, OURS_NATIVE_TOOLS),
        Config(
            "ours + summarizer",
            _ours_summarizer,
            OURS_NATIVE_TOOLS,
            summarizes=True,
            metered_summaries=True,
        ),
    ]
    return configs
