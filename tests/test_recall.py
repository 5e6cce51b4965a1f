"""Restorable context: cut tool output and evicted history are kept and read back."""

from __future__ import annotations

import asyncio
import doctest
import importlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command

from benchmarks.recall.follower import NoticeFollower, notice_handle
from langgraph_context.agents import CompactionMiddleware, create_context_agent
from langgraph_context.compaction.options import Archive
from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.recall import (
    PageError,
    RecallLimits,
    RecallMiddleware,
    RecallStateMixin,
    create_offload_node,
    delete_recall,
    merge_recall,
    recall_namespace,
)
from langgraph_context.recall.archive import DEFAULT_RECALL_NAMESPACE
from langgraph_context.recall.read import read_page
from langgraph_context.tokens import default_counter
from tests.conftest import ScriptedChatModel, ai_calls, call
from tests.test_notebook_langgraph_store import postgres_url  # noqa: F401 (the fixture)

NEEDLE = "FATAL: checksum mismatch in shard 7f3a"


def _log(tag: str = "", lines: int = 3_000) -> str:
    body = [f"{tag}step {i}: ok" for i in range(lines)]
    body[lines // 2] = f"{tag}{NEEDLE}"
    return "\n".join(body)


@tool
def run_tests() -> str:
    """Run the tests."""
    return _log()


def _follower() -> NoticeFollower:
    return NoticeFollower(first={"name": "run_tests", "args": {}}, pattern="checksum")


def _cfg(thread: str, user: str | None = None) -> dict[str, Any]:
    configurable = {"thread_id": thread, **({"user_id": user} if user else {})}
    return {"configurable": configurable}


def test_a_cut_result_names_its_handle_and_the_model_reads_the_middle_back() -> None:
    """The notice names a handle; read_tool_output with a pattern returns the cut line."""
    agent = create_context_agent(_follower(), [run_tests], checkpointer=InMemorySaver())
    out = agent.invoke({"messages": [("user", "why did it fail?")]}, _cfg("t1"))
    cut, page = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    handle = notice_handle(str(cut.content))
    assert handle is not None
    assert NEEDLE not in cut.content
    assert "read_tool_output" in cut.content
    assert NEEDLE in page.content
    assert "untrusted-data-" in page.content
    assert out["recall"][handle]["text"] == _log()  # no store: kept in the thread's state
    assert out["recall"][handle]["source"] == "run_tests"
    assert NEEDLE in out["messages"][-1].content


def test_a_cut_result_keeps_half_the_limit_and_a_shorter_one_stays_whole() -> None:
    """Over the limit: cut to keep_tokens (half by default); between the two: kept whole."""

    @tool
    def medium() -> str:
        """Return about 700 tokens."""
        return " ".join(f"w{i}" for i in range(350))

    calls = ai_calls(call("run_tests", {}, "c1"), call("medium", {}, "c2"))
    model = ScriptedChatModel(responses=[calls, AIMessage("ok")])
    out = create_context_agent(model, [run_tests, medium], max_tokens=16_000).invoke(
        {"messages": [("user", "go")]}
    )
    cut, whole = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    counter = default_counter()
    assert 400 < counter(cut.content) <= 500 < counter(whole.content) <= 1_000
    assert whole.content == medium.invoke({})
    narrow = RecallMiddleware(1_000, keep_tokens=200)
    short, _, _ = narrow.offload(ToolMessage(_log(), tool_call_id="c3", name="run_tests"))
    assert isinstance(short, Command)
    assert 150 < counter(short.update["messages"][0].content) <= 200
    assert RecallMiddleware(100, keep_tokens=500).keep_tokens == 100  # never over the limit


def test_recall_off_keeps_the_old_cut_and_binds_no_tools() -> None:
    """recall=False: the result is cut without a handle and no recall tool is bound."""
    agent = create_context_agent(_follower(), [run_tests], recall=False)
    out = agent.invoke({"messages": [("user", "go")]})
    cut = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert notice_handle(str(cut.content)) is None
    assert "narrower part" in cut.content
    assert "recall" not in out


def test_bad_handles_ranges_and_patterns_are_error_messages_and_change_nothing() -> None:
    """Unknown handle, bad offset/lines, blank pattern/query: error results, state as is."""
    first = ScriptedChatModel(responses=[ai_calls(call("run_tests", {}, "c1")), AIMessage("ok")])
    saver = InMemorySaver()
    agent = create_context_agent(first, [run_tests], checkpointer=saver)
    agent.invoke({"messages": [("user", "go")]}, _cfg("t1"))
    recall = agent.get_state(_cfg("t1")).values["recall"]
    [handle] = recall
    bad = [
        call("read_tool_output", {"handle": "out-000000000000"}, "b1"),
        call("read_tool_output", {"handle": handle, "offset": 0}, "b2"),
        call("read_tool_output", {"handle": handle, "offset": 10_000}, "b3"),
        call("read_tool_output", {"handle": handle, "offset": -1}, "b4"),
        call("read_tool_output", {"handle": handle, "pattern": "  "}, "b5"),
        call("search_history", {"query": " "}, "b6"),
    ]
    second = ScriptedChatModel(responses=[ai_calls(*bad), AIMessage("ok")])
    again = create_context_agent(second, [run_tests], checkpointer=saver)
    out = again.invoke({"messages": [("user", "read")]}, _cfg("t1"))
    errors = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert all(errors[f"b{i}"].status == "error" for i in range(1, 7))
    assert handle in errors["b1"].content  # names the handles it does hold
    assert "offset must be a line number from 1 to 3000" in errors["b2"].content
    assert "got -1" in errors["b4"].content
    assert out["recall"] == recall


def _two_user_agent(store: InMemoryStore) -> Any:
    models: dict[str, NoticeFollower] = {}

    def model_for(config: Any) -> NoticeFollower:
        thread = config["configurable"]["thread_id"]
        return models.setdefault(thread, _follower())

    return create_context_agent(
        model_for, [run_tests], checkpointer=InMemorySaver(), store=store, constraint_tools=False
    )


RUNS = [("u1", "t1"), ("u1", "t2"), ("u2", "t3"), ("u2", "t4")]


def test_two_users_two_threads_at_once_keep_their_texts_apart_in_the_store() -> None:
    """Four concurrent runs: each text sits under its user and thread; no handle crosses."""
    store = InMemoryStore()
    agent = _two_user_agent(store)

    async def turn(user: str, thread: str) -> dict[str, Any]:
        return await agent.ainvoke({"messages": [("user", "go")]}, _cfg(thread, user))

    async def every() -> list[dict[str, Any]]:
        return await asyncio.gather(*(turn(u, t) for u, t in RUNS))

    outs = asyncio.run(every())
    handles = {}
    for (user, thread), out in zip(RUNS, outs, strict=True):
        [(handle, entry)] = out["recall"].items()
        assert "text" not in entry  # kept in the store, not in state
        where = recall_namespace(_cfg(thread, user))
        assert where == (*DEFAULT_RECALL_NAMESPACE, user, thread)
        assert store.get(where, handle) is not None
        assert NEEDLE in out["messages"][-1].content
        handles[thread] = handle
    # the same text and call id in every thread: one handle, four separate copies
    assert len(set(handles.values())) == 1
    assert len(store.search(DEFAULT_RECALL_NAMESPACE, limit=10)) == 4
    reader = ScriptedChatModel(
        responses=[
            ai_calls(call("read_tool_output", {"handle": handles["t1"]}, "x")),
            AIMessage(""),
        ]
    )
    fresh = create_context_agent(
        reader, [run_tests], checkpointer=InMemorySaver(), store=store, constraint_tools=False
    )
    out = fresh.invoke({"messages": [("user", "read t1's")]}, _cfg("t9", "u2"))
    error = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert error.status == "error"
    assert NEEDLE not in error.content


def test_delete_recall_clears_a_threads_store_items_and_delete_thread_its_state() -> None:
    """delete_recall removes one thread's texts only; the checkpointer drops the index."""
    store = InMemoryStore()
    saver = InMemorySaver()
    for thread in ("t1", "t2"):
        model = ScriptedChatModel(responses=[ai_calls(call("run_tests", {}, "c1")), AIMessage("")])
        agent = create_context_agent(model, [run_tests], checkpointer=saver, store=store)
        agent.invoke({"messages": [("user", "go")]}, _cfg(thread, "u1"))
    assert delete_recall(store, user_id="u1", thread_id="t1") == 1
    left = store.search(DEFAULT_RECALL_NAMESPACE, limit=10)
    assert [item.namespace[-1] for item in left] == ["t2"]
    saver.delete_thread("t1")
    assert saver.get_tuple(_cfg("t1")) is None


def test_the_oldest_entries_are_dropped_past_the_item_cap_and_counted() -> None:
    """max_items=2 over three offloads: the first is dropped, in state and in the store."""
    store = InMemoryStore()
    keeper = RecallMiddleware(200, limits=RecallLimits(max_items=2))

    @tool
    def dump(n: int) -> str:
        """Dump part n."""
        return _log(f"part {n} ")

    calls = [ai_calls(call("dump", {"n": i}, f"c{i}")) for i in range(3)]
    model = ScriptedChatModel(responses=[*calls, AIMessage("done")])
    agent = create_agent(
        model, [dump], middleware=[keeper], checkpointer=InMemorySaver(), store=store
    )
    out = agent.invoke({"messages": [("user", "go")]}, _cfg("t1", "u1"))
    cuts = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    handles = [notice_handle(str(m.content)) for m in cuts]
    assert list(out["recall"]) == handles[1:]
    assert out["recall_dropped"] == 1
    where = recall_namespace(_cfg("t1", "u1"))
    assert where is not None
    assert store.get(where, str(handles[0])) is None
    assert store.get(where, str(handles[2])) is not None


def test_expired_entries_are_dropped_first() -> None:
    """With ttl_seconds, entries older than it are dropped before any cap applies."""
    limits = RecallLimits(max_items=5, ttl_seconds=60)
    index = {"a": {"chars": 1, "at": 0.0}, "b": {"chars": 1, "at": 100.0}}
    assert limits.over(index, now=120.0) == ["a"]
    assert RecallLimits(max_bytes=1).over(index, now=0.0) == ["a"]


def test_compaction_archives_evicted_messages_and_search_history_finds_them() -> None:
    """Replace-mode compaction hands evicted turns to the archive; search finds an old fact."""
    keeper = RecallMiddleware(1_000)
    compaction = CompactionMiddleware(
        300, target_tokens=100, archive=Archive(sink=keeper.archive_sink)
    )
    history: list[Any] = []
    for i in range(12):
        fact = "the deploy key is in vault path secret/ops/k42" if i == 1 else f"chat {i}"
        history += [HumanMessage(f"{fact} " + "filler " * 40), AIMessage(f"noted {i}")]
    search = ai_calls(call("search_history", {"query": "deploy key vault path"}, "s1"))
    model = ScriptedChatModel(responses=[search, AIMessage("done")])
    agent = create_agent(
        model, [run_tests], middleware=[keeper, compaction], checkpointer=InMemorySaver()
    )
    out = agent.invoke({"messages": history}, _cfg("t1"))
    assert out["compaction"]["count"] >= 1
    assert any(e["kind"] == "message" for e in out["recall"].values())
    found = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert "secret/ops/k42" in found.content
    assert "msg-" in found.content


def test_recall_tokens_puts_the_best_passage_in_the_system_message_fenced() -> None:
    """With max_recall_tokens, a later call's system message holds the kept needle, fenced."""
    keeper = RecallMiddleware(200, max_recall_tokens=200)
    model = ScriptedChatModel(
        responses=[ai_calls(call("run_tests", {}, "c1")), AIMessage("a"), AIMessage("b")]
    )
    agent = create_agent(model, [run_tests], middleware=[keeper], checkpointer=InMemorySaver())
    agent.invoke({"messages": [("user", "run")]}, _cfg("t1"))
    agent.invoke({"messages": [("user", "which shard had a checksum mismatch?")]}, _cfg("t1"))
    system = model.seen[-1][0]
    assert "[Recalled]" in system.content
    assert NEEDLE in system.content
    assert "untrusted-data-" in system.content


def test_merge_recall_keeps_the_first_text_of_a_handle_and_deletes_on_none() -> None:
    """The reducer merges by handle, never rewrites a kept entry, and handles None sides."""
    left = {"a": {"chars": 1}}
    assert merge_recall(None, None) == {}
    assert merge_recall(left, {"a": {"chars": 9}}) == left
    assert merge_recall(left, {"a": None, "b": {"chars": 2}}) == {"b": {"chars": 2}}
    assert left == {"a": {"chars": 1}}  # inputs untouched


def test_bad_options_are_refused_naming_the_parameter() -> None:
    """Bad caps, limits, sink or recall argument raise typed errors naming them."""
    with pytest.raises(InvalidArgumentError, match="max_items must be a positive int"):
        RecallLimits(max_items=0)
    with pytest.raises(InvalidArgumentError, match="ttl_seconds must be a positive"):
        RecallLimits(ttl_seconds=-1)
    with pytest.raises(InvalidArgumentError, match="max_result_tokens must be a positive"):
        RecallMiddleware(0)
    with pytest.raises(InvalidArgumentError, match="max_recall_tokens must be a positive"):
        RecallMiddleware(max_recall_tokens=0)
    with pytest.raises(InvalidArgumentError, match="keep_tokens must be a positive"):
        RecallMiddleware(keep_tokens=0)
    with pytest.raises(InvalidArgumentError, match="limits must be a RecallLimits"):
        RecallMiddleware(limits={"max_items": 3})  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="sink must be callable"):
        Archive(sink="keep")  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="recall must be a bool or a RecallMiddleware"):
        create_context_agent(_follower(), [run_tests], recall="yes")  # type: ignore[arg-type]
    with pytest.raises(PageError, match="pattern must be non-empty"):
        read_page("a", pattern="", max_result_tokens=10, token_counter=len)


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(max_size=3_000),
    offset=st.integers(min_value=-5, max_value=200),
    lines=st.one_of(st.none(), st.integers(min_value=-2, max_value=50)),
    pattern=st.one_of(st.none(), st.text(max_size=8)),
    cap=st.integers(min_value=1, max_value=300),
)
def test_generated_ranges_and_patterns_never_crash_and_pages_fit(
    text: str, offset: int, lines: int | None, pattern: str | None, cap: int
) -> None:
    """Any text, offset, line count and pattern: a page within the cap or a PageError."""
    try:
        where, page = read_page(
            text,
            offset=offset,
            lines=lines,
            pattern=pattern,
            max_result_tokens=cap,
            token_counter=len,
        )
    except PageError:
        return
    assert where
    assert len(page) <= cap + 8  # beyond the cap only a lone line's number prefix


