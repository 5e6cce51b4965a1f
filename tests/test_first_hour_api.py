"""A LangGraph user's first hour, API half: tool names, renames, graph steps per call."""

from __future__ import annotations

import importlib
import importlib.util
import warnings
from pathlib import Path
from typing import Any

import pytest
from deepagents.middleware import FilesystemMiddleware
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.store.memory import InMemoryStore

from langgraph_context.agents import (
    CompactionMiddleware,
    ContextMiddleware,
    PinnedMiddleware,
    StateToolsMiddleware,
    create_codebase_maintainer_graph,
    create_context_agent,
)
from langgraph_context.cli.models import register_model_factory
from langgraph_context.providers import ContextSettings
from langgraph_context.tokens import count_tokens
from langgraph_context.tools import create_ls_tool, create_write_note_tool
from tests.conftest import ScriptedChatModel, ai_calls, call


@tool
def ls(path: str = "/") -> str:
    """List the files in a directory."""
    return f"files in {path}"


def _deepagents_ls() -> Any:
    """deepagents' real filesystem `ls` tool."""
    return next(t for t in FilesystemMiddleware().tools if t.name == "ls")


def _done() -> ScriptedChatModel:
    return ScriptedChatModel(responses=[AIMessage("done")])


# --- note tools: a name prefix, and no silent shadowing ---------------------------------


def test_note_tool_prefix_names_the_tool() -> None:
    """`prefix="notes"` names the note tool `notes_ls`; name and prefix together are refused."""
    assert create_ls_tool(prefix="notes").name == "notes_ls"
    assert create_write_note_tool(prefix="notes").name == "notes_write_note"
    with pytest.raises(ValueError, match="name or prefix, not both"):
        create_ls_tool(name="x", prefix="notes")
    with pytest.raises(ValueError, match="prefix must be a non-empty string"):
        create_ls_tool(prefix="")


def test_context_agent_refuses_our_ls_beside_deepagents_ls() -> None:
    """deepagents' filesystem `ls` beside the note tool `ls` is refused, naming both."""
    with pytest.raises(ValueError, match=r"two tools are named 'ls': tools\[0\] 'ls'.*note tool"):
        create_context_agent(_done(), [_deepagents_ls()])


def test_context_agent_refuses_a_plain_duplicate() -> None:
    """Two user tools with one name are refused with both named."""
    with pytest.raises(ValueError, match=r"tools\[0\] 'ls' \(List the files.*tools\[1\] 'ls'"):
        create_context_agent(_done(), [ls, ls], note_tools=False)


def test_context_agent_note_prefix_composes_with_deepagents_ls() -> None:
    """With `note_prefix`, both `ls` tools reach the model and each runs as itself."""
    model = ScriptedChatModel(
        responses=[
            ai_calls(call("ls", {"path": "/"}, "a"), call("notes_ls", {}, "b")),
            AIMessage("done"),
        ]
    )
    graph = create_context_agent(model, [ls], note_prefix="notes")
    out = graph.invoke({"messages": [HumanMessage("hi")]})
    results = {m.name: m.content for m in out["messages"] if isinstance(m, ToolMessage)}
    assert results == {"ls": "files in /", "notes_ls": "No notes yet."}


def test_maintainer_refuses_a_tool_named_like_its_terminal(tmp_path: Any) -> None:
    """The maintainer composes through the same check: a second `terminal` is refused."""

    @tool
    def terminal(command: str) -> str:
        """Run a shell command."""
        return command

    with pytest.raises(ValueError, match=r"two tools are named 'terminal'"):
        create_codebase_maintainer_graph(_done(), workspace=tmp_path, tools=[terminal])


def test_state_tools_middleware_shadowed_by_deepagents_filesystem_is_refused() -> None:
    """In `create_agent`, deepagents' `ls` listed after ours would replace it: refused."""
    middleware = [StateToolsMiddleware(note_prefix=None), FilesystemMiddleware()]
    agent = create_agent(_done(), [], middleware=middleware)
    with pytest.raises(ValueError, match=r"two tools are named 'ls': state_tools tool 'ls'"):
        agent.invoke({"messages": [HumanMessage("hi")]})


def test_state_tools_middleware_shadowed_by_a_plain_tool_is_refused() -> None:
    """A user tool named `ls` (tools win over middleware tools) is refused, naming both."""
    agent = create_agent(_done(), [ls], middleware=[StateToolsMiddleware(note_prefix=None)])
    with pytest.raises(ValueError, match=r"'ls'.*List notes and sizes.*List the files"):
        agent.invoke({"messages": [HumanMessage("hi")]})


