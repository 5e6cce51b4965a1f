"""The summarizer's retries wait for the provider's retry hint, else back off exponentially.

Driven through a real `ChatOpenAI` client (its own retries off) against the local wire
server, which records when each request arrives.
"""

from __future__ import annotations

import email.utils
import time
from typing import Any

import pytest

from langgraph_context.compaction import (
    SummaryOptions,
    asummarize_history,
    create_compaction_node,
    summarize_history,
)
from langgraph_context.compaction._calls import retry_hint
from langgraph_context.errors import InvalidArgumentError
from tests._wire_server import WireServer, rate_limited, reply, server_error
from tests.test_wire_compaction import history

BUDGET = 1_200


def _options(**kwargs: Any) -> SummaryOptions:
    base: dict[str, Any] = {
        "max_input_tokens": 100_000,  # one summarizer call: one chunk
        "max_summary_tokens": 100,
        "retries": 1,
        "retry_backoff": 0.0,  # without a hint, no pause: any pause measured is the hint's
        "max_retry_wait": 5.0,
    }
    return SummaryOptions(**{**base, **kwargs})


def _gaps(server: WireServer) -> list[float]:
    return [b - a for a, b in zip(server.times, server.times[1:], strict=False)]


def _summarize(server: WireServer, options: SummaryOptions) -> Any:
    return summarize_history(
        history(), model=server.chat_model(), target_tokens=BUDGET, summary_options=options
    )


@pytest.mark.parametrize(
    ("limited", "wait"),
    [
        (rate_limited("0.4"), 0.4),
        (rate_limited(None, retry_after_ms="300"), 0.3),
        (rate_limited(None, message="Rate limit reached. Please try again in 350ms."), 0.35),
    ],
    ids=["retry-after", "retry-after-ms", "message-hint"],
)
def test_a_429_is_retried_after_the_providers_hint(
    server: WireServer, limited: Any, wait: float
) -> None:
    """The retry after a 429 waits as long as the provider asked, then succeeds."""
    server.script(limited, reply("Summary of the work."))
    result = _summarize(server, _options())
    assert result.error is None
    assert result.model_calls == len(server.requests) == 2
    (gap,) = _gaps(server)
    assert wait <= gap < wait + 1.5


def test_without_a_hint_the_retries_back_off_exponentially(server: WireServer) -> None:
    """500s carry no hint: the pauses are retry_backoff, then twice that."""
    server.script(server_error(), server_error(), reply("Summary of the work."))
    result = _summarize(server, _options(retries=2, retry_backoff=0.2))
    assert result.error is None
    first, second = _gaps(server)
    assert 0.2 <= first < 0.2 + 1.0
    assert 0.4 <= second < 0.4 + 1.0


def test_backoff_is_capped_by_max_retry_wait(server: WireServer) -> None:
    """No pause is longer than max_retry_wait, however many retries."""
    server.script(server_error(), server_error(), server_error(), reply("Summary."))
    result = _summarize(server, _options(retries=3, retry_backoff=0.2, max_retry_wait=0.25))
    assert result.error is None
    gaps = _gaps(server)
    assert len(gaps) == 3
    assert gaps[0] >= 0.2
    assert all(0.2 <= g < 0.25 + 1.0 for g in gaps[1:])


def test_a_hint_above_the_cap_ends_the_retries_and_the_node_uses_the_rules(
    server: WireServer,
) -> None:
    """A 429 asking for 30 s with a 1 s cap: no retry, no 30 s stall, rules compact instead."""
    server.script(rate_limited("30"), reply("never sent"))
    node = create_compaction_node(
        trigger_tokens=BUDGET,
        model=server.chat_model(),
        summary_options=_options(max_retry_wait=1.0),
    )
    started = time.monotonic()
    update = node.invoke({"messages": history()})
    assert time.monotonic() - started < 5
    assert len(server.requests) == 1
    record = update["compaction"]
    assert "asked to wait 30 s" in record["error"]
    assert "max_retry_wait=1 s" in record["error"]
    assert record["last"]["strategy"] != "summary"
    assert record["last"]["within_budget"]


async def test_the_async_path_waits_for_the_hint_too(server: WireServer) -> None:
    """asummarize_history sleeps (without blocking the loop) for the 429's retry-after."""
    server.script(rate_limited("0.4"), reply("Summary of the work."))
    result = await asummarize_history(
        history(), model=server.chat_model(), target_tokens=BUDGET, summary_options=_options()
    )
    assert result.error is None
    (gap,) = _gaps(server)
    assert 0.4 <= gap < 0.4 + 1.5


class _HttpError(Exception):
    """An error shaped like the OpenAI/Anthropic clients' (a response with headers)."""

    def __init__(self, headers: dict[str, str], message: str = "rate limited") -> None:
        super().__init__(message)
        self.response = type("Response", (), {"headers": headers})()


def test_retry_hint_reads_every_documented_form() -> None:
    """Headers (seconds, ms, HTTP date), a retry_after attribute and message hints."""
    assert retry_hint(_HttpError({"Retry-After": "2"})) == 2.0
    assert retry_hint(_HttpError({"retry-after-ms": "1500", "retry-after": "9"})) == 1.5
    later = email.utils.formatdate(time.time() + 60, usegmt=True)
    dated = retry_hint(_HttpError({"retry-after": later}))
    assert dated is not None
    assert 55 < dated <= 60
    assert retry_hint(_HttpError({"retry-after": "soon"})) is None
    error = RuntimeError("quota")
    error.retry_after = 3  # type: ignore[attr-defined]
    assert retry_hint(error) == 3.0
    assert retry_hint(RuntimeError("Please retry in 12.5s.")) == 12.5
    assert retry_hint(RuntimeError('{"retryDelay": "7s"}')) == 7.0
    assert retry_hint(RuntimeError("try again in 20ms")) == pytest.approx(0.02)
    assert retry_hint(RuntimeError("boom")) is None


@pytest.mark.parametrize("field", ["retry_backoff", "max_retry_wait"])
@pytest.mark.parametrize("value", [-1, float("inf"), float("nan"), True, "1"])
def test_bad_retry_waits_are_rejected(field: str, value: Any) -> None:
    """A retry wait must be a finite number of seconds >= 0, named in the error."""
    with pytest.raises(InvalidArgumentError, match=field):
        SummaryOptions(**{field: value})
