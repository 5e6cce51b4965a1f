"""What one model call of the default agent costs, counted in operations, not seconds.

Issue 35's bar (at most 1.5x a bare `create_agent` per model call, flat in the
history's length) is measured by `benchmarks.lean`; these tests pin the operations
behind it so a regression shows here first: the graph steps per model call, the
messages counted by content per call once a history was counted, and no runnable
run around an inner node.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_context import create_context_agent
from langgraph_context.testing import ScriptedChatModel, ai_calls, tool_call
from langgraph_context.tokens import TiktokenCounter

PER_TURN = 8


class _Looping(ScriptedChatModel):
    """Calls `read_log` seven times per user turn, then answers."""

    calls: int = 0

    def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> ChatResult:
        k, self.calls = self.calls, self.calls + 1
        if k % PER_TURN == PER_TURN - 1:
            reply = AIMessage("The upstream times out.")
        else:
            reply = ai_calls(tool_call("read_log", {"n": k}, f"c{k}"))
        return ChatResult(generations=[ChatGeneration(message=reply)])


@tool
def read_log(n: int) -> str:
    """Return log number n."""
    return "\n".join(f"line {i} of log {n}: request served in {i * 7 % 90} ms" for i in range(30))


def _agent(**kwargs: Any) -> tuple[_Looping, Any]:
    model = _Looping(responses=[])
    return model, create_context_agent(
        model, [read_log], max_tokens=16_000, checkpointer=InMemorySaver(), **kwargs
    )


def _turns(graph: Any, model: _Looping, turns: int) -> Iterator[int]:
    """Run `turns` user turns; yield the model calls made so far after each."""
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 200}
    for turn in range(turns):
        graph.invoke({"messages": [("user", f"turn {turn}: why the timeouts?")]}, config)
        yield model.calls


def test_the_default_agent_adds_no_graph_step_to_a_bare_agent() -> None:
    """Compaction, context and every other part run inside the model call: no node of its own."""
    _, ours = _agent()
    bare = create_agent(_Looping(responses=[]), [read_log])
    assert set(ours.get_graph().nodes) == set(bare.get_graph().nodes)


def test_a_model_call_counts_by_content_only_what_is_new(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Within a turn, a call counts by content a handful of messages, however long the history."""
    counted: list[int | None] = []  # messages counted by content; None: a model call
    each = TiktokenCounter.count_each
    generate = _Looping._generate

    def spy(self: TiktokenCounter, items: list[Any]) -> list[int]:
        counted.append(len(items))
        return each(self, items)

    def marked(self: _Looping, *args: Any, **kwargs: Any) -> ChatResult:
        counted.append(None)
        return generate(self, *args, **kwargs)

    model, graph = _agent()
    runs = _turns(graph, model, 4)
    next(runs)  # the first turn fills the memos
    monkeypatch.setattr(TiktokenCounter, "count_each", spy)
    monkeypatch.setattr(_Looping, "_generate", marked)
    per_call: list[int] = []
    for _ in range(3):
        counted.clear()
        next(runs)
        calls: list[int] = [0]
        for n in counted:
            if n is None:
                calls.append(0)
            else:
                calls[-1] += n
        # Before the turn's first call the history was reloaded from the checkpointer
        # (new objects, counted by content once); the turn's later calls then repeat
        # it, and only what they add is counted again.
        per_call += calls[2:]
    history = len(graph.get_state({"configurable": {"thread_id": "t"}}).values["messages"])
    assert history > 50
    assert len(per_call) >= 3 * (PER_TURN - 2)
    # Two counts a call of the latest reply and result, and of the new system message
    # (5); a history counted again by content would be 50 and more.
    assert max(per_call) <= 6, per_call


def test_no_inner_node_is_invoked_as_a_runnable(monkeypatch: pytest.MonkeyPatch) -> None:
    """The context node and compaction's check run as functions: no runnable run per call."""
    invoked: list[str] = []
    invoke = RunnableLambda.invoke

    def spy(self: RunnableLambda[Any, Any], *args: Any, **kwargs: Any) -> Any:
        invoked.append(self.name or "")
        return invoke(self, *args, **kwargs)

    monkeypatch.setattr(RunnableLambda, "invoke", spy)
    model, graph = _agent()
    calls = list(_turns(graph, model, 2))[-1]
    assert calls == 2 * PER_TURN
    assert invoked == []
