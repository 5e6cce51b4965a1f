"""Compaction inside the model call: no graph step of its own, the same history in state.

Issue 35: a model call of `create_context_agent` costs as many graph steps as a bare
`create_agent`'s. Compaction's check runs in `wrap_model_call`; when it fires, the call
is sent the compacted history, and state holds it with the reply after it and the
context middleware's stamps on it.
"""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_context import CompactionMiddleware, ContextMiddleware
from langgraph_context.compaction import create_compaction_node
from langgraph_context.compaction._quiet import Quiet
from langgraph_context.messages import validate_history
from langgraph_context.testing import ScriptedChatModel, ai_calls, tool_call
from langgraph_context.tokens import TiktokenCounter, count_tokens

TRIGGER = 600


def _history(turns: int, words: int = 60) -> list[BaseMessage]:
    """`turns` user/assistant pairs with ids, then the latest question."""
    history: list[BaseMessage] = []
    for i in range(turns):
        history.append(HumanMessage(f"question {i}: " + "alpha " * words, id=f"h{i}"))
        history.append(AIMessage(f"answer {i}: " + "beta " * words, id=f"a{i}"))
    history.append(HumanMessage("latest: what did we learn?", id="latest"))
    return history


def _updates(agent: Any, state: dict[str, Any]) -> list[str]:
    chunks = agent.stream(state, {"configurable": {"thread_id": "t"}}, stream_mode="updates")
    return [name for chunk in chunks for name in chunk]


def test_a_firing_call_sends_and_stores_the_compacted_history_in_one_step() -> None:
    """The model is sent the compacted history; state holds it, then the reply; one step."""
    model = ScriptedChatModel(responses=[AIMessage("learned a lot", id="reply")])
    middleware = [CompactionMiddleware(TRIGGER)]
    agent = create_agent(model, [], middleware=middleware, checkpointer=InMemorySaver())
    history = _history(10)
    assert count_tokens(history) > TRIGGER
    assert _updates(agent, {"messages": history}) == ["model"]
    state = agent.get_state({"configurable": {"thread_id": "t"}}).values
    stored = state["messages"]
    assert state["compaction"]["count"] == 1
    assert stored[-1].content == "learned a lot"
    assert not any(isinstance(m, RemoveMessage) for m in stored)
    assert count_tokens(stored[:-1]) <= TRIGGER
    assert validate_history(stored) == []
    # What the model read is what state now holds before the reply.
    [seen] = model.seen
    assert [m.content for m in seen] == [m.content for m in stored[:-1]]
    assert stored[-2].id == "latest"


async def test_the_async_call_compacts_as_the_sync_one() -> None:
    """`ainvoke` runs the same pipeline: the same compacted history before the reply."""
    results = []
    for run in ("sync", "async"):
        model = ScriptedChatModel(responses=[AIMessage("learned a lot", id="reply")])
        agent = create_agent(model, [], middleware=[CompactionMiddleware(TRIGGER)])
        state = {"messages": _history(10)}
        out = agent.invoke(state) if run == "sync" else await agent.ainvoke(state)
        results.append([(type(m).__name__, m.content) for m in out["messages"]])
        assert out["compaction"]["count"] == 1
    assert results[0] == results[1]


def test_the_context_stamps_land_on_the_compacted_history() -> None:
    """The inner context middleware's stamps (by id) survive the rewrite of the history."""
    model = ScriptedChatModel(responses=[AIMessage("learned a lot")])
    middleware = [CompactionMiddleware(TRIGGER), ContextMiddleware(2_000)]
    agent = create_agent(model, [], middleware=middleware)
    out = agent.invoke({"messages": _history(10)})
    assert out["compaction"]["count"] == 1
    [latest] = [m for m in out["messages"] if m.id == "latest"]
    assert "timestamp" in latest.additional_kwargs
    assert "timestamp" in out["messages"][-1].additional_kwargs  # the reply, stamped
    assert out["messages"][-1].content == "learned a lot"
    assert len({m.id for m in out["messages"]}) == len(out["messages"])  # nothing appended twice
    assert count_tokens(out["messages"][:-1]) <= TRIGGER + 40  # the stamps' own tokens


