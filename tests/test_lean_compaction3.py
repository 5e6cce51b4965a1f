"""One running count of a history, shared by compaction's no-op check and the context (issue 35).

The counter remembers the running sums of the histories it counted, by identity; both
callers read them, so a model call counts its history once, and a message edited in
place is counted again by both.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.graph import START, MessagesState, StateGraph

from benchmarks.lean.__main__ import log_text
from langgraph_context.compaction import create_compaction_node
from langgraph_context.compaction._facts import (
    _DELIMITED_ID_RE,
    ID_RE,
    IDS_PER_MESSAGE,
    SCAN_CHARS,
    is_identifier,
    text_ids,
)
from langgraph_context.context import (
    ContextBuilder,
    ContextConfig,
    ContextStateMixin,
    create_context_node,
)
from langgraph_context.testing import ai_calls, tool_call
from langgraph_context.tokens import TiktokenCounter, count_tokens


def _thread(rounds: int) -> list[BaseMessage]:
    """A tool loop: a request, then rounds of a call and its result."""
    thread: list[BaseMessage] = [HumanMessage("read the logs", id="h0")]
    for k in range(rounds):
        call = ai_calls(tool_call("read_log", {"n": k}, f"c{k}"))
        call.id = f"a{k}"
        thread += [call, ToolMessage(f"line {k} ok " * 20, tool_call_id=f"c{k}", id=f"t{k}")]
    thread.append(AIMessage("done", id="end"))
    return thread


class _State(MessagesState, ContextStateMixin):
    """Messages and the context's output."""


def _context_graph(limit: int) -> Any:
    """A graph whose one node is the cache-layout context node, `limit` tokens."""
    builder = ContextBuilder(config=ContextConfig(max_tokens=limit))
    node = create_context_node(builder, stamp_times=False)
    graph = StateGraph(_State)
    graph.add_node("context", node)
    graph.add_edge(START, "context")
    return graph.compile()


def test_a_state_message_edited_in_place_is_counted_again_by_the_context() -> None:
    """The context's fit sees a message edited in place: the window is cut under the limit."""
    limit = 2_000
    graph = _context_graph(limit)
    thread = _thread(8)
    sent = graph.invoke({"messages": thread})["llm_input_messages"]
    assert count_tokens(sent) <= limit
    assert len(sent) == len(thread) + 1  # all of it fits: sent whole
    thread[3].content = "every log line again, " * 400  # the same object, edited
    sent = graph.invoke({"messages": thread})["llm_input_messages"]
    assert len(sent) < len(thread) + 1  # cut: the edit was counted
    assert count_tokens(sent) <= limit


def test_the_no_op_check_and_the_context_agree_on_an_edit_in_place() -> None:
    """After an edit in place, compaction's check fires and the counter's count is a cold one."""
    counter = TiktokenCounter()
    node = create_compaction_node(trigger_tokens=1_500, token_counter=counter)
    thread = _thread(8)
    assert node.quiet({"messages": thread})
    before = counter(thread)
    thread[5].content = "every log line again, " * 400
    assert not node.quiet({"messages": thread})
    assert counter(thread) == TiktokenCounter()(thread) > before + 1_000


def test_the_check_and_the_context_share_one_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the no-op check counted, the context's count of the same messages reads back."""
    counter = TiktokenCounter()
    node = create_compaction_node(trigger_tokens=50_000, token_counter=counter)
    thread = _thread(8)
    assert node.quiet({"messages": thread})
    counted: list[BaseMessage] = []
    each = TiktokenCounter.count_each

    def spy(self: TiktokenCounter, items: list[Any]) -> list[int]:
        counted.extend(items)
        return each(self, items)

    plan = HumanMessage("the plan", id="plan")
    cold = count_tokens([*thread, plan]) - 3
    monkeypatch.setattr(TiktokenCounter, "count_each", spy)
    assert counter.running_counts([*thread, plan]).total() == cold
    assert counted == [plan]  # the thread's counts were read back
    assert counter.running_counts(thread).kept == len(thread)


