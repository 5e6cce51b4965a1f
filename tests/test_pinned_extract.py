"""The optional LLM constraint extractor, with a scripted model, sync and async."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

from langgraph_context import PinnedStateMixin
from langgraph_context.pinned import (
    aextract_constraints,
    create_constraint_extractor_node,
    extract_constraints,
)
from langgraph_context.pinned.extract import DEFAULT_EXTRACTION_PROMPT, parse_constraints
from langgraph_context.state import constraint_id
from tests.conftest import ScriptedChatModel


class State(MessagesState, PinnedStateMixin):
    """Messages plus pinned items."""


def extractor_graph(model: ScriptedChatModel) -> Any:
    """Compile START -> extract -> END with a checkpointer."""
    graph = StateGraph(State)
    graph.add_node("extract", create_constraint_extractor_node(model))
    graph.add_edge(START, "extract")
    graph.add_edge("extract", END)
    return graph.compile(checkpointer=InMemorySaver())


def test_extract_sends_prompt_and_parses_rules() -> None:
    """The model gets the extraction prompt and the message; its lines become rules."""
    model = ScriptedChatModel(responses=[AIMessage("- Use uv\n2) Never push to main.\n")])
    rules = extract_constraints("Use uv, and never push to main please", model=model)
    assert rules == ["Use uv", "Never push to main."]
    assert model.seen == [
        [
            SystemMessage(DEFAULT_EXTRACTION_PROMPT),
            HumanMessage("Use uv, and never push to main please"),
        ]
    ]


def test_extract_none_and_blank() -> None:
    """`NONE` means no rule; a blank message is not sent to the model."""
    model = ScriptedChatModel(responses=[AIMessage("NONE")])
    assert extract_constraints("What time is it?", model=model) == []
    assert extract_constraints("   ", model=model) == []
    assert len(model.seen) == 1


async def test_aextract_is_the_async_twin() -> None:
    """The async extractor returns what the sync one would."""
    model = ScriptedChatModel(responses=[AIMessage("Answer in English")])
    assert await aextract_constraints("always answer in English", model=model) == [
        "Answer in English"
    ]
    assert await aextract_constraints("", model=model) == []


def test_parse_constraints_limits_and_dedupes() -> None:
    """Parsing drops bullets, quotes, repeats and anything past the limit."""
    reply = "* 'Use uv'\n- Use uv\nRule 1: Run ruff\n\u2022 Pin versions\nnone."
    assert parse_constraints(reply, limit=2) == ["Use uv", "Run ruff"]


def test_node_records_rules_across_turns_without_duplicates() -> None:
    """Across turns the extractor adds new rules once, tagged as extracted or quoted."""
    model = ScriptedChatModel(
        responses=[AIMessage("Use uv\nNever push to main"), AIMessage("NONE"), AIMessage("use UV")]
    )
    app = extractor_graph(model)
    cfg = {"configurable": {"thread_id": "x"}}
    state = app.invoke({"messages": [HumanMessage("From now on use uv; never push to main")]}, cfg)
    assert state["constraints"] == [
        {
            "id": constraint_id("Use uv"),
            "text": "Use uv",
            "status": "active",
            "source": "extractor",
        },
        {
            "id": constraint_id("Never push to main"),
            "text": "Never push to main",
            "status": "active",
            "source": "user",  # a whole sentence of the message: the user's own words
        },
    ]
    app.invoke({"messages": [HumanMessage("thanks")]}, cfg)
    state = app.invoke({"messages": [HumanMessage("remember: uv")]}, cfg)
    assert [c["text"] for c in state["constraints"]] == ["Use uv", "Never push to main"]


async def test_node_runs_async_in_graph() -> None:
    """The node's async path works under `ainvoke`."""
    model = ScriptedChatModel(responses=[AIMessage("Write tests first")])
    app = extractor_graph(model)
    state = await app.ainvoke(
        {"messages": [HumanMessage("Always write tests first")]},
        {"configurable": {"thread_id": "a"}},
    )
    assert [c["text"] for c in state["constraints"]] == ["Write tests first"]


async def test_node_skips_model_when_last_message_is_not_from_user() -> None:
    """After a tool round or AI reply the extractor costs no model call."""
    model = ScriptedChatModel(responses=[AIMessage("Use uv")])
    node = create_constraint_extractor_node(model)
    assert node.invoke({"messages": [HumanMessage("hi"), AIMessage("hello")]}) == {}
    assert await node.ainvoke({"messages": []}) == {}
    assert model.seen == []


def test_node_rejects_bad_configuration() -> None:
    """A non-model or an empty prompt is refused at construction."""
    with pytest.raises(TypeError, match="model must be a langchain BaseChatModel, got str"):
        create_constraint_extractor_node("gpt-4o")  # type: ignore[arg-type]
    model = ScriptedChatModel(responses=[AIMessage("x")])
    with pytest.raises(ValueError, match="prompt must be a non-empty string"):
        create_constraint_extractor_node(model, prompt=" ")
