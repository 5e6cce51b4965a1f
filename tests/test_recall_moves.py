"""Recall's texts in state move out of the index, so a checkpoint does not rewrite them all."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from langgraph_context.agents import create_context_agent
from langgraph_context.recall import (
    RecallLimits,
    RecallMiddleware,
    RecallStateMixin,
    create_offload_node,
    merge_recall,
    merge_texts,
)
from langgraph_context.recall.archive import HOT_CHARS
from tests.conftest import ScriptedChatModel, ai_calls, call

LINES = 400  # one log is about 11,800 characters: 6 of them pass HOT_CHARS


def _log(n: int) -> str:
    return "\n".join(f"log {n} line {i}: worker {n * 31 + i} ok" for i in range(LINES))


@tool
def read_log(n: int) -> str:
    """Return log number n."""
    return _log(n)


def _script(logs: int, then: list[AIMessage] | None = None) -> ScriptedChatModel:
    steps = [ai_calls(call("read_log", {"n": n}, f"c{n}")) for n in range(logs)]
    return ScriptedChatModel(responses=[*steps, *(then or []), AIMessage("done")])


def _cfg(thread: str = "t") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}, "recursion_limit": 200}


def _in_index(state: dict[str, Any]) -> int:
    return sum(len(e.get("text", "")) for e in state["recall"].values())


def _agent(model: ScriptedChatModel, **kwargs: Any) -> Any:
    return create_context_agent(
        model, [read_log], checkpointer=InMemorySaver(), compaction=False, **kwargs
    )


def test_a_long_thread_moves_its_texts_and_every_handle_still_reads_back() -> None:
    """Past HOT_CHARS the index holds no more than that; each handle reads its full text."""
    logs = 20
    agent = _agent(_script(logs))
    state = agent.invoke({"messages": [("user", "read the logs")]}, _cfg())
    index, moved = state["recall"], state["recall_texts"]
    assert len(index) == logs
    assert moved, "twenty 9 KB results must have moved out of the index"
    assert _in_index(state) <= HOT_CHARS + len(_log(0))
    for handle, entry in index.items():
        text = entry.get("text", moved.get(handle))
        assert text is not None
        assert text.startswith("log ")
        assert ("text" in entry) != (handle in moved)
    texts = sorted(entry.get("text", moved.get(h)) for h, entry in index.items())
    assert texts == sorted(_log(n) for n in range(logs))


def test_read_tool_output_and_search_history_read_moved_texts() -> None:
    """The model reads a moved text by handle and by search, as it read it before it moved."""
    first = _agent(_script(12)).invoke({"messages": [("user", "go")]}, _cfg())
    handle = next(h for h in first["recall"] if h in first["recall_texts"])
    reads = [
        ai_calls(call("read_tool_output", {"handle": handle, "pattern": "line 333:"}, "r1")),
        ai_calls(call("search_history", {"query": "worker 335"}, "r2")),
    ]
    state = _agent(_script(12, reads)).invoke({"messages": [("user", "go")]}, _cfg())
    page, hits = [m for m in state["messages"] if isinstance(m, ToolMessage)][-2:]
    assert "Error" not in page.content
    assert "line 333: worker" in page.content
    assert "worker 335 ok" in hits.content


def test_a_round_that_moves_nothing_writes_only_its_own_entry() -> None:
    """After a move, the next rounds' `recall` writes stay small: the moved texts are not in it."""
    saver = InMemorySaver()
    agent = create_context_agent(_script(16), [read_log], checkpointer=saver, compaction=False)
    agent.invoke({"messages": [("user", "go")]}, _cfg())
    sizes = [
        len(blob) for (_, _, channel, _), (_, blob) in saver.blobs.items() if channel == "recall"
    ]
    assert max(sizes) < HOT_CHARS + 3 * len(_log(0))
    assert sum(sizes) < 16 * (HOT_CHARS // 2 + len(_log(0)))  # every text once or twice, not n^2
    moved = [blob for (_, _, c, _), (_, blob) in saver.blobs.items() if c == "recall_texts"]
    assert 1 <= len(moved) <= 3


def test_dropped_handles_stop_reading_and_their_moved_text_is_cleared_later() -> None:
    """A cap drops the oldest entries at once; their moved texts go at the next move."""
    agent = _agent(_script(30), recall=RecallMiddleware(1_000, limits=RecallLimits(max_items=8)))
    state = agent.invoke({"messages": [("user", "go")]}, _cfg())
    assert len(state["recall"]) == 8
    assert state["recall_dropped"] == 22
    orphans = set(state["recall_texts"]) - set(state["recall"])
    assert len(orphans) * len(_log(0)) <= HOT_CHARS + len(_log(0))
    read = ai_calls(call("read_tool_output", {"handle": sorted(orphans or {"x"})[0]}, "r1"))
    again = _agent(
        _script(30, [read]), recall=RecallMiddleware(1_000, limits=RecallLimits(max_items=8))
    ).invoke({"messages": [("user", "go")]}, _cfg())
    answer = [m for m in again["messages"] if isinstance(m, ToolMessage)][-1]
    assert answer.status == "error"
    assert "no kept text" in answer.content


def test_the_offload_node_moves_texts_in_your_own_graph() -> None:
    """`create_offload_node` after a ToolNode moves texts as the middleware does."""

    class State(MessagesState, RecallStateMixin):
        pass

    logs = 12
    model = _script(logs)
    graph = StateGraph(State)
    graph.add_node("model", lambda s: {"messages": [model.invoke(s["messages"])]})
    graph.add_node("tools", ToolNode([read_log]))
    graph.add_node("offload", create_offload_node(800))
    graph.add_edge(START, "model")
    graph.add_conditional_edges(
        "model", lambda s: "tools" if s["messages"][-1].tool_calls else "__end__"
    )
    graph.add_edge("tools", "offload")
    graph.add_edge("offload", "model")
    state = graph.compile(checkpointer=InMemorySaver()).invoke(
        {"messages": [("user", "go")]}, _cfg()
    )
    assert len(state["recall"]) == logs
    assert state["recall_texts"]
    assert _in_index(state) <= HOT_CHARS + len(_log(0))


def test_the_async_path_moves_the_same_way() -> None:
    """`ainvoke` leaves the same index and moved texts as `invoke`."""
    sync = _agent(_script(10)).invoke({"messages": [("user", "go")]}, _cfg())
    done = asyncio.run(_agent(_script(10)).ainvoke({"messages": [("user", "go")]}, _cfg()))
    assert set(done["recall_texts"]) == set(sync["recall_texts"])
    assert done["recall"].keys() == sync["recall"].keys()


def test_merge_recall_takes_only_a_text_less_copy_over_a_first_write() -> None:
    """An entry without its text replaces it; any other rewrite of a handle is ignored."""
    old = {"h": {"kind": "output", "chars": 3, "at": 1.0, "text": "abc"}}
    moved = {"h": {"kind": "output", "chars": 3, "at": 1.0}}
    assert merge_recall(old, moved) == moved
    other = {"h": {"kind": "output", "chars": 9, "at": 1.0}}
    assert merge_recall(old, other) == old
    assert merge_recall(old, {"h": {**old["h"], "text": "zzz"}}) == old
    assert merge_recall(moved, old) == moved  # a text never comes back into the index


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(st.sampled_from("abcdef"), st.text(max_size=5)),
    st.dictionaries(st.sampled_from("abcdef"), st.none() | st.text(max_size=5)),
)
def test_merge_texts_keeps_first_writes_and_deletes_nones(
    left: dict[str, str], right: dict[str, str | None]
) -> None:
    """merge_texts: a `None` deletes, a handle's first text stays, nothing else is lost."""
    merged = merge_texts(left, right)
    for handle, text in right.items():
        if text is None:
            assert handle not in merged
        else:
            assert merged[handle] == left.get(handle, text)
    for handle, text in left.items():
        if handle not in right:
            assert merged[handle] == text