def test_running_totals_of_prefixes_equal_cold_counts() -> None:
    """`total(end)` is the count of the first `end` messages, a fresh opening turn included."""
    counter = TiktokenCounter()
    thread = _thread(4)
    counts = counter.running_counts(thread)
    for end in range(len(thread) + 1):
        assert counts.total(end) == (count_tokens(thread[:end]) - 3 if end else 0)
    opening = HumanMessage("continue", id="fresh")
    window = [opening, *thread[3:]]
    assert counter.running_counts(thread[3:]).total() == count_tokens(thread[3:]) - 3
    again = counter.running_counts(window)
    assert again.total() == count_tokens(window) - 3
    assert again.kept == 0  # the opening turn was not read back
    assert counter.running_counts([]).total() == 0


_POOL = [
    SystemMessage("rules", id="s"),
    HumanMessage("hi", id="h"),
    *_thread(3),
    HumanMessage([{"type": "text", "text": "blocks"}], id="b"),
]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.integers(0, len(_POOL) - 1), max_size=8),
            st.sampled_from(["none", "system", "fresh", "edit", "args", "block"]),
        ),
        max_size=12,
    )
)
def test_running_counts_equal_cold_counts_over_calls_and_edits(
    calls: list[tuple[list[int], str]],
) -> None:
    """Any sequence of counts over shared objects, heads and edits in place counts as cold."""
    pool = [m.model_copy(deep=True) for m in _POOL]
    counter = TiktokenCounter()
    for picks, how in calls:
        items = [pool[i] for i in picks]
        if how == "system":
            items = [SystemMessage("new rules"), *items]
        elif how == "fresh":
            items = [HumanMessage("continue"), *items]
        elif how == "edit" and items:
            items[0].content = f"{items[0].content} and more words"
        elif how == "args" and any(isinstance(m, AIMessage) and m.tool_calls for m in pool):
            call = next(m for m in pool if isinstance(m, AIMessage) and m.tool_calls)
            call.tool_calls[0]["args"]["n"] = "a longer argument " * len(picks)
        elif how == "block":
            pool[-1].content.append({"type": "text", "text": "one more block"})  # type: ignore[union-attr]
        counts = counter.running_counts(items)
        cold = TiktokenCounter()
        for end in range(len(items) + 1):
            assert counts.total(end) == (cold(items[:end]) - 3 if end else 0)


def _plain_text_ids(text: str) -> tuple[str, ...]:
    """`text_ids` as first written: `ID_RE` tried at every position, each word checked."""
    found: dict[str, None] = {}
    for match in ID_RE.finditer(text[:SCAN_CHARS]):
        word = match.group()
        if not is_identifier(word):
            continue
        found[word] = None
        if len(found) == IDS_PER_MESSAGE:
            break
    return tuple(found)


_ID_PIECES = [*"aZx09_-/. =\n:[]()\t", "\u00e9", "\u0663", "\u017f", "\u212a"]
_ID_TEXT = st.lists(
    st.sampled_from([*_ID_PIECES, "utf-8", "42ms", "2nd", "1e-9", "svc-3", "id=0a1b2c"]),
    max_size=40,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(_ID_TEXT)
def test_the_delimited_id_scan_finds_what_id_re_finds(text: str) -> None:
    """The scan led by the delimiter matches `ID_RE`'s ids, in order, and `text_ids` agrees."""
    assert [m.group(1) for m in _DELIMITED_ID_RE.finditer(" " + text)] == ID_RE.findall(text)
    assert text_ids.__wrapped__(text) == _plain_text_ids(text)


def test_text_ids_of_a_log_equal_the_plain_scan() -> None:
    """On generated logs (dates repeated per line, hex ids) both scans keep the same ids."""
    for seed in range(30):
        text = log_text(seed)
        assert text_ids.__wrapped__(text) == _plain_text_ids(text)
        assert len(text_ids.__wrapped__(text)) == IDS_PER_MESSAGE
