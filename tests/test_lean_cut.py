"""Lean per call in the cut's room: tool checks once at build, cuts that skip the middle."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from unittest.mock import patch

import pytest
from deepagents.middleware import FilesystemMiddleware
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.types import Command

from langgraph_context.agents import (
    PinnedMiddleware,
    StateToolsMiddleware,
    create_context_agent,
)
from langgraph_context.agents._tool_check import check_tools_at_build
from langgraph_context.compaction.entry import CUT_MARKER, cut_tool_result
from langgraph_context.recall import RecallLimits, RecallMiddleware
from langgraph_context.tokens import TiktokenCounter, _cut, truncate_text
from tests.conftest import ScriptedChatModel, ai_calls, call


@tool
def ls() -> str:
    """List the user's files."""
    return "files"


def _wraps(middleware: AgentMiddleware[Any, Any]) -> bool:
    return type(middleware).wrap_model_call is not AgentMiddleware.wrap_model_call


def test_checked_at_build_our_tool_middleware_wraps_no_model_call() -> None:
    """After the build check, ours add no model-call wrapper and the agent still runs them."""
    ours = [StateToolsMiddleware(), PinnedMiddleware()]
    assert all(_wraps(m) for m in ours)
    check_tools_at_build([], [], ours)
    assert not any(_wraps(m) for m in ours)
    assert isinstance(ours[0], StateToolsMiddleware)
    model = ScriptedChatModel(responses=[ai_calls(call("notes_ls", {}, "a")), AIMessage("done")])
    app = create_agent(model, [], middleware=ours)
    out = app.invoke({"messages": [HumanMessage("list")]})
    results = [m.content for m in out["messages"] if isinstance(m, ToolMessage)]
    assert results == ["No notes yet."]


def test_a_user_middleware_tool_shadowing_ours_is_refused_at_build() -> None:
    """deepagents' `ls` beside bare note tools is refused when the agent is built."""
    with pytest.raises(
        ValueError,
        match=r"two tools are named 'ls': FilesystemMiddleware tool 'ls'.*state_tools tool",
    ):
        create_context_agent(
            ScriptedChatModel(responses=[AIMessage("x")]),
            [],
            middleware=[FilesystemMiddleware()],
            note_prefix=None,
        )


class _AddsTool(AgentMiddleware[Any, Any]):
    """A user wrapper that adds a tool to each request (so names change per call)."""

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        return handler(request.override(tools=[*request.tools, ls]))


def test_a_user_model_call_wrapper_keeps_our_per_call_check() -> None:
    """A tool a user wrapper adds at call time, named like one of ours, is refused then."""
    app = create_context_agent(
        ScriptedChatModel(responses=[AIMessage("x")]), [], middleware=[_AddsTool()]
    )
    with pytest.raises(ValueError, match=r"two tools are named 'ls'"):
        app.invoke({"messages": [HumanMessage("hi")]})


def _texts() -> list[str]:
    """A log, prose with non-ASCII text, and JSON with spaces: each a few thousand tokens."""
    log = "\n".join(
        f"2024-05-01T10:{i % 60:02d}:07Z WARN [svc-{i % 7}] retry {i} upstream slow"
        f" id={i * 104_729:012x} ms={i * 53 % 9000}"
        for i in range(160)
    )
    prose = " ".join(f"Über {i} café naïve — the {i % 13}th line, 東京 ✓." for i in range(500))
    rows = json.dumps([{"id": i, "name": f"item {i}", "tags": ["a b", "c"]} for i in range(300)])
    return [log, prose, rows]