def test_a_state_written_before_moves_existed_still_reads_and_moves() -> None:
    """An index holding every text (as older versions wrote it) moves at its next round."""
    keeper = RecallMiddleware(1_000)
    index = {
        f"out-{n}": {"kind": "output", "chars": 9_000, "at": 1.0, "text": _log(n)}
        for n in range(10)
    }
    update, deletes, _ = keeper.capped_update(index, {})
    assert deletes == []
    assert set(update["recall_texts"]) == set(index)
    assert all("text" not in e for e in update["recall"].values())
    assert merge_recall(index, update["recall"]) == update["recall"]


def test_a_small_archive_is_left_in_the_index() -> None:
    """Below HOT_CHARS nothing moves and the update is empty."""
    keeper = RecallMiddleware(1_000)
    index = {"out-1": {"kind": "output", "chars": 10, "at": 1.0, "text": "0123456789"}}
    assert keeper.capped_update(index, {}) == ({}, [], None)


@pytest.mark.parametrize("limit", [1, 3])
def test_moves_never_lose_a_text_under_any_cap(limit: int) -> None:
    """With tight caps each kept handle still has its text, in the index or moved."""
    agent = _agent(
        _script(14), recall=RecallMiddleware(1_000, limits=RecallLimits(max_items=limit))
    )
    state = agent.invoke({"messages": [("user", "go")]}, _cfg())
    moved = state.get("recall_texts", {})
    assert len(state["recall"]) == limit
    for handle, entry in state["recall"].items():
        assert entry.get("text", moved.get(handle)) is not None
