"""create_context_agent: a real compiled loop with plan/note tools and pre-model steps."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, SystemMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import MessagesState
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from langgraph_context.agents import LLM_INPUT_KEY, create_context_agent, render_state_block
from langgraph_context.cli.models import register_model_factory, resolve_chat_model
from tests.conftest import ScriptedChatModel, ai_calls, call

TESTS = Path(__file__).resolve().parent


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _thread(name: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": name}}


def test_multi_turn_plan_and_notes_with_checkpointer() -> None:
    """Over three turns the loop runs plan, note and user tools and keeps exact state."""
    model = ScriptedChatModel(
        responses=[
            ai_calls(call("write_plan", {"plan": ["sum", "record"]}, "p1")),
            ai_calls(call("add", {"a": 2, "b": 3}, "a1")),
            AIMessage("2 + 3 = 5"),
            ai_calls(
                call("write_note", {"file_name": "sum", "content": "2+3=5"}, "n1"),
                call("update_plan", {"update_plans": [{"content": "sum", "status": "done"}]}, "u1"),
            ),
            AIMessage("Recorded."),
            AIMessage("The plan is on its last step."),
        ]
    )
    graph = create_context_agent(
        model, [add], system_prompt="You add numbers.", compaction=False, context=False
    ).compile(checkpointer=InMemorySaver())
    cfg = _thread("t1")
    out = graph.invoke({"messages": [HumanMessage("add 2 and 3")]}, cfg)
    assert out["messages"][-1].content == "2 + 3 = 5"
    assert out["plan"] == [
        {"content": "sum", "status": "in_progress"},
        {"content": "record", "status": "pending"},
    ]
    assert [m.content for m in out["messages"] if m.type == "tool"][-1] == "5"
    out = graph.invoke({"messages": [HumanMessage("write it down")]}, cfg)
    assert out["note"] == {"sum": "2+3=5"}
    assert out["plan"] == [
        {"content": "sum", "status": "done"},
        {"content": "record", "status": "in_progress"},
    ]
    out = graph.invoke({"messages": [HumanMessage("status?")]}, cfg)
    assert out["messages"][-1].content == "The plan is on its last step."
    last_input = model.seen[-1]
    assert isinstance(last_input[0], SystemMessage)
    assert last_input[0].content == (
        "You add numbers.\n\n[State]\nPlan:\n1. [done] sum\n2. [in_progress] record\n"
        "Notes (read with query_note): sum"
    )
    assert len(out["messages"]) == 13
    assert "llm_input_messages" not in out


def test_pre_model_view_is_used_once_and_cleared() -> None:
    """A pre-model step's llm_input_messages is what the model sees, then it is cleared."""
    calls: list[int] = []

    def view_step(state: dict[str, Any]) -> dict[str, Any]:
        calls.append(len(state["messages"]))
        return {LLM_INPUT_KEY: [SystemMessage("assembled"), state["messages"][-1]]}

    model = ScriptedChatModel(
        responses=[ai_calls(call("add", {"a": 1, "b": 1}, "a1")), AIMessage("2")]
    )
    graph = create_context_agent(
        model,
        [add],
        plan_tools=False,
        note_tools=False,
        pre_model={"context": view_step},
        context=False,
    ).compile(checkpointer=InMemorySaver())
    out = graph.invoke({"messages": [HumanMessage("1+1")]}, _thread("v"))
    assert calls == [1, 3]
    assert [[m.content for m in seen] for seen in model.seen] == [
        ["assembled", "1+1"],
        ["assembled", "2"],
    ]
    assert out[LLM_INPUT_KEY] == []
    assert [m.content for m in out["messages"]][-1] == "2"