def test_a_quiet_call_leaves_the_history_as_it_was() -> None:
    """Under the trigger nothing is rewritten: the reply is appended, no record is written."""
    model = ScriptedChatModel(responses=[AIMessage("short")])
    agent = create_agent(model, [], middleware=[CompactionMiddleware(50_000)])
    history = _history(3)
    out = agent.invoke({"messages": history})
    assert [m.id for m in out["messages"][:-1]] == [m.id for m in history]
    assert "compaction" not in out


@pytest.mark.parametrize("mode", ["replace", "view"])
def test_compaction_adds_no_node_in_either_mode(mode: str) -> None:
    """Neither mode adds a node to the agent graph."""
    agent = create_agent(
        ScriptedChatModel(responses=[]),
        [],
        middleware=[
            CompactionMiddleware(TRIGGER, mode=mode)  # type: ignore[arg-type]
        ],
    )
    assert set(agent.get_graph().nodes) == {"__start__", "model", "__end__"}


# --- the no-op check looks at the appended messages only -------------------------------


def _grown(n: int, *, marked: bool = True) -> list[BaseMessage]:
    """A thread of `n` messages: tool rounds and later system messages (`marked` untrusted)."""
    later = {"lgc_trusted": False} if marked else {}
    thread: list[BaseMessage] = [SystemMessage("You read logs.", id="sys")]
    for i in range(n):
        k = i % 5
        if k == 0:
            thread.append(HumanMessage(f"read log {i}", id=f"u{i}"))
        elif k == 1:
            thread.append(ai_calls(tool_call("read_log", {"n": i}, f"c{i}")))
        elif k == 2:
            thread.append(ToolMessage(f"log {i}: " + "ok " * 40, tool_call_id=f"c{i - 1}"))
        elif k == 3:
            thread.append(AIMessage(f"log {i - 2} is fine", id=f"a{i}"))
        else:
            thread.append(
                SystemMessage(f"note {i}", id=f"s{i}", additional_kwargs=dict(later))
                if i % 20 == 4
                else HumanMessage(f"and then {i}", id=f"h{i}")
            )
    return thread


@pytest.mark.parametrize("marked", [True, False])
@pytest.mark.parametrize("usage", [None, {"reported": 150, "counted": 100, "window": 3_000}])
@pytest.mark.parametrize(
    "trigger", [None, ("messages", 40), ("fraction", 0.5), [("tokens", 900), ("messages", 70)]]
)
def test_the_incremental_check_decides_as_the_full_step(
    monkeypatch: pytest.MonkeyPatch, usage: Any, trigger: Any, marked: bool
) -> None:
    """Over a growing thread, every call's update equals the full step's, call by call."""

    def run() -> list[Any]:
        node = create_compaction_node(trigger_tokens=1_200, trigger=trigger, context_window=2_400)
        thread = _grown(90, marked=marked)
        states = ({"messages": thread[:end], "token_usage": usage} for end in range(1, 92))
        return [_plain(node.invoke(state)) for state in states]

    quick = run()
    with monkeypatch.context() as patched:
        patched.setattr(Quiet, "__call__", lambda self, state: False)
        full = run()
    assert quick == full
    assert any(full)  # the later calls compact
    assert not all(full[:20])  # the first are quiet (unless a message needs marking)


def _plain(update: dict[str, Any]) -> Any:
    """An update with its messages as (type, content) pairs, its stats as they are."""
    return {
        k: [(type(m).__name__, m.id if isinstance(m, RemoveMessage) else m.content) for m in v]
        if k == "messages"
        else v
        for k, v in update.items()
    }


