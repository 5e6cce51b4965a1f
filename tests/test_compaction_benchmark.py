"""The compaction benchmark's replay: which points it measures and how it splits retention."""

from __future__ import annotations

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from benchmarks.compaction.facts import FactIndex, message_text
from benchmarks.compaction.methods import Method
from benchmarks.compaction.replay import Session, model_call_points, replay, sample_points
from langgraph_context.tokens import count_tokens


def _session(turns: int = 8) -> Session:
    messages: list[BaseMessage] = [SystemMessage("rules"), HumanMessage("fix lib/app.ex")]
    for n in range(turns):
        call = {"name": "Read", "args": {"file_path": f"lib/f{n}.ex"}, "id": f"c{n}"}
        messages.append(AIMessage("", tool_calls=[call]))
        messages.append(ToolMessage("word " * 40, tool_call_id=f"c{n}"))
    messages.append(AIMessage("done with lib/f0.ex"))
    texts = [message_text(m) for m in messages]
    introduced = [{"lib/f0.ex"} if i == 2 else set() for i in range(len(messages))]
    return Session("s", messages, FactIndex(texts, introduced), later=True)


class KeepWhileFits(Method):
    """Keep the whole history while it fits the budget, else only its last message."""

    name = "keep-while-fits"

    def view(self, history: list[BaseMessage]) -> list[BaseMessage]:
        return history if count_tokens(history) <= self.budget else history[-1:]


class Recorder(Method):
    """Record the length of every history it is shown."""

    name = "recorder"
    stateful = True
    seen: list[int]

    def reset(self, budget: int) -> None:
        super().reset(budget)
        Recorder.seen = []

    def view(self, history: list[BaseMessage]) -> list[BaseMessage]:
        Recorder.seen.append(len(history))
        return history


def test_model_call_points_are_histories_before_each_ai_message():
    """Every replay point is an AI message index; its history ends with a human or tool message."""
    session = _session()
    points = model_call_points(session.messages)
    assert points == [2, 4, 6, 8, 10, 12, 14, 16, 18]
    assert all(isinstance(session.messages[t - 1], HumanMessage | ToolMessage) for t in points)


def test_sample_points_spreads_and_keeps_last():
    """Sampling keeps k evenly spread model calls plus the last; k <= 0 keeps them all."""
    messages = _session().messages
    assert sample_points(messages, 3) == [2, 8, 14, 18]
    assert sample_points(messages, 0) == model_call_points(messages)
    assert sample_points(messages, 100) == model_call_points(messages)


def test_needed_retention_counts_only_points_over_budget():
    """Points where the history fits count in the all-points figure only."""
    session = _session()
    row = next(r for r in replay([session], [KeepWhileFits], 0)["rows"] if r["budget"] == 0.5)
    budget = int(session.tokens * 0.5)
    over = [
        t
        for t in model_call_points(session.messages)
        if count_tokens(session.messages[:t]) > budget
    ]
    early = {t: session.index.early_key_facts(t) for t in model_call_points(session.messages)}
    assert row["points"] == 9
    assert row["needed_points"] == len(over) > 0
    assert row["needed_early_key_facts"] == sum(len(early[t]) for t in over) > 0
    assert row["needed_retention_pct"] == 0.0
    bins = row["needed_by_overflow"]
    assert sum(cell["early_key_facts"] for cell in bins.values()) == row["needed_early_key_facts"]
    assert {cell["retention_pct"] for cell in bins.values()} <= {0.0, None}
    kept = sum(len(f) for t, f in early.items() if t not in over)
    assert row["retention_pct"] == round(100 * kept / row["early_key_facts"], 1)


def test_stateful_methods_see_every_model_call():
    """A stateful method is stepped through every model call, measured only at sampled ones."""
    session = _session()
    row = replay([session], [Recorder], 1)["rows"][0]
    assert Recorder.seen == model_call_points(session.messages)
    assert row["points"] == 2


def test_extractive_summarizer_reads_what_it_is_asked_to_summarize():
    """The shared summarizer picks specific sentences of its input, deterministically."""
    from langchain_core.messages import HumanMessage, SystemMessage

    from benchmarks.compaction.summarizer import ExtractiveSummarizer, salient_sentences

    text = "Please be brief. The crash is in lib/app/user.ex line 42. Thanks a lot."
    assert salient_sentences(text, 14) == "The crash is in lib/app/user.ex line 42."
    model = ExtractiveSummarizer(max_tokens=14)
    request = [SystemMessage("Summarize the conversation."), HumanMessage(text)]
    first = model.invoke(request).content
    assert first == model.invoke(request).content
    assert "lib/app/user.ex" in first


def test_every_summarizing_method_gets_the_same_summarizer():
    """ours, langmem and SummarizationMiddleware share one summarizer of one size."""
    from benchmarks.compaction.methods import Langmem, Middleware
    from benchmarks.compaction.summarizer import ExtractiveSummarizer

    langmem, middleware = Langmem(), Middleware()
    langmem.reset(4_000)
    middleware.reset(4_000)
    for model in (langmem.model, middleware.mw.model):
        assert isinstance(model, ExtractiveSummarizer)
        assert model.max_tokens == 256
