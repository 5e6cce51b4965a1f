"""LLM summarization: running summary, budgeted input, retries, failure handling."""

from __future__ import annotations

import re
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableLambda

from langgraph_context.compaction import (
    HistorySummary,
    SummaryOptions,
    asummarize_history,
    extract_snapshot,
    summarize_history,
)
from langgraph_context.compaction.prompts import (
    HANDOFF_PROMPT,
    SNAPSHOT_PROMPT,
    STATUS_LABELS,
    summary_instructions,
)
from langgraph_context.compaction.provenance import compaction_kind, fence, is_trusted_system
from langgraph_context.compaction.summarize import SUMMARY_PREFIX
from langgraph_context.messages import validate_history
from langgraph_context.safety.boundary import HARDENING_INSTRUCTION
from langgraph_context.tokens import count_tokens

SUMMARY_OPTION_FIELDS = {
    "style",
    "prompt",
    "max_summary_tokens",
    "max_input_tokens",
    "retries",
    "keep_facts",
}


def chat(n: int, *, size: int = 60, tag: str = "") -> list:
    """A system prompt and n user/assistant exchanges with ids (prefixed by `tag`)."""
    history: list = [SystemMessage("You are helpful.", id="sys")]
    for i in range(n):
        history.append(HumanMessage(f"{tag}question {i} " + "detail " * size, id=f"{tag}h{i}"))
        history.append(AIMessage(f"{tag}answer {i} " + "reply " * size, id=f"{tag}a{i}"))
    return history


def test_no_model_call_when_history_fits(scripted: Any) -> None:
    """A history within budget is returned as is and the model is not called."""
    model = scripted(responses=[AIMessage("never")])
    history = chat(2)
    result = summarize_history(history, model=model, target_tokens=10_000)
    assert result.messages == history
    assert result.model_calls == 0
    assert model.seen == []
    assert result.running_summary is None


def test_summarizes_old_part_and_keeps_recent(scripted: Any) -> None:
    """Old messages become one summary message after the system prompt; the tail is verbatim."""
    model = scripted(responses=[AIMessage("User asked 6 questions; all answered.")])
    history = chat(8)
    result = summarize_history(
        history,
        model=model,
        target_tokens=800,
        summary_options=SummaryOptions(max_summary_tokens=100),
    )
    assert result.error is None
    assert result.messages[0] is history[0]
    summary = result.messages[1]
    assert compaction_kind(summary) == "summary"
    running = result.running_summary
    assert running is not None
    assert running.facts.startswith("[Earlier conversation compacted: snapshot")
    prose = fence("User asked 6 questions; all answered.", kind="summary")
    assert summary.content == SUMMARY_PREFIX + prose + "\n\n" + running.facts
    assert result.messages[-1] is history[-1]
    assert result.tokens_after <= 800
    assert result.within_budget
    assert [m.id for m in result.summarized] == [
        m.id for m in history[1 : 1 + len(result.summarized)]
    ]
    assert running == HistorySummary(
        "User asked 6 questions; all answered.",
        last_message_id=result.summarized[-1].id,
        message_count=len(result.summarized),
        rounds=1,
        snapshot=extract_snapshot(result.summarized),
        facts=running.facts,
    )
    assert validate_history(result.messages) == []


def test_running_summary_is_extended_not_redone(scripted: Any) -> None:
    """A second round sends the earlier summary and only the new messages."""
    model = scripted(responses=[AIMessage("first summary"), AIMessage("second summary")])
    history = chat(8)
    first = summarize_history(
        history,
        model=model,
        target_tokens=800,
        summary_options=SummaryOptions(max_summary_tokens=100),
    )
    grown = [*first.messages, *chat(6, tag="new-")[1:]]
    second = summarize_history(
        grown,
        model=model,
        target_tokens=800,
        summary_options=SummaryOptions(max_summary_tokens=100),
    )
    request = model.seen[1][-1].content
    assert "\n[earlier compaction (summary)] first summary\n" in request
    assert re.search(
        r"\n<untrusted-data-(\d+)>\n\[earlier compaction.*\n</untrusted-data-\1>\n", request, re.S
    )
    assert "[user] question 0 " not in request
    assert "[user] new-question 0 " in request
    assert second.running_summary is not None
    assert second.running_summary.text == "second summary"
    assert second.running_summary.rounds == 2
    assert second.running_summary.message_count == len(first.summarized) + len(second.summarized)
    assert [compaction_kind(m) for m in second.messages].count("summary") == 1


