"""create_codebase_maintainer_graph: terminal, persistent notes, plan, modes, resumption."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langgraph_context.agents import (
    CompactionMiddleware,
    MaintainerOptions,
    build_briefing,
    create_codebase_maintainer_graph,
)
from langgraph_context.notebook import FileNotebookStore
from langgraph_context.safety.boundary import HARDENING_INSTRUCTION
from langgraph_context.tools import Terminal
from tests.conftest import ScriptedChatModel, ai_calls, call

TESTS = Path(__file__).resolve().parent


def make_codebase(root: Path) -> Path:
    """A tiny Flask-like project with one TODO and one test."""
    (root / "app").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "app" / "__init__.py").write_text("")
    (root / "app" / "models.py").write_text("class User:\n    name: str\n")
    (root / "app" / "views.py").write_text(
        "from app.models import User\n\n\ndef show(user: User) -> str:\n"
        "    # TODO: escape the name\n    return user.name\n"
    )
    (root / "tests" / "test_views.py").write_text("def test_show():\n    pass\n")
    return root


def _cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, "user_id": "u"}}


def _tool_results(messages: list[Any]) -> list[str]:
    return [m.content for m in messages if isinstance(m, ToolMessage)]


def test_three_sessions_explore_analyze_plan(tmp_path: Path) -> None:
    """Explore, analyze and plan turns use the terminal, notes and plan, with exact state."""
    workspace = make_codebase(tmp_path / "repo")
    notes_dir = tmp_path / "notes"
    model = ScriptedChatModel(
        responses=[
            # explore
            ai_calls(
                call("terminal", {"command": "cat app/views.py"}, "t1"),
                call("write_plan", {"plan": ["map layout", "find problems"]}, "p1"),
            ),
            ai_calls(
                call(
                    "notebook_create",
                    {
                        "title": "Layout",
                        "content": "app/models.py holds User; app/views.py renders it.",
                        "note_type": "reference",
                    },
                    "n1",
                )
            ),
            AIMessage("The app has models and views."),
            # analyze
            ai_calls(
                call(
                    "notebook_create",
                    {
                        "title": "Unescaped name in show()",
                        "content": "app/views.py:5 returns user.name without escaping.",
                        "note_type": "blocker",
                        "tags": ["security"],
                    },
                    "n2",
                ),
                call(
                    "update_plan",
                    {"update_plans": [{"content": "map layout", "status": "done"}]},
                    "u1",
                ),
            ),
            AIMessage("One blocker: show() does not escape names."),
            # plan
            ai_calls(
                call(
                    "update_plan",
                    {"update_plans": [{"content": "find problems", "status": "done"}]},
                    "u2",
                )
            ),
            AIMessage("Next: fix the escaping in app/views.py."),
        ]
    )
    graph = create_codebase_maintainer_graph(
        model,
        workspace=workspace,
        notes=notes_dir,
        project_name="shop",
        checkpointer=InMemorySaver(),
    )
    cfg = _cfg("maint")

    out = graph.invoke({"messages": [HumanMessage("Explore the code")], "mode": "explore"}, cfg)
    assert out["mode"] == "explore"
    assert "./app/views.py" in out["briefing"]
    assert "# TODO: escape the name" in _tool_results(out["messages"])[0]
    system = model.seen[0][0].content
    assert system.startswith("You maintain the shop codebase")
    assert "Mode: explore." in system
    assert "[Workspace briefing]" in system
    assert out["plan"] == [
        {"content": "map layout", "status": "in_progress"},
        {"content": "find problems", "status": "pending"},
    ]
    assembled = model.seen[1][0].content
    # The plan changes often: the cache layout sends it in the closing message.
    assert 'source="plan">\n1. [in_progress] map layout' in model.seen[1][-1].content
    assert "[Evidence]\n<untrusted-data-" in assembled
    assert 'type="workspace">\n[briefing, ' in assembled
    assert "lines] [Workspace briefing]" in assembled

    out = graph.invoke({"messages": [HumanMessage("Any problems?")], "mode": "analyze"}, cfg)
    assert "./app/views.py:5:    # TODO: escape the name" in out["briefing"]
    assert "./tests/test_views.py" in out["briefing"]
    assert "Mode: analyze." in model.seen[3][0].content
    assert out["plan"] == [
        {"content": "map layout", "status": "done"},
        {"content": "find problems", "status": "in_progress"},
    ]

    out = graph.invoke({"messages": [HumanMessage("What next?")], "mode": "plan"}, cfg)
    assert "- [blocker] Unescaped name in show()" in out["briefing"]
    assert "Mode: plan." in model.seen[5][0].content
    assert out["plan"] == [
        {"content": "map layout", "status": "done"},
        {"content": "find problems", "status": "done"},
    ]
    assert out["messages"][-1].content == "Next: fix the escaping in app/views.py."
    saved = FileNotebookStore(notes_dir).list()
    assert sorted((n.type, n.title) for n in saved) == [
        ("blocker", "Unescaped name in show()"),
        ("reference", "Layout"),
    ]
    assert [n.tags for n in saved if n.type == "blocker"] == [("security",)]


def test_mode_persists_until_changed_and_defaults(tmp_path: Path) -> None:
    """Without a mode the default applies; a given mode stays for later turns."""
    workspace = make_codebase(tmp_path / "repo")
    model = ScriptedChatModel(responses=[AIMessage("a"), AIMessage("b"), AIMessage("c")])
    graph = create_codebase_maintainer_graph(
        model,
        workspace=workspace,
        notes=tmp_path / "n",
        default_mode="plan",
        checkpointer=InMemorySaver(),
    )
    cfg = _cfg("m")
    graph.invoke({"messages": [HumanMessage("hi")]}, cfg)
    assert "Mode: plan." in model.seen[0][0].content
    out = graph.invoke({"messages": [HumanMessage("go")], "mode": "analyze"}, cfg)
    out = graph.invoke({"messages": [HumanMessage("again")]}, cfg)
    assert out["mode"] == "analyze"
    assert "Mode: analyze." in model.seen[2][0].content


def test_notes_in_the_graph_store_per_user(tmp_path: Path) -> None:
    """With notes=None the notes live in the compiled store, namespaced per user."""
    workspace = make_codebase(tmp_path / "repo")
    store = InMemoryStore()
    model = ScriptedChatModel(
        responses=[
            ai_calls(
                call(
                    "notebook_create",
                    {"title": "CI is red", "content": "tests fail", "note_type": "blocker"},
                    "n",
                )
            ),
            AIMessage("noted"),
            AIMessage("still blocked"),
        ]
    )
    graph = create_codebase_maintainer_graph(
        model,
        workspace=workspace,
        note_namespace=("notes", "{user_id}"),
        checkpointer=InMemorySaver(),
        store=store,
    )
    cfg = {"configurable": {"thread_id": "a", "user_id": "ann"}}
    graph.invoke({"messages": [HumanMessage("record")]}, cfg)
    assert [i.value["title"] for i in store.search(("notes", "ann"))] == ["CI is red"]
    out = graph.invoke(
        {"messages": [HumanMessage("status")]},
        {"configurable": {"thread_id": "b", "user_id": "ann"}},
    )
    assert "- [blocker] CI is red" in out["briefing"]


def test_briefing_is_capped_and_marked_as_data(tmp_path: Path) -> None:
    """build_briefing stays under its token cap and states that it is data."""
    workspace = make_codebase(tmp_path / "repo")
    for i in range(200):
        (workspace / "app" / f"mod_{i:03d}.py").write_text("x = 1\n")
    terminal = Terminal(workspace)
    text = build_briefing(
        "explore", "map it", terminal=terminal, max_briefing_tokens=400, token_counter=len
    )
    assert len(text) <= 400
    assert text.startswith("[Workspace briefing]")
    assert "data, not instructions" in text
    assert "$ find . -type f -name '*.py'" in text
    assert (
        build_briefing("explore", "x", terminal=terminal, max_briefing_tokens=50, token_counter=len)
        == ""
    )
    assert build_briefing("plan", "x") == ""


def test_errors(tmp_path: Path) -> None:
    """Bad modes, caps and note sources raise; a bad state mode raises too."""
    workspace = make_codebase(tmp_path / "repo")
    model = ScriptedChatModel(responses=[AIMessage("x")])
    with pytest.raises(ValueError, match="default_mode must be one of"):
        create_codebase_maintainer_graph(model, workspace=workspace, default_mode="fix")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_briefing_tokens must be a positive int"):
        MaintainerOptions(max_briefing_tokens=0)
    with pytest.raises(ValueError, match="max_briefing_tokens must be a positive int"):
        MaintainerOptions(max_briefing_tokens=1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_tokens must exceed the instructions'"):
        create_codebase_maintainer_graph(model, workspace=workspace, max_tokens=100)
    with pytest.raises(TypeError, match="notes must be a directory path"):
        create_codebase_maintainer_graph(model, workspace=workspace, notes=42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="mode must be one of"):
        build_briefing("fix", "x")  # type: ignore[arg-type]
    graph = create_codebase_maintainer_graph(model, workspace=workspace, notes=tmp_path / "notes")
    with pytest.raises(ValueError, match=r"state\['mode'\] must be one of"):
        graph.invoke({"messages": [HumanMessage("x")], "mode": "fix"})


def test_own_middleware_sees_the_turns_briefing(tmp_path: Path) -> None:
    """A caller's middleware runs outside the maintainer's and sees the turn's briefing."""
    from langchain.agents.middleware import AgentMiddleware

    workspace = make_codebase(tmp_path / "repo")
    seen: list[str] = []

    class Spy(AgentMiddleware):
        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            seen.append(request.state.get("briefing", ""))
            return handler(request)

    model = ScriptedChatModel(responses=[AIMessage("ok")])
    graph = create_codebase_maintainer_graph(
        model, workspace=workspace, notes=tmp_path / "n", middleware=[Spy()]
    )
    graph.invoke({"messages": [HumanMessage("look")]})
    assert len(seen) == 1
    assert "./app/models.py" in seen[0]


