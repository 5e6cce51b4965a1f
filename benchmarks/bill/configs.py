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
tools. Our configurations compact by rules, with no summarizer (`ours_compaction`), and
cut a tool result over a tenth of the window (at most 1,000 tokens) to its two ends as
it arrives (`create_tool_output_limit_node` after the agent's tools,
`create_tool_output_limit_middleware` around them).
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

from benchmarks.bill.replay import CLEARED, SUMMARY_INSTRUCTIONS
from langgraph_context.agents import (
    create_compaction_middleware,
    create_context_agent,
    create_context_middleware,
    create_memory_middleware,
    create_state_tools_middleware,
    create_tool_output_limit_middleware,
)
from langgraph_context.compaction import (
    create_compaction_node,
    create_tool_output_limit_node,
)
from langgraph_context.context import ContextBuilder, ContextConfig
from langgraph_context.safety.boundary import HARDENING_INSTRUCTION
from langgraph_context.tokens import count_tokens, default_counter

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


# Tokens kept free beside the system message and the history: the plan's closing message.
TAIL_RESERVE = 200
# Low mark of our compaction, as a share of its high mark.
TARGET_SHARE = 0.4
# A tool result is cut to its two ends as it arrives when it is longer than a tenth of
# the window, and never kept longer than this many tokens.
ENTRY_LIMIT_SHARE = 10
ENTRY_LIMIT_MAX = 1_000


def entry_limit(window: int) -> int:
    """Most tokens one tool result keeps in our agent's history."""
    return min(window // ENTRY_LIMIT_SHARE, ENTRY_LIMIT_MAX)


def ours_compaction(window: int, system_prompt: str) -> dict[str, Any]:
    """Our compaction settings for a window: high mark at the window, rules only.

    The high mark is the window itself, less what every request carries besides the
    history (the system prompt with its hardening line, the plan's closing message):
    the stored history is compacted only when the context node could no longer send it
    whole, so that node never moves its cut and compaction is the only event that
    rewrites the prefix. The low mark is far below (hysteresis), so the history grows
    append-only for many calls before the next compaction. Compaction is rule-based
    (old tool output cleared or dropped, a snapshot of the ids, files, errors and
    requests that left): a summarizer call is billed at the full input rate.
    """
    fixed = count_tokens(system_prompt) + count_tokens(HARDENING_INSTRUCTION) + TAIL_RESERVE
    high = window - fixed
    return {"max_tokens": high, "target_tokens": int(high * TARGET_SHARE)}


def _state_tools(native: frozenset[str]) -> dict[str, bool]:
    """Our state tools the session calls: a user turns on the tools the work needs."""
    return {
        "plan_tools": bool(native & {"write_plan", "update_plan"}),
        "memory_tools": bool(native & {"record_constraint", "resolve_constraint"}),
        "note_tools": False,
    }


def _ours_agent(
    *,
    model: Any,
    tools: list[Any],
    system_prompt: str,
    window: int,
    native: frozenset[str] = frozenset(),
    **_: Any,
) -> Any:
    return create_context_agent(
        model,
        tools=tools,
        system_prompt=system_prompt,
        compaction=create_compaction_node(**ours_compaction(window, system_prompt)),
        context=True,
        post_tools=[create_tool_output_limit_node(entry_limit(window))],
        **_state_tools(native),
        **{OURS_BUDGET_KEYWORD: window},
    ).compile()


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
    if wanted["plan_tools"]:
        middleware.append(create_state_tools_middleware(note_tools=False))
    if wanted["memory_tools"]:
        middleware.append(create_memory_middleware())
    middleware += [
        create_tool_output_limit_middleware(entry_limit(window)),
        create_compaction_middleware(**ours_compaction(window, system_prompt)),
        create_context_middleware(
            ContextBuilder(config=ContextConfig(max_tokens=window)), harden_from_start=True
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
    if available("deepagents"):
        configs.append(Config("deepagents", _deepagents, summarizes=True, unbound_summarizes=True))
    configs += [
        Config("ours create_context_agent", _ours_agent, OURS_NATIVE_TOOLS),
        Config("ours middleware", _ours_middleware, OURS_NATIVE_TOOLS),
    ]
    return configs
