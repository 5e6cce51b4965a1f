"""What a compaction's snapshot keeps: the task first, short facts beside long ones, room.

* A head kept by a middle drop is older than what the snapshot holds; when a later
  compaction evicts it, its request must come first (the render keeps the first one).
* Sections share the render budget by tokens, so one long request cannot crowd out a
  dozen ids.
* A number with its unit (`405-token`) is not an identifier.
* Over the high mark, the snapshot's room scales with the high mark, not the low one.
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from langgraph_context.compaction import (
    StateSnapshot,
    compact_messages,
    create_compaction_node,
    extract_snapshot,
)
from langgraph_context.compaction._step import SNAPSHOT_SHARE
from langgraph_context.compaction.provenance import COMPACTION_MARKER, compaction_kind
from langgraph_context.compaction.snapshot import snapshot_message
from langgraph_context.tokens import count_tokens

TASK = "Deploy to pg-staging-7741.internal for account ACCT-20931; tag rel-kestrel-9."


def _round(n: int, lines: int = 40) -> list[BaseMessage]:
    call = {"name": "run", "args": {"command": f"make check-{n}"}, "id": f"c{n}"}
    return [
        HumanMessage(f"Step {n}: check module m{n} please."),
        AIMessage("", tool_calls=[call]),
        ToolMessage(f"check {n}\n" + f"line ok {n}\n" * lines, tool_call_id=f"c{n}"),
        AIMessage(f"Module m{n} checks out."),
    ]


def _history(first: int, last: int) -> list[BaseMessage]:
    return [m for n in range(first, last) for m in _round(n)]


def _snapshot(messages: list[BaseMessage]) -> StateSnapshot:
    [marked] = [m for m in messages if compaction_kind(m) == "snapshot"]
    return StateSnapshot.from_dict(marked.additional_kwargs[COMPACTION_MARKER]["snapshot"])


def test_head_evicted_later_keeps_its_request_first() -> None:
    """drop_middle keeps the task; when drop_oldest evicts it later, it leads the snapshot."""
    start = [SystemMessage("You deploy services."), HumanMessage(TASK), *_history(0, 12)]
    first = compact_messages(start, target_tokens=900, strategy="drop_middle")
    kept = first.messages
    assert any(m.content == TASK for m in kept)  # the head stayed
    # the snapshot stands after the kept head, where the evicted middle was
    at = next(i for i, m in enumerate(kept) if compaction_kind(m) == "snapshot")
    assert at >= 2
    assert kept[:at] == start[:at]  # the head as it was, so a prompt cache still covers it
    assert _snapshot(kept).requests[0] != TASK  # it holds the middle only

    second = compact_messages([*kept, *_history(12, 24)], target_tokens=900, strategy="drop_oldest")
    assert not any(m.content == TASK for m in second.messages)  # the head left now
    snap = _snapshot(second.messages)
    assert snap.requests[0] == TASK
    text = next(m.content for m in second.messages if compaction_kind(m) == "snapshot")
    assert TASK in text  # the render keeps the first request, so the task is in context
    assert snap.requests.index("Step 0: check module m0 please.") > 0


class State(TypedDict):
    messages: Annotated[list[BaseMessage], add_messages]
    compaction: dict[str, Any]


def _turn(state: State) -> dict[str, Any]:
    n = sum(isinstance(m, ToolMessage) for m in state["messages"])
    size = 10 + (n * 37) % 90  # tool outputs of varied size, as in real sessions
    round_ = _round(n, lines=size)
    return {"messages": round_[1:]}


def _worker_graph(compaction: Any) -> Any:
    """START -> work (one tool round) -> compaction -> END, checkpointed."""
    graph = StateGraph(State)
    graph.add_node("work", _turn)
    graph.add_node("compaction", compaction)
    graph.add_edge(START, "work")
    graph.add_edge("work", "compaction")
    graph.add_edge("compaction", END)
    return graph.compile(checkpointer=InMemorySaver())


def test_task_facts_survive_many_compactions_in_a_graph() -> None:
    """A long thread through a compiled graph: the first turn's facts stay in context."""
    app = _worker_graph(create_compaction_node(trigger_tokens=3_000))
    config = {"configurable": {"thread_id": "long"}}
    app.invoke({"messages": [SystemMessage("You deploy services."), HumanMessage(TASK)]}, config)
    for n in range(120):
        state = app.invoke({"messages": [HumanMessage(f"Step {n}: check module m{n}.")]}, config)
    assert state["compaction"]["count"] >= 10
    text = "\n".join(str(m.content) for m in state["messages"])
    for fact in ("pg-staging-7741.internal", "ACCT-20931", "rel-kestrel-9"):
        assert fact in text
    assert count_tokens(state["messages"]) <= 3_000


