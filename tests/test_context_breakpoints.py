"""Prompt-cache marks for Anthropic: where they go, through the agent, the middleware and
the wire, and what they do to the bill under Anthropic's cache rules."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from benchmarks.bill.meter import Meter, request_chunks, unmarked
from langgraph_context.agents import ContextMiddleware, create_context_agent
from langgraph_context.context import mark_cache_breakpoints
from langgraph_context.context._window import STATE_NOTICE
from langgraph_context.context.breakpoints import (
    EPHEMERAL,
    cache_control_for,
    has_cache_mark,
    uses_cache_breakpoints,
)
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.messages import content_text
from tests.conftest import ScriptedChatModel, ai_calls, call


class AnthropicScripted(ScriptedChatModel):
    """A scripted model that reports Anthropic as its provider, as `ChatAnthropic` does."""

    def _get_ls_params(self, stop: Any = None, **kwargs: Any) -> Any:
        return {**super()._get_ls_params(stop=stop, **kwargs), "ls_provider": "anthropic"}


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return f"{path}: " + "line " * 40


def _marks(messages: list[BaseMessage]) -> list[int]:
    """Indices of the messages carrying a cache mark."""
    return [i for i, m in enumerate(messages) if has_cache_mark(m)]


def _script(turns: int) -> list[AIMessage]:
    replies = [ai_calls(call("write_plan", {"plan": ["read", "report"]}, "p"))]
    for i in range(turns):
        replies += [ai_calls(call("read_file", {"path": f"f{i}.py"}, f"r{i}")), AIMessage("ok")]
    return replies


def test_marks_system_and_last_history_message_not_the_plan() -> None:
    """Two marks: the system message and the message before the closing plan message."""
    plan = HumanMessage(f"{STATE_NOTICE}\n1. [in_progress] read")
    calling = AIMessage("", tool_calls=[call("read_file", {"path": "a"}, "c1")])
    sent = [
        SystemMessage("You read files."),
        HumanMessage("read a"),
        calling,
        ToolMessage("a: text", tool_call_id="c1"),
        plan,
    ]
    marked = mark_cache_breakpoints(sent)
    assert _marks(marked) == [0, 3]
    assert marked[4] is plan
    assert marked[3].content == [{"type": "text", "text": "a: text", "cache_control": EPHEMERAL}]
    assert sent[3].content == "a: text"  # the input is not changed
    # An assistant message with only tool calls is passed over for the one before it.
    assert _marks(mark_cache_breakpoints(sent[:3])) == [0, 1]


def test_marks_already_in_the_request_count_against_the_two() -> None:
    """A caller's own marks are kept and counted: never more than two in the messages."""
    own = HumanMessage([{"type": "text", "text": "a long doc", "cache_control": EPHEMERAL}])
    sent = [SystemMessage("s"), own, AIMessage("ok"), HumanMessage("next")]
    assert _marks(mark_cache_breakpoints(sent)) == [0, 1]
    two = [SystemMessage("s"), own, AIMessage("ok"), own, HumanMessage("next")]
    assert mark_cache_breakpoints(two) == two
    end_marked = [SystemMessage("s"), HumanMessage("hi"), own]
    assert _marks(mark_cache_breakpoints(end_marked)) == [0, 2]


_TEXT = st.text(max_size=30)
_MESSAGE = st.one_of(
    _TEXT.map(HumanMessage),
    _TEXT.map(AIMessage),
    _TEXT.map(lambda t: ToolMessage(t, tool_call_id="c")),
    st.lists(_TEXT, max_size=3).map(
        lambda ts: HumanMessage([{"type": "text", "text": t} for t in ts])
    ),
    st.just(HumanMessage(f"{STATE_NOTICE}\n1. [pending] x")),
)


@settings(max_examples=300, deadline=None)
@given(system=st.one_of(st.none(), _TEXT.map(SystemMessage)), body=st.lists(_MESSAGE, max_size=8))
def test_marks_never_change_text_and_stay_within_anthropic_limits(
    system: SystemMessage | None, body: list[BaseMessage]
) -> None:
    """Generated requests: same texts in the same order, at most two marks, no plan marked."""
    sent = [*([system] if system is not None else []), *body]
    marked = mark_cache_breakpoints(sent)
    assert [content_text(m.content) for m in marked] == [content_text(m.content) for m in sent]
    assert [type(m) for m in marked] == [type(m) for m in sent]
    assert len(_marks(marked)) <= 2
    assert not any(content_text(marked[i].content).startswith(STATE_NOTICE) for i in _marks(marked))
    assert [unmarked(m)[0].content for m in marked] == [
        unmarked(m)[0].content for m in sent
    ]  # the meter sees the unmarked request


