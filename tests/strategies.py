"""Hypothesis strategies for message histories (valid and arbitrary)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)

_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)
_ids = st.sampled_from(["a", "b", "c", "d"])  # few ids so repeats across a history happen


def _content() -> st.SearchStrategy[Any]:
    block = st.one_of(
        st.builds(lambda t: {"type": "text", "text": t}, _text),
        st.just({"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}),
    )
    return st.one_of(_text, st.lists(block, max_size=3))


@st.composite
def valid_histories(draw: st.DrawFn, *, max_rounds: int = 12) -> list[BaseMessage]:
    """A provider-valid history: optional system, then user/AI turns with paired tool rounds."""
    out: list[BaseMessage] = []
    if draw(st.booleans()):
        out.append(SystemMessage(draw(_text) or "sys"))
    for _ in range(draw(st.integers(0, max_rounds))):
        kind = draw(st.sampled_from(["human", "ai", "tools"]))
        if kind == "human":
            out.append(HumanMessage(draw(_content())))
        elif kind == "ai":
            out.append(AIMessage(draw(_text)))
        else:
            ids = draw(st.lists(_ids, min_size=1, max_size=3, unique=True))
            out.append(
                AIMessage(
                    draw(_text),
                    tool_calls=[{"name": "t", "args": {"q": draw(_text)}, "id": i} for i in ids],
                )
            )
            order = draw(st.permutations(ids))
            out.extend(ToolMessage(draw(_content()), tool_call_id=i) for i in order)
    return out


@st.composite
def arbitrary_histories(draw: st.DrawFn) -> list[BaseMessage]:
    """Any mix of messages, tool calls and tool results (often invalid)."""
    out: list[BaseMessage] = []
    for _ in range(draw(st.integers(0, 15))):
        kind = draw(st.sampled_from(["system", "human", "ai", "call", "tool", "tool", "empty"]))
        if kind == "system":
            out.append(SystemMessage(draw(_text)))
        elif kind == "human":
            out.append(HumanMessage(draw(_content())))
        elif kind == "ai":
            out.append(AIMessage(draw(_text)))
        elif kind == "empty":
            out.append(AIMessage(""))
        elif kind == "call":
            ids = draw(st.lists(_ids, min_size=1, max_size=3, unique=True))
            out.append(AIMessage("", tool_calls=[{"name": "t", "args": {}, "id": i} for i in ids]))
        else:
            out.append(ToolMessage(draw(_content()), tool_call_id=draw(_ids)))
    return out


_MARK = {"type": "ephemeral"}


@st.composite
def hostile_histories(draw: st.DrawFn) -> list[BaseMessage]:
    """`arbitrary_histories` plus what clients send by mistake: state edits, chat roles,
    duplicate and dangling results, blocks already carrying cache marks."""
    out = list(draw(arbitrary_histories()))
    extras = st.one_of(
        st.builds(lambda i: RemoveMessage(id=f"m{i}"), st.integers(0, 9)),
        st.builds(
            lambda role, text: ChatMessage(role=role, content=text or "x"),
            st.sampled_from(["user", "assistant", "tool", "narrator", "system"]),
            _text,
        ),
        st.builds(
            lambda n: HumanMessage(
                [{"type": "text", "text": f"part {i}", "cache_control": _MARK} for i in range(n)]
            ),
            st.integers(1, 5),
        ),
    )
    for _ in range(draw(st.integers(0, 4))):
        out.insert(draw(st.integers(0, len(out))), draw(extras))
    return out