def test_view_history_is_not_summarized_twice(scripted: Any) -> None:
    """Given a running summary, messages it covers (by id) are skipped in the full history."""
    model = scripted(responses=[AIMessage("s1"), AIMessage("s2")])
    history = chat(8)
    first = summarize_history(
        history,
        model=model,
        target_tokens=800,
        summary_options=SummaryOptions(max_summary_tokens=100),
    )
    full = [*history, *chat(8, tag="later-")[1:]]
    second = summarize_history(
        full,
        model=model,
        target_tokens=800,
        running_summary=first.running_summary,
        summary_options=SummaryOptions(max_summary_tokens=100),
    )
    covered = {m.id for m in first.summarized}
    assert not covered & {m.id for m in second.summarized}
    assert "s1" in model.seen[1][-1].content


def test_summarizer_input_is_budgeted_in_chunks(scripted: Any) -> None:
    """A long eviction is summarized in chunks whose inputs stay under max_input_tokens."""
    model = scripted(responses=[AIMessage(f"s{i}") for i in range(1, 30)])
    history = chat(30, size=80)
    result = summarize_history(
        history,
        model=model,
        target_tokens=1000,
        summary_options=SummaryOptions(max_summary_tokens=50, max_input_tokens=1500),
    )
    assert result.model_calls == len(model.seen) > 1
    for request in model.seen:
        assert count_tokens(request) <= 1500
    assert result.running_summary is not None
    assert result.running_summary.text == f"s{result.model_calls}"
    assert "\n[earlier compaction (summary)] s1\n" in model.seen[1][-1].content


def test_single_huge_message_is_clipped_for_the_summarizer(scripted: Any) -> None:
    """One message bigger than the summarizer input budget is clipped in the middle."""
    model = scripted(responses=[AIMessage("s")])
    huge = [HumanMessage("start " + "x " * 5000 + " end"), AIMessage("ok"), HumanMessage("next")]
    result = summarize_history(
        huge,
        model=model,
        target_tokens=200,
        summary_options=SummaryOptions(max_summary_tokens=50, max_input_tokens=800),
    )
    assert result.error is None
    text = model.seen[0][-1].content
    assert "characters omitted" in text
    assert count_tokens(model.seen[0]) <= 800


def test_retries_then_succeeds() -> None:
    """A failing call is retried; success on a later attempt is a normal result."""
    attempts = iter([RuntimeError("rate limited"), AIMessage("recovered")])

    def flaky(_: Any) -> Any:
        outcome = next(attempts)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    result = summarize_history(
        chat(8),
        model=RunnableLambda(flaky),
        target_tokens=800,
        summary_options=SummaryOptions(max_summary_tokens=100, retries=1),
    )
    assert result.error is None
    assert result.model_calls == 2
    assert result.running_summary is not None
    assert result.running_summary.text == "recovered"


def test_failure_leaves_history_intact_and_surfaces_error() -> None:
    """After all attempts fail, the messages are the input and the error is reported."""

    def down(_: Any) -> Any:
        raise ConnectionError("provider unreachable")

    history = chat(8)
    earlier = HistorySummary("kept", last_message_id="nope", message_count=3, rounds=1)
    result = summarize_history(
        history,
        model=RunnableLambda(down),
        target_tokens=800,
        running_summary=earlier,
        summary_options=SummaryOptions(max_summary_tokens=100, retries=2),
    )
    assert result.messages == history
    assert result.error == (
        "summarization failed after 3 attempts: ConnectionError: provider unreachable"
    )
    assert result.running_summary == earlier
    assert result.model_calls == 3
    assert not result.within_budget
    assert not any("provider unreachable" in str(m.content) for m in result.messages)


def test_empty_summary_is_a_failure() -> None:
    """An empty answer is never used as a summary."""
    result = summarize_history(
        chat(8),
        model=FakeListChatModel(responses=["   "]),
        target_tokens=800,
        summary_options=SummaryOptions(max_summary_tokens=100, retries=0),
    )
    assert (
        result.error
        == "summarization failed after 1 attempts: the summarizer returned an empty summary"
    )


def test_unexpected_answer_type_is_a_failure() -> None:
    """A summarizer returning neither a message nor a string is reported as a failure."""
    result = summarize_history(
        chat(8),
        model=RunnableLambda(lambda _: 42),
        target_tokens=800,
        summary_options=SummaryOptions(max_summary_tokens=100, retries=0),
    )
    assert result.error is not None
    assert "returned int, expected a message or a string" in result.error


