"""The context node, the context agent and the middleware date messages as they arrive."""

from __future__ import annotations

import gc
import sqlite3
import time
import weakref
from datetime import datetime
from typing import Annotated, Any

import pytest
from langchain.agents import create_agent
from langchain.tools import InjectedState
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, MessagesState, StateGraph

from langgraph_context.agents import ContextMiddleware, create_context_agent
from langgraph_context.context import (
    ContextBuilder,
    ContextConfig,
    ContextStateMixin,
    create_context_node,
    stamp_message,
    stamp_messages,
)
from langgraph_context.context.gather import message_time
from langgraph_context.context.stamp import stamped_arrivals, stamped_history, without_stamps
from langgraph_context.messages import content_text
from tests.conftest import ScriptedChatModel, ai_calls, call


class _State(MessagesState, ContextStateMixin):
    pass


def _graph(node: Any, checkpointer: Any) -> Any:
    builder = StateGraph(_State)
    builder.add_node("context", node)
    builder.add_edge(START, "context")
    return builder.compile(checkpointer=checkpointer)


def _cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _within(message: BaseMessage, start: float, end: float) -> bool:
    when = message_time(message)
    return when is not None and start - 0.001 <= when <= end + 0.001


@tool
def echo(text: str) -> str:
    """Echo the text back."""
    return text


def test_the_node_stamps_new_turns_once_and_the_stamp_survives_a_checkpoint() -> None:
    """Each turn is stamped when first seen; a later run leaves older stamps as they were."""
    with sqlite3.connect(":memory:", check_same_thread=False) as conn:
        graph = _graph(create_context_node(layout="focus"), SqliteSaver(conn))
        start = time.time()
        graph.invoke({"messages": [HumanMessage("I adopted a puppy", id="u1")]}, _cfg("t"))
        middle = time.time()
        graph.invoke({"messages": [HumanMessage("Her name is Luna", id="u2")]}, _cfg("t"))
        end = time.time()
        reloaded = _graph(create_context_node(layout="focus"), SqliteSaver(conn))
        first, second = reloaded.get_state(_cfg("t")).values["messages"]
    assert [first.content, second.content] == ["I adopted a puppy", "Her name is Luna"]
    assert _within(first, start, middle)
    assert _within(second, middle, end)
    assert message_time(first) <= message_time(second)  # type: ignore[operator]


def test_both_layouts_render_with_the_stamps_they_write_and_send_none() -> None:
    """A turn stamped in this call is dated in [Context] at once; the model gets no stamp."""
    day = datetime.fromtimestamp(time.time()).date()
    for layout in ("cache", "focus"):
        node = create_context_node(layout=layout, keep_last=1)  # type: ignore[arg-type]
        history = [*stamp_messages([HumanMessage("I like tea", id="a")], now=1e9)]
        history += [AIMessage("Noted, tea.", id="b"), HumanMessage("Add milk?", id="c")]
        history += [AIMessage("Yes, milk.", id="d"), HumanMessage("And sugar?", id="e")]
        out = node.invoke({"messages": history})
        assert [m.id for m in out["messages"]] == ["b", "c", "d", "e"]
        assert all(message_time(m) is not None for m in out["messages"])
        sent = out["llm_input_messages"]
        assert all("timestamp" not in m.additional_kwargs for m in sent)
        if layout == "focus":  # the older turns are in [Context], under their days
            assert f"({day.day} {day:%B %Y})" in sent[0].content
            assert "(9 September 2001)" in sent[0].content


def test_provider_times_win_and_undated_old_history_stays_undated() -> None:
    """A reply with its provider's time keeps it; turns before the last dated one keep none."""
    provider = AIMessage("hi", id="p", response_metadata={"created_at": "2023-05-08T13:56:00Z"})
    history = [HumanMessage("old", id="o"), provider, HumanMessage("new", id="n")]
    stamped = stamp_messages(history, now=1_700_000_000.0)
    assert [m.id for m in stamped] == ["n"]
    assert stamped[0].additional_kwargs == {"timestamp": "2023-11-14T22:13:20+00:00"}
    assert history[2].additional_kwargs == {}  # the input is not changed
    out = create_context_node(stamp_times=False).invoke({"messages": history})
    assert "messages" not in out


