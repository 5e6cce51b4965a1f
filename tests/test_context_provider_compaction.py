"""The context node and `ContextMiddleware` keep a provider's compaction block whole.

A provider compaction (Anthropic's `compaction` block, OpenAI Responses' `compaction`
item) stands for everything before it, and the provider needs it back unchanged. Under
any budget, in both layouts, the message holding it is passed on verbatim with the later
history, never rendered into the context, shortened or left out.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_openai import ChatOpenAI

from langgraph_context.agents import create_context_agent
from langgraph_context.context import ContextBuilder, ContextConfig, create_context_node
from langgraph_context.context._recent import request_only
from langgraph_context.testing import ScriptedChatModel

BLOCKS = {
    "anthropic": {"type": "compaction", "content": "The provider's summary of turns 0-9."},
    "openai": {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAA-opaque"},
}
ANTHROPIC = ChatAnthropic(model="claude-sonnet-4-5", api_key="k")  # type: ignore[arg-type]
RESPONSES = ChatOpenAI(model="gpt-5", api_key="k", use_responses_api=True)  # type: ignore[arg-type]


@st.composite
def _turns(draw: st.DrawFn, tag: str) -> list[BaseMessage]:
    """A few turns tagged `tag`: user text, tool rounds with long output, model replies."""
    out: list[BaseMessage] = []
    for i in range(draw(st.integers(0, 4))):
        words = "word " * draw(st.integers(5, 400))
        out.append(HumanMessage(f"{tag}{i} ask {words}", id=f"{tag}{i}h"))
        if draw(st.booleans()):
            call = {"name": "read_file", "args": {"path": f"{tag}{i}"}, "id": f"{tag}{i}c"}
            out.append(AIMessage("", tool_calls=[call], id=f"{tag}{i}a"))
            out.append(ToolMessage(f"{tag}{i} out {words}", tool_call_id=f"{tag}{i}c"))
        out.append(AIMessage(f"{tag}{i} reply", id=f"{tag}{i}r"))
    return out


@st.composite
def _histories(draw: st.DrawFn) -> tuple[str, list[BaseMessage], AIMessage]:
    """Turns, a provider's compaction turn, later turns, then the user's request."""
    provider = draw(st.sampled_from(sorted(BLOCKS)))
    boundary = AIMessage(
        [dict(BLOCKS[provider]), {"type": "text", "text": "Continuing from the compaction."}],
        id="boundary",
    )
    before, after = draw(_turns("p")), draw(_turns("n"))
    history = [HumanMessage("Start.", id="start"), *before, boundary, *after]
    history.append(HumanMessage("What next? " + "more " * draw(st.integers(0, 300)), id="last"))
    return provider, history, boundary


def _check(provider: str, sent: list[BaseMessage], boundary: AIMessage) -> None:
    """The boundary's blocks go out whole, in one AI message, before the later turns,
    and the provider's own request builder sends the block."""
    holders = [m for m in sent if isinstance(m.content, list) and BLOCKS[provider] in m.content]
    assert len(holders) == 1, [m.content for m in sent]
    (holder,) = holders
    assert isinstance(holder, AIMessage)
    blocks = list(holder.content)
    start = blocks.index(BLOCKS[provider])
    assert blocks[start : start + len(boundary.content)] == boundary.content  # never edited
    later = [
        i
        for i, m in enumerate(sent)
        if not isinstance(m, SystemMessage) and ("n0 " in str(m.content) or "What next?" in str(m))
    ]
    assert later
    assert min(later) > sent.index(holder)
    if provider == "anthropic":
        payload = ANTHROPIC._get_request_payload(sent)
        contents = [m["content"] for m in payload["messages"] if isinstance(m["content"], list)]
        assert any(BLOCKS[provider] in c for c in contents)
    else:
        assert BLOCKS[provider] in RESPONSES._get_request_payload(sent)["input"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    case=_histories(),
    budget=st.integers(300, 6000),
    layout=st.sampled_from(["cache", "focus"]),
    keep_last=st.sampled_from([0, 2, 6]),
)
def test_the_node_passes_the_compaction_turn_whole_under_any_budget(
    case: tuple[str, list[BaseMessage], AIMessage], budget: int, layout: str, keep_last: int
) -> None:
    """Any budget, either layout: the compaction turn is sent verbatim before later turns."""
    provider, history, boundary = case
    node = create_context_node(
        ContextBuilder(config=ContextConfig(max_tokens=budget)),
        system_instructions="You maintain the service.",
        layout=layout,  # type: ignore[arg-type]
        keep_last=keep_last,
    )
    sent = list(node.invoke({"messages": history})["llm_input_messages"])
    _check(provider, sent, boundary)


def test_the_middleware_sends_the_compaction_turn_under_a_tight_budget() -> None:
    """`create_context_agent` (context only) on a small budget whose window would start
    after the compaction turn: the model is sent the block unchanged, the turns before
    it not verbatim."""
    boundary = AIMessage([dict(BLOCKS["anthropic"]), {"type": "text", "text": "Go on."}])
    old = [HumanMessage(f"p{i} old " + "word " * 400) for i in range(4)]
    new = [
        m
        for i in range(3)
        for m in (HumanMessage(f"n{i} " + "detail " * 200), AIMessage(f"n{i} noted"))
    ]
    model = ScriptedChatModel(responses=[AIMessage("done")])
    agent = create_context_agent(model, max_tokens=800, compaction=False)
    agent.invoke({"messages": [*old, boundary, *new, HumanMessage("What next?")]})
    sent = list(model.seen[-1][1:])
    _check("anthropic", sent, boundary)
    assert not any(str(m.content).startswith("p0 old") for m in sent)


def test_request_only_keeps_the_compaction_turn_and_what_follows() -> None:
    """The smallest focus fit moves only what precedes the compaction turn to the context."""
    boundary = AIMessage([dict(BLOCKS["openai"])], id="b")
    call = AIMessage("", tool_calls=[{"name": "t", "args": {}, "id": "c"}], id="a")
    recent = [HumanMessage("q0", id="q0"), boundary, call, ToolMessage("r", tool_call_id="c")]
    recent.append(HumanMessage("q1", id="q1"))
    older, kept = request_only([], recent, "q1")
    assert [m.id for m in older] == ["q0"]
    assert kept == recent[1:]
    plain = [HumanMessage("q0", id="q0"), call, ToolMessage("r", tool_call_id="c")]
    older, kept = request_only([], [*plain, recent[-1]], "q1")
    assert [m.id for m in kept] == ["q1"]
    assert len(older) == 3