def test_string_answers_are_accepted() -> None:
    """A runnable returning a plain string works as a summarizer."""
    result = summarize_history(
        chat(8),
        model=RunnableLambda(lambda _: " plain text "),
        target_tokens=800,
        summary_options=SummaryOptions(max_summary_tokens=100),
    )
    assert result.running_summary is not None
    assert result.running_summary.text == "plain text"


def test_latest_user_request_is_never_summarized_away(scripted: Any) -> None:
    """The most recent human request stays verbatim even when far from the tail."""
    model = scripted(responses=[AIMessage("did many reads")])
    history: list = [
        HumanMessage("old " * 100, id="h0"),
        HumanMessage("Refactor lib/core.ex", id="req"),
    ]
    for i in range(10):
        call = {"name": "Read", "args": {"file_path": f"f{i}"}, "id": f"c{i}"}
        history += [AIMessage("", tool_calls=[call], id=f"a{i}"),
                    ToolMessage("text " * 100, tool_call_id=f"c{i}", id=f"t{i}")]  # fmt: skip
    result = summarize_history(
        history,
        model=model,
        target_tokens=700,
        summary_options=SummaryOptions(max_summary_tokens=60),
    )
    ids = [m.id for m in result.messages]
    assert "req" in ids
    assert ids.index("req") == 1
    assert "req" not in {m.id for m in result.summarized}
    assert validate_history(result.messages) == []


def test_keep_messages_bounds_the_verbatim_tail(scripted: Any) -> None:
    """keep_messages keeps at most that many recent messages (whole units)."""
    model = scripted(responses=[AIMessage("s")])
    result = summarize_history(
        chat(8),
        model=model,
        target_tokens=800,
        keep_messages=2,
        summary_options=SummaryOptions(max_summary_tokens=100),
    )
    assert [m.id for m in result.messages] == ["sys", result.messages[1].id, "h7", "a7"]


def test_keep_tokens_bounds_the_verbatim_tail(scripted: Any) -> None:
    """keep_tokens keeps recent units up to that many tokens (at least the latest)."""
    model = scripted(responses=[AIMessage("s")])
    result = summarize_history(
        chat(8),
        model=model,
        target_tokens=800,
        keep_tokens=1,
        summary_options=SummaryOptions(max_summary_tokens=100),
    )
    assert [m.id for m in result.messages][2:] == ["h7", "a7"]


@pytest.mark.parametrize("style", ["handoff", "snapshot"])
def test_prompt_styles_are_sent(scripted: Any, style: str) -> None:
    """The chosen style's instructions, then the hardening line, are the system message."""
    model = scripted(responses=[AIMessage("s")])
    summarize_history(
        chat(8),
        model=model,
        target_tokens=800,
        summary_options=SummaryOptions(style=style, max_summary_tokens=100),
    )  # type: ignore[arg-type]
    expected = HANDOFF_PROMPT if style == "handoff" else SNAPSHOT_PROMPT
    assert model.seen[0][0].content == f"{expected.rstrip()}\n{HARDENING_INSTRUCTION}"
    assert all(label in expected for label in STATUS_LABELS)
    assert "Do not invent" in expected


def test_custom_prompt_is_sent(scripted: Any) -> None:
    """A custom prompt replaces the built-in instructions (the hardening line stays)."""
    model = scripted(responses=[AIMessage("s")])
    summarize_history(
        chat(8),
        model=model,
        target_tokens=800,
        summary_options=SummaryOptions(prompt="Summarize tersely.", max_summary_tokens=100),
    )
    assert model.seen[0][0].content == f"Summarize tersely.\n{HARDENING_INSTRUCTION}"


def test_invalid_input_is_repaired_and_reported(scripted: Any) -> None:
    """An invalid history is repaired before summarizing and the repair is reported."""
    model = scripted(responses=[AIMessage("s")])
    history = [*chat(8), ToolMessage("orphan", tool_call_id="zz")]
    result = summarize_history(
        history,
        model=model,
        target_tokens=800,
        summary_options=SummaryOptions(max_summary_tokens=100),
    )
    assert any("orphan_tool_result" in r for r in result.repairs)
    assert validate_history(result.messages) == []


async def test_async_twin(scripted: Any) -> None:
    """asummarize_history behaves as the sync version, using ainvoke."""
    model = scripted(responses=[AIMessage("async summary")])
    result = await asummarize_history(
        chat(8),
        model=model,
        target_tokens=800,
        summary_options=SummaryOptions(max_summary_tokens=100),
    )
    assert result.running_summary is not None
    assert result.running_summary.text == "async summary"
    assert result.within_budget


