"""Rule-based compaction strategies: pure, tool-pair safe, budgeted, with stats."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from langgraph_context.compaction import compact_messages
from langgraph_context.compaction.provenance import compaction_kind
from langgraph_context.compaction.strategies import (
    CLEARED_TOOL_ARG,
    CLEARED_TOOL_RESULT,
    efficiency_score,
)
from langgraph_context.messages import validate_history
from langgraph_context.tokens import count_tokens


def tool_round(i: int, output: str, *, name: str = "Bash", args: dict | None = None) -> list:
    """One AI tool call and its result."""
    call = {"name": name, "args": args or {"command": f"run {i}"}, "id": f"c{i}"}
    return [
        AIMessage("", tool_calls=[call], id=f"a{i}"),
        ToolMessage(output, tool_call_id=f"c{i}", name=name, id=f"t{i}"),
    ]


def session(rounds: int = 12, output: str = "line of output\n" * 40) -> list:
    """A system prompt, a task, many tool rounds and a final request."""
    history: list = [
        SystemMessage("You are a coding agent.", id="sys"),
        HumanMessage("Fix the crash in lib/app/user.ex; never edit config/prod.exs", id="h0"),
    ]
    for i in range(rounds):
        history += tool_round(i, output)
    history.append(HumanMessage("Now run the tests again", id="h1"))
    return history


def text(messages: list) -> str:
    """All text the model would see."""
    return "\n".join(str(m.content) for m in messages)


def test_under_budget_returns_history_unchanged() -> None:
    """A history that already fits is returned as is, with strategy 'none'."""
    history = session(rounds=1)
    result = compact_messages(history, target_tokens=10_000)
    assert result.messages == history
    assert result.stats.strategy == "none"
    assert result.stats.tokens_before == result.stats.tokens_after == count_tokens(history)
    assert result.evicted == ()


def test_input_is_never_mutated() -> None:
    """Compaction builds new messages; the caller's list and messages are unchanged."""
    history = session()
    snapshot = [m.model_copy(deep=True) for m in history]
    compact_messages(history, target_tokens=600)
    assert history == snapshot


def test_clear_tool_results_keeps_last_rounds_and_pairs() -> None:
    """Old tool outputs become the placeholder; the last N rounds keep their output."""
    history = session()
    result = compact_messages(
        history, target_tokens=600, strategy="clear_tool_results", keep_tool_rounds=2
    )
    assert result.stats.strategy == "clear_tool_results"
    tools = [m for m in result.messages if isinstance(m, ToolMessage)]
    assert len(tools) == 12
    assert all(m.content == CLEARED_TOOL_RESULT for m in tools[:-2])
    assert all(m.content != CLEARED_TOOL_RESULT for m in tools[-2:])
    assert result.stats.tool_results_cleared == 10
    assert [m.id for m in result.messages if not compaction_kind(m)] == [m.id for m in history]
    assert validate_history(result.messages) == []


def test_clear_tool_results_clears_oldest_first_only_as_needed() -> None:
    """Only as many old outputs are cleared as the budget requires, oldest first."""
    history = session()
    full = count_tokens(history)
    result = compact_messages(
        history, target_tokens=full - 300, strategy="clear_tool_results", snapshot=False
    )
    tools = [m for m in result.messages if isinstance(m, ToolMessage)]
    cleared = [m.content == CLEARED_TOOL_RESULT for m in tools]
    assert cleared[0] is True
    assert cleared[-1] is False
    assert cleared == sorted(cleared, reverse=True)
    assert 0 < result.stats.tool_results_cleared < 9


def test_clear_tool_results_alone_reports_when_not_enough() -> None:
    """If clearing cannot reach the budget, the result says so and suggests a drop."""
    history = session()
    result = compact_messages(history, target_tokens=400, strategy="clear_tool_results")
    assert not result.stats.within_budget
    assert "drop_oldest" in result.stats.note
    assert validate_history(result.messages) == []


def test_clear_tool_args_over_limit() -> None:
    """Large string arguments of cleared rounds are replaced, small ones kept."""
    history = [HumanMessage("write files")]
    for i in range(6):
        args = {"file_path": f"lib/f{i}.ex", "content": "x = 1\n" * 300}
        history += tool_round(i, "ok " * 200, name="Write", args=args)
    result = compact_messages(
        history,
        target_tokens=3000,
        strategy="clear_tool_results",
        keep_tool_rounds=1,
        clear_tool_args_over=50,
    )
    calls = [tc for m in result.messages if isinstance(m, AIMessage) for tc in m.tool_calls]
    assert calls[0]["args"] == {"file_path": "lib/f0.ex", "content": CLEARED_TOOL_ARG}
    assert calls[-1]["args"]["content"].startswith("x = 1")
    assert result.stats.tool_args_cleared >= 1
    assert validate_history(result.messages) == []


