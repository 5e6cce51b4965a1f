"""`ToolOutputLimitMiddleware` inside `langchain.agents.create_agent`."""

from __future__ import annotations

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from langgraph_context.agents import ToolOutputLimitMiddleware
from langgraph_context.compaction.entry import CUT_MARKER
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.testing import ScriptedChatModel, ai_calls, tool_call
from langgraph_context.tokens import count_tokens

LIMIT = 100


@tool
def dump(table: str) -> str:
    """Dump a table."""
    if table == "tiny":
        return "1 row"
    rows = [f"row {i}: order {i * 13} shipped" for i in range(400)]
    return "\n".join([f"TABLE {table}", *rows, "END: 400 rows, checksum 7f3a"])


def test_a_long_result_reaches_the_history_already_cut() -> None:
    """The stored result and what the model reads are the cut text; short ones stay."""
    model = ScriptedChatModel(
        responses=[
            ai_calls(tool_call("dump", {"table": "orders"}, "d1")),
            ai_calls(tool_call("dump", {"table": "tiny"}, "d2")),
            AIMessage("done"),
        ]
    )
    agent = create_agent(model, [dump], middleware=[ToolOutputLimitMiddleware(LIMIT)])
    state = agent.invoke({"messages": [HumanMessage("Dump the orders.")]})
    long, short = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert count_tokens(long.content) <= LIMIT
    assert long.content.startswith("TABLE orders")
    assert long.content.endswith("END: 400 rows, checksum 7f3a")
    assert long.additional_kwargs[CUT_MARKER] > LIMIT
    assert short.content == "1 row"
    assert [m.content for m in model.seen[1] if isinstance(m, ToolMessage)] == [long.content]


async def test_the_async_path_cuts_the_same_way() -> None:
    """`ainvoke` goes through `awrap_tool_call` and stores the same cut text."""
    model = ScriptedChatModel(
        responses=[ai_calls(tool_call("dump", {"table": "orders"}, "d1")), AIMessage("done")]
    )
    agent = create_agent(model, [dump], middleware=[ToolOutputLimitMiddleware(LIMIT)])
    state = await agent.ainvoke({"messages": [HumanMessage("Dump the orders.")]})
    [result] = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert count_tokens(result.content) <= LIMIT
    assert CUT_MARKER in result.additional_kwargs


@pytest.mark.parametrize("bad", [0, -1, 2.5])
def test_a_bad_limit_is_refused(bad: object) -> None:
    """The limit must be a positive int, refused where the middleware is built."""
    with pytest.raises(InvalidArgumentError, match="max_result_tokens"):
        ToolOutputLimitMiddleware(bad)  # type: ignore[arg-type]
