"""The recall benchmark's own pieces measure what they claim, on generated threads."""

from __future__ import annotations

from benchmarks.__main__ import BENCHMARKS
from benchmarks.recall.__main__ import generated_session, recall_row, session_row
from benchmarks.recall.follower import notice_handle
from langgraph_context.recall import RecallMiddleware


def test_generated_threads_lose_facts_and_get_every_one_back_within_two_calls() -> None:
    """A generated thread loses planted ids to cuts and eviction; the tools find them all."""
    row = session_row(generated_session(3), RecallMiddleware(1_000))
    assert row["lost"] > 0
    assert row["exact_2"] == row["lost"]
    assert row["missed"] == []


def test_recall_into_the_call_is_measured_per_point() -> None:
    """The recall-into-call row counts points, lost facts and block tokens."""
    row = recall_row(generated_session(4), RecallMiddleware(1_000))
    assert row["points"] >= 1
    assert 0 <= row["held"] <= row["lost"]
    assert row["block_tokens"] >= 0


def test_the_follower_reads_a_handle_from_a_notice_and_the_runner_knows_the_benchmark() -> None:
    """`notice_handle` finds the handle a notice names; `python -m benchmarks` runs recall."""
    assert (
        notice_handle('kept: read_tool_output(handle="out-0123456789ab", offset')
        == "out-0123456789ab"
    )
    assert notice_handle("ask for a narrower part") is None
    assert BENCHMARKS["recall"] == ["--quick"]