def test_stamps_are_not_sent_to_the_provider() -> None:
    """OpenAI and Anthropic request payloads are byte-identical with or without stamps."""
    from langchain_anthropic import ChatAnthropic
    from langchain_openai import ChatOpenAI

    history: list[BaseMessage] = [
        HumanMessage("list files", id="h"),
        ai_calls(call("echo", {"text": "x"}, "c1")).model_copy(update={"id": "a"}),
        ToolMessage("x", tool_call_id="c1", id="t"),
    ]
    stamped = {m.id: m for m in stamp_messages(history, now=1.0)}
    dated = [stamped.get(m.id, m) for m in history]
    assert all(message_time(m) == 1.0 for m in dated)
    openai = ChatOpenAI(model="gpt-4o-mini", api_key="sk-test")  # type: ignore[arg-type]
    anthropic = ChatAnthropic(model="claude-sonnet-4-5", api_key="sk-test")  # type: ignore[arg-type]
    for model in (openai, anthropic):
        assert repr(model._get_request_payload(dated)) == repr(model._get_request_payload(history))


def test_the_context_agent_stamps_the_turn_the_tool_result_and_the_reply() -> None:
    """Every message of a tool round through `create_context_agent` carries its time."""
    model = ScriptedChatModel(
        responses=[ai_calls(call("echo", {"text": "x"}, "c1")), AIMessage("done")]
    )
    agent = create_context_agent(model, [echo], context=True, checkpointer=InMemorySaver())
    start = time.time()
    agent.invoke({"messages": [HumanMessage("echo x")]}, _cfg("agent"))
    end = time.time()
    messages = agent.get_state(_cfg("agent")).values["messages"]
    assert [m.type for m in messages] == ["human", "ai", "tool", "ai"]
    assert all(_within(m, start, end) for m in messages)
    times = [message_time(m) for m in messages]
    assert times == sorted(times)  # type: ignore[type-var]


def test_the_middleware_stamps_the_turn_the_tool_result_and_the_reply() -> None:
    """`create_context_middleware` dates the thread in state, never in the model's input."""
    model = ScriptedChatModel(
        responses=[ai_calls(call("echo", {"text": "x"}, "c1")), AIMessage("done")]
    )
    agent = create_agent(
        model, [echo], middleware=[ContextMiddleware()], checkpointer=InMemorySaver()
    )
    start = time.time()
    agent.invoke({"messages": [HumanMessage("echo x")]}, _cfg("mw"))
    end = time.time()
    messages = agent.get_state(_cfg("mw")).values["messages"]
    assert [m.type for m in messages] == ["human", "ai", "tool", "ai"]
    assert all(_within(m, start, end) for m in messages)
    off = create_agent(
        ScriptedChatModel(responses=[AIMessage("ok")]),
        middleware=[ContextMiddleware(stamp_times=False)],
    )
    plain = off.invoke({"messages": [HumanMessage("hi")]})["messages"]
    assert [message_time(m) for m in plain] == [None, None]


def test_a_stamped_day_is_found_by_a_dated_question() -> None:
    """Turns the node dated are selected and shown under their day for a "when" question."""
    may8 = stamp_messages([HumanMessage("I planted tomatoes", id="1")], now=1_683_550_000.0)
    rest = [HumanMessage(f"I watered the garden again {i}", id=f"w{i}") for i in range(30)]
    later = stamp_messages([*may8, *rest], now=1_686_000_000.0)
    history = [*may8, *later, HumanMessage("What did I do on 8 May, 2023?", id="q")]
    builder = ContextBuilder(config=ContextConfig(max_tokens=400, output_instructions=""))
    view = create_context_node(builder, layout="focus", keep_last=1).invoke({"messages": history})
    context = view["llm_input_messages"][0].content
    assert "(8 May 2023)\nuser: I planted tomatoes" in context


def test_without_stamps_reuses_its_copies_and_keeps_no_history_alive() -> None:
    """A history sent again gets last call's copies; once freed, nothing of it is kept."""
    stamped = stamp_messages([HumanMessage("hi", id="1"), AIMessage("yo", id="2")], now=0.0)
    history = [HumanMessage("plain", id="0"), *stamped]
    first = without_stamps(history)
    again = without_stamps([*history, AIMessage("more", id="4")])
    assert all(a is b for a, b in zip(first, again[:3], strict=True))
    assert again[0] is history[0]  # unstamped: sent as itself
    assert again[1] is not history[1]
    assert all("timestamp" not in m.additional_kwargs for m in again)
    refs = [weakref.ref(m) for m in [*history, *first]]
    del history, stamped, first, again
    gc.collect()
    assert all(r() is None for r in refs)