def test_pinned_middleware_shadowed_by_a_plain_tool_is_refused() -> None:
    """The pinned middleware checks its own tools the same way."""

    @tool
    def record_constraint(text: str) -> str:
        """Remember a rule."""
        return text

    agent = create_agent(_done(), [record_constraint], middleware=[PinnedMiddleware()])
    with pytest.raises(ValueError, match=r"two tools are named 'record_constraint'"):
        agent.invoke({"messages": [HumanMessage("hi")]})


def test_state_tools_middleware_with_prefix_composes_with_deepagents() -> None:
    """With `note_prefix`, deepagents' filesystem and our notes run side by side."""
    calls = ai_calls(call("notes_ls", {}, "a"), call("ls", {"path": "/"}, "b"))
    model = ScriptedChatModel(responses=[calls, AIMessage("done")])
    middleware = [StateToolsMiddleware(note_prefix="notes"), FilesystemMiddleware()]
    out = create_agent(model, [], middleware=middleware).invoke({"messages": [HumanMessage("x")]})
    results = [(m.name, m.status) for m in out["messages"] if isinstance(m, ToolMessage)]
    assert results == [("notes_ls", "success"), ("ls", "success")]
    assert out["messages"][2].content == "No notes yet."


@pytest.mark.parametrize("ours_first", [True, False])
def test_state_tools_middleware_default_names_never_drop_deepagents_ls(ours_first: bool) -> None:
    """By default the note tools are prefixed: in either order both `ls` tools reach the model.

    With ours placed after `FilesystemMiddleware`, bare names would make `create_agent`
    drop deepagents' `ls` before any middleware could see it.
    """
    calls = ai_calls(call("notes_ls", {}, "a"), call("ls", {"path": "/"}, "b"))
    model = ScriptedChatModel(responses=[calls, AIMessage("done")])
    pair = [StateToolsMiddleware(), FilesystemMiddleware()]
    middleware = pair if ours_first else pair[::-1]
    out = create_agent(model, [], middleware=middleware).invoke({"messages": [HumanMessage("x")]})
    results = [(m.name, m.status) for m in out["messages"] if isinstance(m, ToolMessage)]
    assert results == [("notes_ls", "success"), ("ls", "success")]
    assert out["messages"][2].content == "No notes yet."


# --- names that collided with langmem and deepagents ------------------------------------


def _public(module: str) -> set[str]:
    return set(importlib.import_module(module).__all__)


def test_public_names_do_not_collide_with_langmem_or_deepagents() -> None:
    """No public name of ours is one of deepagents' or langmem's short-term names."""
    ours = _public("langgraph_context") | _public("langgraph_context.compaction")
    ours |= _public("langgraph_context.agents")
    theirs = _public("deepagents") | _public("deepagents.middleware")
    theirs |= {"summarize_messages", "asummarize_messages", "RunningSummary"}
    theirs |= {"SummarizationResult", "SummarizationNode"}  # langmem.short_term
    assert ours & theirs == set()


@pytest.mark.parametrize(
    ("module", "old"),
    [
        ("langgraph_context", "summarize_messages"),
        ("langgraph_context", "asummarize_messages"),
        ("langgraph_context", "create_context_middleware"),
        ("langgraph_context.compaction", "summarize_messages"),
        ("langgraph_context.compaction", "RunningSummary"),
        ("langgraph_context.compaction", "SummarizationResult"),
        ("langgraph_context.agents", "MemoryMiddleware"),
        ("langgraph_context.agents", "create_compaction_middleware"),
        ("langgraph_context.agents", "PreModelNodeMiddleware"),
    ],
)
def test_names_of_the_unreleased_0_1_0_are_gone(module: str, old: str) -> None:
    """0.1.0 had no users: its aliases and factory spellings are not kept."""
    with pytest.raises(AttributeError, match=f"no attribute '{old}'"):
        getattr(importlib.import_module(module), old)


def test_unknown_names_still_raise_attribute_error() -> None:
    """A typo is an AttributeError, never a warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match="no attribute 'summarise_messages'"):
            importlib.import_module("langgraph_context.compaction").summarise_messages  # noqa: B018


# --- graph steps per model call ---------------------------------------------------------


def _updates(agent: Any) -> list[str]:
    chunks = agent.stream({"messages": [HumanMessage("hi")]}, stream_mode="updates")
    return [name for chunk in chunks for name in chunk]


def test_middleware_agent_runs_no_no_op_steps_per_model_call() -> None:
    """Compaction, context, pinned and state tools cost two graph steps per model call."""
    model = ScriptedChatModel(
        responses=[ai_calls(call("write_plan", {"items": ["a"]}, "p")), AIMessage("done")]
    )
    middleware = [
        CompactionMiddleware(trigger_tokens=2_000),
        ContextMiddleware(),
        PinnedMiddleware(),
        StateToolsMiddleware(),
    ]
    agent = create_agent(model, [], middleware=middleware)
    assert _updates(agent) == ["model", "tools", "model"]


def test_pinned_middleware_with_checks_keeps_its_hook_under_its_own_name() -> None:
    """With checks the watch runs as `pinned.before_model` (named like the others)."""

    @tool
    def run_tests() -> str:
        """Run the tests."""
        return "1 passed"

    agent = create_agent(_done(), [run_tests], middleware=[PinnedMiddleware(checks="run_tests")])
    assert "pinned.before_model" in agent.get_graph().nodes
    assert _updates(agent) == ["pinned.before_model", "model"]


def test_assembled_prompt_is_never_streamed() -> None:
    """`stream_mode="messages"` shows only the model's answer, once per call."""
    for agent in (
        create_agent(_done(), [], middleware=[ContextMiddleware()]),
        create_context_agent(_done(), context=True),
    ):
        streamed = list(agent.stream({"messages": [HumanMessage("hi")]}, stream_mode="messages"))
        assert [(type(m).__name__, m.content) for m, _ in streamed] == [("AIMessage", "done")]


