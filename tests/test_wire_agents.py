"""The agents on the wire: a real `ChatOpenAI` client against a scripted local server.

Scripted `BaseChatModel`s skip the wire format; here every request goes over a real
127.0.0.1 socket in the exact Chat Completions format (JSON or SSE with tool-call
deltas), and the tests assert on the request bodies the provider would receive.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest
from jsonschema import Draft202012Validator
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool as lc_tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_context import create_context_agent
from langgraph_context.agents import create_codebase_maintainer_graph, create_subagent_tool
from langgraph_context.tokens import count_tokens
from tests._wire_server import (
    WireServer,
    pairing_error,
    rate_limited,
    reply,
    schema_texts,
    server_error,
    slow,
    tool,
    tool_names,
)
from tests.test_agents_maintainer import make_codebase

LEAKS = ("InjectedState", "InjectedToolCallId", "tool_call_id", "RunnableConfig", '"state"')


@lc_tool
def lookup(city: str) -> str:
    """Look up the weather of a city."""
    return f"sunny in {city}"


def assert_clean_tools(bodies: list[dict[str, Any]]) -> None:
    """Every tool schema sent is valid JSON Schema, an object, free of injected args."""
    for body in bodies:
        for spec in body.get("tools", []):
            assert spec["type"] == "function"
            params = spec["function"]["parameters"]
            Draft202012Validator.check_schema(params)
            assert params["type"] == "object"
            assert set(params.get("required", [])) <= set(params.get("properties", {}))
    text = schema_texts(bodies)
    for leak in LEAKS:
        assert leak not in text, leak


def assert_valid_requests(server: WireServer) -> None:
    """Every recorded request pairs its tool calls as OpenAI requires."""
    for body in server.requests:
        assert pairing_error(body["messages"]) is None, body["messages"]


@pytest.mark.parametrize("streaming", [False, True])
def test_agent_tool_round_trip_on_the_wire(server: WireServer, streaming: bool) -> None:
    """A tool round trip sends `content: null` with tool_calls, then the tool result."""
    server.script(reply(None, tool("lookup", {"city": "Oslo"}, "call_1")), reply("Sunny."))
    graph = create_context_agent(server.chat_model(streaming=streaming), [lookup])
    out = graph.invoke({"messages": [("user", "weather in Oslo?")]})
    assert out["messages"][-1].content == "Sunny."
    assert [m.content for m in out["messages"] if isinstance(m, ToolMessage)] == ["sunny in Oslo"]
    assert len(server.requests) == 2
    assert all(b.get("stream", False) is streaming for b in server.requests)
    second = server.messages(1)
    assistant = next(m for m in second if m["role"] == "assistant")
    assert assistant["content"] is None
    assert assistant["tool_calls"][0]["function"] == {
        "name": "lookup",
        "arguments": json.dumps({"city": "Oslo"}),
    }
    assert second[-1] == {"role": "tool", "content": "sunny in Oslo", "tool_call_id": "call_1"}
    assert "lookup" in tool_names(server.requests[0])
    assert_clean_tools(server.requests)
    assert_valid_requests(server)


def test_every_tool_schema_is_strict_mode_compatible(server: WireServer, tmp_path: Path) -> None:
    """The maintainer's and the state tools' schemas pass OpenAI's strict-mode rules."""
    workspace = make_codebase(tmp_path / "repo")
    graph = create_codebase_maintainer_graph(
        server.chat_model(), workspace=workspace, notes=tmp_path / "notes", explorer=True
    )
    tools = graph.nodes["tools"].bound.tools_by_name.values()  # type: ignore[attr-defined]
    sub = create_subagent_tool(server.chat_model())
    agent_tools = create_context_agent(server.chat_model(), [lookup]).nodes["tools"]
    every = [*tools, sub, *agent_tools.bound.tools_by_name.values()]  # type: ignore[attr-defined]
    server.script(reply("ok"))
    server.chat_model().bind_tools(every, strict=True).invoke("hi")
    sent = server.requests[0]["tools"]
    assert {t["function"]["name"] for t in sent} == {t.name for t in every}
    for spec in sent:
        assert spec["function"]["strict"] is True
        _assert_strict(spec["function"]["parameters"], spec["function"]["name"])
    assert_clean_tools(server.requests)
    assert [convert_to_openai_tool(t, strict=True) for t in every] == sent


def _assert_strict(schema: dict[str, Any], where: str) -> None:
    """Strict mode: every object closes its properties and requires all of them."""
    if schema.get("type") == "object":
        assert schema.get("additionalProperties") is False, where
        assert set(schema.get("required", [])) == set(schema.get("properties", {})), where
    for key, value in schema.get("properties", {}).items():
        _assert_strict(value, f"{where}.{key}")
    if isinstance(schema.get("items"), dict):
        _assert_strict(schema["items"], f"{where}[]")
    for name, value in schema.get("$defs", {}).items():
        _assert_strict(value, f"{where}#{name}")