def test_drop_oldest_keeps_system_latest_request_and_tail() -> None:
    """drop_oldest removes the oldest units, never the system prompt or the last request."""
    history = session()
    result = compact_messages(history, target_tokens=700, strategy="drop_oldest", snapshot=False)
    ids = [m.id for m in result.messages]
    assert ids[0] == "sys"
    assert ids[-1] == "h1"
    assert "h0" not in ids
    assert result.stats.messages_dropped > 0
    assert result.stats.tool_rounds_dropped > 0
    assert result.stats.tokens_after <= 700
    assert validate_history(result.messages) == []


def test_drop_middle_keeps_head_and_tail() -> None:
    """drop_middle keeps the first request (head) and the latest rounds (tail)."""
    history = session()
    result = compact_messages(history, target_tokens=900, strategy="drop_middle", snapshot=False)
    ids = [m.id for m in result.messages]
    assert ids[:2] == ["sys", "h0"]
    assert ids[-1] == "h1"
    assert "a5" not in ids
    assert result.stats.strategy == "drop_middle"
    assert result.stats.tokens_after <= 900
    assert validate_history(result.messages) == []


def test_auto_prefers_clearing_when_it_is_enough() -> None:
    """auto only clears tool outputs when that already fits the budget."""
    history = session()
    result = compact_messages(history, target_tokens=1800)
    assert result.stats.strategy == "clear_tool_results"
    assert result.stats.messages_dropped == 0


def test_auto_picks_a_drop_by_efficiency_score() -> None:
    """When clearing is not enough, auto reports the drop strategy it chose."""
    history = session(rounds=30)
    result = compact_messages(history, target_tokens=900)
    assert result.stats.strategy in ("drop_oldest", "drop_middle")
    assert result.stats.within_budget
    assert validate_history(result.messages) == []


def test_snapshot_keeps_evicted_facts() -> None:
    """Dropped content leaves a state snapshot with request, files, errors and commands."""
    history = [SystemMessage("rules"), HumanMessage("Fix lib/app/user.ex; keep the API stable")]
    history += tool_round(0, "** (CompileError) lib/app/user.ex:12: undefined function foo/1")
    history += tool_round(1, "ok " * 300, name="Edit", args={"file_path": "lib/app/user.ex"})
    for i in range(2, 10):
        history += tool_round(i, "noise " * 200)
    history.append(HumanMessage("continue"))
    result = compact_messages(history, target_tokens=900, strategy="drop_oldest")
    snap = result.messages[1]
    assert compaction_kind(snap) == "snapshot"
    assert isinstance(snap, HumanMessage)
    body = str(snap.content)
    assert "Fix lib/app/user.ex; keep the API stable" in body
    assert "lib/app/user.ex (edited)" in body
    assert "undefined function foo/1 -> then Edit(lib/app/user.ex)" in body
    assert "run 0" in body
    assert result.stats.snapshot_tokens > 0
    assert result.stats.tokens_after <= 900
    assert result.snapshot is not None


def test_snapshot_is_extended_by_the_next_compaction() -> None:
    """A second compaction merges the earlier snapshot instead of losing it."""
    history = session(rounds=20)
    history[1] = HumanMessage("Use only lib/alpha.ex for this task", id="h0")
    first = compact_messages(history, target_tokens=1200, strategy="drop_oldest")
    grown = [*first.messages]
    for i in range(20, 40):
        grown += tool_round(i, "more output\n" * 40)
    grown.append(HumanMessage("and again", id="h2"))
    second = compact_messages(grown, target_tokens=1200, strategy="drop_oldest")
    snaps = [m for m in second.messages if compaction_kind(m) == "snapshot"]
    assert len(snaps) == 1
    assert "lib/alpha.ex" in str(snaps[0].content)
    assert second.snapshot is not None
    assert second.snapshot.message_count > first.snapshot.message_count  # type: ignore[union-attr]
    assert validate_history(second.messages) == []


def test_system_message_is_never_touched() -> None:
    """System messages stay first and identical whatever the strategy."""
    history = session()
    for strategy in ("clear_tool_results", "drop_oldest", "drop_middle", "auto"):
        result = compact_messages(history, target_tokens=700, strategy=strategy)  # type: ignore[arg-type]
        assert result.messages[0] is history[0]