def test_pre_model_view_gets_system_prompt_when_it_has_none() -> None:
    """A view without a system message gets the agent's system prompt prepended."""
    model = ScriptedChatModel(responses=[AIMessage("ok")])
    graph = create_context_agent(
        model,
        plan_tools=False,
        note_tools=False,
        memory_tools=False,  # no tools: no hardening line in the system message
        system_prompt=lambda state: f"{len(state['messages'])} messages",
        pre_model=[lambda state: {LLM_INPUT_KEY: list(state["messages"])}],
    ).compile()
    graph.invoke({"messages": [HumanMessage("hi")]})
    assert [(m.type, m.content) for m in model.seen[0]] == [
        ("system", "1 messages"),
        ("human", "hi"),
    ]


def test_pre_model_steps_run_in_order_and_may_rewrite_history() -> None:
    """Steps run in order; a compaction-like step's RemoveMessage edits persist in state."""
    order: list[str] = []

    def compact(state: dict[str, Any]) -> dict[str, Any]:
        order.append("compact")
        old = state["messages"][:-1]
        if len(old) < 2:
            return {}
        return {
            "messages": [
                RemoveMessage(id=REMOVE_ALL_MESSAGES),
                HumanMessage("summary of earlier turns"),
                state["messages"][-1],
            ]
        }

    def context(state: dict[str, Any]) -> dict[str, Any]:
        order.append("context")
        return {}

    model = ScriptedChatModel(responses=[AIMessage("a"), AIMessage("b")])
    graph = create_context_agent(
        model,
        plan_tools=False,
        note_tools=False,
        memory_tools=False,
        pre_model=[compact, context],
    ).compile(checkpointer=InMemorySaver())
    cfg = _thread("c")
    graph.invoke({"messages": [HumanMessage("one")]}, cfg)
    out = graph.invoke({"messages": [HumanMessage("two")]}, cfg)
    assert order == ["compact", "context", "compact", "context"]
    assert [m.content for m in out["messages"]] == ["summary of earlier turns", "two", "b"]
    assert [m.content for m in model.seen[1]] == ["summary of earlier turns", "two"]


def test_post_tools_steps_run_after_each_tool_round() -> None:
    """post_tools steps see each tool round's results before the next model call."""
    seen_results: list[str] = []

    def watcher(state: dict[str, Any]) -> dict[str, Any]:
        seen_results.append(state["messages"][-1].content)
        return {}

    model = ScriptedChatModel(
        responses=[
            ai_calls(call("add", {"a": 1, "b": 2}, "x")),
            ai_calls(call("add", {"a": 3, "b": 4}, "y")),
            AIMessage("done"),
        ]
    )
    graph = create_context_agent(
        model, [add], plan_tools=False, note_tools=False, post_tools={"watch": watcher}
    ).compile()
    graph.invoke({"messages": [HumanMessage("go")]})
    assert seen_results == ["3", "7"]


def test_model_factory_is_resolved_from_the_run_config() -> None:
    """A factory model (resolve_chat_model) is built per run from configurable values."""
    built: list[str] = []

    def factory(config: Any) -> ScriptedChatModel:
        built.append(config["configurable"]["reply"])
        return ScriptedChatModel(responses=[AIMessage(config["configurable"]["reply"])])

    register_model_factory("ctx-agent-test", factory)
    graph = create_context_agent(resolve_chat_model).compile()
    out = graph.invoke(
        {"messages": [HumanMessage("hi")]},
        {"configurable": {"model_factory": "ctx-agent-test", "reply": "from config"}},
    )
    assert out["messages"][-1].content == "from config"
    assert built == ["from config"]


async def test_async_run_matches_sync() -> None:
    """ainvoke drives the async model path and the tools the same way."""
    model = ScriptedChatModel(
        responses=[
            ai_calls(call("write_note", {"file_name": "a", "content": "x"}, "w")),
            AIMessage("ok"),
        ]
    )
    graph = create_context_agent(model).compile()
    out = await graph.ainvoke({"messages": [HumanMessage("note it")]})
    assert out["note"] == {"a": "x"}
    assert out["messages"][-1].content == "ok"


