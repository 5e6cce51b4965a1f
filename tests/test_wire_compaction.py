"""The summarizer and the constraint extractor on the wire, against a local server."""

from __future__ import annotations

import openai
import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langgraph_context.compaction import (
    SummaryOptions,
    compact_messages,
    create_compaction_node,
    summarize_history,
)
from langgraph_context.compaction._floor import lost_facts
from langgraph_context.compaction.provenance import compaction_kind, split_fenced
from langgraph_context.pinned import create_constraint_extractor_node
from langgraph_context.tokens import count_tokens
from tests._wire_server import (
    Reply,
    WireServer,
    context_length_exceeded,
    rate_limited,
    reply,
    server_error,
    slow,
)

OPTIONS = SummaryOptions(max_input_tokens=1_500, max_summary_tokens=100)


def history(turns: int = 12) -> list[BaseMessage]:
    """A system prompt, then turns that each read a file and find an order id."""
    messages: list[BaseMessage] = [SystemMessage("You are a careful engineer.")]
    for i in range(turns):
        messages += [
            HumanMessage(f"Check lib/mod_{i}.py for order ORD-{1000 + i}. " + "detail " * 60),
            AIMessage(
                "",
                tool_calls=[{"name": "read", "args": {"path": f"lib/mod_{i}.py"}, "id": f"r{i}"}],
            ),
            ToolMessage(f"def f{i}():\n    return {i}\n" + "# line\n" * 60, tool_call_id=f"r{i}"),
            AIMessage(f"lib/mod_{i}.py looks fine. " + "note " * 40),
        ]
    return messages


@pytest.mark.parametrize("streaming", [False, True])
def test_summarizer_requests_fit_their_input_budget(server: WireServer, streaming: bool) -> None:
    """Each summarizer request is a system + user pair within `max_input_tokens` as sent."""
    server.script(*[reply(f"Summary {n}.") for n in range(10)])
    result = summarize_history(
        history(),
        model=server.chat_model(streaming=streaming),
        target_tokens=1_200,
        summary_options=OPTIONS,
    )
    assert result.error is None
    assert result.model_calls == len(server.requests) > 1
    for body in server.requests:
        assert [m["role"] for m in body["messages"]] == ["system", "user"]
        assert count_tokens(body["messages"]) <= OPTIONS.max_input_tokens
        assert "tools" not in body
    assert result.tokens_after <= 1_200


def test_facts_stay_beside_a_forgetful_summary(server: WireServer) -> None:
    """Regression: a summary that says nothing still keeps the rules' facts of what it covers."""
    server.script(*[reply("Work happened.") for _ in range(10)])
    messages = history()
    result = summarize_history(
        messages, model=server.chat_model(), target_tokens=1_200, summary_options=OPTIONS
    )
    summary = next(m for m in result.messages if compaction_kind(m) == "summary")
    assert "Work happened." in summary.content
    assert "lib/mod_0.py" in summary.content
    assert "ORD-1000" in summary.content
    rules = compact_messages(messages, target_tokens=1_200)
    kept = " ".join(str(m.content) for m in result.messages)
    ruled = " ".join(str(m.content) for m in rules.messages)
    for i in range(12):
        if f"ORD-{1000 + i}" in ruled:
            assert f"ORD-{1000 + i}" in kept


def test_facts_can_be_switched_off(server: WireServer) -> None:
    """`keep_facts=False` sends back the model's prose alone."""
    server.script(*[reply("Work happened.") for _ in range(10)])
    options = SummaryOptions(max_input_tokens=1_500, max_summary_tokens=100, keep_facts=False)
    result = summarize_history(
        history(), model=server.chat_model(), target_tokens=1_200, summary_options=options
    )
    summary = next(m for m in result.messages if compaction_kind(m) == "summary")
    assert split_fenced(summary.content)[1] == ["Work happened."]  # the prose, fenced, alone


def test_context_length_exceeded_is_not_retried(server: WireServer) -> None:
    """Regression: a 400 refusal fails at once (the same request would fail again)."""
    server.script(context_length_exceeded(), reply("never sent"))
    messages = history()
    result = summarize_history(messages, model=server.chat_model(), target_tokens=1_200)
    assert result.model_calls == 1
    assert len(server.requests) == 1
    assert result.error is not None
    assert "no retry" in result.error
    assert "maximum context length" in result.error
    assert [m.content for m in result.messages] == [m.content for m in messages]


