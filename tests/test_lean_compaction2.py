"""A firing compaction's cheaper paths give what the plain ones gave (issue 35).

The fact scan skips to the lines that can hold an error word; the counts of a
compaction come from the counter's per-message counts; the no-op check reads one
fingerprint per message. Each is checked against the plain way it replaced.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from langgraph_context.compaction import create_compaction_node
from langgraph_context.compaction._facts import (
    ERROR_LINE_CHARS,
    ERROR_RE,
    OPEN_RE,
    PATH_RE,
    REQUEST_CHARS,
    SCAN_CHARS,
    clip,
    text_facts,
)
from langgraph_context.compaction.snapshot import _round_robin
from langgraph_context.testing import ai_calls, tool_call
from langgraph_context.tokens import TiktokenCounter, count_tokens


def _plain_facts(text: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """`text_facts` as it was written first: every regex over the whole text."""
    if len(text) > 2 * SCAN_CHARS:
        text = text[:SCAN_CHARS] + "\n" + text[-SCAN_CHARS:]
    paths = tuple(dict.fromkeys(PATH_RE.findall(text)))
    errors: list[str] = []
    for match in ERROR_RE.finditer(text):
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.end())
        line = text[start : end if end != -1 else len(text)].strip()
        clipped = clip(line, ERROR_LINE_CHARS)
        if clipped and clipped not in errors:
            errors.append(clipped)
    opens = tuple(
        clip(line.strip(), REQUEST_CHARS) for line in text.splitlines() if OPEN_RE.match(line)
    )
    return paths, tuple(errors), opens


_PIECES = [
    "error", "Errors", "ERROR", "TimeoutError", "error_code", "_error", "errors2",
    "Exception", "traceback", "FAILED", "failure", "failing", "fatal", "panic", "undefined",
    "cannot", "Could Not", "could  not", "not found", "NOT FOUND", "denied", "invalid",
    "** (", "**(", "*", "\u017f", "\u0131", "\u212a", "é", "lib/app.ex", "./a/b.py", "x", "ok",
    "- [ ] todo",
    "TODO: next", " ", "  ", "\n", "\r\n", "\r", "\t", "\x0b", "\u2028", ":", "-", "/", ".",
    "(", "é", "0", "9",
]  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_text_facts_equal_the_plain_scan(pieces: list[str]) -> None:
    """Paths, error lines and open items are those of the plain scan of every regex."""
    text = "".join(pieces)
    assert text_facts.__wrapped__(text) == _plain_facts(text)  # type: ignore[attr-defined]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=300))
def test_text_facts_equal_the_plain_scan_on_any_text(text: str) -> None:
    """Any text, ASCII or not, gives the plain scan's facts."""
    assert text_facts.__wrapped__(text) == _plain_facts(text)  # type: ignore[attr-defined]


def test_error_lines_of_a_log_are_found_where_they_start_a_word() -> None:
    """`TimeoutError` inside a word is no error; a line with `error:` or `** (` is one."""
    text = "\n".join(
        [
            "svc TimeoutError retrying",
            "Error: disk full",
            "x ** (CompileError) lib/a.ex:3",
            "all fine",
            "db: Could Not connect",
            "Error: disk full",
        ]
    )
    _, errors, _ = text_facts(text)
    assert errors == ("Error: disk full", "x ** (CompileError) lib/a.ex:3", "db: Could Not connect")
    assert not re.search(r"\berror\b", "svc TimeoutError retrying", re.IGNORECASE)


def _thread(rounds: int) -> list[BaseMessage]:
    """A system prompt, then `rounds` tool rounds with short results, then a question."""
    thread: list[BaseMessage] = [SystemMessage("You read logs.", id="sys")]
    for i in range(rounds):
        thread.append(ai_calls(tool_call("read_log", {"n": i, "query": "ok"}, f"c{i}")))
        thread.append(ToolMessage(f"log {i}: " + "ok " * 20, tool_call_id=f"c{i}", id=f"t{i}"))
    thread.append(HumanMessage("what did the logs say?", id="q"))
    return thread