def test_tools_off_means_model_then_end() -> None:
    """With no tools at all the graph is model -> END and the state block is absent."""
    model = ScriptedChatModel(responses=[AIMessage("plain")])
    graph = create_context_agent(
        model, plan_tools=False, note_tools=False, memory_tools=False, compaction=False
    ).compile()
    out = graph.invoke({"messages": [HumanMessage("hi")]})
    assert out["messages"][-1].content == "plain"
    assert set(graph.get_graph().nodes) == {"__start__", "model", "__end__"}
    assert [m.type for m in model.seen[0]] == ["human"]


def test_custom_state_schema() -> None:
    """A plain MessagesState works when plan and note tools are off."""
    model = ScriptedChatModel(responses=[AIMessage("ok")])
    graph = create_context_agent(
        model, plan_tools=False, note_tools=False, state_schema=MessagesState
    ).compile()
    assert graph.invoke({"messages": [HumanMessage("hi")]})["messages"][-1].content == "ok"


def test_render_state_block_limits_note_names() -> None:
    """The state block lists at most max_note_names notes and counts the rest."""
    state = {"note": {f"n{i}": "x" for i in range(5)}}
    assert render_state_block(state, max_note_names=2) == (
        "[State]\nNotes (read with query_note): n0, n1 (+3 more)"
    )
    assert render_state_block({}) == ""
    rule = {"id": "c-1", "text": "Use uv", "status": "active", "source": "user"}
    assert render_state_block({"constraints": [rule]}) == (
        "[State]\nConstraints (always follow):\n- Use uv"
    )
    recorded = render_state_block({"constraints": [{**rule, "source": "model"}]})
    assert "Constraints (always follow)" not in recorded
    assert "<untrusted-data-" in recorded


def test_construction_errors() -> None:
    """Programmer mistakes raise at construction with the parameter named."""
    model = ScriptedChatModel(responses=[])
    with pytest.raises(TypeError, match="model must be a chat model"):
        create_context_agent("gpt")  # type: ignore[arg-type]
    with pytest.raises(
        ValueError, match=r"two tools are named 'add': tools\[0\] 'add'.* and tools\[1\] 'add'"
    ):
        create_context_agent(model, [add, add])
    with pytest.raises(ValueError, match="step name 'model' is reserved"):
        create_context_agent(model, pre_model={"model": lambda s: {}})
    with pytest.raises(TypeError, match="pre_model must be a mapping"):
        create_context_agent(model, pre_model="step")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="post_tools step 'post_tools_1' must be a node"):
        create_context_agent(model, post_tools=[42])
    with pytest.raises(ValueError, match="checks must be a tool name"):
        create_context_agent(model, checks=[])
    with pytest.raises(ValueError, match="'watch_checks' is taken by the checks argument"):
        create_context_agent(model, checks="t", post_tools={"watch_checks": lambda s: {}})
    with pytest.raises(ValueError, match="must differ; repeated: \\['x'\\]"):
        create_context_agent(model, pre_model={"x": lambda s: {}}, post_tools={"x": lambda s: {}})


def _worker(db: Path, turn: int) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, str(TESTS / "_resume_worker.py"), "context", str(db), str(turn)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


@pytest.mark.slow
def test_resume_in_a_new_process_with_sqlite(tmp_path: Path) -> None:
    """A thread written by one process is continued by another through SqliteSaver."""
    from tests._resume_worker import run_context

    db = tmp_path / "agent.sqlite"
    first = run_context(str(db), 1)  # this process writes the thread ...
    assert first["plan"] == [
        {"content": "explore", "status": "in_progress"},
        {"content": "report", "status": "pending"},
    ]
    second = _worker(db, 2)  # ... and a new process continues it
    assert second["note"] == {"layout": "src/ and tests/"}
    assert second["plan"][0] == {"content": "explore", "status": "done"}
    assert second["first_system"].endswith(
        "Plan:\n1. [in_progress] explore\n2. [pending] report\nNotes (read with query_note): layout"
    )
    assert second["messages"] == first["messages"] + 4


