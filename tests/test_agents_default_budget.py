"""`create_context_agent`'s default budget: one number sizes compaction, context and cuts.

The bill benchmark's policy is the default: the stored history is compacted at the
call budget less what every request carries besides it (system prompt, hardening line,
tool definitions, a reserve for the plan), down to half of that, and long tool results
are cut inside the `tools` step. These tests drive the compiled agent.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_context.agents import AgentBudget, create_context_agent
from langgraph_context.agents._budget import TARGET_SHARE
from langgraph_context.compaction.entry import CUT_MARKER
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.recall import RecallMiddleware
from langgraph_context.testing import ScriptedChatModel, ai_calls, tool_call
from langgraph_context.tokens import count_tokens, count_tool_tokens
from langgraph_context.tokens.window import USAGE_KEY

WINDOW = 4_000
PROMPT = "You are a booking assistant. Look reservations up before you answer."


@tool
def lookup(reservation_id: str) -> str:
    """Look a reservation up by its id."""
    return f"reservation {reservation_id}: " + "seat 12A, meal vegetarian, bag 23kg. " * 12


@tool
def dump_log(name: str) -> str:
    """Return a whole log file."""
    return "\n".join(f"{name} line {i}: status ok, latency {i % 97} ms" for i in range(800))


def _model(responses: list[AIMessage], window: int | None = WINDOW) -> ScriptedChatModel:
    profile = {"max_input_tokens": window} if window else None
    return ScriptedChatModel(responses=responses, profile=profile)


def _tool_round(i: int) -> list[AIMessage]:
    return [
        ai_calls(tool_call("lookup", {"reservation_id": f"R{i:04d}"}, f"c{i}")),
        AIMessage(f"ok {i}"),
    ]


def test_the_high_mark_leaves_room_for_everything_each_request_carries() -> None:
    """Over a long thread, no request the model is sent passes the window."""
    turns = 40
    responses = [m for i in range(turns) for m in _tool_round(i)]
    model = _model(responses)
    graph = create_context_agent(
        model, [lookup], system_prompt=PROMPT, note_tools=False, checkpointer=InMemorySaver()
    )
    config: Any = {"configurable": {"thread_id": "long"}}
    for i in range(turns):
        state = graph.invoke({"messages": [HumanMessage(f"check R{i:04d} please")]}, config)
    tools = count_tool_tokens([lookup, *_state_tools(note_tools=False)])
    sent = [count_tokens(seen) + tools for seen in model.seen]
    assert max(sent) <= WINDOW
    budget = AgentBudget.for_agent(
        context_window=WINDOW, system_prompt=PROMPT, tools=[lookup, *_state_tools(note_tools=False)]
    )
    record = state["compaction"]
    assert record["count"] >= 2  # the thread is far longer than the window
    assert record["last"]["trigger"] == f"tokens>={budget.history}"
    assert record["last"]["target_tokens"] >= budget.target


def _state_tools(*, note_tools: bool) -> list[Any]:
    """The plan/note/memory tools, then the two recall tools every tooled agent binds."""
    from langgraph_context.agents.tool_middleware import state_tools

    return [*(t for _, t in state_tools(True, note_tools, True)), *RecallMiddleware().tools]


def test_budget_parts_add_up() -> None:
    """The high mark is the call budget less the fixed part; the low mark half of it."""
    small = AgentBudget.for_agent(8_000, system_prompt="Be brief.")
    tooled = AgentBudget.for_agent(8_000, system_prompt="Be brief.", tools=[lookup, dump_log])
    assert small.call == tooled.call == 8_000
    assert small.history == 8_000 - small.fixed
    assert tooled.fixed - small.fixed > count_tool_tokens([lookup, dump_log])  # + hardening
    assert tooled.target == int(tooled.history * TARGET_SHARE)
    assert AgentBudget.for_agent(context_window=32_000).call == 32_000
    assert AgentBudget.for_agent().call == 3_000
    # a fixed part larger than the budget still leaves a quarter for the history
    assert AgentBudget.for_agent(400, system_prompt="word " * 600).history == 100
    with pytest.raises(InvalidArgumentError):
        AgentBudget.for_agent(context_window=0)


def test_long_tool_results_are_cut_inside_the_tools_step() -> None:
    """A long result reaches state already cut; the loop takes no extra graph step."""
    model = _model([ai_calls(tool_call("dump_log", {"name": "api"}, "d1")), AIMessage("read it")])
    graph = create_context_agent(
        model, [dump_log], plan_tools=False, note_tools=False, constraint_tools=False
    )
    steps = [next(iter(u)) for u in graph.stream({"messages": [("user", "show the log")]})]
    assert steps == ["model", "tools", "model"]
    state = graph.invoke({"messages": [("user", "show the log")]})
    [result] = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert result.additional_kwargs[CUT_MARKER] > 5_000
    limit = AgentBudget.for_agent(context_window=WINDOW).tool_output_limit
    assert count_tokens(str(result.content)) <= limit == 400
    assert "api line 0:" in result.content
    assert "api line 799:" in result.content
    # the model read the cut text, never the whole log
    assert all("api line 400:" not in str(m.content) for seen in model.seen for m in seen)


@pytest.mark.parametrize("limit", [False, None])
def test_the_cut_can_be_switched_off(limit: bool | None) -> None:
    """`tool_output_limit=False` (or None) keeps results whole."""
    model = _model([ai_calls(tool_call("dump_log", {"name": "db"}, "d1")), AIMessage("ok")])
    graph = create_context_agent(
        model, [dump_log], note_tools=False, compaction=False, tool_output_limit=limit
    )
    state = graph.invoke({"messages": [("user", "show the log")]})
    [result] = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert CUT_MARKER not in result.additional_kwargs
    assert "db line 400:" in result.content


async def test_an_int_limit_cuts_async_too() -> None:
    """An int is the limit in tokens; the async path cuts the same way."""
    model = _model([ai_calls(tool_call("lookup", {"reservation_id": "Q1"}, "q")), AIMessage("ok")])
    graph = create_context_agent(model, [lookup], note_tools=False, tool_output_limit=60)
    state = await graph.ainvoke({"messages": [("user", "look Q1 up")]})
    [result] = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert count_tokens(str(result.content)) <= 60 < result.additional_kwargs[CUT_MARKER]


@pytest.mark.parametrize("bad", [0, -5, 2.5, "100"])
def test_a_bad_limit_is_refused(bad: Any) -> None:
    """A limit that is not a positive int is a clear error at build time."""
    with pytest.raises(InvalidArgumentError, match="tool_output_limit"):
        create_context_agent(_model([AIMessage("x")]), [lookup], tool_output_limit=bad)


class _Reporting(ScriptedChatModel):
    """Reports usage as a provider does: the messages and the tool definitions."""

    tools: list[Any] = []  # noqa: RUF012 - pydantic copies the default

    def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        result = super()._generate(messages, *args, **kwargs)
        sent = count_tokens(messages) + count_tool_tokens(self.tools)
        result.generations[0].message.usage_metadata = {
            "input_tokens": sent,
            "output_tokens": 1,
            "total_tokens": sent + 1,
        }
        return result


def test_usage_record_counts_the_tool_definitions() -> None:
    """The counted side of `token_usage` includes the tool schemas, as the provider's does."""
    model = _Reporting(
        responses=[AIMessage("hi")],
        profile={"max_input_tokens": WINDOW},
        tools=[lookup, *RecallMiddleware().tools],
    )
    graph = create_context_agent(
        model, [lookup], plan_tools=False, note_tools=False, constraint_tools=False, context=False
    )
    usage = graph.invoke({"messages": [("user", "hello")]})[USAGE_KEY]
    assert usage["reported"] == usage["counted"]


def test_middleware_usage_record_counts_the_bound_tools() -> None:
    """`ContextMiddleware` counts the tools bound for the call, as the provider does."""
    from langchain.agents import create_agent

    from langgraph_context.agents import CompactionMiddleware, ContextMiddleware

    model = _Reporting(
        responses=[AIMessage("hi")],
        profile={"max_input_tokens": WINDOW},
        tools=[lookup, dump_log],
    )
    agent = create_agent(
        model,
        [lookup, dump_log],
        system_prompt=PROMPT,
        middleware=[CompactionMiddleware(3_000), ContextMiddleware(assemble=False)],
    )
    usage = agent.invoke({"messages": [("user", "hello")]})[USAGE_KEY]
    assert usage["reported"] == usage["counted"]
