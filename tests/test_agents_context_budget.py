"""`create_context_agent(context=True, max_tokens=...)` and a `ContextBuilder` context."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langgraph_context.agents import create_context_agent
from langgraph_context.context import ContextBuilder, ContextConfig
from langgraph_context.testing import ScriptedChatModel
from langgraph_context.tokens import count_tokens

TALK = [
    HumanMessage(f"message {i}: " + "please remember this detail about the system " * 40)
    if i % 2 == 0
    else AIMessage("noted " * 200)
    for i in range(30)
]


def _sent(**kwargs: object) -> int:
    model = ScriptedChatModel(responses=[AIMessage("ok")])
    graph = create_context_agent(
        model, plan_tools=False, note_tools=False, constraint_tools=False, **kwargs
    )
    graph.invoke({"messages": [*TALK, HumanMessage("what was message 0?")]})
    return count_tokens(model.seen[-1])


def test_max_tokens_sizes_the_default_context_node() -> None:
    """The budget reaches the builder: a small one sends less, a large one more."""
    small = _sent(context=True, max_tokens=1_500)
    large = _sent(context=True, max_tokens=20_000)
    assert small <= 1_500
    assert large > 3_000  # above the builder's default budget


def test_a_context_builder_is_wrapped_in_a_context_node() -> None:
    """Passing a `ContextBuilder` uses its budget."""
    assert _sent(context=ContextBuilder(config=ContextConfig(max_tokens=1_200))) <= 1_200


def test_max_tokens_is_checked() -> None:
    """A bad budget, or one without the default node, is refused at build time."""
    model = ScriptedChatModel(responses=[AIMessage("ok")])
    with pytest.raises(ValueError, match="max_tokens must be a positive int"):
        create_context_agent(model, context=True, max_tokens=0)
    with pytest.raises(ValueError, match="max_tokens sizes compaction=True and context=True"):
        create_context_agent(model, compaction=False, context=False, max_tokens=2_000)
