"""create_subagent_tool: clean-window delegation through real graphs and ToolNode."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from langgraph_context.agents import create_context_agent, create_subagent_tool
from langgraph_context.agents.subagent import TRUNCATION_MARKER, acondense_result, condense_result
from langgraph_context.safety.boundary import HARDENING_INSTRUCTION
from langgraph_context.state import NoteStateMixin
from langgraph_context.tokens import truncate_text
from tests.conftest import ScriptedChatModel, ai_calls, call


class ToolState(MessagesState, NoteStateMixin):
    """Parent state for driving the tool through ToolNode."""


def _tool_graph(subagent_tool: Any) -> Any:
    graph = StateGraph(ToolState)
    graph.add_node("tools", ToolNode([subagent_tool]))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    return graph.compile()


def _echo_graph(reply: str = "", *, record: list[Any] | None = None) -> Any:
    """A compiled sub-graph that answers with `reply` (or echoes the task)."""

    class SubState(MessagesState, NoteStateMixin):
        pass

    def work(state: SubState) -> dict[str, Any]:
        task = state["messages"][-1].content
        if record is not None:
            record.append([m.content for m in state["messages"]])
        return {
            "messages": [AIMessage(reply or f"did: {task.splitlines()[0]}")],
            "note": {"findings": f"about {task.splitlines()[0]}"},
        }

    graph = StateGraph(SubState)
    graph.add_node("work", work)
    graph.add_edge(START, "work")
    graph.add_edge("work", END)
    return graph.compile()


def test_model_subagent_runs_its_own_tool_loop_in_a_clean_window() -> None:
    """A model sub-agent sees only the task, uses its tools, and returns its last answer."""

    @tool
    def look(path: str) -> str:
        """Read a fake file."""
        return f"contents of {path}"

    sub_model = ScriptedChatModel(
        responses=[ai_calls(call("look", {"path": "a.py"}, "l1")), AIMessage("a.py defines main()")]
    )
    delegate = create_subagent_tool(sub_model, tools=[look], system_prompt="You read code.")
    parent_model = ScriptedChatModel(
        responses=[
            ai_calls(call("delegate_task", {"task": "What does a.py define?"}, "d1")),
            AIMessage("a.py defines main()."),
        ]
    )
    graph = create_context_agent(parent_model, [delegate], checkpointer=InMemorySaver())
    out = graph.invoke(
        {"messages": [HumanMessage("long parent conversation " * 20)]},
        {"configurable": {"thread_id": "p"}},
    )
    first_sub_input = sub_model.seen[0]
    assert [m.type for m in first_sub_input] == ["system", "human"]
    # The sub-agent has tools: the hardening line follows its prompt from the first call.
    assert first_sub_input[0].content.startswith("You read code.")
    assert HARDENING_INSTRUCTION in first_sub_input[0].content
    assert first_sub_input[1].content.startswith("What does a.py define?\n\nWhen you are done")
    assert "long parent conversation" not in str(sub_model.seen)
    result = out["messages"][2]
    assert isinstance(result, ToolMessage)
    assert result.content == "a.py defines main()"
    assert result.status == "success"
    assert len(out["messages"]) == 4


def test_parallel_calls_in_one_turn_through_toolnode_share_notes_without_clobbering() -> None:
    """Three parallel delegations all run, and their same-named notes all land."""
    record: list[Any] = []
    delegate = create_subagent_tool(_echo_graph(record=record), share_notes=True, name="research")
    graph = _tool_graph(delegate)
    turn = ai_calls(
        call("research", {"task": "alpha"}, "r1"),
        call("research", {"task": "beta"}, "r2"),
        call("research", {"task": "gamma"}, "r3"),
    )
    out = graph.invoke(
        {"messages": [HumanMessage("go"), turn], "note": {"research-1/findings": "older"}}
    )
    results = {m.tool_call_id: m.content for m in out["messages"] if isinstance(m, ToolMessage)}
    assert results == {
        "r1": "did: alpha\n\nShared notes: research-1/findings_1",
        "r2": "did: beta\n\nShared notes: research-2/findings",
        "r3": "did: gamma\n\nShared notes: research-3/findings",
    }
    assert out["note"] == {
        "research-1/findings": "older",
        "research-1/findings_1": "about alpha",
        "research-2/findings": "about beta",
        "research-3/findings": "about gamma",
    }
    assert sorted(len(r) for r in record) == [1, 1, 1]


def test_parallel_model_subagents_run_concurrently() -> None:
    """Parallel sub-agent calls overlap in time (ToolNode runs them on threads)."""
    barrier = threading.Barrier(2, timeout=10)

    def wait_step(state: MessagesState) -> dict[str, Any]:
        barrier.wait()  # both sub-runs must be inside at once, or this times out
        return {"messages": [AIMessage("met")]}

    sub = StateGraph(MessagesState)
    sub.add_node("wait", wait_step)
    sub.add_edge(START, "wait")
    sub.add_edge("wait", END)
    graph = _tool_graph(create_subagent_tool(sub.compile()))
    turn = ai_calls(
        call("delegate_task", {"task": "a"}, "x"), call("delegate_task", {"task": "b"}, "y")
    )
    out = graph.invoke({"messages": [turn]})
    assert [m.content for m in out["messages"][1:]] == ["met", "met"]


async def test_async_parallel_delegation() -> None:
    """The async path runs parallel delegations and returns each report."""
    graph = _tool_graph(create_subagent_tool(_echo_graph()))
    turn = ai_calls(
        call("delegate_task", {"task": "one"}, "a"), call("delegate_task", {"task": "two"}, "b")
    )
    out = await graph.ainvoke({"messages": [turn]})
    assert [m.content for m in out["messages"][1:]] == ["did: one", "did: two"]


def test_single_call_notes_use_the_tool_name_prefix() -> None:
    """A lone call shares notes under '<tool>/<note>'."""
    graph = _tool_graph(create_subagent_tool(_echo_graph(), share_notes=True))
    out = graph.invoke({"messages": [ai_calls(call("delegate_task", {"task": "x"}, "c"))]})
    assert out["note"] == {"delegate_task/findings": "about x"}


def test_notes_are_not_shared_by_default() -> None:
    """Without share_notes the parent's notes are untouched."""
    graph = _tool_graph(create_subagent_tool(_echo_graph()))
    out = graph.invoke(
        {"messages": [ai_calls(call("delegate_task", {"task": "x"}, "c"))], "note": {"a": "1"}}
    )
    assert out["note"] == {"a": "1"}