def test_an_argument_edited_in_place_is_counted_again() -> None:
    """A remembered call whose argument is edited in place (same objects) fires the trigger."""
    thread = _thread(12)
    trigger = count_tokens(thread) + 200
    node = create_compaction_node(trigger_tokens=trigger)
    assert node.quiet({"messages": thread})
    assert node.quiet({"messages": thread})  # remembered: read back
    call = thread[3].tool_calls[0]  # type: ignore[attr-defined]
    call["args"]["query"] = "every line " * 300  # the same dict, edited
    assert count_tokens(thread) >= trigger
    assert not node.quiet({"messages": thread})
    update = node.invoke({"messages": thread})
    assert update["compaction"]["count"] == 1


def test_a_copy_sharing_an_argument_edited_in_place_is_counted_again() -> None:
    """A copy replacing a call by id, its shared arguments edited in place, is recounted."""
    thread = _thread(12)
    trigger = count_tokens(thread) + 200
    node = create_compaction_node(trigger_tokens=trigger)
    assert node.quiet({"messages": thread})
    copy = thread[-3].model_copy(update={"additional_kwargs": {"stamp": 1}})
    copy.tool_calls[0]["args"]["query"] = "every line " * 300  # type: ignore[attr-defined]
    edited = [*thread[:-3], copy, *thread[-2:]]
    assert count_tokens(edited) >= trigger
    assert not node.quiet({"messages": edited})


def test_the_guard_tells_apart_what_the_count_depends_on() -> None:
    """Equal guards for a copy; another role, name, call or argument gives another guard."""
    guard = TiktokenCounter.count_guard
    message = ai_calls(tool_call("read_log", {"n": 1}, "c1"))
    assert guard(message) == guard(message.model_copy())
    assert guard(message) != guard(ai_calls(tool_call("read_log", {"n": 2}, "c1")))
    assert guard(message) != guard(ai_calls(tool_call("read_logs", {"n": 1}, "c1")))
    text = HumanMessage("hi", id="m")
    assert guard(text) != guard(AIMessage(text.content, id="m"))
    assert guard(text) != guard(HumanMessage(text.content, id="m", name="ann"))
    assert guard(HumanMessage([{"type": "text", "text": "hi"}])) is None
    assert guard(ai_calls(tool_call("read_log", {"n": {"deep": 1}}, "c1"))) is None


def _plain_round_robin(
    sections: list[tuple[str, list[str], bool]], budget: int, counter: Any
) -> list[list[str]]:
    """The round robin as first written: the least-spent section found by `min` each time."""
    chosen: list[list[str]] = [[] for _ in sections]
    used = [0] * len(sections)
    cursor = [0] * len(sections)
    spent = 0
    waiting = [s for s, (_, items, _) in enumerate(sections) if items]
    while waiting:
        s = min(waiting, key=lambda i: (used[i], i))
        items = sections[s][1]
        item = items[cursor[s]]
        cursor[s] += 1
        if cursor[s] >= len(items):
            waiting.remove(s)
        title_cost = counter(sections[s][0]) + 2 if not chosen[s] else 0
        cost = counter(item) + 2 + title_cost
        if spent + cost <= budget:
            chosen[s].append(item)
            spent += cost
            used[s] += cost
    return chosen


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(st.text(alphabet="ab c-1", max_size=30), max_size=12), max_size=6),
    st.integers(min_value=0, max_value=200),
)
def test_the_round_robin_picks_what_the_plain_one_picks(
    items: list[list[str]], budget: int
) -> None:
    """The heap-ordered round robin chooses the very items the `min`-ordered one did."""
    sections = [(f"Section {i}", list(section), i % 2 == 0) for i, section in enumerate(items)]
    counter = TiktokenCounter()
    assert _round_robin(sections, budget, counter) == _plain_round_robin(sections, budget, counter)


def test_a_block_appended_in_place_is_counted_again() -> None:
    """A remembered message's list content given a block in place fires the trigger."""
    thread = _thread(12)
    thread.insert(1, HumanMessage([{"type": "text", "text": "read the logs"}], id="blocks"))
    trigger = count_tokens(thread) + 200
    node = create_compaction_node(trigger_tokens=trigger)
    assert node.quiet({"messages": thread})
    assert node.quiet({"messages": thread})
    thread[1].content.append({"type": "text", "text": "every line " * 300})  # type: ignore[union-attr]
    assert count_tokens(thread) >= trigger
    assert not node.quiet({"messages": thread})