# --- create_context_agent prepares every model call by default --------------------------


def _long_history(turns: int, words: int = 120) -> list[Any]:
    """`turns` user/assistant pairs of about `words` tokens each."""
    history: list[Any] = []
    for i in range(turns):
        history.append(HumanMessage(f"question {i}: " + "alpha " * words))
        history.append(AIMessage(f"answer {i}: " + "beta " * words))
    return history


def test_context_agent_compacts_and_assembles_by_default() -> None:
    """`create_context_agent(model)` runs compaction and the context middleware on every call."""
    model = ScriptedChatModel(responses=[AIMessage("ok")])
    graph = create_context_agent(model)
    nodes = set(graph.get_graph().nodes)
    assert nodes == {"__start__", "model", "tools", "__end__"}  # compaction runs in the call
    graph.invoke({"messages": [HumanMessage("hi")], "note": {"k": "v"}})
    system = model.seen[0][0].content
    assert "[note:k" in system  # the context builder's fenced note, not the bare [State] block


def test_compaction_and_context_accept_true_false_and_an_instance() -> None:
    """`compaction=True` adds its record to state (no step); `False` leaves it out."""
    model = ScriptedChatModel(responses=[AIMessage("ok")])
    with_record = create_context_agent(model, compaction=True)
    assert "compaction" in with_record.channels
    assert set(with_record.get_graph().nodes) == {"__start__", "model", "tools", "__end__"}
    bare = create_context_agent(model, compaction=False, context=False)
    assert set(bare.get_graph().nodes) == {"__start__", "model", "tools", "__end__"}
    assert "compaction" not in bare.channels
    own = CompactionMiddleware(500, name="mine")
    mine = create_context_agent(ScriptedChatModel(responses=[AIMessage("ok")]), compaction=own)
    assert mine.invoke({"messages": _long_history(8)})["compaction"]["count"] == 1
    with pytest.raises(TypeError, match="compaction must be a bool or a CompactionMiddleware"):
        create_context_agent(model, compaction=42)  # type: ignore[arg-type]


def test_one_budget_sizes_compaction_and_context_from_the_profile_window() -> None:
    """A 4,000-token window: calls get at most 2,000 tokens, the history at most 3,000."""
    model = ScriptedChatModel(responses=[AIMessage("ok")], profile={"max_input_tokens": 4_000})
    graph = create_context_agent(model, plan_tools=False, note_tools=False, constraint_tools=False)
    history = _long_history(20)
    assert count_tokens(history) > 4_000
    out = graph.invoke({"messages": history})
    assert out["compaction"]["count"] == 1
    assert count_tokens(out["messages"]) <= 3_000
    assert count_tokens(model.seen[0]) <= 2_000


def test_max_tokens_sizes_both_parts() -> None:
    """`max_tokens=800`: each call is sent at most 800 tokens; the history is cut at 1,600."""
    model = ScriptedChatModel(responses=[AIMessage("ok")])
    graph = create_context_agent(model, max_tokens=800, plan_tools=False, note_tools=False)
    out = graph.invoke({"messages": _long_history(8)})
    assert out["compaction"]["count"] == 1
    assert count_tokens(out["messages"]) <= 1_600
    assert count_tokens(model.seen[0]) <= 800


def test_context_agent_costs_one_step_per_model_call() -> None:
    """The model is the only step before each answer (compaction and context run inside)."""
    model = ScriptedChatModel(
        responses=[ai_calls(call("write_plan", {"items": ["a"]}, "p")), AIMessage("done")]
    )
    steps = _updates(create_context_agent(model))
    assert steps == ["model", "tools", "model"]


# --- run settings through context_schema; public input schemas --------------------------

