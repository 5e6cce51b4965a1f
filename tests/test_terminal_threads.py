"""One terminal tool served to many LangGraph threads and workers.

Each thread's working directory is its own checkpointed state (`terminal_cwd`), so it
survives a new process on the same checkpointer; commands of different threads run
at once, commands of one thread one at a time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from langgraph_context.tools.terminal import (
    TerminalStateMixin,
    create_terminal_tool,
    keep_latest_cwd,
)
from tests.conftest import call

# Each thread's commands, in order; the agent waits at the named step for the other one.
SCRIPTS = {"a": ["cd src", "pwd", "ls"], "b": ["pwd", "cd pkg", "pwd", "ls"]}
_WAIT = 30.0
WORKER = Path(__file__).with_name("_terminal_worker.py")


class State(MessagesState, TerminalStateMixin):
    """Messages plus the terminal's directory."""


def _graph(ws: Path, steps: dict[tuple[str, int], threading.Event]) -> Any:
    tool = create_terminal_tool(ws, timeout=5)

    def agent(state: State, config: RunnableConfig) -> dict[str, Any]:
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

    graph = StateGraph(State)
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

    def converse(who: str) -> tuple[list[ToolMessage], str]:
        config = {"configurable": {"thread_id": who}}
        out = app.invoke({"messages": [("user", "explore")]}, config)
        return [m for m in out["messages"] if isinstance(m, ToolMessage)], out["terminal_cwd"]

    with ThreadPoolExecutor(max_workers=2) as pool:
        (a, a_cwd), (b, b_cwd) = pool.map(converse, ["a", "b"])
    assert [m.content for m in a] == [f"{root / 'src'}\n", f"{root / 'src'}\n", "main.py\npkg\n"]
    assert b[0].content == f"{root}\n"  # a had already run `cd src`
    assert b[1].status == "error"  # `pkg` is not under b's directory, the root
    assert [m.content for m in b[2:]] == [f"{root}\n", "src\ntop.txt\n"]
    assert (a_cwd, b_cwd) == ("src", "")
    assert app.get_state({"configurable": {"thread_id": "a"}}).values["terminal_cwd"] == "src"


def test_terminal_sessions_are_independent_and_bounded(tmp_path: Path) -> None:
    """`Terminal.run(session=...)` keeps one directory per session; the default is separate."""
    (tmp_path / "d").mkdir()
    terminal = create_terminal_tool(tmp_path).metadata["terminal"]  # type: ignore[index]
    assert terminal.run("cd d", session="x").ok
    assert terminal.cwd_of("x") == tmp_path.resolve() / "d"
    assert terminal.cwd_of("y") == tmp_path.resolve()
    assert terminal.run("pwd").output == f"{tmp_path.resolve()}\n"
    assert terminal.run("pwd", session="x").output == f"{tmp_path.resolve() / 'd'}\n"
    assert terminal.run("pwd", cwd="d").output == f"{tmp_path.resolve() / 'd'}\n"


def test_cwd_reducer_keeps_the_latest_and_is_none_safe() -> None:
    """The latest write wins; None on either side keeps the other; both None is the root."""
    assert keep_latest_cwd("a", "b") == "b"
    assert keep_latest_cwd("a", None) == "a"
    assert keep_latest_cwd(None, "b") == "b"
    assert keep_latest_cwd(None, None) == ""


def test_a_graph_without_the_state_key_refuses_cd_loudly(tmp_path: Path) -> None:
    """On a state without `terminal_cwd`, `cd` is an error saying why; others run at the root."""
    (tmp_path / "d").mkdir()
    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode([create_terminal_tool(tmp_path)]))
    graph.add_edge(START, "tools")
    calls = [call("terminal", {"command": "cd d"}, "c"), call("terminal", {"command": "pwd"}, "p")]
    out = graph.compile().invoke({"messages": [AIMessage("", tool_calls=calls)]})
    cd, pwd = out["messages"][-2:]
    assert cd.status == "error"
    assert "has no 'terminal_cwd' key" in cd.content
    assert "TerminalStateMixin" in cd.content
    assert (pwd.status, pwd.content) == ("success", f"{tmp_path.resolve()}\n")


