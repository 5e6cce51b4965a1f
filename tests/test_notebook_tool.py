"""The book-style NotebookTool facade, the note tools in a real graph, and note packets."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.store.memory import InMemoryStore

from langgraph_context.messages import validate_history
from langgraph_context.notebook import (
    FileNotebookStore,
    LangGraphNotebookStore,
    Note,
    NotebookError,
)
from langgraph_context.notebook.packets import notebook_packets
from langgraph_context.notebook.tool import NOTEBOOK_ACTIONS, NotebookTool, create_notebook_tools
from tests.conftest import ScriptedChatModel, ai_calls, call


def test_book_style_run_returns_ids_dicts_and_lists(tmp_path: Path) -> None:
    """`run({"action": ...})` answers like the book: id, dicts, lists and messages."""
    notes = NotebookTool(workspace=tmp_path)
    note_id = notes.run(
        {
            "action": "create",
            "title": "Refactor - Phase 1",
            "content": "## Status\nmodels done",
            "note_type": "task_state",
            "tags": ["refactoring", "phase1"],
        }
    )
    assert isinstance(note_id, str)
    assert note_id.startswith("note_")
    read = notes.run({"action": "read", "note_id": note_id})
    assert read["content"] == "## Status\nmodels done"
    assert read["metadata"]["tags"] == ["refactoring", "phase1"]
    assert notes.run({"action": "update", "note_id": note_id, "title": "Phase 1 (done)"}) == (
        "Note updated: Phase 1 (done)"
    )
    hits = notes.run({"action": "search", "query": "models", "limit": 3})
    assert [h["note_id"] for h in hits] == [note_id]
    assert hits[0]["score"] > 0
    assert set(hits[0]) == {"note_id", "title", "type", "tags", "content", "updated_at", "score"}
    listed = notes.run({"action": "list", "note_type": "task_state"})
    assert [m["id"] for m in listed] == [note_id]
    assert notes.run({"action": "summary"})["total_notes"] == 1
    assert notes.run({"action": "delete", "note_id": note_id}) == "Note deleted: Phase 1 (done)"
    assert notes.run({"action": "list"}) == []


def test_book_style_errors_raise(tmp_path: Path) -> None:
    """Unknown actions and refused requests raise NotebookError; bad construction raises."""
    notes = NotebookTool(workspace=tmp_path)
    with pytest.raises(NotebookError, match="Unknown action 'rename'; use one of: create"):
        notes.run({"action": "rename"})
    with pytest.raises(NotebookError, match="does not exist"):
        notes.run({"action": "read", "note_id": "note_x"})
    with pytest.raises(ValueError, match="exactly one of workspace="):
        NotebookTool()
    with pytest.raises(ValueError, match="exactly one of workspace="):
        NotebookTool(workspace=tmp_path, store=FileNotebookStore(tmp_path))


def test_facade_accepts_any_note_store() -> None:
    """NotebookTool runs over a LangGraph-store backend just the same."""
    notes = NotebookTool(store=LangGraphNotebookStore(InMemoryStore(), namespace=("n",)))
    note_id = notes.run({"action": "create", "title": "t", "content": "c"})
    assert notes.run({"action": "read", "note_id": note_id})["metadata"]["id"] == note_id


def _app(tools: list[Any], responses: list[AIMessage]) -> Any:
    model = ScriptedChatModel(responses=responses)

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=InMemorySaver())


def test_note_tools_in_a_graph_on_a_workspace(tmp_path: Path) -> None:
    """An agent creates, updates, lists, summarizes and deletes notes in a directory.

    Calls in one AI turn run in parallel, so order-dependent calls get their own turn.
    """
    store = FileNotebookStore(tmp_path)
    existing = store.create("Old blocker", "db down", note_type="blocker", tags=["db"])
    app = _app(
        create_notebook_tools(tmp_path),
        [
            ai_calls(
                call("notebook_create", {"title": "Plan", "content": "step 1", "tags": ["p"]}, "a"),
                call("notebook_update", {"note_id": existing.id, "note_type": "conclusion"}, "b"),
                call("notebook_update", {"note_id": existing.id}, "c"),
                call("notebook_create", {"title": "x", "content": "y", "note_type": "todo"}, "d"),
            ),
            ai_calls(
                call("notebook_list", {"note_type": "conclusion"}, "e"),
                call("notebook_summary", {}, "f"),
            ),
            ai_calls(call("notebook_delete", {"note_id": existing.id}, "g")),
            ai_calls(call("notebook_read", {"note_id": existing.id}, "h")),
            AIMessage("done"),
        ],
    )
    out = app.invoke({"messages": [("user", "go")]}, {"configurable": {"thread_id": "1"}})
    results = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert results["a"].status == "success"
    assert results["b"].content.startswith(f"Updated note [{existing.id}] Old blocker")
    assert results["c"].status == "error"
    assert "Nothing to update" in results["c"].content
    assert results["d"].status == "error"
    assert "Input should be 'task_state'" in results["d"].content
    assert existing.id in results["e"].content
    assert '"total_notes": 2' in results["f"].content
    assert results["g"].content == f"Deleted note {existing.id}: Old blocker"
    assert results["h"].status == "error"
    assert [n.title for n in store.list()] == ["Plan"]


def test_note_tool_factory_options_and_errors(tmp_path: Path) -> None:
    """Prefix and action subsets shape the tools; bad arguments raise at construction."""
    tools = create_notebook_tools(tmp_path, prefix="memo", actions=["search", "read"])
    assert [t.name for t in tools] == ["memo_search", "memo_read"]
    assert [t.name for t in create_notebook_tools(tmp_path)] == [
        f"notebook_{a}" for a in NOTEBOOK_ACTIONS
    ]
    with pytest.raises(ValueError, match="actions must be a non-empty subset"):
        create_notebook_tools(tmp_path, actions=["rename"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="actions must be a non-empty subset"):
        create_notebook_tools(tmp_path, actions=[])
    with pytest.raises(ValueError, match="name must be 1-64 characters"):
        create_notebook_tools(tmp_path, prefix="bad prefix")
    with pytest.raises(ValueError, match="namespace must be a non-empty tuple"):
        create_notebook_tools(namespace=())
    with pytest.raises(TypeError, match="notes must be a directory path, a NotebookStore"):
        create_notebook_tools(42)  # type: ignore[arg-type]


def test_store_tools_without_any_store_answer_with_an_error(tmp_path: Path) -> None:
    """Without a store the tool call is answered with an error; the thread stays valid."""
    app = _app(create_notebook_tools(), [ai_calls(call("notebook_list", {}, "a")), AIMessage("x")])
    out = app.invoke({"messages": [("user", "go")]}, {"configurable": {"thread_id": "1"}})
    (result,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert result.status == "error"
    assert "No LangGraph store available" in str(result.content)
    assert validate_history(out["messages"]) == []


def test_explicit_base_store_is_used_with_config_namespace() -> None:
    """A BaseStore passed to the factory is used even if the graph has none."""
    store = InMemoryStore()
    tools = create_notebook_tools(store, namespace=("notes", "{user_id}"))
    app = _app(
        tools,
        [ai_calls(call("notebook_create", {"title": "t", "content": "c"}, "a")), AIMessage("x")],
    )
    config = {"configurable": {"thread_id": "1", "user_id": "u1"}}
    app.invoke({"messages": [("user", "go")]}, config)
    assert [n.title for n in LangGraphNotebookStore(store, namespace=("notes", "u1")).list()] == [
        "t"
    ]


def _note(note_id: str, note_type: str, updated: str) -> Note:
    return Note(note_id, f"title {note_id}", "body", note_type, ("t",), updated, updated)


def test_packets_follow_type_priority_then_recency() -> None:
    """blocker > action > task_state > conclusion, newest first within a type."""
    notes = [
        _note("c", "conclusion", "2025-01-03T00:00:00+00:00"),
        _note("t", "task_state", "2025-01-02T00:00:00+00:00"),
        _note("b_old", "blocker", "2025-01-01T00:00:00+00:00"),
        _note("a", "action", "2025-01-01T00:00:00+00:00"),
        _note("b_new", "blocker", "2025-01-05T00:00:00+00:00"),
    ]
    packets = notebook_packets(notes, pinned_types=["blocker"])
    assert [p.source for p in packets] == ["b_new", "b_old", "a", "t", "c"]
    assert [p.relevance for p in packets] == [1.0, 1.0, 0.85, 0.7, 0.55]
    assert [p.metadata["priority"] for p in packets] == [0, 0, 1, 2, 3]
    assert [p.pinned for p in packets] == [True, True, False, False, False]
    first = packets[0]
    assert first.type == "note"
    assert not first.is_trusted
    assert first.content == "[blocker] title b_new [tags: t]\nbody"
    assert first.timestamp == datetime.fromisoformat("2025-01-05T00:00:00+00:00")
    assert first.metadata["tags"] == ["t"]


def test_packets_blend_search_scores_with_type_weight() -> None:
    """With scores, relevance mixes the normalized score and the type weight."""
    hits = [
        (_note("x", "conclusion", "2025-01-01T00:00:00+00:00"), 4.0),
        (_note("y", "blocker", "2025-01-01T00:00:00+00:00"), 2.0),
    ]
    packets = notebook_packets(hits, score_share=0.5)
    assert [(p.source, p.relevance) for p in packets] == [("y", 0.75), ("x", 0.775)]
    assert packets[1].metadata["score"] == 4.0
    with pytest.raises(ValueError, match="pinned_types must be note types"):
        notebook_packets([], pinned_types=["urgent"])
    with pytest.raises(ValueError, match=r"score_share must be within \[0, 1\]"):
        notebook_packets([], score_share=2.0)


def test_non_utf8_note_is_never_rewritten_or_deleted(tmp_path: Path) -> None:
    """A hand-written Latin-1 note reads leniently; update and delete refuse, bytes intact."""
    text = "---\ntitle: Caf\xe9 notes\n---\n\nPr\xe9f\xe9rer le caf\xe9 cr\xe8me.\n"
    raw = text.encode("latin-1")
    (tmp_path / "legacy.md").write_bytes(raw)
    app = _app(
        create_notebook_tools(tmp_path),
        [
            ai_calls(call("notebook_read", {"note_id": "legacy"}, "r")),
            ai_calls(call("notebook_update", {"note_id": "legacy", "tags": ["fr"]}, "u")),
            ai_calls(call("notebook_delete", {"note_id": "legacy"}, "d")),
            AIMessage("done"),
        ],
    )
    out = app.invoke({"messages": [("user", "go")]}, {"configurable": {"thread_id": "1"}})
    results = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert results["r"].status == "success"
    for key in ("u", "d"):
        assert results[key].status == "error"
        assert "legacy.md is not valid UTF-8; fix or re-save it" in results[key].content
    assert (tmp_path / "legacy.md").read_bytes() == raw
    with pytest.raises(NotebookError, match="not valid UTF-8"):
        FileNotebookStore(tmp_path).update("legacy", content="new")


@pytest.mark.parametrize(
    "args",
    [
        {"title": "emoji \ud83d", "content": "x"},
        {"title": "t", "content": "cut \udc80 off"},
        {"title": "t", "content": "x", "tags": ["ok", "bad\ud83d"]},
    ],
)
def test_unpaired_surrogates_are_an_error_message_not_a_crash(
    tmp_path: Path, args: dict[str, Any]
) -> None:
    """Text that cannot be saved as UTF-8 comes back as an error the model can fix."""
    app = _app(
        create_notebook_tools(tmp_path),
        [ai_calls(call("notebook_create", args, "c")), AIMessage("ok")],
    )
    out = app.invoke({"messages": [("user", "go")]}, {"configurable": {"thread_id": "1"}})
    (result,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert result.status == "error"
    assert "half of a character pair" in result.content
    assert FileNotebookStore(tmp_path).list() == []
    note = FileNotebookStore(tmp_path).create("t", "x")
    with pytest.raises(NotebookError, match="title contains"):
        FileNotebookStore(tmp_path).update(note.id, title="a\ud83d")


@pytest.mark.parametrize(
    "namespace", [("notes.v1", "{user_id}"), ("notes", "{user_id}.x"), ("notes", "{")]
)
def test_malformed_namespace_template_fails_at_creation(namespace: tuple[str, ...]) -> None:
    """Literal dots and broken braces are found by create_notebook_tools, not the first call."""
    with pytest.raises(ValueError, match=r"namespace template .* is malformed"):
        create_notebook_tools(namespace=namespace)
    assert len(create_notebook_tools(namespace=("notes", "{user_id}", "v1"))) == len(
        NOTEBOOK_ACTIONS
    )


@pytest.mark.parametrize("blank", ["", "   "])
def test_blank_workspace_is_refused_not_the_current_directory(blank: str) -> None:
    """An empty path (e.g. an unset env var) is an error naming the parameter."""
    with pytest.raises(ValueError, match="workspace must be a directory path"):
        FileNotebookStore(blank)
    with pytest.raises(ValueError, match="workspace must be a directory path"):
        NotebookTool(blank)
    with pytest.raises(ValueError, match="notes must be a directory path"):
        create_notebook_tools(blank)
