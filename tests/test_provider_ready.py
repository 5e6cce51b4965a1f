"""What leaves for a provider is something the provider accepts: strict validation, the
last repair before a model call, cache marks counted per block, the plan beside the
user turn, through real graphs and the providers' own request builders."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.graph import START, MessagesState, StateGraph

from langgraph_context.compaction import compact_messages
from langgraph_context.context import ContextStateMixin, create_context_node
from langgraph_context.context._window import STATE_NOTICE
from langgraph_context.context.breakpoints import cache_marks, mark_cache_breakpoints
from langgraph_context.messages import (
    CANCELLED_TOOL_RESULT,
    provider_ready_history,
    repair_history,
    validate_history,
)
from langgraph_context.state import PlanStateMixin
from tests._payloads import ANTHROPIC, provider_problems
from tests.conftest import call

MARK = {"type": "ephemeral"}


class State(MessagesState, PlanStateMixin, ContextStateMixin):
    """Messages, plan and the assembled model input."""


def _node_input(layout: str, messages: list[Any], plan: list[Any] | None = None) -> list[Any]:
    """Run the context node inside a compiled graph; return the model input it wrote."""
    graph = StateGraph(State)
    graph.add_node("context", create_context_node(layout=layout))  # type: ignore[call-overload]
    graph.add_edge(START, "context")
    out = graph.compile().invoke({"messages": messages, "plan": plan or []})
    return list(out["llm_input_messages"])


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        (RemoveMessage(id="m1"), "remove_message"),
        (ChatMessage(role="tool", content="42"), "missing_tool_call_id"),
        (ChatMessage(role="narrator", content="meanwhile"), "unknown_role"),
    ],
)
def test_validate_history_refuses_what_no_provider_takes(message: BaseMessage, kind: str) -> None:
    """A RemoveMessage, a tool ChatMessage without a call id and an unknown role are violations."""
    violations = validate_history([HumanMessage("hi"), message, AIMessage("ok")])
    assert [(v.kind, v.index) for v in violations] == [(kind, 1)]
    repaired = repair_history([HumanMessage("hi"), message, AIMessage("ok")]).messages
    assert [m.type for m in repaired] == ["human", "ai"]


def test_a_chat_message_with_a_known_role_becomes_its_class() -> None:
    """`ChatMessage(role="user")` is valid and is sent as a user message (Anthropic needs it)."""
    history = [ChatMessage(role="user", content="hi"), ChatMessage(role="assistant", content="yo")]
    assert validate_history(history) == []
    ready = provider_ready_history(history)
    assert [type(m).__name__ for m in ready] == ["HumanMessage", "AIMessage"]
    assert provider_problems(ready) == []


def test_provider_ready_history_answers_drops_and_merges() -> None:
    """Dangling calls are cancelled, orphans and duplicates dropped, user runs merged."""
    calling = AIMessage("", tool_calls=[call("ls", {}, "c1"), call("cat", {}, "c2")])
    history = [
        HumanMessage("first"),
        RemoveMessage(id="gone"),
        HumanMessage("second"),
        calling,
        ToolMessage("a", tool_call_id="c1"),
        ToolMessage("again", tool_call_id="c1"),
        ToolMessage("stray", tool_call_id="zz"),
        HumanMessage(""),
        HumanMessage("third"),
    ]
    ready = provider_ready_history(history)
    assert [m.type for m in ready] == ["human", "ai", "tool", "tool", "human"]
    assert ready[0].content == [
        {"type": "text", "text": "first"},
        {"type": "text", "text": "second"},
    ]
    assert [m.content for m in ready[2:4]] == ["a", CANCELLED_TOOL_RESULT]
    assert provider_problems(ready, alternating=True) == []
    assert [v.kind for v in validate_history(history)] == [
        "remove_message",
        "duplicate_tool_result",
        "orphan_tool_result",
        "missing_tool_result",
    ]


@pytest.mark.parametrize("layout", ["cache", "focus"])
def test_the_context_node_sends_dangling_calls_answered_and_no_orphans(layout: str) -> None:
    """An interrupted tool call and a client's stray results never reach the model as they are."""
    history = [
        HumanMessage("list the files"),
        AIMessage("", tool_calls=[call("ls", {}, "c1")]),
        HumanMessage("never mind, what is 2+2?"),
        ToolMessage("late", tool_call_id="c9"),
        AIMessage("4"),
        HumanMessage("thanks"),
    ]
    sent = _node_input(layout, history)
    assert provider_problems(sent, alternating=True) == []
    assert any(m.type == "tool" and m.content == CANCELLED_TOOL_RESULT for m in sent)
    assert all(m.content != "late" for m in sent)


@pytest.mark.parametrize("layout", ["cache", "focus"])
def test_a_remove_message_in_a_plain_list_key_is_not_sent(layout: str) -> None:
    """A RemoveMessage left in a messages list never reaches the model input."""
    node = create_context_node(layout=layout, stamp_times=False)  # type: ignore[call-overload]
    out = node.invoke({"messages": [HumanMessage("hi"), RemoveMessage(id="x"), AIMessage("yo")]})
    sent = out["llm_input_messages"]
    assert not any(isinstance(m, RemoveMessage) for m in sent)
    assert provider_problems(sent) == []


def test_compact_messages_drops_remove_messages() -> None:
    """`compact_messages` never returns a RemoveMessage it was given."""
    result = compact_messages(
        [HumanMessage("hi"), RemoveMessage(id="x"), AIMessage("yo")], target_tokens=1000
    )
    assert [m.type for m in result.messages] == ["human", "ai"]
    assert "remove_message" in " ".join(result.stats.repairs)


