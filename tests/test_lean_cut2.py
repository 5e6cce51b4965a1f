"""Lean per call in the cut's room, second pass: caps per tool round, ends that grow."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_context.agents import create_context_agent
from langgraph_context.recall import RecallLimits, RecallMiddleware
from langgraph_context.tokens import TiktokenCounter, _cut, _ends, truncate_text
from tests.conftest import ScriptedChatModel, ai_calls, call


@tool
def dump(n: int) -> str:
    """Dump part n (long, or short for a negative n)."""
    if n < 0:
        return "short"
    return "\n".join(f"part {n} step {i}: ok" for i in range(600))


def _run(keeper: RecallMiddleware, rounds: list[list[int]]) -> dict[str, Any]:
    """The final state after one model call per round, each asking for `dump(n)`s."""
    turns = [
        ai_calls(*(call("dump", {"n": n}, f"c{r}-{j}") for j, n in enumerate(parts)))
        for r, parts in enumerate(rounds)
    ]
    model = ScriptedChatModel(responses=[*turns, AIMessage("done")])
    agent = create_agent(model, [dump], middleware=[keeper], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    return agent.invoke({"messages": [("user", "go")]}, config)  # type: ignore[call-overload, no-any-return]


def _handles(state: dict[str, Any]) -> list[str]:
    """The handle each cut result's notice names, in order."""
    return [
        str(m.content).split('handle="')[1].split('"')[0]
        for m in state["messages"]
        if isinstance(m, ToolMessage) and 'handle="' in str(m.content)
    ]


def test_the_agents_recall_wraps_no_model_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """With nothing to recall into a call, the agent's recall wraps no model call, yet cuts."""
    wrapped: list[Any] = []

    def spy(self: Any, request: Any, handler: Any) -> Any:
        wrapped.append(request)
        return handler(request)

    monkeypatch.setattr(RecallMiddleware, "wrap_model_call", spy)
    model = ScriptedChatModel(responses=[ai_calls(call("dump", {"n": 1}, "c1")), AIMessage("ok")])
    agent = create_context_agent(model, [dump], tool_output_limit=200)
    state = agent.invoke({"messages": [("user", "go")]})
    assert wrapped == []
    assert len(state["recall"]) == 1
    assert type(RecallMiddleware(200)).wrap_model_call is spy  # a user's own keeps its wrapper
    assert AgentMiddleware.wrap_model_call is not spy


def test_caps_are_kept_per_tool_round_and_counted_once() -> None:
    """Three parallel results past a one-item cap: the round's first call drops, once each."""
    state = _run(RecallMiddleware(200, limits=RecallLimits(max_items=1)), [[1], [2, 3, 4], [5]])
    handles = _handles(state)
    assert len(handles) == 5
    assert list(state["recall"]) == handles[4:]
    assert state["recall_dropped"] == 4  # a in round 2; b, c, d in round 3: none twice


def test_a_short_result_carries_the_drops_of_a_round_over_the_cap() -> None:
    """Two parallel cuts overfill a one-item cap; the next round's short result drops one."""
    state = _run(RecallMiddleware(200, limits=RecallLimits(max_items=1)), [[1, 2], [-1]])
    handles = _handles(state)
    assert list(state["recall"]) == handles[1:]
    assert state["recall_dropped"] == 1
    assert [m.content for m in state["messages"] if isinstance(m, ToolMessage)][-1] == "short"


def test_a_user_recall_without_recall_tokens_passes_model_calls_through() -> None:
    """Its model-call wrapper hands the request on untouched when it recalls nothing."""
    keeper = RecallMiddleware(200)
    seen: list[Any] = []
    assert keeper.wrap_model_call("request", lambda r: seen.append(r) or "answer") == "answer"  # type: ignore[arg-type, func-returns-value]
    assert seen == ["request"]


