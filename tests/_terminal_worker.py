"""One turn of a terminal graph on a SQLite checkpointer, in its own process (a "worker").

Usage: python _terminal_worker.py <workspace> <db path> <thread> <command>... Runs the
commands as one model turn's tool calls on the thread, prints one JSON line with the
tool messages and the thread's `terminal_cwd`, so a test can check that the next
worker resumes where this one left off.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from langgraph_context.tools.terminal import TerminalStateMixin, create_terminal_tool
from tests.conftest import call


class State(MessagesState, TerminalStateMixin):
    """Messages plus the terminal's directory."""


def run_turn(workspace: str, db: str, thread: str, commands: list[str]) -> dict[str, Any]:
    """Run `commands` as one turn on `thread`; return the tool outputs and the directory."""
    graph = StateGraph(State)
    graph.add_node("tools", ToolNode([create_terminal_tool(workspace, timeout=10)]))
    graph.add_edge(START, "tools")
    calls = [call("terminal", {"command": c}, f"{thread}-{i}") for i, c in enumerate(commands)]
    with SqliteSaver.from_conn_string(db) as saver:
        app = graph.compile(checkpointer=saver)
        out = app.invoke(
            {"messages": [AIMessage("", tool_calls=calls)]},
            {"configurable": {"thread_id": thread}},
        )
    new = [m for m in out["messages"] if isinstance(m, ToolMessage)][-len(commands) :]
    return {"outputs": [m.content for m in new], "cwd": out["terminal_cwd"]}


if __name__ == "__main__":
    print(json.dumps(run_turn(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])))