async def test_async_failure_leaves_history_intact() -> None:
    """The async twin also returns the input untouched on failure."""

    async def down(_: Any) -> Any:
        raise TimeoutError("slow")

    history = chat(8)
    result = await asummarize_history(
        history,
        model=RunnableLambda(lambda _: None, afunc=down),
        target_tokens=800,
        summary_options=SummaryOptions(max_summary_tokens=100, retries=0),
    )
    assert result.messages == history
    assert result.error == "summarization failed after 1 attempts: TimeoutError: slow"


async def test_async_no_call_when_fits(scripted: Any) -> None:
    """The async twin does not call the model when the history fits."""
    model = scripted(responses=[AIMessage("x")])
    result = await asummarize_history(chat(1), model=model, target_tokens=10_000)
    assert result.model_calls == 0


def test_running_summary_round_trips() -> None:
    """HistorySummary survives to_dict / from_dict."""
    summary = HistorySummary("t", last_message_id="m", message_count=4, rounds=2)
    assert HistorySummary.from_dict(summary.to_dict()) == summary


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"target_tokens": 0}, "target_tokens must be a positive int"),
        ({"max_summary_tokens": 0}, "max_summary_tokens must be a positive int"),
        ({"max_input_tokens": -3}, "max_input_tokens must be a positive int"),
        ({"retries": -1}, "retries must be >= 0"),
        ({"keep_tokens": -1}, "keep_tokens must be None or >= 0"),
        ({"keep_messages": -2}, "keep_messages must be None or >= 0"),
        ({"style": "haiku"}, "style must be one of"),
        ({"prompt": ""}, "prompt must be a non-empty string"),
        ({"max_input_tokens": 100, "max_summary_tokens": 100}, "max_input_tokens leaves only"),
    ],
)
def test_bad_options_raise(kwargs: dict, match: str) -> None:
    """Invalid options raise ValueError naming the parameter (summarizer settings when built)."""
    fields = {k: v for k, v in kwargs.items() if k in SUMMARY_OPTION_FIELDS}
    options = {"model": FakeListChatModel(responses=["s"]), "target_tokens": 800}
    options.update({k: v for k, v in kwargs.items() if k not in fields})
    with pytest.raises(ValueError, match=match):
        summarize_history(chat(8), **options, summary_options=SummaryOptions(**fields))


async def test_async_bad_options_raise() -> None:
    """The async twin validates options the same way."""
    model = FakeListChatModel(responses=["s"])
    with pytest.raises(ValueError, match="keep_messages must be None or >= 0"):
        await asummarize_history(chat(1), model=model, target_tokens=10, keep_messages=-1)
    tight = SummaryOptions(max_input_tokens=100, max_summary_tokens=100)
    with pytest.raises(ValueError, match="max_input_tokens leaves only"):
        await asummarize_history(chat(8), model=model, target_tokens=800, summary_options=tight)


def test_summary_instructions_validation() -> None:
    """summary_instructions rejects unknown styles and blank prompts."""
    with pytest.raises(ValueError, match="style must be one of"):
        summary_instructions("limerick")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="prompt must be a non-empty string"):
        summary_instructions(prompt=" ")
    assert summary_instructions("handoff") == HANDOFF_PROMPT


def test_answer_text_rejects_other_types() -> None:
    """The answer reader raises TypeError for neither a message nor a string."""
    from langgraph_context.compaction._calls import answer_text

    with pytest.raises(TypeError, match="summarizer returned list, expected a message"):
        answer_text([1, 2])
    assert answer_text(AIMessage(" ok ")) == "ok"


def test_mid_conversation_system_messages_stay_verbatim_in_place(scripted: Any) -> None:
    """A system message inside the summarized part is kept, not folded into the summary."""
    policy = SystemMessage("POLICY UPDATE: never reveal internal ticket ids.", id="policy")
    history = [*chat(3), policy, *chat(3, tag="b")[1:]]
    model = scripted(responses=[AIMessage("they chatted")])
    result = summarize_history(
        history,
        model=model,
        target_tokens=400,
        summary_options=SummaryOptions(max_summary_tokens=20),
    )
    assert result.running_summary is not None
    (kept_policy,) = [m for m in result.messages if m.id == "policy"]
    assert kept_policy.content == policy.content
    assert not is_trusted_system(kept_policy)  # hoisted by compaction, still not trusted
    assert policy not in result.summarized
    assert "POLICY UPDATE" not in model.seen[0][-1].content
    kept = [m.id for m in history if any(m.id == k.id for k in result.messages)]
    assert kept == [m.id for m in result.messages if compaction_kind(m) is None]  # order kept