@settings(max_examples=40, deadline=None)
@given(handle=st.text(max_size=40), offset=st.integers(-3, 5000), pattern=st.text(max_size=6))
def test_generated_handles_through_the_tool_are_errors_or_pages(
    handle: str, offset: int, pattern: str
) -> None:
    """The tool answers any generated handle/offset/pattern with a message, never a crash."""
    keeper = RecallMiddleware(200)
    [reader, _] = keeper.tools
    state = {"recall": {"out-aaaaaaaaaaaa": {"kind": "output", "text": _log(lines=50)}}}
    for wanted in (handle, "out-aaaaaaaaaaaa"):
        args = {"handle": wanted, "offset": offset, "pattern": pattern or None}
        message = _invoke(reader, args, state)
        assert isinstance(message, ToolMessage)
        assert message.status == "error" or message.content.startswith(wanted)


def _invoke(reader: Any, args: dict[str, Any], state: dict[str, Any]) -> Any:
    from langgraph.prebuilt import ToolRuntime

    runtime = ToolRuntime(
        state=state,
        context=None,
        config={"configurable": {}},
        stream_writer=lambda _: None,
        tool_call_id="c1",
        store=None,
    )
    return reader.func(runtime=runtime, **args)


@pytest.mark.parametrize("name", ["archive", "read", "tools", "middleware", "node"])
def test_every_example_of_the_recall_modules_runs(name: str) -> None:
    """Each `Example:` block in `langgraph_context.recall` passes as a doctest."""
    module = importlib.import_module(f"langgraph_context.recall.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0


def test_the_offload_node_in_a_hand_built_graph_keeps_and_reads_back() -> None:
    """StateGraph + ToolNode + create_offload_node: the cut result is read back by handle."""
    keeper = RecallMiddleware()

    class State(MessagesState, RecallStateMixin):
        """Messages plus the archive index."""

    model = _follower()

    def agent(state: State) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(State)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([run_tests, *keeper.tools]))
    graph.add_node("offload", create_offload_node(300))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "offload")
    graph.add_edge("offload", "agent")
    out = graph.compile(checkpointer=InMemorySaver()).invoke(
        {"messages": [HumanMessage("why?")]}, _cfg("t1")
    )
    cut, page = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert notice_handle(str(cut.content)) in out["recall"]
    assert NEEDLE in page.content
    assert NEEDLE in out["messages"][-1].content