@pytest.mark.parametrize("keep", [40, 120, 380])
def test_an_end_encoded_short_of_the_cut_grows_to_it(keep: int) -> None:
    """A cut keeping more than an end first holds is the cut a whole encoding makes."""
    text = "\n".join(f"line {i} of the log: status ok id={i * 7919:x}" for i in range(400))
    marker = "[{n}]"  # a tiny marker: the ends keep nearly half the limit each
    cut = truncate_text(text, keep * 2, marker=marker, keep="ends")
    whole = _cut.bpe_cut(
        _WholeOnly(TiktokenCounter().encoding), text, keep * 2, lambda _: marker, "ends"
    )
    assert whole is not None
    assert cut == whole[0]
    assert TiktokenCounter().count_fresh(cut) == whole[1] <= keep * 2


class _WholeOnly:
    """A tiktoken encoding under an unknown name: the cut encodes the text whole."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = "unknown"

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_ends_that_would_meet_or_pass_the_estimate_refuse_to_grow() -> None:
    """Growing past the estimate, or with no source, raises: the text is then encoded whole."""
    encoding = TiktokenCounter().encoding
    data = b"alpha beta gamma delta " * 40
    ends = _ends._Ends([1], [2], 3, (encoding, data, 6, len(data) - 6))
    with pytest.raises(_ends._Beyond, match="50"):
        ends.grow(50, 0)
    with pytest.raises(_ends._Beyond, match="2"):
        _ends._Ends([1], [2], 4).grow(2, 0)


def test_the_first_tool_round_check_reads_the_asking_message() -> None:
    """Only the first call of the latest model message runs the cap check."""
    from langgraph_context.recall.middleware import _first_call

    class _Request:
        def __init__(self, call_id: str, messages: list[Any]) -> None:
            self.tool_call = {"id": call_id}
            self.state = {"messages": messages}

    asking = ai_calls(call("dump", {"n": 1}, "a"), call("dump", {"n": 2}, "b"))
    assert _first_call(_Request("a", [asking]))  # type: ignore[arg-type]
    assert not _first_call(_Request("b", [asking]))  # type: ignore[arg-type]
    assert _first_call(_Request("b", []))  # type: ignore[arg-type]


def test_the_offload_node_keeps_the_caps_in_a_hand_built_graph() -> None:
    """Two offloaded rounds past a one-item cap: the node drops the older entry and counts it."""
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    from langgraph_context.recall import RecallStateMixin, create_offload_node

    class State(MessagesState, RecallStateMixin):
        """Messages plus the archive index."""

    model = ScriptedChatModel(
        responses=[
            ai_calls(call("dump", {"n": 1}, "a")),
            ai_calls(call("dump", {"n": 2}, "b")),
            AIMessage("done"),
        ]
    )

    def agent(state: State) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(State)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([dump]))
    graph.add_node("offload", create_offload_node(200, limits=RecallLimits(max_items=1)))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "offload")
    graph.add_edge("offload", "agent")
    out = graph.compile().invoke({"messages": [("user", "go")]})
    handles = _handles(out)
    assert len(handles) == 2
    assert list(out["recall"]) == handles[1:]
    assert out["recall_dropped"] == 1


def test_a_far_over_log_cut_encodes_about_half_of_it() -> None:
    """A 2k-token log kept to 800: its ends, three samples, the marker once (main: ~67%)."""
    from benchmarks.lean.__main__ import log_text

    counter = TiktokenCounter()
    seen: list[int] = []
    inner = counter.encoding

    class _Counting:
        name = inner.name  # type: ignore[union-attr]

        def __getattr__(self, attr: str) -> Any:
            return getattr(inner, attr)

        def encode_ordinary(self, text: str) -> list[int]:
            seen.append(len(text))
            return inner.encode_ordinary(text)  # type: ignore[union-attr, no-any-return]

        def encode(self, text: str, **kwargs: Any) -> list[int]:
            seen.append(len(text))
            return inner.encode(text, **kwargs)  # type: ignore[union-attr, no-any-return]

    notice = "\n[... {n} characters of this 1950-token result were cut as it arrived, to keep"
    notice += ' the conversation small; full text kept: read_tool_output(handle="out-1") ...]\n'
    texts = [log_text(seed) for seed in range(20)]
    cuts = [_cut.bpe_cut(_Counting(), t, 800, lambda _: notice, "ends") for t in texts]
    assert all(c is not None and c[1] <= 800 for c in cuts)
    assert sum(seen) < sum(map(len, texts)) * 55 // 100