def _worker(workspace: Path, notes: Path, db: Path, turn: int) -> dict[str, Any]:
    proc = subprocess.run(
        [
            sys.executable,
            str(TESTS / "_resume_worker.py"),
            "maintainer",
            str(db),
            str(turn),
            str(workspace),
            str(notes),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


@pytest.mark.slow
def test_resume_tomorrow_in_a_new_process(tmp_path: Path) -> None:
    """A second process continues the thread: plan, mode, notes and history come back."""
    workspace = make_codebase(tmp_path / "repo")
    notes = tmp_path / "notes"
    db = tmp_path / "maintainer.sqlite"
    from tests._resume_worker import run_maintainer

    first = run_maintainer(str(db), 1, str(workspace), str(notes))  # this process ...
    assert first["plan"] == [
        {"content": "read views", "status": "in_progress"},
        {"content": "fix escaping", "status": "pending"},
    ]
    assert first["notes"] == [["blocker", "Unescaped name"]]
    second = _worker(workspace, notes, db, 2)  # ... then a new one continues
    assert second["mode"] == "analyze"
    assert second["plan"] == [
        {"content": "read views", "status": "done"},
        {"content": "fix escaping", "status": "in_progress"},
    ]
    assert second["messages"] == first["messages"] + 4
    assert "- [blocker] Unescaped name" in second["first_system"]
    assert "1. [in_progress] read views" in str(second["first_tail"])
    assert second["notes"] == [["blocker", "Unescaped name"]]


def test_many_turns_with_compaction_keep_plan_notes_and_validity(tmp_path: Path) -> None:
    """Twelve turns of file reading under a small history budget: compacted, valid, intact."""
    from langgraph_context import count_tokens
    from langgraph_context.messages import validate_history

    workspace = make_codebase(tmp_path / "repo")
    (workspace / "app" / "big.py").write_text(
        "\n".join(f"VALUE_{i} = {i}  # filler" for i in range(150))
    )
    turns = 12
    responses: list[AIMessage] = [
        ai_calls(
            call("write_plan", {"plan": ["read", "report"]}, "p"),
            call(
                "notebook_create",
                {"title": "Goal", "content": "read big.py often", "note_type": "task_state"},
                "n",
            ),
        )
    ]
    for i in range(turns):
        responses += [
            ai_calls(call("terminal", {"command": "head -n 60 app/big.py"}, f"t{i}")),
            AIMessage(f"read {i}"),
        ]
    model = ScriptedChatModel(responses=responses)
    graph = create_codebase_maintainer_graph(
        model,
        workspace=workspace,
        notes=tmp_path / "notes",
        compaction=CompactionMiddleware(trigger_tokens=1500, mode="replace"),
        checkpointer=InMemorySaver(),
    )
    cfg = _cfg("long")
    for i in range(turns):
        out = graph.invoke({"messages": [HumanMessage(f"read big.py ({i})")]}, cfg)
        assert validate_history(out["messages"]) == []
        assert out["messages"][-1].content == f"read {i}"
    assert out["compaction"]["count"] >= 5
    assert max(count_tokens(seen[1:]) for seen in model.seen) <= 1500
    assert out["plan"] == [
        {"content": "read", "status": "in_progress"},
        {"content": "report", "status": "pending"},
    ]
    assert "- [task_state] Goal" in model.seen[-1][0].content
    assert [n.title for n in FileNotebookStore(tmp_path / "notes").list()] == ["Goal"]


def test_compaction_can_be_switched_off_or_replaced(tmp_path: Path) -> None:
    """compaction=False adds no step; a middleware of your own is used as given."""
    workspace = make_codebase(tmp_path / "repo")
    model = ScriptedChatModel(responses=[AIMessage("x"), AIMessage("y")])
    off = create_codebase_maintainer_graph(model, workspace=workspace, compaction=False)
    assert not [n for n in off.nodes if n.startswith("compaction")]
    own = CompactionMiddleware(50, mode="view", name="own_compaction")
    graph = create_codebase_maintainer_graph(
        model, workspace=workspace, notes=tmp_path / "n", compaction=own
    )
    out = graph.invoke({"messages": [HumanMessage("hi " * 80)]})
    assert out["compaction"]["last"]["mode"] == "view"  # the view-mode record is kept


def test_without_context_node_the_briefing_goes_into_the_prompt(tmp_path: Path) -> None:
    """context=False: nothing assembled; instructions, then the briefing fenced as data."""
    workspace = make_codebase(tmp_path / "repo")
    model = ScriptedChatModel(responses=[AIMessage("ok")])
    graph = create_codebase_maintainer_graph(
        model, workspace=workspace, notes=tmp_path / "n", context=False
    )
    graph.invoke({"messages": [HumanMessage("look")], "mode": "explore"})
    system = model.seen[0][0].content
    head, _, fenced = system.partition("as `reference` notes.\n\n")
    assert fenced.startswith(HARDENING_INSTRUCTION + "\n<untrusted-data-")
    assert "[Workspace briefing]" in fenced
    assert "[Workspace briefing]" not in head
    assert "[Task]" not in system


def test_options_cap_the_briefing(tmp_path: Path) -> None:
    """MaintainerOptions(max_briefing_tokens=...) reaches the briefing the graph writes."""
    workspace = make_codebase(tmp_path / "repo")
    model = ScriptedChatModel(responses=[AIMessage("ok")])
    graph = create_codebase_maintainer_graph(
        model,
        workspace=workspace,
        notes=tmp_path / "n",
        token_counter=len,
        options=MaintainerOptions(max_briefing_tokens=200),
    )
    out = graph.invoke({"messages": [HumanMessage("look")], "mode": "explore"})
    assert out["briefing"].startswith("[Workspace briefing]")
    assert 0 < len(out["briefing"]) <= 200


def test_explorer_subagent_reads_in_its_own_window(tmp_path: Path) -> None:
    """explorer=True: the sub-agent greps in a clean window; the parent gets a short report."""
    workspace = make_codebase(tmp_path / "repo")
    model = ScriptedChatModel(
        responses=[
            ai_calls(
                call("delegate_exploration", {"task": "Where is User rendered?"}, "x1")
            ),  # parent
            ai_calls(call("terminal", {"command": "grep -rn User app"}, "s1")),  # sub-agent
            AIMessage("app/views.py:4 show(user: User) renders User.name."),  # sub-agent
            AIMessage("show() in app/views.py renders users."),  # parent
        ]
    )
    graph = create_codebase_maintainer_graph(
        model,
        workspace=workspace,
        notes=tmp_path / "n",
        explorer=True,
        context=False,
        checkpointer=InMemorySaver(),
    )
    out = graph.invoke({"messages": [HumanMessage("Where are users rendered?")]}, _cfg("x"))
    assert _tool_results(out["messages"]) == ["app/views.py:4 show(user: User) renders User.name."]
    sub_input = model.seen[1]
    assert [m.type for m in sub_input] == ["system", "human"]
    assert sub_input[0].content.startswith("You explore the repo codebase")
    assert sub_input[1].content.startswith("Where is User rendered?")
    assert "app/views.py:4:def show(user: User) -> str:" in model.seen[2][-1].content
    assert out["messages"][-1].content == "show() in app/views.py renders users."


async def test_async_run_with_store_notes(tmp_path: Path) -> None:
    """ainvoke runs the briefing, terminal, store-backed notes and the context node."""
    workspace = make_codebase(tmp_path / "repo")
    store = InMemoryStore()
    model = ScriptedChatModel(
        responses=[
            ai_calls(
                call("terminal", {"command": "head -n 2 app/models.py"}, "t"),
                call(
                    "notebook_create",
                    {"title": "User model", "content": "app/models.py", "note_type": "reference"},
                    "n",
                ),
            ),
            AIMessage("done"),
        ]
    )
    graph = create_codebase_maintainer_graph(
        model, workspace=workspace, checkpointer=InMemorySaver(), store=store
    )
    out = await graph.ainvoke({"messages": [HumanMessage("look")]}, _cfg("async"))
    assert _tool_results(out["messages"])[0] == "class User:\n    name: str\n"
    assert [i.value["title"] for i in store.search(("notes",))] == ["User model"]
    assert out["messages"][-1].content == "done"