def test_two_workers_on_one_postgres_store_read_each_others_offloads(
    postgres_url: str,  # noqa: F811
) -> None:
    """Worker one keeps a cut result; worker two, same user and thread, reads it back."""
    from langgraph.store.postgres import PostgresStore

    saver = InMemorySaver()  # the workers' shared checkpoints
    with (
        PostgresStore.from_conn_string(postgres_url) as one,
        PostgresStore.from_conn_string(postgres_url) as two,
    ):
        one.setup()
        for item in one.search(DEFAULT_RECALL_NAMESPACE, limit=1000):
            one.delete(item.namespace, item.key)
        first = ScriptedChatModel(responses=[ai_calls(call("run_tests", {}, "c1")), AIMessage("")])
        create_context_agent(
            first, [run_tests], checkpointer=saver, store=one, constraint_tools=False
        ).invoke({"messages": [("user", "go")]}, _cfg("w1", "u1"))
        [handle] = saver.get_tuple(_cfg("w1")).checkpoint["channel_values"]["recall"]
        read = ai_calls(call("read_tool_output", {"handle": handle, "pattern": "checksum"}, "r"))
        second = ScriptedChatModel(responses=[read, AIMessage("")])
        out = create_context_agent(
            second, [run_tests], checkpointer=saver, store=two, constraint_tools=False
        ).invoke({"messages": [("user", "read it")]}, _cfg("w1", "u1"))
        page = next(m for m in out["messages"] if getattr(m, "tool_call_id", None) == "r")
        assert NEEDLE in page.content
        assert len(two.search(DEFAULT_RECALL_NAMESPACE, limit=10)) == 1
