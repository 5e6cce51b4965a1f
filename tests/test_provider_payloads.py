"""Generated histories through every public path that builds a model input (the
prebuilt agent included): each output passes `validate_history` and is a request
langchain-openai's and langchain-anthropic's own builders produce and the providers'
rules accept."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
)
from langchain_core.tools import tool

from langgraph_context.agents import create_codebase_maintainer_graph, create_context_agent
from langgraph_context.compaction import compact_messages
from langgraph_context.context import ContextBuilder, ContextConfig, create_context_node
from langgraph_context.context.breakpoints import cache_marks, mark_cache_breakpoints
from langgraph_context.messages import provider_ready_history, repair_history, truncate_messages
from langgraph_context.testing import ScriptedChatModel
from tests._payloads import MAX_ANTHROPIC_MARKS, provider_problems
from tests.strategies import hostile_histories, valid_histories

FEW = settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
PLANS = st.one_of(
    st.just([]),
    st.just([{"content": "read the code", "status": "in_progress"}]),
)
NODES = {
    (layout, budget): create_context_node(  # type: ignore[call-overload]
        ContextBuilder(config=ContextConfig(max_tokens=budget)),
        layout=layout,
        stamp_times=False,
        keep_last=4,
    )
    for layout in ("cache", "focus")
    for budget in (300, 4000)
}


def _with_user(history: list[BaseMessage]) -> list[BaseMessage]:
    return [HumanMessage("start"), *history]


def _without_later_system(history: list[BaseMessage]) -> list[BaseMessage]:
    """A history's messages as a request takes them: a system message after the first
    other message is a history's (a summary), moved by the context node into its own
    system message, and by `provider_ready_history` into a user turn."""
    lead = next((i for i, m in enumerate(history) if not isinstance(m, SystemMessage)), 0)
    return [*history[:lead], *(m for m in history[lead:] if not isinstance(m, SystemMessage))]


RULES = st.one_of(
    st.just([]),
    st.just([{"id": "c-1", "text": "Never push to main", "status": "active", "source": "model"}]),
)


@FEW
@given(
    hostile_histories(),
    PLANS,
    RULES,
    st.sampled_from(["cache", "focus"]),
    st.sampled_from([300, 4000]),
)
def test_the_context_node_output_is_accepted(
    history: list[BaseMessage], plan: list[Any], rules: list[Any], layout: str, budget: int
) -> None:
    """Both layouts, tight and roomy budgets, with or without a plan and a model-recorded
    rule (which may move a tool round out of the verbatim tail): providers accept it."""
    node = NODES[(layout, budget)]
    state = {"messages": _with_user(history), "plan": plan, "constraints": rules}
    sent = node.invoke(state)["llm_input_messages"]
    assert provider_problems(sent, alternating=True) == []
    marked = mark_cache_breakpoints(sent)
    assert sum(cache_marks(m) for m in marked) <= MAX_ANTHROPIC_MARKS
    assert provider_problems(marked, alternating=True) == []


@FEW
@given(hostile_histories(), st.sampled_from([60, 400]))
def test_compact_messages_output_is_accepted(history: list[BaseMessage], budget: int) -> None:
    """`compact_messages` returns a history both providers accept, whatever it was given."""
    result = compact_messages(_with_user(history), target_tokens=budget)
    assert provider_problems(_without_later_system(result.messages), marks=False) == []


@FEW
@given(hostile_histories())
def test_repair_and_provider_ready_outputs_are_accepted(history: list[BaseMessage]) -> None:
    """`repair_history` output is valid; `provider_ready_history` output also alternates."""
    repaired = repair_history(history).messages
    assert provider_problems(_without_later_system(repaired), marks=False) == []
    assert provider_problems(provider_ready_history(history), alternating=True) == []


@FEW
@given(valid_histories(), st.integers(0, 8))
def test_truncate_messages_output_is_accepted(history: list[BaseMessage], keep: int) -> None:
    """Cutting a valid history never leaves a request a provider refuses."""
    cut = truncate_messages(history, keep=keep)
    assert provider_problems(_without_later_system(cut)) == []


@FEW
@given(hostile_histories())
def test_mark_cache_breakpoints_output_is_accepted(history: list[BaseMessage]) -> None:
    """Marks on a provider-ready request: at most four blocks, the request still accepted."""
    ready = [SystemMessage("rules"), *provider_ready_history(history)]
    marked = mark_cache_breakpoints(ready)
    assert sum(cache_marks(m) for m in marked) <= MAX_ANTHROPIC_MARKS
    assert provider_problems(marked, alternating=True) == []


@FEW
@given(hostile_histories())
def test_context_builder_output_is_accepted(history: list[BaseMessage]) -> None:
    """The builder's text as a system message before the query is a request both accept."""
    builder = ContextBuilder(config=ContextConfig(max_tokens=300))
    text = builder.build("what next?", provider_ready_history(history))
    assert provider_problems([SystemMessage(text), HumanMessage("what next?")]) == []


AGENT_FEW = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@AGENT_FEW
@given(hostile_histories(), st.booleans(), st.booleans(), st.sampled_from([800, 4000]))
def test_the_prebuilt_agent_sends_what_providers_accept(
    history: list[BaseMessage], context: bool, compaction: bool, budget: int
) -> None:
    """`create_context_agent`, with or without the context and compaction middleware:
    each request is valid."""
    model = ScriptedChatModel(responses=[AIMessage("ok")])
    sized = {"max_tokens": budget} if context else {}
    agent = create_context_agent(model, [_lookup], context=context, compaction=compaction, **sized)
    # A client cannot send a `RemoveMessage` of a message the thread lacks: LangGraph's
    # reducer refuses it before any node runs. Every other hostile shape goes in.
    sent_in = [m for m in _with_user(history) if not isinstance(m, RemoveMessage)]
    agent.invoke({"messages": sent_in})
    sent = list(model.seen[0])
    assert provider_problems(sent, alternating=True) == []


@tool
def _lookup(key: str) -> str:
    """Look a key up (scripted)."""
    return key


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_histories(), st.booleans())
def test_the_maintainer_sends_what_providers_accept(
    history: list[BaseMessage], context: bool
) -> None:
    """The codebase maintainer (briefing, modes, constraint store), with or without its
    context: each request is valid (few examples: each runs shell commands)."""
    model = ScriptedChatModel(responses=[AIMessage("ok")])
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp, "ws")
        workspace.mkdir()
        (workspace / "app.py").write_text("x = 1  # TODO: tidy\n", encoding="utf-8")
        graph = create_codebase_maintainer_graph(
            model, workspace=workspace, notes=Path(tmp, "notes"), context=context
        )
        sent_in = [m for m in _with_user(history) if not isinstance(m, RemoveMessage)]
        graph.invoke({"messages": sent_in})
    assert provider_problems(list(model.seen[0]), alternating=True) == []
