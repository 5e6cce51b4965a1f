"""Bedrock `cachePoint` marks through langchain-aws's own request builder, no network.

`ChatBedrockConverse` is given a real boto3 `bedrock-runtime` client with dummy
credentials whose calls a botocore `Stubber` answers: the request is built by
langchain-aws and checked by botocore against the Converse API's service model
(a malformed `cachePoint` fails there), and nothing leaves the machine.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from langgraph_context import create_context_agent
from langgraph_context.context.breakpoints import mark_cache_points, uses_cache_points
from langgraph_context.messages import provider_ready_history
from tests.strategies import valid_histories

pytest.importorskip("langchain_aws")
boto3 = pytest.importorskip("boto3")
stub = pytest.importorskip("botocore.stub")

from langchain_aws import ChatBedrock, ChatBedrockConverse  # noqa: E402 - after the skip
from langchain_aws.chat_models.bedrock_converse import _messages_to_bedrock  # noqa: E402

MODEL_ID = "anthropic.claude-3-5-sonnet-20240620-v1:0"
POINT = {"cachePoint": {"type": "default"}}
MAX_POINTS = 4  # Bedrock's limit per request (system, messages and tools together)


@tool
def read_file(path: str) -> str:
    """Read a file of the repository."""
    return f"{path}: the queue drains in order."


def _answer(content: list[dict[str, Any]], *, read: int, write: int) -> dict[str, Any]:
    """A Converse response with the cache figures Bedrock reports."""
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": "tool_use" if any("toolUse" in b for b in content) else "end_turn",
        "usage": {
            "inputTokens": 100,
            "outputTokens": 5,
            "totalTokens": 105 + read + write,
            "cacheReadInputTokens": read,
            "cacheWriteInputTokens": write,
        },
        "metrics": {"latencyMs": 1},
    }


def _bedrock(answers: list[dict[str, Any]]) -> tuple[ChatBedrockConverse, list[dict[str, Any]]]:
    """A `ChatBedrockConverse` on a stubbed client, and the list its requests land in."""
    keys = {"aws_access_key_id": "test", "aws_secret_access_key": "test"}
    client = boto3.client("bedrock-runtime", region_name="us-east-1", **keys)
    sent: list[dict[str, Any]] = []
    client.meta.events.register(
        "before-parameter-build.bedrock-runtime.Converse",
        lambda params, **_: sent.append(params),
    )
    stubber = stub.Stubber(client)
    for answer in answers:
        stubber.add_response("converse", answer)  # botocore validates each request first
    stubber.activate()
    control = boto3.client("bedrock", region_name="us-east-1", **keys)
    model = ChatBedrockConverse(
        model=MODEL_ID, region_name="us-east-1", client=client, bedrock_client=control
    )
    return model, sent


def _points(request: dict[str, Any]) -> list[str]:
    """Where the request's cache points are: `system`, or `message <i>`, in order."""
    found = ["system" for b in request.get("system", []) if "cachePoint" in b]
    for i, message in enumerate(request["messages"]):
        found += [f"message {i}" for b in message["content"] if "cachePoint" in b]
    return found


def test_the_agent_sends_converse_cache_points_and_records_the_reported_cache() -> None:
    """A tool round on a real ChatBedrockConverse: each request, built by langchain-aws and
    validated by botocore, has a point after the system and after the stable history; the
    cache figures Bedrock reports land in `cache_usage`."""
    call = {"toolUse": {"toolUseId": "t1", "name": "read_file", "input": {"path": "README"}}}
    model, sent = _bedrock(
        [
            _answer([call], read=0, write=1500),
            _answer([{"text": "It drains in order."}], read=1500, write=40),
        ]
    )
    assert uses_cache_points(model)
    agent = create_context_agent(model, [read_file], system_prompt="You read code.")
    state = agent.invoke({"messages": [HumanMessage("What does the README say?")]})
    assert state["messages"][-1].content == "It drains in order."
    assert len(sent) == 2
    for request in sent:
        assert request["system"][-1] == POINT
        assert request["toolConfig"]["tools"]  # the tool rounds go as toolUse / toolResult
        points = _points(request)
        assert points[0] == "system"
        assert len(points) == 2
        assert len(points) <= MAX_POINTS
        assert "cache_control" not in str(request)
    second = sent[1]["messages"]
    assert [list(b) for b in second[1]["content"]] == [["toolUse"]]
    assert any("toolResult" in b for b in second[2]["content"])
    usage = state["cache_usage"]
    assert (usage["calls"], usage["cache_read"], usage["cache_write"]) == (2, 1500, 1540)


