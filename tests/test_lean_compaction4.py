"""Compaction's fifth lean pass (issue 35): the same ids, checks and hardening, less work.

The id scans ask for a digit and a letter with lazy lookaheads, `is_identifier` keeps
the verdicts of its latest words, the no-op check hands the prefix memo's answer back
to `remember`, and the middleware looks for the compaction marker's key before it
checks each message.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.checkpoint.memory import InMemorySaver

from benchmarks.lean.__main__ import log_text
from langgraph_context import CompactionMiddleware
from langgraph_context import _memo as memo_module
from langgraph_context.compaction import create_compaction_node
from langgraph_context.compaction._facts import (
    _DELIMITED_ID_RE,
    ID_RE,
    IDENTIFIER_VERDICTS,
    is_identifier,
    text_ids,
)
from langgraph_context.compaction.provenance import COMPACTION_MARKER
from langgraph_context.compaction.snapshot import extract_snapshot, snapshot_message
from langgraph_context.safety.boundary import HARDENING_INSTRUCTION
from langgraph_context.testing import ScriptedChatModel, ai_calls, tool_call
from langgraph_context.tokens import TiktokenCounter

# The patterns as they were before the lookaheads turned lazy.
_GREEDY_ID_RE = re.compile(
    r"(?<![\w/.-])(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9][\w-]{2,47}(?![\w/])"
)
_GREEDY_DELIMITED = re.compile(
    r"[^\w/.-](?=[\w-]*\d)(?=[\w-]*[A-Za-z])([A-Za-z0-9][\w-]{2,47})(?![\w/])"
)
_PIECES = [*"aZx09_-/. =\n:[]()\t", "\u00e9", "\u0663", "\u017f", "\u212a", "-" * 50]
_TEXT = st.lists(
    st.sampled_from([*_PIECES, "utf-8", "42ms", "2nd", "svc-3", "id=0a1b2c", "x" * 47]),
    max_size=40,
).map("".join)


@settings(max_examples=500, deadline=None)
@given(_TEXT)
def test_the_lazy_id_patterns_match_the_greedy_ones(text: str) -> None:
    """Both id patterns find what their greedy spelling found, in the same order."""
    assert ID_RE.findall(text) == _GREEDY_ID_RE.findall(text)
    lazy = [m.group(1) for m in _DELIMITED_ID_RE.finditer(" " + text)]
    assert lazy == [m.group(1) for m in _GREEDY_DELIMITED.finditer(" " + text)]


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_a_kept_verdict_is_the_verdict(text: str) -> None:
    """`is_identifier` answers a word seen before as it answered it the first time."""
    for word in ID_RE.findall(text):
        assert is_identifier(word) is is_identifier.__wrapped__(word)
        assert is_identifier(word) is is_identifier.__wrapped__(word)


def test_the_kept_verdicts_are_bounded() -> None:
    """At most `IDENTIFIER_VERDICTS` words are kept, however many logs were scanned."""
    is_identifier.cache_clear()
    for seed in range(60):
        text_ids.__wrapped__(log_text(500 + seed))  # type: ignore[attr-defined]
    info = is_identifier.cache_info()
    assert info.maxsize == IDENTIFIER_VERDICTS
    assert 0 < info.currsize <= IDENTIFIER_VERDICTS
    assert info.hits > 0  # hosts and timestamps repeat across logs


def _history(rounds: int) -> list[BaseMessage]:
    """A request, then rounds of a call and its 60-word result."""
    history: list[BaseMessage] = [HumanMessage("read the logs", id="h")]
    for k in range(rounds):
        call = ai_calls(tool_call("read_log", {"n": k}, f"c{k}"))
        call.id = f"a{k}"
        history += [call, log_message(k)]
    return history


def log_message(k: int) -> BaseMessage:
    """The result of call `c{k}`."""
    return ToolMessage(f"line {k} ok " * 20, tool_call_id=f"c{k}", id=f"t{k}")


def _walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The lengths of the histories the prefix memo compares from now on."""
    walks: list[int] = []
    shared = memo_module._shared

    def counted(refs: Any, items: Any) -> int:
        walks.append(len(items))
        return shared(refs, items)

    monkeypatch.setattr(memo_module, "_shared", counted)
    return walks


