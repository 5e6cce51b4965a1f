"""The package's middleware inside LangChain's own `create_agent`, each on its own."""

from __future__ import annotations

import re
from typing import Any
from unittest import mock

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_context.agents import (
    CompactionMiddleware,
    ContextMiddleware,
    PinnedMiddleware,
    StateToolsMiddleware,
)
from langgraph_context.context import ContextBuilder, node
from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.messages import content_text
from tests.conftest import ScriptedChatModel, ai_calls, call


@tool
def echo(text: str) -> str:
    """Echo the text back."""
    return text


def _cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def test_state_tools_middleware_gives_plan_and_notes() -> None:
    """create_agent with the state-tools middleware runs plan and note tools on its state."""
    model = ScriptedChatModel(
        responses=[
            ai_calls(
                call("write_plan", {"plan": ["a", "b"]}, "p"),
                call("notes_write_note", {"file_name": "n", "content": "c"}, "w"),
            ),
            AIMessage("ok"),
        ]
    )
    agent = create_agent(model, middleware=[StateToolsMiddleware()])
    out = agent.invoke({"messages": [HumanMessage("plan")]})
    assert out["plan"] == [
        {"content": "a", "status": "in_progress"},
        {"content": "b", "status": "pending"},
    ]
    assert out["note"] == {"n": "c"}
    only_notes = StateToolsMiddleware(plan_tools=False)
    assert [t.name for t in only_notes.tools] == [
        "notes_write_note",
        "notes_ls",
        "notes_query_note",
        "notes_update_note",
    ]
    bare = StateToolsMiddleware(plan_tools=False, note_prefix=None)
    assert [t.name for t in bare.tools] == ["write_note", "ls", "query_note", "update_note"]


def test_errors() -> None:
    """Bad options raise at construction, naming the parameter."""
    with pytest.raises(ValueError, match="name must be a non-empty string"):
        StateToolsMiddleware(name="")
    with pytest.raises(ValueError, match="both False"):
        StateToolsMiddleware(plan_tools=False, note_tools=False)
    with pytest.raises(ValueError, match="give max_tokens or builder"):
        ContextMiddleware(100, builder=ContextBuilder())
    with pytest.raises(ValueError, match="max_tokens must be a positive int"):
        ContextMiddleware(0)
    with pytest.raises(ValueError, match="cache_breakpoints"):
        ContextMiddleware(cache_breakpoints="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"keep_last": "6"}, InvalidTypeError, "keep_last must be an int, got '6'"),
        ({"keep_last": -1}, InvalidArgumentError, "keep_last must be >= 0, got -1"),
        ({"layout": "wide"}, InvalidArgumentError, r"layout must be one of \['cache', 'focus'\]"),
        ({"harden_from_start": "yes"}, InvalidTypeError, "harden_from_start must be a bool"),
        ({"builder": "x"}, InvalidTypeError, "builder must be a ContextBuilder or None, got str"),
    ],
)
def test_context_node_options_raise_the_context_nodes_errors(
    options: dict[str, Any], error: type[Exception], match: str
) -> None:
    """A bad context-node option raises `create_context_node`'s typed error naming it."""
    with pytest.raises(error, match=match):
        ContextMiddleware(**options)


@pytest.mark.parametrize("layout", ["cache", "focus"])
def test_the_context_node_is_built_once(layout: str) -> None:
    """Construction builds one context node, of the layout asked for."""
    with (
        mock.patch.object(node, "cache_node", wraps=node.cache_node) as cache,
        mock.patch.object(node, "focus_node", wraps=node.focus_node) as focus,
    ):
        ContextMiddleware(2_000, layout=layout)  # type: ignore[arg-type]
    assert (cache.call_count, focus.call_count) == ((1, 0) if layout == "cache" else (0, 1))


@tool
def read_file(path: str) -> str:
    """Return a long fake file body."""
    return f"{path}: " + " ".join(f"line{i}" for i in range(120))


def _reading_model(turns: int) -> ScriptedChatModel:
    responses: list[AIMessage] = []
    for i in range(turns):
        responses += [
            ai_calls(call("read_file", {"path": f"f{i}.py"}, f"r{i}")),
            AIMessage(f"f{i}.py read"),
        ]
    return ScriptedChatModel(responses=responses)


def test_real_compaction_middleware_replace_mode_over_many_turns() -> None:
    """create_agent + compaction middleware (replace): valid, bounded history over 10 turns."""
    from langgraph_context import count_tokens
    from langgraph_context.messages import validate_history

    model = _reading_model(10)
    agent = create_agent(
        model,
        [read_file],
        middleware=[CompactionMiddleware(500)],
        checkpointer=InMemorySaver(),
    )
    for i in range(10):
        out = agent.invoke({"messages": [HumanMessage(f"read f{i}.py")]}, _cfg("r"))
        assert validate_history(out["messages"]) == []
    assert out["compaction"]["count"] >= 8
    assert max(count_tokens(seen) for seen in model.seen) <= 500