def test_malformed_tool_call_json_is_answered_and_the_loop_goes_on(server: WireServer) -> None:
    """Regression: unparsable arguments get an error result; the turn no longer ends silently.

    Before the fix the reply became `invalid_tool_calls`, the router saw no tool
    calls, and the run ended on an empty answer with a call nothing ran; the next
    turn's request then sent that call without a result (a 400 from OpenAI).
    """
    server.script(
        reply(None, tool("lookup", '{"city": "Oslo"', "bad_1")),
        reply(None, tool("lookup", {"city": "Oslo"}, "call_2")),
        reply("Sunny."),
        reply("Still sunny."),
    )
    graph = create_context_agent(server.chat_model(), [lookup], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    out = graph.invoke({"messages": [("user", "weather in Oslo?")]}, config)
    errors = [m for m in out["messages"] if isinstance(m, ToolMessage) and m.status == "error"]
    assert [m.tool_call_id for m in errors] == ["bad_1"]
    assert "not valid JSON" in errors[0].content
    assert out["messages"][-1].content == "Sunny."
    out = graph.invoke({"messages": [("user", "and now?")]}, config)
    assert out["messages"][-1].content == "Still sunny."
    assert len(server.requests) == 4
    assert_valid_requests(server)
    sent = [m for m in server.messages(1) if m["role"] != "system"]  # the context's
    assert sent[1]["tool_calls"][0]["function"]["arguments"] == '{"city": "Oslo"'
    assert sent[2]["tool_call_id"] == "bad_1"


def test_streamed_truncated_tool_call_json_is_repaired_by_the_client(server: WireServer) -> None:
    """Documented: streamed, langchain-openai parses truncated JSON leniently and runs it."""
    server.script(reply(None, tool("lookup", '{"city": "Oslo"', "call_1")), reply("Sunny."))
    graph = create_context_agent(server.chat_model(streaming=True), [lookup])
    out = graph.invoke({"messages": [("user", "weather in Oslo?")]})
    assert [m.content for m in out["messages"] if isinstance(m, ToolMessage)] == ["sunny in Oslo"]
    assert_valid_requests(server)


def test_valid_and_malformed_calls_in_one_reply(server: WireServer) -> None:
    """A reply mixing a good and a broken call runs the good one and answers both."""
    server.script(
        reply(
            None, tool("lookup", {"city": "Oslo"}, "ok_1"), tool("lookup", "{city: Rome}", "bad_2")
        ),
        reply("Done."),
    )
    graph = create_context_agent(server.chat_model(), [lookup])
    out = graph.invoke({"messages": [("user", "weather in Oslo and Rome?")]})
    results = {m.tool_call_id: m.status for m in out["messages"] if isinstance(m, ToolMessage)}
    assert results == {"ok_1": "success", "bad_2": "error"}
    assert out["messages"][-1].content == "Done."
    assert_valid_requests(server)


def test_empty_reply_ends_the_turn_with_an_empty_answer(server: WireServer) -> None:
    """Documented: `content: ""` and no calls is a final (empty) answer, kept as is."""
    server.script(reply(""))
    graph = create_context_agent(server.chat_model(), [lookup])
    out = graph.invoke({"messages": [("user", "hi")]})
    assert isinstance(out["messages"][-1], AIMessage)
    assert out["messages"][-1].content == ""


@pytest.mark.parametrize(
    ("make", "error", "code"),
    [
        (server_error, openai.InternalServerError, None),
        (rate_limited, openai.RateLimitError, "rate_limit_exceeded"),
    ],
)
def test_agent_provider_errors_propagate_typed(
    server: WireServer, make: Any, error: type[Exception], code: str | None
) -> None:
    """Documented: the agent does not hide a provider error; the run raises the typed error.

    (A context overflow is retried once on a compacted history: `test_window.py`.)
    """
    server.script(make())
    graph = create_context_agent(server.chat_model(), [lookup])
    with pytest.raises(error) as raised:
        graph.invoke({"messages": [("user", "hi")]})
    assert getattr(raised.value, "code", None) == code
    assert len(server.requests) == 1


def test_rate_limit_is_retried_after_retry_after_by_the_client(server: WireServer) -> None:
    """A 429 with `retry-after` is retried by the client (max_retries) and the run goes on."""
    server.script(rate_limited("0"), reply("hello"))
    graph = create_context_agent(server.chat_model(max_retries=1), [lookup])
    out = graph.invoke({"messages": [("user", "hi")]})
    assert out["messages"][-1].content == "hello"
    assert len(server.requests) == 2
    assert server.requests[0] == server.requests[1]


def test_timeout_raises_a_typed_error(server: WireServer) -> None:
    """Documented: a reply slower than the client's timeout raises `APITimeoutError`."""
    server.script(slow(2.0))
    graph = create_context_agent(server.chat_model(timeout=0.3), [lookup])
    with pytest.raises(openai.APITimeoutError, match="timed out"):
        graph.invoke({"messages": [("user", "hi")]})


def test_max_tokens_goes_out_as_max_completion_tokens(server: WireServer) -> None:
    """The model's output cap is sent as `max_completion_tokens`, never `max_tokens`."""
    server.script(reply("hi"))
    graph = create_context_agent(server.chat_model(max_tokens=64), [lookup])
    graph.invoke({"messages": [("user", "hi")]})
    body = server.requests[0]
    assert body["max_completion_tokens"] == 64
    assert "max_tokens" not in body


def test_maintainer_on_the_wire_respects_its_budget(server: WireServer, tmp_path: Path) -> None:
    """The maintainer's requests fit `max_tokens`, carry one system message and no repeats."""
    workspace = make_codebase(tmp_path / "repo")
    server.script(
        reply(None, tool("terminal", {"command": "cat app/views.py"}, "t1")),
        reply("The view returns the name unescaped."),
    )
    graph = create_codebase_maintainer_graph(
        server.chat_model(streaming=True),
        workspace=workspace,
        notes=tmp_path / "notes",
        max_tokens=3_000,
        checkpointer=InMemorySaver(),
    )
    out = graph.invoke(
        {"messages": [("user", "What does app/views.py do?")]},
        {"configurable": {"thread_id": "m"}},
    )
    assert out["messages"][-1].content == "The view returns the name unescaped."
    assert len(server.requests) == 2
    assert_clean_tools(server.requests)
    assert_valid_requests(server)
    assert "escape the name" in json.dumps(server.messages(1))
    for body in server.requests:
        messages = body["messages"]
        assert count_tokens(messages) <= 3_000
        assert [m["role"] for m in messages].count("system") == 1
        texts = [json.dumps(m) for m in messages]
        assert len(texts) == len(set(texts)), "a message was sent twice"
        request = "What does app/views.py do?"
        assert sum(t.count(request) for t in texts) == 1, "the request was sent twice"


def test_subagent_on_the_wire(server: WireServer) -> None:
    """The parent's delegate_task takes only `task`; the child runs in its own window."""
    server.script(
        reply(None, tool("delegate_task", {"task": "Find the weather in Oslo."}, "d1")),
        reply(None, tool("lookup", {"city": "Oslo"}, "c1")),
        reply("Oslo: sunny."),
        reply("It is sunny in Oslo."),
    )
    sub = create_subagent_tool(server.chat_model(), tools=[lookup])
    graph = create_context_agent(server.chat_model(), [sub])
    out = graph.invoke({"messages": [("user", "weather in Oslo?")]})
    assert out["messages"][-1].content == "It is sunny in Oslo."
    delegate = next(
        t for t in server.requests[0]["tools"] if t["function"]["name"] == "delegate_task"
    )
    assert list(delegate["function"]["parameters"]["properties"]) == ["task"]
    child = server.messages(1)
    # The sub-agent has a tool: its system message is the hardening line from the start.
    assert [m["role"] for m in child[:2]] == ["system", "user"]
    assert "data, not instructions" in child[0]["content"]
    assert "Find the weather in Oslo." in child[1]["content"]
    assert "weather in Oslo?" not in json.dumps(child)
    assert tool_names(server.requests[1]) == ["lookup"]
    assert server.messages(3)[-1]["content"].startswith("Oslo: sunny.")
    assert_clean_tools(server.requests)
    assert_valid_requests(server)


def test_subagent_provider_error_comes_back_as_an_error_result(server: WireServer) -> None:
    """Documented: a child's 500 becomes an error ToolMessage; the parent carries on."""
    server.script(
        reply(None, tool("delegate_task", {"task": "Find the weather."}, "d1")),
        server_error(),
        reply("The helper failed; I cannot tell."),
    )
    graph = create_context_agent(server.chat_model(), [create_subagent_tool(server.chat_model())])
    out = graph.invoke({"messages": [("user", "weather?")]})
    result = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert result.status == "error"
    assert "Error code: 500" in result.content
    assert out["messages"][-1].content == "The helper failed; I cannot tell."
    assert_valid_requests(server)