def test_short_facts_share_the_budget_with_long_requests() -> None:
    """Ten ids fit beside long requests: the budget is shared by tokens, not by items."""
    requests = tuple(
        f"Request {i}: " + "please look at the failing job again " * 6 for i in range(5)
    )
    ids = tuple(f"ORD-{1000 + i}" for i in range(10))
    snap = StateSnapshot(requests=requests, identifiers=ids, message_count=15)
    budget = count_tokens(snap.render(max_snapshot_tokens=10_000)) // 2
    text = snap.render(max_snapshot_tokens=budget)
    assert count_tokens(text) <= budget
    assert all(i in text for i in ids)
    assert requests[0] in text  # the first request still comes first


def test_quantities_are_not_identifiers() -> None:
    """`405-token` and `3-day` name sizes; ORD-1000 and K1NW8N are ids."""
    result = ToolMessage(
        "Booking K1NW8N for ORD-1000 (a 3-day hold)\n[... the 405-token result was cut ...]",
        tool_call_id="t1",
    )
    snap = extract_snapshot(
        [AIMessage("", tool_calls=[{"name": "x", "args": {}, "id": "t1"}]), result]
    )
    assert "K1NW8N" in snap.identifiers
    assert "ORD-1000" in snap.identifiers
    assert "405-token" not in snap.identifiers
    assert "3-day" not in snap.identifiers


def test_snapshot_room_scales_with_the_high_mark() -> None:
    """A low mark far under the high mark still leaves the snapshot its share of the high mark."""
    ids = " ".join(f"ORD-{5000 + i}" for i in range(400))
    history = [SystemMessage("You track orders."), HumanMessage(f"Orders: {ids}")]
    history += _history(0, 30)
    node = create_compaction_node(trigger_tokens=2_000, target_tokens=500, strategy="drop_oldest")
    update = node.invoke({"messages": history})
    stats = update["compaction"]["last"]
    assert stats["within_budget"]
    # the old room was a fifth of the low mark (100 tokens)
    assert 500 // 5 < stats["snapshot_tokens"] <= int(SNAPSHOT_SHARE * 2_000)
    kept = [m for m in update["messages"] if m.type != "remove"]
    assert count_tokens(kept) <= stats["target_tokens"]


def _stored_prefix(before: list[BaseMessage], after: list[BaseMessage]) -> int:
    """How many leading messages of `after` are `before`'s, unchanged (ids and content)."""
    n = 0
    for old, new in zip(before, after, strict=False):
        if old.id != new.id or old.content != new.content:
            break
        n += 1
    return n


