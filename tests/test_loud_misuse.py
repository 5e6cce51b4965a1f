"""Misuse is loud and names what to fix: tools without their state, wrong argument types,
wrong-shaped state, async sources in sync builds; failures that can be survived are."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatResult
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from langgraph_context.compaction import create_compaction_node
from langgraph_context.context import ContextBuilder, ContextConfig, create_context_node
from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.pinned.packets import pinned_packets
from langgraph_context.state import NoteStateMixin, PinnedStateMixin, PlanStateMixin
from langgraph_context.tools.plan import create_write_plan_tool
from langgraph_context.tools.state_notes import create_write_note_tool
from tests.conftest import ScriptedChatModel, call


class PlanState(MessagesState, PlanStateMixin):
    """Messages and the plan."""


def _run_tool(state_class: type, tool: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """Run one tool call through ToolNode inside a compiled graph."""
    graph = StateGraph(state_class)
    graph.add_node("tools", ToolNode([tool]))
    graph.add_edge(START, "tools")
    calling = AIMessage("", tool_calls=[call(name, args, "c1")])
    out: dict[str, Any] = graph.compile().invoke({"messages": [HumanMessage("go"), calling]})
    return out


@pytest.mark.parametrize(
    ("tool", "name", "args", "mixin"),
    [
        (create_write_plan_tool(), "write_plan", {"plan": ["a"]}, "PlanStateMixin"),
        (
            create_write_note_tool(),
            "write_note",
            {"file_name": "a", "content": "x"},
            "NoteStateMixin",
        ),
    ],
)
def test_a_state_tool_without_its_mixin_fails_loudly(
    tool: Any, name: str, args: dict[str, Any], mixin: str
) -> None:
    """No "written" over an update LangGraph would drop: the error names the mixin to add."""
    with pytest.raises(InvalidArgumentError, match=f"add {mixin} to the state class"):
        _run_tool(MessagesState, tool, name, args)


def test_the_plan_tool_with_its_mixin_still_writes() -> None:
    """With the mixin the same call writes the plan and reports it."""
    out = _run_tool(PlanState, create_write_plan_tool(), "write_plan", {"plan": ["a"]})
    assert out["plan"] == [{"content": "a", "status": "in_progress"}]
    assert out["messages"][-1].content.startswith("Plan written")


def test_context_node_keep_last_as_text_is_a_type_error() -> None:
    """`keep_last="6"` is a package type error naming the parameter, not a crash inside."""
    with pytest.raises(InvalidTypeError, match="keep_last must be an int, got '6'"):
        create_context_node(keep_last="6")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"stamp_times": "yes"}, InvalidTypeError, "stamp_times must be a bool"),
        ({"builder": "b"}, InvalidTypeError, "builder must be a ContextBuilder or None"),
        ({"system_instructions": 3}, InvalidTypeError, "system_instructions must be a string"),
        ({"name": ""}, InvalidArgumentError, "name must be a non-empty string"),
    ],
)
def test_context_node_names_each_bad_option(kwargs: dict[str, Any], error: Any, match: str) -> None:
    """Every option of the wrong type or value is named in the error."""
    with pytest.raises(error, match=match):
        create_context_node(**kwargs)


def test_compaction_node_trigger_tokens_as_text_is_a_package_error() -> None:
    """`trigger_tokens="8000"` names the parameter instead of failing in arithmetic."""
    with pytest.raises(
        InvalidArgumentError, match="trigger_tokens must be a positive int, got '8000'"
    ):
        create_compaction_node(trigger_tokens="8000")  # type: ignore[arg-type]


def test_build_result_without_a_query_names_it() -> None:
    """`build_result(None)` is a type error naming `user_query`."""
    with pytest.raises(InvalidTypeError, match="user_query must be a string, got NoneType"):
        ContextBuilder().build_result(None)  # type: ignore[arg-type]


async def test_abuild_result_without_a_query_names_it() -> None:
    """The async twin refuses the same input the same way."""
    with pytest.raises(InvalidTypeError, match="user_query must be a string, got int"):
        await ContextBuilder().abuild_result(3)  # type: ignore[arg-type]


def test_a_plan_of_the_wrong_shape_names_the_key_and_the_shape() -> None:
    """`{"plan": ["a", "b"]}` fails in the reducer with the key and the expected shape."""
    graph = StateGraph(PlanState)
    graph.add_node("noop", lambda state: {})
    graph.add_edge(START, "noop")
    with pytest.raises(InvalidTypeError, match=r"state key 'plan' must be a list of \{\"content\""):
        graph.compile().invoke({"messages": [], "plan": ["a", "b"]})


@pytest.mark.parametrize(
    ("key", "value", "match"),
    [
        ("note", ["a"], "state key 'note' must be a dict of note name"),
        ("constraints", [{"id": "c-1"}], "state key 'constraints' must be a list of"),
        ("hot_issues", "x", "state key 'hot_issues' must be a list of"),
    ],
)
def test_other_state_of_the_wrong_shape_names_the_key(key: str, value: Any, match: str) -> None:
    """Notes, constraints and hot issues of the wrong shape fail naming the key."""

    class State(MessagesState, NoteStateMixin, PinnedStateMixin):
        """Messages, notes and pinned items."""

    graph = StateGraph(State)
    graph.add_node("noop", lambda state: {})
    graph.add_edge(START, "noop")
    with pytest.raises(InvalidTypeError, match=match):
        graph.compile().invoke({"messages": [], key: value})


def test_an_async_source_in_a_sync_build_raises() -> None:
    """An async query source in `build` is a programmer's error, not a skipped source."""

    async def search(query: str) -> list[str]:
        return [query]

    builder = ContextBuilder(sources=[search])
    with pytest.raises(InvalidTypeError, match="search is async and cannot run in a sync build"):
        builder.build("q")


