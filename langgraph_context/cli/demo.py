"""`langgraph-context demo`: the offline showcase."""

from __future__ import annotations

from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from langgraph_context.state import NoteStateMixin, PlanStateMixin
from langgraph_context.tokens import count_tokens, truncate_messages
from langgraph_context.tools import (
    create_update_plan_tool,
    create_write_note_tool,
    create_write_plan_tool,
    render_plan,
)

__all__ = ["run_demo"]


class _DemoState(MessagesState, PlanStateMixin, NoteStateMixin):
    pass


def run_demo(*, workspace: Path) -> int:
    """Run the offline showcase on `workspace`; return the exit code."""
    workspace = workspace.resolve()
    print("langgraph-context demo: no LLM is used; a scripted policy drives a real LangGraph.")
    files = sorted(p for p in workspace.rglob("*.py") if ".venv" not in p.parts)[:200]
    sizes = {
        str(p.relative_to(workspace)): count_tokens(p.read_text(errors="replace")) for p in files
    }
    graph = StateGraph(_DemoState)
    graph.add_node(
        "tools",
        ToolNode([create_write_plan_tool(), create_update_plan_tool(), create_write_note_tool()]),
    )
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    app = graph.compile()
    biggest = sorted(sizes.items(), key=lambda kv: -kv[1])[:5]
    turn = AIMessage(
        "",
        tool_calls=[
            {"name": "write_plan", "args": {"plan": ["measure files", "report"]}, "id": "p"},
            {
                "name": "write_note",
                "args": {
                    "file_name": "largest_files",
                    "content": "\n".join(f"{name}: {n} tokens" for name, n in biggest),
                },
                "id": "n",
            },
        ],
    )
    state = app.invoke({"messages": [HumanMessage("Which files are largest?"), turn]})
    print(f"Counted {sum(sizes.values()):,} tokens in {len(sizes)} Python files under {workspace}")
    print("Plan:\n" + render_plan(state["plan"]))
    print("Note largest_files:\n" + state["note"]["largest_files"])
    kept = truncate_messages(state["messages"], keep=2)
    print(f"truncate_messages(keep=2) kept {len(kept)} of {len(state['messages'])} messages")
    return 0