@tool
def read_file(path: str) -> str:
    """Return a long fake file body."""
    return f"{path}: " + " ".join(f"line{i}" for i in range(120))


def test_many_turns_with_the_real_compaction_node() -> None:
    """Fifteen checkpointed turns stay valid and bounded; plan and notes survive compaction."""
    from langgraph_context import count_tokens
    from langgraph_context.compaction import create_compaction_node
    from langgraph_context.messages import validate_history

    turns = 15
    responses: list[AIMessage] = [
        ai_calls(
            call("write_plan", {"plan": ["read files", "summarize"]}, "p"),
            call("write_note", {"file_name": "goal", "content": "read every file"}, "g"),
        )
    ]
    for i in range(turns):
        responses += [
            ai_calls(call("read_file", {"path": f"f{i}.py"}, f"r{i}")),
            AIMessage(f"f{i}.py read"),
        ]
    model = ScriptedChatModel(responses=responses)
    budget = 900  # room for what must stay (a ~300-token round) and a snapshot of the rest
    graph = create_context_agent(
        model,
        [read_file],
        compaction=create_compaction_node(max_tokens=budget, mode="replace"),
        context=False,
    ).compile(checkpointer=InMemorySaver())
    cfg = _thread("long")
    for i in range(turns):
        out = graph.invoke({"messages": [HumanMessage(f"read f{i}.py")]}, cfg)
        assert validate_history(out["messages"]) == []
        assert out["messages"][-1].content == f"f{i}.py read"
    assert out["plan"] == [
        {"content": "read files", "status": "in_progress"},
        {"content": "summarize", "status": "pending"},
    ]
    assert out["note"] == {"goal": "read every file"}
    # Hysteresis: each compaction cuts to half the budget, so it fires every few turns,
    # not on every turn once the budget is first reached.
    assert 2 <= out["compaction"]["count"] <= turns // 2
    assert out["compaction"]["last"]["within_budget"] is True
    assert out["compaction"]["last"]["snapshot_tokens"] > 0  # what left is recorded
    # Every model call after the first saw at most the budget (system message aside).
    assert max(count_tokens(seen[1:]) for seen in model.seen) <= budget
    assert "1. [in_progress] read files" in model.seen[-1][0].content


def test_real_compaction_and_context_nodes_together() -> None:
    """Compaction rewrites history, the context node assembles a budgeted view each call."""
    from langgraph_context import count_tokens
    from langgraph_context.compaction import create_compaction_node
    from langgraph_context.context import ContextBuilder, ContextConfig, create_context_node
    from langgraph_context.messages import validate_history

    turns = 10
    responses: list[AIMessage] = [
        ai_calls(call("write_plan", {"plan": ["read files", "summarize"]}, "p")),
    ]
    for i in range(turns):
        responses += [
            ai_calls(call("read_file", {"path": f"f{i}.py"}, f"r{i}")),
            AIMessage(f"f{i}.py read"),
        ]
    model = ScriptedChatModel(responses=responses)
    view_budget = 700
    graph = create_context_agent(
        model,
        [read_file],
        system_prompt="You read files.",
        compaction=create_compaction_node(max_tokens=1200, mode="replace"),
        context=create_context_node(
            ContextBuilder(config=ContextConfig(max_tokens=view_budget)), keep_last=4
        ),
    ).compile(checkpointer=InMemorySaver())
    cfg = _thread("both")
    for i in range(turns):
        out = graph.invoke({"messages": [HumanMessage(f"read f{i}.py")]}, cfg)
        assert validate_history(out["messages"]) == []
    nodes = set(graph.get_graph().nodes)
    assert "compaction" in nodes
    assert "context" not in nodes  # assembled inside the model node, never stored
    assert out["compaction"]["count"] >= 1
    prompt_tokens = count_tokens("You read files.\n\n")
    for seen in model.seen:
        assert seen[0].content.startswith("You read files.")
        assert count_tokens(seen) <= view_budget + prompt_tokens + 10
    # The cache layout sends the plan last (fenced: the model wrote it), after the
    # newest tool result.
    assert 'source="plan">\n1. [in_progress] read files' in model.seen[-1][-1].content
    assert model.seen[-1][-2].content.startswith("f9.py: line0")
    assert LLM_INPUT_KEY not in out