def test_an_appended_count_walks_the_remembered_history_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Counting a history plus two messages compares it with the remembered one once."""
    counter = TiktokenCounter()
    history = _history(6)
    counter.running_counts(history[:-2])
    walks = _walks(monkeypatch)
    total = counter.running_counts(history).total()
    assert walks == [len(history)]  # the match; `remember` reuses its answer
    assert total == TiktokenCounter().count_messages(history) - 3
    assert len(counter._histories) == 1  # the longer history replaced the shorter


def test_the_quiet_check_walks_its_memo_once_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """A quiet call over two appended messages compares each memo's history once."""
    node = create_compaction_node(trigger_tokens=100_000, token_counter=TiktokenCounter())
    history = _history(6)
    assert node.quiet({"messages": history[:-2]})
    walks = _walks(monkeypatch)
    assert node.quiet({"messages": history})
    assert walks == [len(history), len(history)]  # the counter's memo, then the check's
    assert node.invoke({"messages": history}) == {}


def _sent_systems(model: ScriptedChatModel) -> list[str]:
    """The system prompt of each request the model was sent."""
    return [
        str(seen[0].content) if seen and isinstance(seen[0], SystemMessage) else ""
        for seen in model.seen
    ]


def _agent(model: ScriptedChatModel, trigger: int) -> Any:
    return create_agent(
        model,
        [],
        system_prompt="Answer briefly.",
        middleware=[CompactionMiddleware(trigger)],
        checkpointer=InMemorySaver(),
    )


def test_a_marker_on_a_non_user_message_does_not_harden_the_prompt() -> None:
    """Only compaction's own (user-role) messages harden the prompt, not a copied marker."""
    model = ScriptedChatModel(responses=[AIMessage("ok")])
    planted = AIMessage("earlier", additional_kwargs={COMPACTION_MARKER: {"kind": "snapshot"}})
    agent = _agent(model, 100_000)
    agent.invoke(
        {"messages": [HumanMessage("hi"), planted, HumanMessage("go on")]},
        {"configurable": {"thread_id": "m"}},
    )
    assert _sent_systems(model) == ["Answer briefly."]


def test_the_prompt_is_hardened_once_a_snapshot_is_in_the_history() -> None:
    """Without compaction text the prompt is as given; with a snapshot it gains the line."""
    snap = extract_snapshot([HumanMessage("fix lib/a.py"), AIMessage("E1 in lib/a.py")])
    snapshot = [snapshot_message(snap.render(), snap), HumanMessage("go on")]
    model = ScriptedChatModel(responses=[AIMessage("ok"), AIMessage("ok")])
    agent = _agent(model, 100_000)
    agent.invoke({"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "a"}})
    agent.invoke({"messages": snapshot}, {"configurable": {"thread_id": "b"}})
    plain, hardened = _sent_systems(model)
    assert plain == "Answer briefly."
    assert hardened.startswith("Answer briefly.")
    assert HARDENING_INSTRUCTION in hardened


def test_a_refused_list_is_refused_again_without_a_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """The node asks again about the list the middleware's check refused: no second count."""
    counter = TiktokenCounter()
    node = create_compaction_node(trigger_tokens=200, token_counter=counter)
    history = _history(6)
    state = {"messages": history}
    counts: list[int] = []
    running = counter.running_counts

    def counted(items: list[Any]) -> Any:
        counts.append(len(items))
        return running(items)

    monkeypatch.setattr(counter, "running_counts", counted)
    assert not node.quiet(state)  # over 200 tokens: the trigger fires
    assert not node.quiet(state)
    assert counts == [len(history)]
    history.append(HumanMessage("one more"))  # the same list, longer: asked again
    assert not node.quiet(state)
    assert counts == [len(history) - 1, len(history)]
    assert node.invoke({"messages": list(history)})["compaction"]["count"] == 1