def test_long_report_is_cut_to_the_token_cap() -> None:
    """A report over the cap comes back cut, with the marker, within the cap."""
    graph = _tool_graph(
        create_subagent_tool(_echo_graph("word " * 500), max_result_tokens=50, token_counter=len)
    )
    out = graph.invoke({"messages": [ai_calls(call("delegate_task", {"task": "x"}, "c"))]})
    content = out["messages"][-1].content
    assert len(content) <= 50
    assert content.endswith(TRUNCATION_MARKER)


def test_summarizer_condenses_an_over_long_report() -> None:
    """With a summarizer, an over-long report is summarized before the cap applies."""
    summarizer = ScriptedChatModel(responses=[AIMessage("short summary")])
    graph = _tool_graph(
        create_subagent_tool(
            _echo_graph("detail " * 300), max_result_tokens=40, summarizer=summarizer
        )
    )
    out = graph.invoke({"messages": [ai_calls(call("delegate_task", {"task": "x"}, "c"))]})
    assert out["messages"][-1].content == "short summary"
    assert "at most 40 tokens" in summarizer.seen[0][0].content


async def test_acondense_result_uses_the_summarizer() -> None:
    """The async condenser asks the summarizer and caps its answer."""
    summarizer = ScriptedChatModel(responses=[AIMessage("tiny")])
    assert (
        await acondense_result(
            "x" * 100, max_result_tokens=5, token_counter=len, summarizer=summarizer
        )
        == "tiny"
    )
    assert condense_result("fits", max_result_tokens=10, token_counter=len) == "fits"


def test_subagent_failure_is_an_error_result_and_state_is_unchanged() -> None:
    """A sub-run that raises returns an error ToolMessage; the graph keeps running."""

    def boom(state: MessagesState) -> dict[str, Any]:
        raise RuntimeError("disk on fire")

    sub = StateGraph(MessagesState)
    sub.add_node("boom", boom)
    sub.add_edge(START, "boom")
    sub.add_edge("boom", END)
    graph = _tool_graph(create_subagent_tool(sub.compile(), share_notes=True))
    out = graph.invoke(
        {"messages": [ai_calls(call("delegate_task", {"task": "x"}, "c"))], "note": {"k": "v"}}
    )
    result = out["messages"][-1]
    assert result.status == "error"
    assert (
        result.content
        == "Error: the sub-agent failed (RuntimeError: disk on fire). Nothing changed."
    )
    assert out["note"] == {"k": "v"}


def test_subagent_out_of_steps_is_reported() -> None:
    """A sub-agent that loops past its recursion limit is refused with advice."""

    @tool
    def again() -> str:
        """Loop forever."""
        return "again"

    looping = ScriptedChatModel(responses=[ai_calls(call("again", {}, f"g{i}")) for i in range(20)])
    graph = _tool_graph(create_subagent_tool(looping, tools=[again], recursion_limit=4))
    out = graph.invoke({"messages": [ai_calls(call("delegate_task", {"task": "x"}, "c"))]})
    assert out["messages"][-1].status == "error"
    assert out["messages"][-1].content.startswith(
        "Error: the sub-agent did not finish within 4 steps"
    )


def test_empty_task_and_empty_answer_are_model_errors() -> None:
    """A blank task, or a sub-agent with no final text, comes back as an error result."""
    graph = _tool_graph(create_subagent_tool(_echo_graph()))
    out = graph.invoke({"messages": [ai_calls(call("delegate_task", {"task": "  "}, "c"))]})
    assert out["messages"][-1].content == "Error: task is empty; describe the task in full."
    silent = ScriptedChatModel(responses=[AIMessage("")])
    graph = _tool_graph(create_subagent_tool(silent))
    out = graph.invoke({"messages": [ai_calls(call("delegate_task", {"task": "x"}, "c"))]})
    assert out["messages"][-1].status == "error"
    assert "finished without an answer" in out["messages"][-1].content