def test_cut_inside_parallel_tool_calls_keeps_the_block_whole() -> None:
    """A round with parallel calls is dropped or kept whole, never split."""
    calls = [{"name": "Read", "args": {"file_path": f"f{i}.py"}, "id": f"p{i}"} for i in range(3)]
    history = [HumanMessage("read three files", id="h")]
    history.append(AIMessage("", tool_calls=calls, id="par"))
    history += [ToolMessage("data " * 100, tool_call_id=f"p{i}", id=f"r{i}") for i in range(3)]
    for i in range(6):
        history += tool_round(i, "out " * 100)
    history.append(HumanMessage("go on", id="h9"))
    for budget in range(150, 1200, 50):
        result = compact_messages(history, target_tokens=budget, strategy="drop_oldest")
        ids = {m.id for m in result.messages}
        present = [x in ids for x in ("par", "r0", "r1", "r2")]
        assert all(present) or not any(present)
        assert validate_history(result.messages) == []


def test_invalid_input_is_repaired_and_reported() -> None:
    """An orphan tool result is dropped first and the repair is listed in the stats."""
    history = [HumanMessage("hi"), ToolMessage("stray", tool_call_id="zz"), *session()[1:]]
    result = compact_messages(history, target_tokens=800)
    assert any("orphan_tool_result" in r for r in result.stats.repairs)
    assert validate_history(result.messages) == []


def test_repairs_reported_even_when_nothing_is_compacted() -> None:
    """A small invalid history comes back repaired with the repair in the stats."""
    call = AIMessage("", tool_calls=[{"name": "ls", "args": {}, "id": "x"}])
    result = compact_messages(
        [HumanMessage("hi"), call, HumanMessage("next")], target_tokens=10_000
    )
    assert result.stats.strategy == "none"
    assert [m.type for m in result.messages] == ["human", "ai", "tool", "human"]
    assert result.stats.repairs


def test_no_valid_answer_within_budget_is_reported() -> None:
    """When the pinned messages alone overflow, the result says so instead of overflowing."""
    history = [SystemMessage("rules " * 400), HumanMessage("task"), AIMessage("ok")]
    result = compact_messages(history, target_tokens=100)
    assert not result.stats.within_budget
    assert "no valid history fits 100 tokens" in result.stats.note
    assert result.messages[0] is history[0]


def test_huge_latest_tool_output_is_cleared_as_last_resort() -> None:
    """A single huge latest tool output is cleared when nothing else can fit the budget."""
    history = [HumanMessage("read it"), *tool_round(0, "big " * 5000)]
    result = compact_messages(history, target_tokens=300)
    assert result.stats.within_budget
    assert result.messages[-1].content == CLEARED_TOOL_RESULT
    assert validate_history(result.messages) == []


def test_keep_messages_protects_the_tail() -> None:
    """The last keep_messages messages are neither dropped nor cleared."""
    history = session()
    result = compact_messages(history, target_tokens=1200, keep_messages=5, keep_tool_rounds=0)
    tail_ids = [m.id for m in history[-5:]]
    kept = {m.id: m for m in result.messages}
    assert all(i in kept for i in tail_ids)
    assert all(kept[i].content == m.content for i, m in zip(tail_ids, history[-5:], strict=True))


def test_accepts_openai_dicts() -> None:
    """OpenAI-style dict histories are accepted and come back as messages."""
    history = [{"role": "system", "content": "rules"}, {"role": "user", "content": "a " * 500}]
    history += [{"role": "assistant", "content": "b " * 500}, {"role": "user", "content": "c"}]
    result = compact_messages(history, target_tokens=600)
    assert result.messages[0].type == "system"
    assert result.stats.tokens_after <= 600


def test_exact_arithmetic_with_len_counter() -> None:
    """With `len` (one token per message) the kept count matches the budget exactly."""
    history = [HumanMessage(str(i), id=str(i)) for i in range(10)]
    result = compact_messages(
        history, target_tokens=4, strategy="drop_oldest", snapshot=False, token_counter=len
    )
    assert [m.id for m in result.messages] == ["6", "7", "8", "9"]
    assert result.stats.tokens_after == 4


def test_efficiency_score_formula() -> None:
    """The score weighs token reduction 0.6 and message retention 0.4."""
    score = efficiency_score(
        tokens_before=1000, tokens_after=250, messages_before=20, messages_after=10
    )
    assert score == pytest.approx(0.6 * 0.75 + 0.4 * 0.5)
    assert (
        efficiency_score(tokens_before=0, tokens_after=0, messages_before=0, messages_after=0)
        == 0.4
    )


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"target_tokens": 0}, "target_tokens must be a positive int"),
        ({"target_tokens": 10, "strategy": "newest"}, "strategy must be one of"),
        ({"target_tokens": 10, "keep_tool_rounds": -1}, "keep_tool_rounds must be >= 0"),
        ({"target_tokens": 10, "keep_messages": -1}, "keep_messages must be >= 0"),
        ({"target_tokens": 10, "snapshot_fraction": 1.0}, r"snapshot_fraction must be in \[0, 1\)"),
        ({"target_tokens": 10, "head_fraction": -0.1}, r"head_fraction must be in \[0, 1\)"),
        ({"target_tokens": 10, "clear_tool_args_over": -5}, "clear_tool_args_over must be None"),
    ],
)
def test_bad_options_raise(kwargs: dict, match: str) -> None:
    """Out-of-range options raise ValueError naming the parameter and the value."""
    with pytest.raises(ValueError, match=match):
        compact_messages([HumanMessage("x")], **kwargs)