def test_a_tampered_state_directory_falls_back_to_the_root(tmp_path: Path) -> None:
    """A state directory outside the workspace or gone is refused and reset to the root."""
    (tmp_path / "d").mkdir()
    terminal = create_terminal_tool(tmp_path).metadata["terminal"]  # type: ignore[index]
    for bad in ("../..", "missing", "bad\\escape"):
        result = terminal.run("pwd", cwd=bad)
        assert result.refused is not None
        assert "back at the root" in result.refused
        assert result.relative_cwd == ""


def _worker(ws: Path, db: Path, thread: str, *commands: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(WORKER), str(ws), str(db), thread, *commands],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_cd_survives_a_new_worker_process_on_one_checkpointer(tmp_path: Path) -> None:
    """Worker 1 runs `cd src`; worker 2, a new process on the same SQLite file, is still there."""
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "main.py").write_text("x = 1\n")
    db = tmp_path / "threads.sqlite"
    first = _worker(ws, db, "t1", "cd src")
    assert first["cwd"] == "src"
    second = _worker(ws, db, "t1", "pwd", "ls")
    assert second == {"outputs": [f"{ws.resolve() / 'src'}\n", "main.py\n"], "cwd": "src"}
    other = _worker(ws, db, "t2", "pwd")  # another thread starts at the root
    assert other["outputs"] == [f"{ws.resolve()}\n"]


def _wait_for_reader(fifo: Path) -> int:
    """Open `fifo` for writing as soon as a reader has it open (the command is running)."""
    deadline = time.monotonic() + _WAIT
    while True:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: no reader yet
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def test_a_slow_command_of_one_thread_does_not_delay_another(tmp_path: Path) -> None:
    """While thread a's command blocks on a FIFO, thread b's command runs and returns."""
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "a.txt").write_text("a\n")
    tool = create_terminal_tool(tmp_path, timeout=60)
    graph = StateGraph(State)
    graph.add_node("tools", ToolNode([tool]))
    graph.add_edge(START, "tools")
    app = graph.compile(checkpointer=InMemorySaver())

    def turn(thread: str, command: str) -> str:
        calls = [call("terminal", {"command": command}, f"{thread}-1")]
        config = {"configurable": {"thread_id": thread}}
        out = app.invoke({"messages": [AIMessage("", tool_calls=calls)]}, config)
        return str(out["messages"][-1].content)

    with ThreadPoolExecutor(max_workers=2) as pool:
        slow = pool.submit(turn, "a", "cat fifo")  # blocks until the FIFO is written
        writer = _wait_for_reader(tmp_path / "fifo")  # a's command is running now
        try:
            # With one lock for every thread, b would wait for a's 60 s timeout.
            assert pool.submit(turn, "b", "cat a.txt").result(timeout=_WAIT) == "a\n"
            assert not slow.done()
            os.write(writer, b"from the fifo\n")
        finally:
            os.close(writer)
        assert slow.result(timeout=_WAIT) == "from the fifo\n"


def test_prebuilt_agent_keeps_cd_in_its_checkpointed_state(tmp_path: Path) -> None:
    """`create_context_agent` carries `terminal_cwd` (not an input) and keeps `cd` across turns."""
    from langgraph_context import create_context_agent
    from langgraph_context.testing import ScriptedChatModel

    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "main.py").write_text("x = 1\n")
    model = ScriptedChatModel(
        responses=[
            AIMessage("", tool_calls=[call("terminal", {"command": "cd src"}, "c1")]),
            AIMessage("moved"),
            AIMessage("", tool_calls=[call("terminal", {"command": "ls"}, "c2")]),
            AIMessage("listed"),
        ]
    )
    agent = create_context_agent(
        model, [create_terminal_tool(ws, timeout=5)], checkpointer=InMemorySaver()
    )
    assert "terminal_cwd" not in agent.get_input_jsonschema()["properties"]
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}
    first = agent.invoke({"messages": [("user", "go to src")]}, config)
    assert first["terminal_cwd"] == "src"
    second = agent.invoke({"messages": [("user", "list it")]}, config)
    listing = [m for m in second["messages"] if isinstance(m, ToolMessage)][-1]
    assert listing.content == "main.py\n"