def test_subagent_does_not_see_the_parent_thread_or_checkpointer() -> None:
    """Inside a checkpointed parent, each sub-run gets its own fresh thread."""
    seen_threads: list[str] = []

    def probe(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        seen_threads.append(config["configurable"]["thread_id"])
        return {"messages": [AIMessage(str(len(state["messages"])))]}

    sub = StateGraph(MessagesState)
    sub.add_node("probe", probe)
    sub.add_edge(START, "probe")
    sub.add_edge("probe", END)
    delegate = create_subagent_tool(sub.compile())
    parent = ScriptedChatModel(
        responses=[
            ai_calls(call("delegate_task", {"task": "a"}, "d1")),
            ai_calls(call("delegate_task", {"task": "b"}, "d2")),
            AIMessage("done"),
        ]
    )
    graph = create_context_agent(parent, [delegate], checkpointer=InMemorySaver())
    out = graph.invoke({"messages": [HumanMessage("x")]}, {"configurable": {"thread_id": "parent"}})
    assert seen_threads == ['subagent:["parent", null, "d1"]', 'subagent:["parent", null, "d2"]']
    assert [m.content for m in out["messages"] if isinstance(m, ToolMessage)] == ["1", "1"]
    seen_threads.clear()
    for user in ("ann", "bob"):  # one thread name and call id from two users: two sub-threads
        model = ScriptedChatModel(
            responses=[ai_calls(call("delegate_task", {"task": "a"}, "d1")), AIMessage("done")]
        )
        create_context_agent(model, [delegate], checkpointer=InMemorySaver()).invoke(
            {"messages": [HumanMessage("x")]},
            {"configurable": {"thread_id": "parent", "user_id": user}},
        )
    assert seen_threads == ['subagent:["parent", "ann", "d1"]', 'subagent:["parent", "bob", "d1"]']


def test_construction_errors() -> None:
    """Bad arguments raise at construction with the parameter named."""
    model = ScriptedChatModel(responses=[])
    with pytest.raises(TypeError, match="uncompiled StateGraph"):
        create_subagent_tool(StateGraph(MessagesState))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="agent must be a chat model, a model factory or a"):
        create_subagent_tool(object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tools and system_prompt only apply"):
        create_subagent_tool(_echo_graph(), system_prompt="x")
    with pytest.raises(ValueError, match="max_result_tokens must be a positive int, got 0"):
        create_subagent_tool(model, max_result_tokens=0)
    with pytest.raises(ValueError, match="recursion_limit must be a positive int"):
        create_subagent_tool(model, recursion_limit=0)
    with pytest.raises(ValueError, match="name must be"):
        create_subagent_tool(model, name="bad name")
    with pytest.raises(ValueError, match="max_text_tokens must be >= 0"):
        truncate_text("x", -1, marker=TRUNCATION_MARKER)
    with pytest.raises(ValueError, match="max_result_tokens must be a positive int"):
        condense_result("x", max_result_tokens=0)


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=300), cap=st.integers(min_value=0, max_value=120))
def test_truncate_to_tokens_never_exceeds_the_cap(text: str, cap: int) -> None:
    """Property: the cut text fits the cap, and a text that fits is returned unchanged."""
    out = truncate_text(text, cap, marker=TRUNCATION_MARKER)
    from langgraph_context.tokens import count_tokens

    assert count_tokens(out) <= cap
    if count_tokens(text) <= cap:
        assert out == text


def test_model_factory_subagent_resolves_its_model_from_the_run_config() -> None:
    """A factory sub-agent builds its model from the parent's configurable values."""
    from langgraph_context.cli.models import register_model_factory, resolve_chat_model

    register_model_factory(
        "subagent-test",
        lambda config: ScriptedChatModel(
            responses=[AIMessage(f"answer for {config['configurable']['who']}")]
        ),
    )
    graph = _tool_graph(create_subagent_tool(resolve_chat_model))
    out = graph.invoke(
        {"messages": [ai_calls(call("delegate_task", {"task": "x"}, "c"))]},
        {"configurable": {"model_factory": "subagent-test", "who": "ann"}},
    )
    assert out["messages"][-1].content == "answer for ann"


async def test_failing_summarizer_falls_back_to_cutting() -> None:
    """A summarizer error never loses the report: it is cut to the cap instead."""

    class Broken(ScriptedChatModel):
        def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("summarizer down")

    broken = Broken(responses=[])
    text = "x" * 100
    assert condense_result(
        text, max_result_tokens=60, token_counter=len, summarizer=broken
    ).endswith(TRUNCATION_MARKER)
    cut = await acondense_result(text, max_result_tokens=60, token_counter=len, summarizer=broken)
    assert len(cut) <= 60
    assert cut.startswith("xxxx")