def test_empty_history() -> None:
    """An empty history compacts to an empty history."""
    result = compact_messages([], target_tokens=10)
    assert result.messages == []
    assert result.stats.strategy == "none"


def test_latest_request_is_shortened_never_dropped_when_nothing_else_fits() -> None:
    """If only the latest request's length stands in the way, it is cut with a marker."""
    history = [
        SystemMessage("rules " * 50, id="sys"),
        HumanMessage("please " * 300, id="req"),
        *tool_round(0, "ok"),
    ]
    budget = count_tokens([history[0], *history[2:]]) + 60
    result = compact_messages(history, target_tokens=budget)
    assert result.stats.within_budget
    assert count_tokens(result.messages) <= budget
    assert [m.id for m in result.messages] == ["sys", "req", "a0", "t0"]
    request = result.messages[1].content
    assert request.startswith("please please")
    assert "request shortened by compaction to fit the budget" in request
    assert "latest user request was shortened" in result.stats.note
    assert history[1].content == "please " * 300  # the caller's message is untouched
    assert validate_history(result.messages) == []
    kept = compact_messages(history, target_tokens=budget, strategy="clear_tool_results")
    assert not kept.stats.within_budget
    assert kept.messages[1].content == "please " * 300


def test_a_budget_too_small_for_any_request_text_reports_over_budget() -> None:
    """When not even a marker fits, the request stays whole and the result says it is over."""
    history = [SystemMessage("rules " * 50), HumanMessage("please " * 300), *tool_round(0, "ok")]
    budget = count_tokens([history[0], *history[2:]]) + 5
    result = compact_messages(history, target_tokens=budget)
    assert not result.stats.within_budget
    assert any(m.content == "please " * 300 for m in result.messages)
    assert "no valid history fits" in result.stats.note


def test_latest_tool_round_is_not_cleared_to_make_room_for_the_snapshot() -> None:
    """Kept messages that fit max_tokens keep their latest tool result; the snapshot shrinks."""
    history: list = [SystemMessage("sys")]
    for i in range(4):
        history += [
            HumanMessage(f"question {i} " + "w " * 100),
            AIMessage(f"answer {i} " + "v " * 100),
        ]
    history += [HumanMessage("now run the tests"), *tool_round(1, "PASSED " + "ok " * 1000)]
    must_keep = [history[0], *history[-3:]]
    assert count_tokens(must_keep) <= 1200 < count_tokens(history)
    for snapshot in (True, False):
        result = compact_messages(history, target_tokens=1200, snapshot=snapshot)
        assert result.messages[-1].content.startswith("PASSED")
        assert result.stats.tool_results_cleared == 0
        assert result.stats.within_budget
        assert validate_history(result.messages) == []


def snapshot_then_more() -> tuple[list, list]:
    """A first compaction (with a snapshot), then the history that grew after it."""
    history: list = [SystemMessage("sys")]
    for i in range(6):
        history += [
            HumanMessage(f"edit src/mod{i}.py please " + "w " * 40),
            AIMessage(f"done {i} " + "v " * 40),
        ]
    first = compact_messages(history, target_tokens=400).messages
    assert any(compaction_kind(m) == "snapshot" for m in first)
    grown = [*first, HumanMessage("more " * 40), AIMessage("ok " * 40), HumanMessage("next")]
    return first, grown


@pytest.mark.parametrize("options", [{"snapshot": False}, {"snapshot_fraction": 0.0}])
def test_an_earlier_snapshot_is_kept_when_no_new_one_replaces_it(options: dict) -> None:
    """Without a new snapshot, the earlier one stays (it is the only copy of its facts)."""
    first, grown = snapshot_then_more()
    old = next(m for m in first if compaction_kind(m) == "snapshot")
    result = compact_messages(grown, target_tokens=400, **options)
    assert old in result.messages
    assert result.stats.within_budget
    assert validate_history(result.messages) == []


def test_an_earlier_snapshot_that_cannot_stay_is_reported_dropped() -> None:
    """When the earlier snapshot does not fit either, it is evicted and counted."""
    first, grown = snapshot_then_more()
    old = next(m for m in first if compaction_kind(m) == "snapshot")
    budget = count_tokens([grown[0], *grown[-3:]]) + 5
    result = compact_messages(grown, target_tokens=budget)
    assert old not in result.messages
    assert old in result.evicted
    gone = len(grown) - len(result.messages)
    assert result.stats.messages_dropped == gone