def test_a_quiet_call_counts_only_the_appended_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    """Once a thread was checked, the next check counts what was appended, not the thread."""
    node = create_compaction_node(trigger_tokens=50_000)
    thread = _grown(80)
    assert node.invoke({"messages": thread[:70]}) == {}
    counted: list[BaseMessage] = []
    each = TiktokenCounter.count_each

    def spy(self: TiktokenCounter, items: list[Any]) -> list[int]:
        counted.extend(items)
        return each(self, items)

    monkeypatch.setattr(TiktokenCounter, "count_each", spy)
    monkeypatch.setattr(TiktokenCounter, "count_messages", _no_whole_count)
    assert node.invoke({"messages": thread[:73]}) == {}
    assert counted == thread[70:73]
    assert node.quiet({"messages": thread[:75]})  # what the middleware asks first
    assert counted == thread[70:75]


def _no_whole_count(self: TiktokenCounter, messages: Any) -> int:
    raise AssertionError("the whole thread was counted")


def test_an_edit_in_place_is_seen() -> None:
    """A remembered message given new content in place is counted again: the trigger fires."""
    node = create_compaction_node(trigger_tokens=1_000)
    thread = _grown(30)
    assert node.invoke({"messages": thread}) == {}
    thread[2].content = "read every log line, " * 400  # the same object, edited
    update = node.invoke({"messages": thread})
    assert update["compaction"]["count"] == 1
    assert isinstance(update["messages"][0], RemoveMessage)


def test_a_shorter_or_reloaded_thread_is_checked_from_scratch() -> None:
    """After a removal, or over copies of the messages, the check counts the thread anew."""
    node = create_compaction_node(trigger_tokens=900)
    thread = _grown(60)
    big = [*_grown(60), HumanMessage("tail " * 600, id="big")]
    assert node.invoke({"messages": big})["compaction"]["count"] == 1
    assert node.invoke({"messages": thread[:20]}) == {}
    assert node.invoke({"messages": thread[:10]}) == {}  # messages removed at the end
    copies = [m.model_copy() for m in big]  # a history reloaded from a checkpoint
    assert node.invoke({"messages": copies})["compaction"]["count"] == 1


def test_the_check_keeps_no_message_alive() -> None:
    """A checked thread's messages are freed with the thread (weak references only)."""
    node = create_compaction_node(trigger_tokens=50_000)
    thread = _grown(20)
    assert node.invoke({"messages": thread}) == {}
    ref = weakref.ref(thread[5])
    del thread
    gc.collect()
    assert ref() is None


def test_a_stamped_copy_keeps_its_count_and_an_edited_copy_is_recounted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A copy replacing a message by id counts as it did; one with new tool calls is recounted."""
    node = create_compaction_node(trigger_tokens=1_000)
    thread = _grown(22)
    assert node.invoke({"messages": thread}) == {}
    counted: list[BaseMessage] = []
    each = TiktokenCounter.count_each

    def spy(self: TiktokenCounter, items: list[Any]) -> list[int]:
        counted.extend(items)
        return each(self, items)

    monkeypatch.setattr(TiktokenCounter, "count_each", spy)
    kwargs = {"additional_kwargs": {"timestamp": "2026-11-27T13:00:00+00:00"}}
    stamped = [m.model_copy(update=kwargs) for m in thread[-3:]]
    assert node.invoke({"messages": [*thread[:-3], *stamped]}) == {}
    assert counted == []  # the copies share their content: counted before
    # The latest call is pending (not counted): edit the one before it.
    [index] = [i for i, m in enumerate(thread) if isinstance(m, AIMessage) and m.tool_calls][-2:-1]
    call = tool_call("read_log", {"n": "every line " * 600}, thread[index].tool_calls[0]["id"])
    edited = thread[index].model_copy(update={"tool_calls": [call]})
    update = node.invoke({"messages": [*thread[:index], edited, *thread[index + 1 :]]})
    assert counted[0] is edited
    assert update["compaction"]["count"] == 1