def test_only_converse_models_get_points() -> None:
    """langchain-aws's InvokeModel `ChatBedrock` and a fallback to another provider get
    none: only a Converse request takes a `cachePoint` block."""
    model, _ = _bedrock([])
    invoke_api = ChatBedrock(model_id=MODEL_ID, region_name="us-east-1", client=model.client)
    assert invoke_api._get_ls_params().get("ls_provider") == "amazon_bedrock"
    assert not uses_cache_points(invoke_api)
    other = ChatOpenAI(model="gpt-4o", api_key="k")  # type: ignore[arg-type]
    assert not uses_cache_points(model.with_fallbacks([other]))
    assert uses_cache_points(model.bind_tools([read_file]).with_fallbacks([model]))


def test_a_malformed_point_is_refused_by_the_stubbed_client() -> None:
    """The check can fail: botocore refuses a `cachePoint` without its `type`."""
    model, _ = _bedrock([_answer([{"text": "ok"}], read=0, write=0)])
    bad = HumanMessage([{"type": "text", "text": "hi"}, {"cachePoint": {"kind": "default"}}])
    with pytest.raises(stub.ParamValidationError, match=r"cachePoint: \"type\""):
        model.invoke([bad])


def _converted(history: list[BaseMessage]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """langchain-aws's conversion of `history` (messages, system)."""
    return _messages_to_bedrock(list(history), model_id=MODEL_ID, provider="anthropic")


def _plain(message: dict[str, Any]) -> tuple[str, str, list[Any]]:
    """A converted message without its points; text blocks joined as the converter joins
    adjacent same-role string contents (a marked string becomes a text block)."""
    blocks = [b for b in message["content"] if "cachePoint" not in b]
    text = "\n".join(b["text"] for b in blocks if set(b) == {"text"})
    return message["role"], text, [b for b in blocks if set(b) != {"text"}]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=valid_histories())
def test_marked_histories_convert_with_their_points_in_place(history: list[BaseMessage]) -> None:
    """On generated histories made provider-ready (as the agent sends them), the points
    `mark_cache_points` adds come out of
    langchain-aws's converter as Converse `cachePoint` blocks, at most one per marked
    message, each the last block of its message or system content, at most four."""
    rest = [m for m in history if not isinstance(m, SystemMessage)]
    sent = [SystemMessage("You read code."), *provider_ready_history([*rest, HumanMessage("q")])]
    messages, _ = _converted(sent)
    marked, system_out = _converted(mark_cache_points(sent))
    assert system_out[-1] == POINT
    request = {"system": system_out, "messages": marked}
    assert 1 <= len(_points(request)) <= MAX_POINTS
    assert [_plain(m) for m in marked] == [_plain(m) for m in messages]  # only points added
    for message in marked:
        blocks = message["content"]
        where = [i for i, b in enumerate(blocks) if "cachePoint" in b]
        assert where in ([], [len(blocks) - 1])


def test_a_thinking_turn_converts_without_a_point_after_its_reasoning() -> None:
    """An assistant turn ending in a thinking block is not marked; the one before is."""
    thinking = AIMessage(
        [{"type": "thinking", "thinking": "Check the queue.", "signature": "sig"}],
        response_metadata={"model_provider": "anthropic"},
    )
    history = [SystemMessage("s"), HumanMessage("q"), thinking]
    messages, _ = _converted(mark_cache_points(history))
    assert messages[0]["content"][-1] == POINT
    assert all("cachePoint" not in b for b in messages[1]["content"])