def test_the_plan_after_a_new_user_turn_joins_it() -> None:
    """Cache layout: the plan is merged into the new user turn, so no two user messages in a row."""
    plan = [{"content": "read", "status": "in_progress"}]
    history = [HumanMessage("hi"), AIMessage("hello"), HumanMessage("read the code")]
    sent = _node_input("cache", history, plan)
    assert [m.type for m in sent] == ["system", "human", "ai", "human"]
    last = sent[-1].content
    assert isinstance(last, list)
    assert last[0]["text"] == "read the code"
    assert last[1]["text"].startswith(STATE_NOTICE)
    assert provider_problems(sent, alternating=True) == []
    marked = mark_cache_breakpoints(sent)
    blocks = marked[-1].content
    assert isinstance(blocks, list)
    assert "cache_control" in blocks[0]
    assert "cache_control" not in blocks[1]  # the plan changes every call: never the cache end


def test_the_plan_after_a_tool_result_stays_its_own_message() -> None:
    """After tool results the plan is a user message of its own (it follows results legally)."""
    plan = [{"content": "read", "status": "in_progress"}]
    history = [
        HumanMessage("read the code"),
        AIMessage("", tool_calls=[call("ls", {}, "c1")]),
        ToolMessage("a.py", tool_call_id="c1"),
    ]
    sent = _node_input("cache", history, plan)
    assert [m.type for m in sent] == ["system", "human", "ai", "tool", "human"]
    assert provider_problems(sent, alternating=True) == []


def test_a_message_with_four_marked_blocks_never_leaves_with_five() -> None:
    """Marks are counted per block: four marked blocks already fill Anthropic's quota."""
    blocks = [{"type": "text", "text": f"part {i}", "cache_control": MARK} for i in range(4)]
    marked = mark_cache_breakpoints([SystemMessage("rules"), HumanMessage(blocks)])
    assert sum(cache_marks(m) for m in marked) == 4
    payload = ANTHROPIC._get_request_payload(marked)
    assert str(payload).count("cache_control") == 4


def test_more_than_four_marks_are_cut_to_four_earliest_first() -> None:
    """A request already over Anthropic's four marks leaves with four, the latest kept."""
    blocks = [{"type": "text", "text": f"part {i}", "cache_control": MARK} for i in range(3)]
    history = [HumanMessage(list(blocks)), AIMessage("ok"), HumanMessage(list(blocks))]
    marked = mark_cache_breakpoints(history)
    assert [cache_marks(m) for m in marked] == [1, 0, 3]
    assert [cache_marks(m) for m in history] == [3, 0, 3]  # the input is not changed


def test_one_marked_block_leaves_room_for_one_more_mark() -> None:
    """Two marked blocks in one message use both message marks: the system message gets none."""
    blocks = [{"type": "text", "text": f"part {i}", "cache_control": MARK} for i in range(2)]
    marked = mark_cache_breakpoints([SystemMessage("rules"), HumanMessage(blocks)])
    assert [cache_marks(m) for m in marked] == [0, 2]


def _fresh_ready(history: list[BaseMessage]) -> list[BaseMessage]:
    """`provider_ready_history` with its walk memo emptied first (no resumed part)."""
    from langgraph_context.messages import _ready

    _ready._READY.clear()
    return provider_ready_history(history)


def test_a_growing_history_is_made_ready_as_a_fresh_walk_would() -> None:
    """Resuming the walk over the same objects sends what a walk from the start sends."""
    import random

    rng = random.Random(7)
    makers = [
        lambda i: HumanMessage(f"user {i}", id=f"h{i}"),
        lambda i: HumanMessage("  ", id=f"e{i}"),
        lambda i: AIMessage(f"thought {i}", id=f"a{i}"),
        lambda i: SystemMessage(f"summary {i}", id=f"s{i}"),
        lambda i: AIMessage("", tool_calls=[{"name": "ls", "args": {}, "id": f"c{i}"}]),
    ]
    history: list[BaseMessage] = [SystemMessage("rules", id="sys")]
    for i in range(60):
        message = rng.choice(makers)(i)
        history.append(message)
        if isinstance(message, AIMessage) and message.tool_calls:
            history.append(ToolMessage(f"out {i}", tool_call_id=f"c{i}", id=f"t{i}"))
        if i % 7 == 3:  # a rewritten message: the walk resumes before it
            cut = rng.randrange(1, len(history))
            history[cut] = history[cut].model_copy(update={"content": f"edited {i}"})
        if i % 7 == 5:  # content replaced in place (the same object): resumed before it too
            history[rng.randrange(1, len(history))].content = f"replaced {i}"
        resumed = provider_ready_history(list(history))
        again = provider_ready_history(list(history))
        fresh = _fresh_ready(list(history))
        provider_ready_history(list(history))  # the memo holds this history again
        as_sent = [(m.type, m.content, m.id) for m in fresh]
        assert [(m.type, m.content, m.id) for m in resumed] == as_sent
        assert all(a is b for a, b in zip(resumed[:-2], again[:-2], strict=False))


def test_merged_turns_are_made_again_when_a_part_is_replaced_in_place() -> None:
    """Two user turns merged into one: replacing one's content in place sends the new text."""
    first, second = HumanMessage("first", id="h1"), HumanMessage("second", id="h2")
    history: list[BaseMessage] = [first, second, AIMessage("ok", id="a1")]
    before = provider_ready_history(history)
    first.content = "first, rewritten"
    after = provider_ready_history([*history, HumanMessage("more", id="h3")])
    assert after[0] is not before[0]
    assert after[0].content == [
        {"type": "text", "text": "first, rewritten"},
        {"type": "text", "text": "second"},
    ]