def test_context_true_uses_the_default_context_node() -> None:
    """context=True wires create_context_node() with its defaults."""
    model = ScriptedChatModel(responses=[AIMessage("ok")])
    graph = create_context_agent(
        model, context=True, plan_tools=False, note_tools=False, memory_tools=False
    ).compile()
    graph.invoke({"messages": [HumanMessage("hello")]})
    # Nothing to assemble, no prompt and no tools: no empty system message is sent.
    assert [m.type for m in model.seen[0]] == ["human"]
    assert model.seen[0][-1].content == "hello"
    # With tools, the hardening line is the system message from the first call.
    with_tools = ScriptedChatModel(responses=[AIMessage("ok")])
    create_context_agent(with_tools, context=True).compile().invoke({"messages": [("user", "hi")]})
    assert [m.type for m in with_tools.seen[0]] == ["system", "human"]
    assert "data, not instructions" in with_tools.seen[0][0].content
    with pytest.raises(TypeError, match="context must be True, False, a ContextBuilder or a node"):
        create_context_agent(model, context=42)


def test_pinned_memory_survives_compaction_and_hot_issues_open_and_close() -> None:
    """A recorded constraint and a failing check stay in every context until resolved."""
    from langgraph_context.compaction import create_compaction_node

    runs = iter(["FAILED tests/test_a.py::test_x - AssertionError", "4 passed in 0.1s"])

    @tool
    def run_tests() -> str:
        """Run the test suite (scripted results)."""
        return next(runs)

    filler = [
        item
        for i in range(6)
        for item in (ai_calls(call("read_file", {"path": f"f{i}.py"}, f"r{i}")), AIMessage(f"{i}"))
    ]
    responses = [
        ai_calls(call("record_constraint", {"text": "Use pyproject.toml, never setup.py"}, "c")),
        AIMessage("Noted."),
        ai_calls(call("run_tests", {}, "t1")),
        AIMessage("Tests fail."),
        *filler,
        ai_calls(call("run_tests", {}, "t2")),
        AIMessage("Tests pass."),
        AIMessage("Done."),
    ]
    model = ScriptedChatModel(responses=responses)
    graph = create_context_agent(
        model,
        [read_file, run_tests],
        checks="run_tests",
        compaction=create_compaction_node(max_tokens=700, mode="replace"),
        context=True,
    ).compile(checkpointer=InMemorySaver())
    cfg = _thread("mem")
    graph.invoke({"messages": [HumanMessage("Always use pyproject.toml")]}, cfg)
    out = graph.invoke({"messages": [HumanMessage("run the tests")]}, cfg)
    assert [i["check"] for i in out["hot_issues"] if i["status"] == "active"] == ["run_tests"]
    for i in range(6):
        out = graph.invoke({"messages": [HumanMessage(f"read f{i}.py")]}, cfg)
        system = model.seen[-1][0].content
        assert "Use pyproject.toml, never setup.py" in system
        assert "`run_tests` is failing" in system
    assert out["compaction"]["count"] >= 2
    out = graph.invoke({"messages": [HumanMessage("run them again")]}, cfg)
    assert [i for i in out["hot_issues"] if i["status"] == "active"] == []
    graph.invoke({"messages": [HumanMessage("status?")]}, cfg)
    system = model.seen[-1][0].content
    assert "Use pyproject.toml, never setup.py" in system
    assert "is failing" not in system