@pytest.mark.parametrize("limit", [60, 300, 800])
def test_a_text_far_over_the_limit_keeps_what_a_whole_encoding_keeps(
    limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Encoding only the ends keeps the very text a whole encoding keeps, counted exactly."""
    counter = TiktokenCounter()
    marker = "\n[... {n} characters cut ...]\n"
    ends = [truncate_text(t, limit, marker=marker, keep="ends") for t in _texts()]
    monkeypatch.setattr(_cut, "_encoded_ends", lambda *_: None)
    whole = [truncate_text(t, limit, marker=marker, keep="ends") for t in _texts()]
    assert ends == whole
    assert all(limit - 3 <= counter.count_fresh(cut) <= limit for cut in ends)


def test_a_far_over_result_names_an_estimated_total_near_the_exact_one() -> None:
    """The notice's total (its middle estimated) is within 10% of the exact count."""
    counter = TiktokenCounter()
    for i, text in enumerate(_texts()):
        short = cut_tool_result(ToolMessage(text, tool_call_id=f"c{i}"), 300)
        assert short is not None
        exact = counter.count_fresh(text)
        assert abs(short.additional_kwargs[CUT_MARKER] - exact) <= exact // 10


def test_the_tokens_of_a_text_known_at_its_ends_refuse_its_middle() -> None:
    """A middle token (or a slice reaching it) is refused, so the caller encodes it whole."""
    tokens = _cut._Ends([1, 2], [8, 9], 10)
    assert (len(tokens), tokens[1], tokens[9], tokens[:2], tokens[8:]) == (10, 2, 9, [1, 2], [8, 9])
    with pytest.raises(_cut._Beyond, match="5"):
        tokens[5]
    with pytest.raises(_cut._Beyond, match="slice"):
        tokens[1:9]


def _uneven() -> str:
    """Dense lines at both ends, plain prose between: the ends' density misleads."""
    dense = "\n".join(f"k{i:x}éü日{i * 7919:x}" for i in range(40))
    line = "The report says the house is on the hill and the road is long"
    sparse = "\n".join([line] * 200)
    return f"{dense}\n{sparse}\n{dense}"


def test_an_uneven_text_is_estimated_from_its_middle_and_kept_whole_when_it_fits() -> None:
    """A result fitting the recall limit stays whole although its ends alone are far over."""
    text = _uneven()
    exact = TiktokenCounter().count_fresh(text)
    short = cut_tool_result(ToolMessage(text, tool_call_id="u"), 200)
    assert short is not None
    assert abs(short.additional_kwargs[CUT_MARKER] - exact) <= exact // 10
    recall = RecallMiddleware(exact + 10, keep_tokens=200, minify_json=False)
    result = ToolMessage(text, tool_call_id="u", name="dump")
    assert recall.offload(result) == (result, [], None)
    over = RecallMiddleware(exact - 10, keep_tokens=200, minify_json=False)
    cut, _, _ = over.offload(result)
    assert isinstance(cut, Command)
    assert TiktokenCounter().count_fresh(cut.update["messages"][0].content) <= 200


def test_the_prompt_cache_key_follows_the_model_of_each_call() -> None:
    """The key is set for an OpenAI model, not for the next call's other model, then again."""
    from langchain_openai import ChatOpenAI

    from langgraph_context.providers import PromptCacheMiddleware

    openai = ChatOpenAI(model="gpt-4o", api_key="k")  # type: ignore[arg-type]
    other = ScriptedChatModel(responses=[])
    metering = PromptCacheMiddleware()
    sent: list[dict[str, Any]] = []

    def handler(request: ModelRequest) -> ModelResponse:
        sent.append(dict(request.model_settings))
        return ModelResponse(result=[AIMessage("ok")])

    def call_with(model: Any) -> None:
        request = ModelRequest(model=model, messages=[HumanMessage("hi")], tools=[], state={})
        with patch("langgraph_context.providers.prompt_cache.thread_id", return_value="t1"):
            metering.wrap_model_call(request, handler)

    for model in (openai, other, openai):
        call_with(model)
    assert [s.get("prompt_cache_key") for s in sent] == ["t1", None, "t1"]


def test_the_caps_read_an_index_whose_entries_lack_a_size() -> None:
    """An entry without `chars` counts as empty: the oldest still go first past the caps."""
    limits = RecallLimits(max_items=5, max_bytes=100)
    index: dict[str, Any] = {"a": {"at": 1.0}, "b": {"chars": 60}, "c": {"chars": 60}}
    assert limits.over(index, 2.0) == ["a", "b"]
    assert limits.over({"a": {"at": 1.0}, "b": {"chars": 60}}, 2.0) == []
