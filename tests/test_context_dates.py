"""Tests for date-aware relevance: dates named in a query favour packets from that day."""

from __future__ import annotations

from datetime import date, datetime

from langgraph_context.context import ContextConfig, ContextPacket, relevance_scores
from langgraph_context.context._dates import as_date, date_match, query_dates


def test_query_dates_understands_common_forms() -> None:
    """Day-first, month-first, month-only, abbreviated and ISO dates are recognised."""
    assert query_dates("What did Nate make on 9 November, 2022?") == [(2022, 11, 9)]
    assert query_dates("plans for May 7th, 2023") == [(2023, 5, 7)]
    assert query_dates("anything in Sept 2021") == [(2021, 9, None)]
    assert query_dates("log of 2024-02-29") == [(2024, 2, 29)]
    assert query_dates("no dates here, may I ask?") == []


def test_as_date_and_date_match() -> None:
    """Timestamps become dates; a named day scores 1, its month 0.5, others 0."""
    assert as_date(datetime(2023, 5, 7, 13, 0)) == date(2023, 5, 7)
    assert as_date(datetime(2023, 5, 7, 12).timestamp()) == date(2023, 5, 7)
    assert as_date(None) is None
    assert as_date(1e30) is None
    named = [(2023, 5, 7)]
    assert date_match(date(2023, 5, 7), named) == 1.0
    assert date_match(date(2023, 5, 20), named) == 0.5
    assert date_match(date(2022, 5, 7), named) == 0.0
    assert date_match(None, named) == 0.0


def test_date_in_query_lifts_packets_from_that_day() -> None:
    """Of two equal matches, the one stamped on the named date ranks first."""
    packets = [
        ContextPacket("I baked bread too", timestamp=datetime(2022, 11, 9, 10)),
        ContextPacket("I baked bread", timestamp=datetime(2023, 1, 4, 10)),
    ]
    config = ContextConfig(neighbor_window=0, duplicate_threshold=1.0)
    dated = relevance_scores(packets, "What did I bake on 9 November, 2022?", config=config)
    assert dated[0] == 1.0
    assert dated[1] < dated[0]
    off = relevance_scores(
        packets,
        "What did I bake on 9 November, 2022?",
        config=ContextConfig(neighbor_window=0, date_boost=0.0),
    )
    assert off == [1.0, 1.0]  # a tie by BM25 alone