def test_without_stamps_copies_again_a_message_whose_content_was_replaced() -> None:
    """Content replaced in place gets a new copy from there on; an edit inside is shared."""
    turns = [HumanMessage("hi", id="1"), AIMessage("yo", id="2"), HumanMessage(["a"], id="3")]
    history = [stamp_message(m, now=0.0) for m in turns]
    first = without_stamps(history)
    history[1].content = "new"
    history[2].content.append("b")  # type: ignore[union-attr]
    again = without_stamps(history)
    assert again[0] is first[0]
    assert [m.content for m in again] == ["hi", "new", ["a", "b"]]
    assert without_stamps(history)[1] is again[1]  # the new copy is remembered


def test_stamped_arrivals_is_the_rule_stamped_history_applies() -> None:
    """Arrivals after a dated reply are stamped alike; one dated among them refuses the start."""
    reply = stamp_messages([AIMessage("", id="a")], now=0.0)[0]
    results = [ToolMessage("r1", tool_call_id="c1", id="t1"), ToolMessage("r2", tool_call_id="c2")]
    thread = [HumanMessage("hi"), reply, *results]
    found = stamped_arrivals(thread, 2, now=60.0)
    assert found is not None
    assert found == stamped_history(thread, now=60.0)
    history, stamped = found
    assert [m.id for m in stamped] == ["t1"]  # no id: nothing to replace in state
    assert history[2] is stamped[0]
    assert history[3] is results[1]
    assert message_time(stamped[0]) == 60.0
    dated = results[0].model_copy(update={"response_metadata": {"created": 30}})
    assert stamped_arrivals([HumanMessage("hi"), reply, dated, results[1]], 2, now=60.0) is None


@tool
def rewrite_request(text: str, state: Annotated[Any, InjectedState]) -> str:
    """Rewrite the user's request in place (the same message object, new content)."""
    state["messages"][0].content = text
    return "rewritten"


_TEXTS = ["the first request", "the request rewritten once", "the request rewritten twice"]


def _rewriting_model() -> ScriptedChatModel:
    return ScriptedChatModel(
        responses=[
            ai_calls(call("rewrite_request", {"text": _TEXTS[1]}, "c1")),
            ai_calls(call("rewrite_request", {"text": _TEXTS[2]}, "c2")),
            AIMessage("done"),
        ]
    )


def _requests(model: ScriptedChatModel) -> list[list[str]]:
    """Which of `_TEXTS` each model call was sent."""
    sent = ["\n".join(content_text(m.content) for m in seen) for seen in model.seen]
    return [[t for t in _TEXTS if t in text] for text in sent]


@pytest.mark.parametrize("merged", [False, True])
@pytest.mark.parametrize("assemble", [True, False])
@pytest.mark.parametrize("steady", [True, False])
def test_a_message_edited_in_place_is_sent_with_its_new_text(
    assemble: bool, steady: bool, merged: bool
) -> None:
    """A tool rewrites the user's message object in place: the next call sends the new text.

    `merged`: a second user message follows, sent merged with the first.
    """
    model = _rewriting_model()
    middleware = ContextMiddleware(4_000, assemble=assemble)
    if not steady:
        middleware._steady = None  # the full path on every call
    agent = create_agent(model, tools=[rewrite_request], middleware=[middleware])
    more = [HumanMessage("and the details", id="h2")] if merged else []
    agent.invoke({"messages": [HumanMessage(_TEXTS[0], id="h"), *more]})
    assert _requests(model) == [[t] for t in _TEXTS]
    if middleware._steady is not None:  # the last call was tried there, and fell back
        assert (middleware._steady.hits, middleware._steady.misses) == (0, 3)


def test_the_context_agent_sends_a_message_edited_in_place_with_its_new_text() -> None:
    """The same edits through `create_context_agent`: each call sends the text of its time."""
    model = _rewriting_model()
    agent = create_context_agent(model, [rewrite_request], max_tokens=4_000)
    agent.invoke({"messages": [HumanMessage(_TEXTS[0], id="h")]})
    assert _requests(model) == [[t] for t in _TEXTS]
