"""Run one turn of a prebuilt graph on a SQLite checkpoint, in its own process.

Usage: python _resume_worker.py <graph> <db path> <turn>. Prints one JSON line with the
thread's state after the turn, so a test can check that a later process resumes it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from langgraph_context.agents import create_codebase_maintainer_graph, create_context_agent
from langgraph_context.notebook import FileNotebookStore
from tests.conftest import ScriptedChatModel, ai_calls, call

CONTEXT_TURNS: dict[int, tuple[str, list[AIMessage]]] = {
    1: (
        "Explore the repository",
        [
            ai_calls(call("write_plan", {"plan": ["explore", "report"]}, "p1")),
            ai_calls(
                call("write_note", {"file_name": "layout", "content": "src/ and tests/"}, "n1")
            ),
            AIMessage("Explored."),
        ],
    ),
    2: (
        "Continue",
        [
            ai_calls(
                call(
                    "update_plan",
                    {"update_plans": [{"content": "explore", "status": "done"}]},
                    "u1",
                )
            ),
            AIMessage("Next: report."),
        ],
    ),
}


def run_context(db: str, turn: int) -> dict[str, Any]:
    """Run one turn of create_context_agent and return a summary of the thread."""
    question, responses = CONTEXT_TURNS[turn]
    model = ScriptedChatModel(responses=responses)
    with SqliteSaver.from_conn_string(db) as saver:
        graph = create_context_agent(
            model, system_prompt="You maintain a repo.", context=False, checkpointer=saver
        )
        out = graph.invoke(
            {"messages": [HumanMessage(question)]}, {"configurable": {"thread_id": "resume"}}
        )
    return {
        "plan": out["plan"],
        "note": out["note"],
        "messages": len(out["messages"]),
        "first_system": model.seen[0][0].content,
        "first_tail": model.seen[0][-1].content,
    }


MAINTAINER_TURNS: dict[int, tuple[dict[str, Any], list[AIMessage]]] = {
    1: (
        {"mode": "analyze", "messages": [HumanMessage("Find problems in the views")]},
        [
            ai_calls(
                call("terminal", {"command": "grep -n TODO app/views.py"}, "t1"),
                call("write_plan", {"plan": ["read views", "fix escaping"]}, "p1"),
            ),
            ai_calls(
                call(
                    "notebook_create",
                    {
                        "title": "Unescaped name",
                        "content": "app/views.py:5 TODO: escape the name",
                        "note_type": "blocker",
                    },
                    "n1",
                )
            ),
            AIMessage("Found one blocker."),
        ],
    ),
    2: (
        {"messages": [HumanMessage("Where were we?")]},
        [
            ai_calls(
                call(
                    "update_plan",
                    {"update_plans": [{"content": "read views", "status": "done"}]},
                    "u1",
                )
            ),
            AIMessage("Views read; next is the escaping fix."),
        ],
    ),
}


def run_maintainer(db: str, turn: int, workspace: str, notes: str) -> dict[str, Any]:
    """Run one turn of the codebase maintainer and return a summary of the thread."""
    inputs, responses = MAINTAINER_TURNS[turn]
    model = ScriptedChatModel(responses=responses)
    with SqliteSaver.from_conn_string(db) as saver:
        graph = create_codebase_maintainer_graph(
            model, workspace=workspace, notes=notes, checkpointer=saver
        )
        out = graph.invoke(inputs, {"configurable": {"thread_id": "maintainer"}})
    return {
        "plan": out["plan"],
        "mode": out.get("mode"),
        "messages": len(out["messages"]),
        "first_system": model.seen[0][0].content,
        "first_tail": model.seen[0][-1].content,
        "notes": [[n.type, n.title] for n in FileNotebookStore(notes).list()],
    }


if __name__ == "__main__":
    kind, db_path, turn_text, *rest = sys.argv[1:]
    if kind == "context":
        result = run_context(db_path, int(turn_text))
    else:
        result = run_maintainer(db_path, int(turn_text), rest[0], rest[1])
    print(json.dumps(result))