def test_a_bad_mark_is_refused_when_the_agent_is_built() -> None:
    """A setting that is not None, a bool or a mark with a string type is a clear error."""
    with pytest.raises(InvalidArgumentError, match="cache_breakpoints"):
        create_context_agent(ScriptedChatModel(responses=[]), cache_breakpoints="yes")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="cache_breakpoints"):
        ContextMiddleware(cache_breakpoints={"ttl": "1h"})
    with pytest.raises(InvalidArgumentError, match="cache_control"):
        mark_cache_breakpoints([HumanMessage("x")], {"type": 1})  # type: ignore[dict-item]


def test_provider_detection_looks_through_bindings_retries_and_fallbacks() -> None:
    """Anthropic's models are found behind bind_tools, with_retry and with_fallbacks."""
    claude = ChatAnthropic(model="claude-sonnet-4-5", api_key="offline")  # type: ignore[call-arg]
    assert uses_cache_breakpoints(claude)
    assert uses_cache_breakpoints(claude.bind_tools([read_file]).with_retry())
    backup = ChatAnthropic(model="claude-haiku-4-5", api_key="offline")  # type: ignore[call-arg]
    assert uses_cache_breakpoints(claude.with_fallbacks([backup]))
    # a fallback to another provider would be sent the marks too: none by default
    assert not uses_cache_breakpoints(claude.with_fallbacks([ScriptedChatModel(responses=[])]))
    assert not uses_cache_breakpoints(ScriptedChatModel(responses=[]))
    assert cache_control_for(None, claude) == EPHEMERAL
    assert cache_control_for(False, claude) is None
    assert cache_control_for({"type": "ephemeral", "ttl": "1h"}, ScriptedChatModel(responses=[]))


def test_agent_marks_anthropic_requests_by_default_and_no_others() -> None:
    """Through a compiled agent with a plan: Anthropic's requests carry the two marks."""
    for model, expected in (
        (AnthropicScripted(responses=_script(3)), True),
        (ScriptedChatModel(responses=_script(3)), False),
    ):
        app = create_context_agent(
            model, [read_file], system_prompt="You read files.", checkpointer=InMemorySaver()
        )
        config = {"configurable": {"thread_id": "t"}}
        for i in range(3):
            app.invoke({"messages": [HumanMessage(f"read f{i}.py")]}, config)
        later = [
            seen for seen in model.seen if content_text(seen[-1].content).startswith(STATE_NOTICE)
        ]
        assert later  # the plan closes these requests
        for seen in later:
            if expected:
                assert _marks(seen) == [0, len(seen) - 2]
            else:
                assert _marks(seen) == []
        # what is stored is never marked
        stored = app.get_state(config).values["messages"]
        assert _marks(stored) == []


def test_middleware_marks_anthropic_requests_in_create_agent() -> None:
    """create_agent + the context middleware: the system message and the history end."""
    model = AnthropicScripted(responses=_script(2))
    agent = create_agent(
        model,
        [read_file],
        system_prompt="You read files.",
        middleware=[ContextMiddleware()],
        checkpointer=InMemorySaver(),
    )
    agent.invoke({"messages": [HumanMessage("read f0.py")]}, {"configurable": {"thread_id": "m"}})
    for seen in model.seen:
        marks = _marks(seen)
        assert marks[0] == 0
        assert isinstance(seen[0], SystemMessage)
        assert marks[-1] == len(seen) - 1  # no plan here: the last message is the end


def test_marks_reach_anthropic_wire_format_on_the_tool_result() -> None:
    """langchain-anthropic's payload carries the marks on the system block and tool_result."""
    model = AnthropicScripted(responses=_script(2))
    app = create_context_agent(
        model, [read_file], system_prompt="You read files.", checkpointer=InMemorySaver()
    )
    app.invoke({"messages": [HumanMessage("read f0.py")]}, {"configurable": {"thread_id": "w"}})
    claude = ChatAnthropic(model="claude-sonnet-4-5", api_key="offline")  # type: ignore[call-arg]
    payload = claude._get_request_payload(model.seen[-1])
    assert payload["system"][-1]["cache_control"] == EPHEMERAL
    blocks = [b for m in payload["messages"] for b in m["content"] if isinstance(b, dict)]
    marked = [b for b in blocks if "cache_control" in b]
    assert len(marked) == 1
    assert marked[0]["type"] == "tool_result"


