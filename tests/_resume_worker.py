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

from langgraph_context.agents import create_context_agent
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
        graph = create_context_agent(model, system_prompt="You maintain a repo.").compile(
            checkpointer=saver
        )
        out = graph.invoke(
            {"messages": [HumanMessage(question)]}, {"configurable": {"thread_id": "resume"}}
        )
    return {
        "plan": out["plan"],
        "note": out["note"],
        "messages": len(out["messages"]),
        "first_system": model.seen[0][0].content,
    }


if __name__ == "__main__":
    kind, db_path, turn_text = sys.argv[1:4]
    result = run_context(db_path, int(turn_text)) if kind == "context" else {}
    print(json.dumps(result))