def test_real_compaction_middleware_view_mode_keeps_history() -> None:
    """In view mode the model sees a compacted view while state keeps every message."""
    from langgraph_context import count_tokens

    model = _reading_model(6)
    agent = create_agent(
        model,
        [read_file],
        middleware=[CompactionMiddleware(400, mode="view")],
        checkpointer=InMemorySaver(),
    )
    for i in range(6):
        out = agent.invoke({"messages": [HumanMessage(f"read f{i}.py")]}, _cfg("w"))
    assert len(out["messages"]) == 6 * 4
    assert count_tokens(out["messages"]) > 1000
    assert max(count_tokens(seen) for seen in model.seen) <= 400
    assert "llm_input_messages" not in out


def test_compaction_middleware_rejects_bad_options() -> None:
    """Invalid compaction options raise at construction."""
    with pytest.raises(ValueError, match="mode"):
        CompactionMiddleware(100, mode="shrink")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="trigger_tokens must be a positive int"):
        CompactionMiddleware(0)


def test_real_context_middleware_with_state_tools_over_turns() -> None:
    """create_agent + state tools + compaction + context: same engine as the graph API."""
    from langgraph_context import count_tokens
    from langgraph_context.messages import validate_history

    turns = 6
    responses: list[AIMessage] = [ai_calls(call("write_plan", {"plan": ["read", "report"]}, "p"))]
    for i in range(turns):
        responses += [
            ai_calls(call("read_file", {"path": f"f{i}.py"}, f"r{i}")),
            AIMessage(f"f{i}.py read"),
        ]
    model = ScriptedChatModel(responses=responses)
    agent = create_agent(
        model,
        [read_file],
        system_prompt="You read files.",
        middleware=[
            StateToolsMiddleware(),
            CompactionMiddleware(1500),
            ContextMiddleware(600),
        ],
        checkpointer=InMemorySaver(),
    )
    for i in range(turns):
        out = agent.invoke({"messages": [HumanMessage(f"read f{i}.py")]}, _cfg("ctx"))
        assert validate_history(out["messages"]) == []
    assert out["plan"] == [
        {"content": "read", "status": "in_progress"},
        {"content": "report", "status": "pending"},
    ]
    for seen in model.seen:
        assert seen[0].content.startswith("You read files.")
        assert count_tokens(seen) <= 600 + count_tokens("You read files.\n\n") + 10
    # The cache layout sends the plan in the closing message, fenced (the model wrote it).
    closing = content_text(model.seen[-1][-1].content)
    assert re.search(
        r'request\]\n<untrusted-data-\d+ type="plan"[^>]*>\n1\. \[in_progress\] read', closing
    )


def test_pinned_middleware_with_context_middleware_over_turns() -> None:
    """create_agent: constraints and a failing check reach every context until resolved."""
    runs = iter(["FAILED tests/test_a.py::test_x - boom", "3 passed in 0.1s"])

    @tool
    def run_tests() -> str:
        """Run the tests (scripted results)."""
        return next(runs)

    model = ScriptedChatModel(
        responses=[
            ai_calls(call("record_constraint", {"text": "Never edit generated files"}, "c")),
            AIMessage("Noted."),
            ai_calls(call("run_tests", {}, "t1")),
            AIMessage("Failing."),
            AIMessage("Still failing, as the context says."),
            ai_calls(call("run_tests", {}, "t2")),
            AIMessage("Green."),
        ]
    )
    agent = create_agent(
        model,
        [run_tests],
        system_prompt="You fix tests.",
        middleware=[
            PinnedMiddleware(checks="run_tests"),
            ContextMiddleware(),
        ],
        checkpointer=InMemorySaver(),
    )
    for text in ["never edit generated files", "run tests", "status?"]:
        out = agent.invoke({"messages": [HumanMessage(text)]}, _cfg("m"))
    system = model.seen[-1][0].content
    assert system.startswith("You fix tests.\n\n")
    assert "Never edit generated files" in system
    assert "`run_tests` is failing" in system
    assert "not instructions" in system  # the hardening text
    out = agent.invoke({"messages": [HumanMessage("run again")]}, _cfg("m"))
    assert [i for i in out["hot_issues"] if i["status"] == "active"] == []
    assert "is failing" not in model.seen[-1][0].content


def test_pinned_middleware_errors() -> None:
    """A pinned middleware with nothing to add is refused."""
    with pytest.raises(ValueError, match="would add nothing"):
        PinnedMiddleware(constraint_tools=False)