def test_compaction_leaves_the_kept_head_where_the_cache_has_it() -> None:
    """Through a compiled graph: each drop_middle compaction keeps system and task in place.

    The messages before the snapshot are the ones every earlier request began with, so a
    provider's prompt cache still covers them after the compaction; the snapshot stands
    where the evicted middle was.
    """
    app = _worker_graph(create_compaction_node(trigger_tokens=2_000, strategy="drop_middle"))
    config = {"configurable": {"thread_id": "head"}}
    app.invoke({"messages": [SystemMessage("You deploy services."), HumanMessage(TASK)]}, config)
    before = app.get_state(config).values["messages"]
    compactions = 0
    for n in range(40):
        state = app.invoke({"messages": [HumanMessage(f"Step {n}: check module m{n}.")]}, config)
        after = state["messages"]
        if state.get("compaction", {}).get("count", 0) > compactions:
            compactions = state["compaction"]["count"]
            at = next(i for i, m in enumerate(after) if compaction_kind(m) == "snapshot")
            assert at >= 2
            assert _stored_prefix(before, after) >= at  # system, task (and more) unmoved
            assert after[1].content == TASK
        before = after
    assert compactions >= 3


def _stored_before_head(snap: StateSnapshot, *, older: int) -> BaseMessage:
    """A snapshot as versions before the move stored it: a count of the head after it."""
    message = snapshot_message(snap.render(max_snapshot_tokens=300), snap)
    message.additional_kwargs[COMPACTION_MARKER]["older"] = older
    return message


def test_snapshot_stored_before_its_head_by_an_older_version_still_works() -> None:
    """A checkpoint from before the move (snapshot ahead of the head, `older=N`) compacts right.

    The head it counts is still told apart: when it is evicted, its request leads the new
    snapshot; the new snapshot is written in the current layout (no `older` count).
    """
    middle = extract_snapshot(_history(0, 3))
    old_layout = [
        SystemMessage("You deploy services."),
        _stored_before_head(middle, older=1),
        HumanMessage(TASK),
        *_history(3, 14),
    ]
    result = compact_messages(old_layout, target_tokens=900, strategy="drop_oldest")
    assert not any(m.content == TASK for m in result.messages)
    snap = _snapshot(result.messages)
    assert snap.requests[0] == TASK
    assert "Step 0: check module m0 please." in snap.requests
    [marked] = [m for m in result.messages if compaction_kind(m) == "snapshot"]
    assert "older" not in marked.additional_kwargs[COMPACTION_MARKER]
    assert result.stats.within_budget


def test_a_stored_older_count_too_large_never_puts_the_snapshot_last() -> None:
    """A marker counting more head messages than there are: the request stays last."""
    earlier = extract_snapshot([HumanMessage("Earlier: edit lib/a.py for ACCT-1")])
    stored = _stored_before_head(earlier, older=1)
    for strategy in ("auto", "drop_oldest", "drop_middle"):
        out = compact_messages(
            [SystemMessage("rules " * 300), stored, HumanMessage("Fix lib/app.ex now")],
            target_tokens=400,
            strategy=strategy,
        ).messages
        assert out[-1].content == "Fix lib/app.ex now"
        assert [compaction_kind(m) for m in out].count("snapshot") == 1


def test_snapshot_state_stays_bounded_and_keeps_the_task_over_a_long_thread() -> None:
    """1,200 merged compactions: each section holds at most its cap, task and latest kept."""
    from langgraph_context.compaction._facts import MAX_ITEMS

    snap = extract_snapshot([HumanMessage(TASK)])
    for n in range(1_200):
        call = {"name": "edit", "args": {"path": f"src/m{n}.py"}, "id": f"e{n}"}
        later = extract_snapshot(
            [HumanMessage(f"Step {n}: fix ORD-{n:05d} please."), AIMessage("", tool_calls=[call])]
        )
        snap = snap.merge(later)
    assert snap.requests[0] == TASK
    assert snap.requests[-1] == "Step 1199: fix ORD-01199 please."
    for section in (snap.requests, snap.files, snap.identifiers, snap.to_dict()["file_uses"]):
        assert len(section) <= MAX_ITEMS
    assert "ACCT-20931" in snap.identifiers  # the task's id, first seen, stays
    again = StateSnapshot.from_dict(snap.to_dict())
    assert again.to_dict() == snap.to_dict()
