"""One terminal tool served to many LangGraph threads: each thread has its own `cd`."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from langgraph_context.tools.terminal import create_terminal_tool
from tests.conftest import call

# Each thread's commands, in order; the agent waits at the named step for the other one.
SCRIPTS = {"a": ["cd src", "pwd", "ls"], "b": ["pwd", "cd pkg", "pwd", "ls"]}
_WAIT = 10.0


def _graph(ws: Path, steps: dict[tuple[str, int], threading.Event]) -> Any:
    tool = create_terminal_tool(ws, timeout=5)

    def agent(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        who = config["configurable"]["thread_id"]
        done = sum(isinstance(m, ToolMessage) for m in state["messages"])
        steps[(who, done)].set()
        # Interleave: `a` cds before `b` asks pwd; `b` cds before `a` asks pwd again.
        if (who, done) == ("b", 0):
            assert steps[("a", 1)].wait(_WAIT)
        if (who, done) == ("a", 1):
            assert steps[("b", 2)].wait(_WAIT)
        script = SCRIPTS[who]
        if done == len(script):
            return {"messages": [AIMessage("done")]}
        command = script[done]
        return {
            "messages": [
                AIMessage("", tool_calls=[call("terminal", {"command": command}, f"{who}{done}")])
            ]
        }

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([tool]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=InMemorySaver())


def test_two_threads_running_at_once_never_share_a_working_directory(tmp_path: Path) -> None:
    """Thread a's `cd src` never moves thread b, and b's `cd pkg` (from its root) fails alone."""
    ws = tmp_path / "ws"
    (ws / "src" / "pkg").mkdir(parents=True)
    (ws / "src" / "main.py").write_text("x = 1\n")
    (ws / "top.txt").write_text("top\n")
    steps = {(w, i): threading.Event() for w in SCRIPTS for i in range(len(SCRIPTS[w]) + 1)}
    app = _graph(ws, steps)
    root = ws.resolve()

    def converse(who: str) -> list[ToolMessage]:
        config = {"configurable": {"thread_id": who}}
        out = app.invoke({"messages": [("user", "explore")]}, config)
        return [m for m in out["messages"] if isinstance(m, ToolMessage)]

    with ThreadPoolExecutor(max_workers=2) as pool:
        a, b = pool.map(converse, ["a", "b"])
    assert [m.content for m in a] == [f"{root / 'src'}\n", f"{root / 'src'}\n", "main.py\npkg\n"]
    assert b[0].content == f"{root}\n"  # a had already run `cd src`
    assert b[1].status == "error"  # `pkg` is not under b's directory, the root
    assert [m.content for m in b[2:]] == [f"{root}\n", "src\ntop.txt\n"]
    terminal = create_terminal_tool(ws).metadata["terminal"]  # type: ignore[index]
    assert terminal.cwd == root


def test_terminal_sessions_are_independent_and_bounded(tmp_path: Path) -> None:
    """`Terminal.run(session=...)` keeps one directory per session; the default is separate."""
    (tmp_path / "d").mkdir()
    terminal = create_terminal_tool(tmp_path).metadata["terminal"]  # type: ignore[index]
    assert terminal.run("cd d", session="x").ok
    assert terminal.cwd_of("x") == tmp_path.resolve() / "d"
    assert terminal.cwd_of("y") == tmp_path.resolve()
    assert terminal.run("pwd").output == f"{tmp_path.resolve()}\n"
    assert terminal.run("pwd", session="x").output == f"{tmp_path.resolve() / 'd'}\n"
