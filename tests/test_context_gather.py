"""Tests for the Gather stage: state sources, history, query sources, failures."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.retrievers import BaseRetriever
from langgraph.store.memory import InMemoryStore

from langgraph_context.context import ContextPacket, StoreSource, agather_packets, gather_packets
from langgraph_context.context.gather import DEFAULT_STATE_SOURCES, messages_to_packets
from langgraph_context.errors import InvalidTypeError


class FixedRetriever(BaseRetriever):
    """Returns two fixed documents."""

    def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
        return [
            Document("Paris is in France", id="geo-1"),
            Document("Rome is in Italy", metadata={"source": "geo-2"}),
        ]


def test_messages_to_packets_handles_objects_and_dicts() -> None:
    """Messages and OpenAI dicts become typed packets with speaker and trust."""
    history = [
        SystemMessage("rules"),
        {"role": "user", "content": "hi"},
        AIMessage("", tool_calls=[{"name": "ls", "args": {}, "id": "c1"}], id="ai-1"),
        ToolMessage("file.txt", tool_call_id="c1"),
        HumanMessage("thanks", name="Ann"),
    ]
    packets = messages_to_packets(history)
    assert [p.type for p in packets] == ["system", "message", "message", "tool", "message"]
    assert [p.content for p in packets] == [
        "rules",
        "user: hi",
        "assistant: [calls ls({})]",
        "tool: file.txt",
        "Ann: thanks",
    ]
    assert packets[2].source == "ai-1"
    assert packets[1].source == "message-1"
    assert [p.is_trusted for p in packets] == [True, True, False, False, True]
    assert packets[4].metadata["speaker"] == "Ann"


def test_default_state_sources_read_messages_plan_and_notes() -> None:
    """The default state sources turn messages, plan, notes and pinned items into packets."""
    state = {
        "messages": [HumanMessage("hello")],
        "plan": [{"content": "write tests", "status": "in_progress"}],
        "note": {"b": "second", "a": "first"},
        "constraints": [{"id": "c1", "text": "Use uv", "status": "active"}],
    }
    result = gather_packets("q", state=state)
    assert [(p.type, p.content) for p in result.packets] == [
        ("message", "user: hello"),
        ("plan", "Plan:\n1. [in_progress] write tests"),
        ("note", "Note a:\nfirst"),
        ("note", "Note b:\nsecond"),
        ("constraint", "Use uv"),
    ]
    assert result.packets[1].pinned
    assert result.packets[-1].pinned
    assert len(DEFAULT_STATE_SOURCES) == 4


def test_extra_state_source_and_order() -> None:
    """Added state sources run after the defaults; instructions come first, custom last."""

    def constraints(state: Any) -> list[ContextPacket]:
        return [
            ContextPacket(c, type="constraint", pinned=True) for c in state.get("constraints", [])
        ]

    result = gather_packets(
        "q",
        state={"constraints": ["Never push to main"]},
        system_instructions="Be careful",
        conversation_history=[{"role": "user", "content": "go"}],
        custom_packets=[ContextPacket("extra")],
        state_sources=(*DEFAULT_STATE_SOURCES, constraints),
    )
    assert [p.content for p in result.packets] == [
        "Be careful",
        "Never push to main",
        "user: go",
        "extra",
    ]
    assert result.packets[0].type == "system"
    assert result.packets[0].pinned


def test_query_sources_retriever_store_and_callable() -> None:
    """Retrievers, stores and callables are searched with the query and converted."""
    store = InMemoryStore()
    store.put(("docs",), "k1", {"content": "stored fact"})
    result = gather_packets(
        "where",
        sources=[
            FixedRetriever(),
            StoreSource(store, ("docs",)),
            store,
            lambda q: [f"echo {q}", ContextPacket("given", type="retrieved", source="s")],
        ],
    )
    assert [(p.type, p.source, p.content) for p in result.packets] == [
        ("retrieved", "geo-1", "Paris is in France"),
        ("retrieved", "geo-2", "Rome is in Italy"),
        ("memory", "docs/k1", "stored fact"),
        ("memory", "docs/k1", "stored fact"),
        ("retrieved", "<lambda>", "echo where"),
        ("retrieved", "s", "given"),
    ]
    assert result.failures == ()


def test_failing_sources_are_logged_and_skipped(caplog: pytest.LogCaptureFixture) -> None:
    """A raising source, a bad item type and a broken state source never fail the gather."""

    def broken(query: str) -> list[str]:
        raise RuntimeError("index offline")

    def bad_items(query: str) -> list[int]:
        return [42]

    def broken_state(state: Any) -> list[ContextPacket]:
        raise KeyError("constraints")

    with caplog.at_level(logging.WARNING):
        result = gather_packets(
            "q",
            state={},
            sources=[broken, bad_items, lambda q: ["ok"]],
            state_sources=(broken_state,),
        )
    assert [p.content for p in result.packets] == ["ok"]
    assert [f.source for f in result.failures] == ["broken_state", "broken", "bad_items"]
    assert "index offline" in result.failures[1].error
    assert "expected ContextPacket, Document or str" in result.failures[2].error
    assert "context source broken failed" in caplog.text


def test_source_failing_part_way_contributes_nothing() -> None:
    """A source that raises after yielding some items is skipped whole, not half-kept."""

    def flaky(query: str) -> Any:
        yield "partial result"
        raise RuntimeError("connection reset")

    def flaky_state(state: Any) -> Any:
        yield ContextPacket("partial state")
        raise RuntimeError("gone")

    result = gather_packets("q", state={}, sources=[flaky], state_sources=(flaky_state,))
    assert result.packets == ()
    assert [f.source for f in result.failures] == ["flaky_state", "flaky"]


def test_async_source_in_sync_gather_raises() -> None:
    """An async callable cannot run in a sync gather: a programmer's error, raised."""

    async def remote(query: str) -> list[str]:
        return ["never"]

    with pytest.raises(InvalidTypeError, match=r"remote is async.*call the async twin"):
        gather_packets("q", sources=[remote])


async def test_agather_awaits_async_sources() -> None:
    """The async gather awaits async callables, retrievers and stores."""
    store = InMemoryStore()
    store.put(("m",), "k", {"text": "async fact"})

    async def remote(query: str) -> list[str]:
        return [f"remote {query}"]

    def failing(query: str) -> list[str]:
        raise ValueError("nope")

    result = await agather_packets(
        "q", sources=[remote, FixedRetriever(), StoreSource(store), failing]
    )
    assert [p.content for p in result.packets] == [
        "remote q",
        "Paris is in France",
        "Rome is in Italy",
        "async fact",
    ]
    assert [f.source for f in result.failures] == ["failing"]
