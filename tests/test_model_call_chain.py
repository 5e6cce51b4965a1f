"""Our model-call wrappers chained under one traced wrapper (`chain_model_calls`).

The chain must compose exactly as `create_agent` composes separate wrappers: same
requests, same state updates (inner first, of an inner part's last call when an outer
one retries), sync and async; it must not change the caller's middleware objects.
"""

from __future__ import annotations

import asyncio
import inspect
import operator
import types
from collections.abc import Callable
from typing import Annotated, Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest
from langchain.agents.middleware.types import ExtendedModelResponse
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

import langgraph_context.agents._tool_check as tool_check
from langgraph_context import create_context_agent
from langgraph_context.agents import context_agent
from langgraph_context.agents._hooks import ModelCallChain, chain_model_calls
from langgraph_context.testing import ScriptedChatModel, ai_calls, tool_call


class LogState(AgentState):
    log: Annotated[list[str], operator.add]


class Tagging(AgentMiddleware[LogState, Any]):
    """Adds a system line, logs each call; with `tries`, calls the model that often."""

    state_schema = LogState

    def __init__(self, tag: str, tries: int = 1) -> None:
        self.tag, self.tries, self.calls = tag, tries, 0
        self.tools = []

    @property
    def name(self) -> str:
        return f"Tagging{self.tag}"

    def _request(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        self.calls += 1
        messages = [*request.messages[:-1], AIMessage(f"{self.tag}"), request.messages[-1]]
        return request.override(messages=messages)

    def _result(self, response: Any) -> ExtendedModelResponse:
        assert not isinstance(response, ExtendedModelResponse)  # a handler gives plain ones
        update = {"log": [f"{self.tag}{self.calls}"]}
        return ExtendedModelResponse(model_response=response, command=Command(update=update))

    def wrap_model_call(self, request: ModelRequest[Any], handler: Callable[..., Any]) -> Any:
        response = None
        for _ in range(self.tries):
            response = handler(self._request(request))
        return self._result(response)

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[..., Any]
    ) -> Any:
        response = None
        for _ in range(self.tries):
            response = await handler(self._request(request))
        return self._result(response)


_ASK: Any = {"messages": [("user", "weather?")]}
_CONFIG: Any = {"configurable": {"thread_id": "t"}}


@tool
def lookup(city: str) -> str:
    """Weather of a city."""
    return f"Sunny in {city}."


def _script() -> list[AIMessage]:
    return [ai_calls(tool_call("lookup", {"city": "Oslo"}, "c1")), AIMessage("Done.")]