GRAPHS = Path(__file__).resolve().parents[1] / "graphs"
INTERNAL = {"llm_input_messages", "compaction", "compaction_requested", "token_usage"}
INTERNAL |= {"briefing", "session", "injection_flags"}


def _served(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"served_api_{name}", GRAPHS / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.graph


@pytest.mark.parametrize(
    ("name", "extra"), [("context_agent", set()), ("codebase_maintainer", {"mode"})]
)
def test_served_graphs_publish_public_input_and_context_schemas(
    name: str, extra: set[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Studio/the SDK see the public keys as input and the run settings as context."""
    monkeypatch.setenv("LGC_WORKSPACE", str(tmp_path))
    graph = _served(name)
    inputs = set(graph.get_input_jsonschema()["properties"])
    assert inputs == {"messages", "plan", "note", "constraints", "hot_issues", *extra}
    assert inputs & INTERNAL == set()
    context = graph.get_context_jsonschema()
    assert set(context["properties"]) == {"model_factory", "model", "temperature", "user_id"}


def _recording_factory(seen: list[dict[str, Any]]) -> Any:
    def factory(config: Any) -> ScriptedChatModel:
        seen.append(dict(config.get("configurable") or {}))
        return ScriptedChatModel(responses=[AIMessage("ok")])

    return factory


def test_run_context_reaches_the_model_factory_before_configurable() -> None:
    """`context=` settings reach the model factory; `configurable` still works; context wins."""
    seen: list[dict[str, Any]] = []
    graph = create_context_agent(_recording_factory(seen), context_schema=ContextSettings, name="a")
    hi = {"messages": [HumanMessage("hi")]}
    graph.invoke(hi, context={"model": "from-context", "temperature": 0.2})
    graph.invoke(hi, {"configurable": {"model": "from-config"}})
    graph.invoke(hi, {"configurable": {"model": "from-config"}}, context={"model": "ctx"})
    assert [(s.get("model"), s.get("temperature")) for s in seen] == [
        ("from-context", 0.2),
        ("from-config", None),
        ("ctx", None),
    ]


def test_internal_keys_are_not_inputs_of_the_agent() -> None:
    """`create_context_agent` publishes the state's public keys as its input schema."""
    graph = create_context_agent(_done())
    assert set(graph.get_input_jsonschema()["properties"]) == {
        "messages",
        "plan",
        "note",
        "constraints",
        "hot_issues",
    }
    out = graph.invoke({"messages": [HumanMessage("hi")]})
    assert out["messages"][-1].content == "done"
    assert "llm_input_messages" not in out  # no state key carries the model input


def test_served_context_agent_runs_with_settings_in_context() -> None:
    """The served graph takes model and user from `context=` alone (no configurable)."""
    seen: list[dict[str, Any]] = []
    register_model_factory("first_hour_recording", _recording_factory(seen))
    graph = _served("context_agent").copy(update={"store": InMemoryStore()})
    settings = {"model_factory": "first_hour_recording", "model": "m1", "user_id": "u1"}
    out = graph.invoke({"messages": [HumanMessage("hi")]}, context=settings)
    assert out["messages"][-1].content == "ok"
    assert seen[0]["model"] == "m1"


def test_a_note_prefix_also_renames_the_tools_the_model_is_told_about() -> None:
    """With `note_prefix`, the `[State]` block and the update error name `notes_query_note`."""
    model = ScriptedChatModel(
        responses=[
            ai_calls(
                call(
                    "notes_update_note",
                    {"file_name": "k", "origin_content": "absent", "new_content": "x"},
                    "u",
                )
            ),
            AIMessage("done"),
        ]
    )
    graph = create_context_agent(model, note_prefix="notes", compaction=False, context=False)
    out = graph.invoke({"messages": [HumanMessage("hi")], "note": {"k": "v"}})
    system = model.seen[0][0].content
    assert "Notes: read one with notes_query_note" in system
    assert "[notes] k\n</untrusted-data-" in system
    error = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert error.status == "error"
    assert "Read the note with notes_query_note" in error.content


def test_default_context_assembles_from_a_view_mode_compaction() -> None:
    """A view-mode compaction's view, not the raw history, is what the context node gets."""
    model = ScriptedChatModel(responses=[AIMessage("ok")])
    history = _long_history(10)
    graph = create_context_agent(
        model,
        compaction=CompactionMiddleware(trigger_tokens=600, mode="view"),
        max_tokens=20_000,  # room for the whole history: only the compaction can cut it
        plan_tools=False,
        note_tools=False,
        constraint_tools=False,
    )
    out = graph.invoke({"messages": [*history, HumanMessage("and now?")]})
    assert len(out["messages"]) == len(history) + 2  # the stored history stays whole
    assert count_tokens(history) > 2_000
    assert count_tokens(model.seen[0]) <= 800
    assert model.seen[0][-1].content == "and now?"