def test_meter_reads_history_only_with_marks_before_a_changing_tail() -> None:
    """Anthropic's rule in the meter: a changing last message hides the history unless
    the history's end is marked."""
    plain, marked = Meter(), Meter()
    reads_plain, reads_marked = [], []
    history = ["user-1", "tool-1"]
    for turn in range(2, 6):
        chunks = ["TOOLS", "system", *history, f"plan v{turn}"]
        system = [True, True] + [False] * (len(history) + 1)
        reads_plain.append(plain.measure_breakpoints(chunks, system, [False] * len(chunks))[0])
        flags = [False] * len(chunks)
        flags[-2] = True  # the history's last message
        reads_marked.append(marked.measure_breakpoints(chunks, system, flags)[0])
        history += [f"user-{turn}", f"tool-{turn}"]
    lead = len(plain.tokens("TOOLS")) + len(plain.tokens("system"))
    assert reads_plain[1:] == [lead] * 3  # only tools and system, every time
    assert all(r > lead for r in reads_marked[1:])  # the history is read too
    assert reads_marked[1:] == sorted(reads_marked[1:])  # and grows with it


def test_request_chunks_strip_marks_so_other_meters_see_the_same_bytes() -> None:
    """A marked request serializes like the unmarked one; the mark is reported apart."""
    sent = [SystemMessage("s"), HumanMessage("hi"), ToolMessage("out", tool_call_id="c")]
    marked = mark_cache_breakpoints(sent)
    plain_chunks, _, plain_flags = request_chunks(sent, [])
    marked_chunks, _, flags = request_chunks(marked, [])
    assert marked_chunks == plain_chunks
    assert plain_flags == [False, False, False]
    assert flags == [True, False, True]


_PAYLOADS: list[dict[str, Any]] = []


class RecordingClaude(ChatAnthropic):
    """`ChatAnthropic` itself, with the network call replaced by recording the payload."""

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> Any:
        from langchain_core.outputs import ChatGeneration, ChatResult

        _PAYLOADS.append(self._get_request_payload(messages, stop=stop, **kwargs))
        calls = 1 + sum(isinstance(m, ToolMessage) for m in messages)
        if calls <= 2:
            reply = ai_calls(call("read_file", {"path": f"f{calls}.py"}, f"r{calls}"))
        else:
            reply = AIMessage("done")
        return ChatResult(generations=[ChatGeneration(message=reply)])


def _cache_marks(payload: dict[str, Any]) -> int:
    """Every cache_control in an Anthropic payload: top level, tools, system, messages."""
    count = int("cache_control" in payload)
    count += sum("cache_control" in t for t in payload.get("tools", []))
    system = payload.get("system")
    if isinstance(system, list):
        count += sum("cache_control" in b for b in system)
    for message in payload["messages"]:
        content = message["content"]
        if isinstance(content, list):
            count += sum(isinstance(b, dict) and "cache_control" in b for b in content)
    return count


def test_with_anthropics_own_caching_middleware_the_request_stays_within_four_marks() -> None:
    """ChatAnthropic + AnthropicPromptCachingMiddleware + ours: at most 4 marks, the
    history's end among them."""
    from langchain_anthropic.middleware import AnthropicPromptCachingMiddleware

    _PAYLOADS.clear()
    model = RecordingClaude(model="claude-sonnet-4-5", api_key="offline")  # type: ignore[call-arg]
    agent = create_agent(
        model,
        [read_file],
        system_prompt="You read files.",
        middleware=[AnthropicPromptCachingMiddleware(), ContextMiddleware()],
        checkpointer=InMemorySaver(),
    )
    agent.invoke(
        {"messages": [HumanMessage("read two files")]}, {"configurable": {"thread_id": "a"}}
    )
    assert len(_PAYLOADS) == 3
    for payload in _PAYLOADS:
        assert 3 <= _cache_marks(payload) <= 4
        last = payload["messages"][-1]["content"]
        assert isinstance(last, list)
        assert "cache_control" in last[-1]  # ours on the history's end (a tool_result later)