def _run(middleware: list[AgentMiddleware[Any, Any]], *, chained: bool, aio: bool) -> Any:
    model = ScriptedChatModel(responses=_script())
    listed = chain_model_calls(middleware) if chained else middleware
    graph = create_agent(model, [lookup], middleware=listed, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    run = {"messages": [("user", "weather?")]}
    out = asyncio.run(graph.ainvoke(run, config)) if aio else graph.invoke(run, config)
    return [[m.content for m in seen] for seen in model.seen], out["log"]


@pytest.mark.parametrize("aio", [False, True])
def test_a_chain_sends_and_stores_what_separate_wrappers_do(aio: bool) -> None:
    """Same model inputs and the same state log (inner first, last retry only)."""

    def parts() -> list[AgentMiddleware[Any, Any]]:
        return [Tagging("a"), Tagging("b", tries=2), Tagging("c")]

    apart = _run(parts(), chained=False, aio=aio)
    chained = _run(parts(), chained=True, aio=aio)
    assert chained == apart
    seen, log = chained
    assert seen[0] == ["a", "b", "c", "weather?"]  # outermost first
    assert log == ["c2", "b2", "a1"]  # b tried twice: c's first try's update is dropped


def test_the_chain_leaves_the_parts_and_other_middleware_alone() -> None:
    """Parts keep their hooks (usable elsewhere); a middleware with another hook keeps its
    own place; a lone wrapper is not chained."""

    class Before(AgentMiddleware[Any, Any]):
        def before_model(self, state: Any, runtime: Any) -> None:
            return None

        def wrap_model_call(self, request: Any, handler: Callable[..., Any]) -> Any:
            return handler(request)

    a, b, before, c = Tagging("a"), Tagging("b"), Before(), Tagging("c")
    out = chain_model_calls([a, b, before, c])
    assert [type(m).__name__ for m in out] == [
        "_Keys",
        "_Keys",
        "ModelCallChain",
        "Before",
        "Tagging",
    ]
    assert [m.name for m in out[:3]] == ["Tagginga", "Taggingb", "Tagginga+Taggingb"]
    assert out[0].state_schema is LogState
    assert out[3] is before
    assert out[4] is c
    assert type(a) is Tagging
    assert type(a).wrap_model_call is Tagging.wrap_model_call
    assert isinstance(out[2], ModelCallChain)


def test_create_context_agent_wraps_each_model_call_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """One model-call wrapper of ours reaches `create_agent` (one traced span per call)."""
    given: list[Any] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        given.extend(kwargs["middleware"])
        return create_agent(*args, **kwargs)

    monkeypatch.setattr(context_agent, "create_agent", spy)
    model = ScriptedChatModel(responses=_script())
    graph = create_context_agent(model, [lookup], checkpointer=InMemorySaver())
    wrappers = [m for m in given if type(m).wrap_model_call is not AgentMiddleware.wrap_model_call]
    assert [type(m).__name__ for m in wrappers] == ["ModelCallChain"]
    assert wrappers[0].name == "compaction+context+prompt_cache"
    out = graph.invoke(_ASK, _CONFIG)
    assert isinstance(out["messages"][-2], ToolMessage)
    assert out["messages"][-1].content == "Done."
    assert "timestamp" in out["messages"][0].additional_kwargs  # the context's update landed


def test_create_context_agent_chained_matches_unchained(monkeypatch: pytest.MonkeyPatch) -> None:
    """Over a compacting thread the chained agent sends and stores what the unchained did."""

    def thread() -> tuple[list[list[str]], list[str], Any]:
        script = [
            ai_calls(tool_call("lookup", {"city": f"c{i}" * 300}, f"k{i}")) for i in range(12)
        ]
        model = ScriptedChatModel(responses=[*script, AIMessage("Done.")])
        graph = create_context_agent(
            model, [lookup], max_tokens=3_000, checkpointer=InMemorySaver()
        )
        out = graph.invoke(
            {"messages": [("user", "weather?")]}, {"configurable": {"thread_id": "t"}}
        )
        seen = [[str(m.content) for m in s] for s in model.seen]
        return seen, [str(m.content) for m in out["messages"]], out.get("compaction")

    chained = thread()
    monkeypatch.setattr(tool_check, "chain_model_calls", list)
    assert thread() == chained
    assert chained[2]  # the thread compacted


def _our_middleware_classes() -> list[type[AgentMiddleware[Any, Any]]]:
    """Every `AgentMiddleware` subclass defined in the package (the modules imported)."""
    import importlib
    import pkgutil

    import langgraph_context

    for info in pkgutil.walk_packages(langgraph_context.__path__, "langgraph_context."):
        if not info.name.endswith("__main__") and ".cli" not in info.name:
            importlib.import_module(info.name)
    found: list[type[AgentMiddleware[Any, Any]]] = []
    todo = list(AgentMiddleware.__subclasses__())
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if cls.__module__.startswith("langgraph_context") and cls not in found:
            found.append(cls)
    return found


def _fresh_signature(function: Callable[..., Any]) -> inspect.Signature:
    """`inspect.signature` of a copy of `function` without a stored signature."""
    copy = types.FunctionType(
        function.__code__,
        function.__globals__,
        function.__name__,
        function.__defaults__,
        function.__closure__,
    )
    copy.__kwdefaults__ = function.__kwdefaults__
    copy.__annotations__ = function.__annotations__
    return inspect.signature(copy)


def test_wrap_hooks_carry_their_own_signature() -> None:
    """Each wrap hook of ours stores its exact signature, which a bound hook reads back.

    `create_agent` runs the hooks under LangSmith's `traceable`, which asks
    `inspect.signature` of the bound hook per call: the stored one is the same value.
    """
    hooks = ("wrap_model_call", "awrap_model_call", "wrap_tool_call", "awrap_tool_call")
    checked = 0
    for cls in _our_middleware_classes():
        for name in hooks:
            function = cls.__dict__.get(name)
            if function is None or function is getattr(AgentMiddleware, name):
                continue  # not a hook of ours (`drop_hooks` puts the base class's back)
            stored = function.__signature__
            assert stored == _fresh_signature(function), f"{cls.__name__}.{name}"
            checked += 1
    assert checked >= 14
    fresh = _fresh_signature(ModelCallChain.wrap_model_call)
    bound = inspect.signature(ModelCallChain([]).wrap_model_call)  # what `traceable` asks
    assert bound == fresh.replace(parameters=list(fresh.parameters.values())[1:])