async def test_an_async_source_in_an_async_build_is_awaited() -> None:
    """The same source in `abuild` is awaited and its result used."""

    async def search(query: str) -> list[str]:
        return [f"found {query}"]

    text = await ContextBuilder(sources=[search]).abuild("the-needle")
    assert "found the-needle" in text


def test_a_malformed_hot_issue_is_skipped_and_the_constraints_stay(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A hot issue without `check` is skipped with a warning; constraints and good issues stay."""
    rule = {"id": "c-1", "text": "Use uv", "status": "active", "source": "user"}
    good = {"id": "check:lint", "check": "lint", "summary": "E501", "status": "active"}
    state = {"constraints": [rule], "hot_issues": [{"id": "x", "status": "active"}, good]}
    with caplog.at_level(logging.WARNING):
        packets = pinned_packets(state)
    assert [p.type for p in packets] == ["constraint", "hot_issue"]
    assert "skipping a hot issue" in caplog.text


class FailingModel(ScriptedChatModel):
    """A chat model whose every call fails, as a provider outage does."""

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        msg = "provider down"
        raise RuntimeError(msg)


def _summarizing_builder() -> tuple[ContextBuilder, list[dict[str, str]]]:
    model: BaseChatModel = FailingModel(responses=[AIMessage("never")])
    builder = ContextBuilder(config=ContextConfig(max_tokens=300), summarizer=model)
    history = [{"role": "user", "content": f"long message number {i} " * 5} for i in range(40)]
    return builder, history


def test_a_failing_summarizer_falls_back_to_trimming(caplog: pytest.LogCaptureFixture) -> None:
    """A summarizer that raises is logged; the build trims and stays within budget."""
    builder, history = _summarizing_builder()
    with caplog.at_level(logging.WARNING):
        result = builder.build_result("message", history)
    assert result.tokens <= 300
    assert "summary of earlier items" not in result.text
    assert "context summarizer failed" in caplog.text


async def test_a_failing_async_summarizer_falls_back_to_trimming(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The async build survives a failing summarizer the same way."""
    builder, history = _summarizing_builder()
    with caplog.at_level(logging.WARNING):
        result = await builder.abuild_result("message", history)
    assert result.tokens <= 300
    assert "context summarizer failed" in caplog.text
