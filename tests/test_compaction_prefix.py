"""The summarizer sent the agent's own prefix: one call, the instruction last, no tool use."""

from __future__ import annotations

from typing import Any, ClassVar

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_context.agents import CompactionMiddleware, create_context_agent
from langgraph_context.compaction import summarize_history
from langgraph_context.testing import ScriptedChatModel, ai_calls, tool_call

HISTORY = [
    HumanMessage("q1 " * 50, id="h1"),
    AIMessage("a1 " * 50, id="a1"),
    HumanMessage("q2 " * 50, id="h2"),
    AIMessage("a2", id="a2"),
]


def test_prefix_request_is_the_prefix_then_the_instruction() -> None:
    """With `prefix`, the one summarizer call is the prefix verbatim plus one user turn."""
    prefix = [SystemMessage("Be brief."), *HISTORY]
    model = ScriptedChatModel(responses=[AIMessage("q1 was answered")])
    done = summarize_history(HISTORY, model=model, target_tokens=60, prefix=prefix)
    assert done.error is None
    assert done.running_summary is not None
    assert done.running_summary.text == "q1 was answered"
    (sent,) = model.seen
    assert sent[: len(prefix)] == prefix
    assert isinstance(sent[-1], HumanMessage)
    assert "Do not call any tool" in str(sent[-1].content)


def test_a_tool_call_in_the_summary_is_no_summary() -> None:
    """A summarizer answering with a tool call leaves the history whole, with an error."""
    model = ScriptedChatModel(responses=[ai_calls(tool_call("read_file", {"path": "x"}, "c1"))])
    done = summarize_history(HISTORY, model=model, target_tokens=60, prefix=list(HISTORY))
    assert done.error == "the summarizer called tools ['read_file'] instead of answering"
    assert done.messages == HISTORY
    assert len(model.seen) == 1  # not retried: the same prefix would call it again


class _Bound(ScriptedChatModel):
    """A scripted summarizer that remembers the tools it was bound to."""

    bound: ClassVar[list[Any]] = []

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        self.bound.append([getattr(t, "name", t) for t in tools])
        return self


def test_agent_summarizer_falls_back_to_rules_on_a_tool_call() -> None:
    """In the agent, a summarizer calling a tool is bound to its tools; rules compact."""
    summarizer = _Bound(responses=[ai_calls(tool_call("write_plan", {}, "s1"))])
    agent = create_context_agent(
        ScriptedChatModel(responses=[AIMessage("ok")]),
        checkpointer=InMemorySaver(),
        max_tokens=60_000,
        compaction=CompactionMiddleware(300, target_tokens=150, model=summarizer),
    )
    config: Any = {"configurable": {"thread_id": "fallback"}}
    for turn in range(3):
        state = agent.invoke({"messages": [HumanMessage(f"turn {turn} " + "x y " * 120)]}, config)
    assert summarizer.seen, "the summarizer was asked"
    assert "write_plan" in summarizer.bound[-1]
    assert state["compaction"]["count"] >= 1
    assert not any(getattr(m, "tool_calls", None) for m in state["messages"])