@pytest.mark.parametrize(
    ("failure", "said"),
    [
        (server_error(), "Error code: 500"),
        (rate_limited("0"), "Error code: 429"),
        (reply(""), "empty summary"),
        (reply(None), "empty summary"),
        (slow(1.0), "timed out"),
    ],
)
def test_retryable_failures_are_retried_then_reported(
    server: WireServer, failure: Reply, said: str
) -> None:
    """Documented: 5xx, 429, empty replies and timeouts are retried, then the history stays."""
    server.script(failure, failure, failure)
    messages = history()
    result = summarize_history(
        messages,
        model=server.chat_model(timeout=0.3),
        target_tokens=1_200,
        summary_options=SummaryOptions(retries=2, retry_backoff=0.01),
    )
    assert result.model_calls == 3
    assert result.error is not None
    assert said in result.error
    assert [m.content for m in result.messages] == [m.content for m in messages]


def test_retry_then_success(server: WireServer) -> None:
    """A 500 then a good answer: the summary is written, two calls counted."""
    server.script(server_error(), *[reply("Summary.") for _ in range(10)])
    result = summarize_history(
        history(), model=server.chat_model(), target_tokens=1_200, summary_options=OPTIONS
    )
    assert result.error is None
    assert result.model_calls == len(server.requests)
    assert server.requests[0] == server.requests[1]


def test_compaction_node_on_the_wire_records_the_failure(server: WireServer) -> None:
    """A failing summarizer: the node falls back to the rules, within budget, error recorded."""
    server.script(server_error(), server_error(), server_error())
    node = create_compaction_node(trigger_tokens=1_200, model=server.chat_model())
    update = node.invoke({"messages": history()})
    assert "Error code: 500" in update["compaction"]["error"]
    assert update["compaction"]["last"]["strategy"] != "summary"
    assert update["compaction"]["last"]["within_budget"]
    kept = [m for m in update["messages"] if m.type != "remove"]
    assert count_tokens(kept) <= 1_200


def test_compaction_node_on_the_wire_compacts(server: WireServer) -> None:
    """With a working summarizer the node rewrites the history under its budget.

    The summary ("Summary.") says nothing itself, so whatever the node keeps must
    hold every fact the node without a model keeps: never below rules alone.
    """
    server.script(*[reply("Summary.") for _ in range(10)])
    node = create_compaction_node(trigger_tokens=1_200, model=server.chat_model())
    update = node.invoke({"messages": history()})
    assert update["compaction"]["error"] is None
    assert update["compaction"]["last"]["summarizer_calls"] >= 1
    assert update["compaction"]["last"]["within_budget"]
    rules = create_compaction_node(trigger_tokens=1_200).invoke({"messages": history()})
    floor = [m for m in rules["messages"] if m.type != "remove"]
    result = [m for m in update["messages"] if m.type != "remove"]
    assert lost_facts(floor, result) == []
    if update["compaction"]["last"]["strategy"] != "summary":
        assert update["compaction"]["last"]["floor"].startswith("summary dropped: it lost")
    assert all(
        count_tokens(b["messages"]) <= SummaryOptions().max_input_tokens for b in server.requests
    )


def test_constraint_extractor_on_the_wire(server: WireServer) -> None:
    """One request: the extraction prompt, then the user's text once; rules parsed."""
    server.script(reply("- Use uv for installs\nNONE"))
    node = create_constraint_extractor_node(server.chat_model())
    update = node.invoke({"messages": [HumanMessage("Always use uv for installs.")]})
    assert [c["text"] for c in update["constraints"]] == ["Use uv for installs"]
    sent = server.messages(0)
    assert [m["role"] for m in sent] == ["system", "user"]
    assert sent[1]["content"] == "Always use uv for installs."


def test_constraint_extractor_empty_reply_records_nothing(server: WireServer) -> None:
    """An empty or `null` reply records no rule."""
    server.script(reply(None))
    node = create_constraint_extractor_node(server.chat_model())
    assert node.invoke({"messages": [HumanMessage("Always use uv.")]}) == {}


def test_constraint_extractor_provider_error_raises_typed(server: WireServer) -> None:
    """Documented: an extractor failure raises the provider's typed error (not swallowed)."""
    server.script(server_error())
    node = create_constraint_extractor_node(server.chat_model())
    with pytest.raises(openai.InternalServerError, match="500"):
        node.invoke({"messages": [HumanMessage("Always use uv.")]})
