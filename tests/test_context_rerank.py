"""The builder's optional rerank stage, between selection and structure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from langgraph_context import ContextPacket
from langgraph_context.context import ContextBuilder, ContextStateMixin, create_context_node

DOCS = [
    ContextPacket("Paris is the capital of France.", type="retrieved", source="d1"),
    ContextPacket("Lyon is a city in France.", type="retrieved", source="d2"),
    ContextPacket("France uses the euro.", type="retrieved", source="d3"),
]


def _evidence(text: str) -> list[str]:
    body = text.split("[Evidence]\n", 1)[1].split("\n\n", 1)[0]
    return [line.split("]", 1)[0].lstrip("[") for line in body.splitlines() if line[:2] == "[d"]


def reverse_and_drop_last(query: str, packets: Sequence[ContextPacket]) -> list[ContextPacket]:
    """Keep all but the last packet, in reverse order."""
    return list(packets[:-1])[::-1]


def test_without_reranker_evidence_keeps_input_order() -> None:
    """By default there is no rerank stage: evidence stays in input order."""
    builder = ContextBuilder(protect_untrusted=False)
    assert _evidence(builder.build("France?", custom_packets=DOCS)) == ["d1", "d2", "d3"]


def test_reranker_orders_and_drops_evidence() -> None:
    """The reranker's order is the evidence order; what it leaves out is dropped as `reranked`."""
    seen: list[str] = []

    def reranker(query: str, packets: Sequence[ContextPacket]) -> list[ContextPacket]:
        seen.append(query)
        return reverse_and_drop_last(query, packets)

    builder = ContextBuilder(protect_untrusted=False, reranker=reranker)
    result = builder.build_result("France?", custom_packets=DOCS)
    assert seen == ["France?"]
    assert _evidence(result.text) == ["d2", "d1"]
    assert [(d.packet.source, d.reason) for d in result.dropped] == [("d3", "reranked")]


def test_reranker_runs_in_a_context_node_graph() -> None:
    """A graph's context node uses the builder's reranker; pinned packets always survive."""
    rule = {"id": "c-1", "text": "Answer briefly", "status": "active", "source": "user"}

    def drop_all(query: str, packets: Sequence[ContextPacket]) -> list[ContextPacket]:
        return []

    class State(MessagesState, ContextStateMixin):
        """Messages, the context view and constraints."""

        constraints: list[Any]

    graph = StateGraph(State)
    graph.add_node("context", create_context_node(ContextBuilder(reranker=drop_all)))
    graph.add_edge(START, "context")
    graph.add_edge("context", END)
    history = [HumanMessage("hi"), AIMessage("hello"), HumanMessage("France?")]
    out = graph.compile().invoke({"messages": history, "constraints": [rule]})
    system = out["llm_input_messages"][0]
    assert isinstance(system, SystemMessage)
    assert "Rule: Answer briefly" in system.content


def test_reranker_must_return_a_subset() -> None:
    """A reranker inventing packets, or a non-callable one, is refused."""
    invent = ContextBuilder(reranker=lambda q, ps: [ContextPacket("new")])
    with pytest.raises(ValueError, match="subset of the packets it was given"):
        invent.build("France?", custom_packets=DOCS)
    with pytest.raises(TypeError, match="reranker must be callable"):
        ContextBuilder(reranker="cross-encoder")  # type: ignore[arg-type]
