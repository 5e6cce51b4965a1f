"""Lean per call, sixth pass (issue 35): a steady call's request is the full path's.

`ContextMiddleware` extends the thread's last request when a call is that call plus
one closed tool round (`agents/_steady`). These tests drive real agents with the
extension on and forced off and compare every request the model received and the
final states.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import re
import weakref
from collections.abc import Iterator
from typing import Annotated, Any
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain.agents import AgentState, create_agent
from langchain.tools import InjectedState, InjectedToolCallId
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_config
from langgraph.types import Command
from pydantic import Field

from langgraph_context.agents import ContextMiddleware
from langgraph_context.agents._steady import STEADY_THREADS, SteadyCalls
from langgraph_context.context import stamp
from langgraph_context.context.stamp import MESSAGE_TIME_KEY
from langgraph_context.state import NoteStateMixin, PlanStateMixin
from langgraph_context.testing import ScriptedChatModel, ai_calls, tool_call

_WORDS = ["alpha", "beta", "gamma", "delta", "route", "cache", "shard", "retry", "upstream"]


class _State(AgentState, PlanStateMixin, NoteStateMixin, total=False):
    """The agent's state with a plan and notes."""


def _text(size: int, seed: int) -> str:
    """`size` words, different per seed."""
    return " ".join(_WORDS[(seed * 7 + i * (seed % 5 + 1)) % len(_WORDS)] for i in range(size))


@tool
def read(size: int, seed: int, tool_call_id: Annotated[str, InjectedToolCallId]) -> ToolMessage:
    """Read a log of `size` words."""
    return ToolMessage(_text(size, seed), tool_call_id=tool_call_id, id=f"t-{tool_call_id}")


@tool
def set_plan(step: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
    """Set a one-step plan."""
    update = {"plan": [{"content": step, "status": "pending"}]}
    done = ToolMessage("planned", tool_call_id=tool_call_id, id=f"t-{tool_call_id}")
    return Command(update={**update, "messages": [done]})


@tool
def write_note(name: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
    """Write a note."""
    done = ToolMessage("noted", tool_call_id=tool_call_id, id=f"t-{tool_call_id}")
    return Command(update={"note": {name: f"text of {name}"}, "messages": [done]})


@tool
def forget(
    tool_call_id: Annotated[str, InjectedToolCallId], state: Annotated[Any, InjectedState]
) -> Command[Any]:
    """Remove the oldest message but one from the history."""
    old = state["messages"][1]
    done = ToolMessage("forgotten", tool_call_id=tool_call_id, id=f"t-{tool_call_id}")
    return Command(update={"messages": [RemoveMessage(id=old.id), done]})


@tool
def edit_first(
    state: Annotated[Any, InjectedState], tool_call_id: Annotated[str, InjectedToolCallId]
) -> ToolMessage:
    """Edit the first message in place (not through the state's reducer)."""
    first = state["messages"][0]
    first.content = f"{first.content} (edited)"
    return ToolMessage("edited", tool_call_id=tool_call_id, id=f"t-{tool_call_id}")


_TOOLS = [read, set_plan, write_note, forget, edit_first]


class _Model(ScriptedChatModel):
    """Replies from one script per thread; records each request per thread."""

    scripts: dict[str, list[AIMessage]] = Field(default_factory=dict)
    at: dict[str, int] = Field(default_factory=dict)
    requests: dict[str, list[list[BaseMessage]]] = Field(default_factory=dict)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        thread = get_config()["configurable"]["thread_id"]
        self.requests.setdefault(thread, []).append(list(messages))
        k = self.at.get(thread, 0)
        self.at[thread] = k + 1
        script = self.scripts[thread]
        reply = script[k] if k < len(script) else AIMessage("done")
        # Every message has an id of the script's (none a random uuid): an id is rendered in
        # the context, so its token count decides what fits a tight budget.
        message = reply.model_copy(update={"id": f"{thread}-ai{k}"})
        return ChatResult(generations=[ChatGeneration(message=message)])


_UUID = re.compile(r"(lc_run--)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
Round = tuple[str, int, int]  # (tool, size, seed)
Turn = tuple[list[Round], bool]  # (rounds, a system message comes with the user turn)

_rounds = st.lists(
    st.tuples(
        st.sampled_from(["read", "read", "read", "read2", "plan", "note", "forget"]),
        st.integers(1, 400),
        st.integers(0, 99),
    ),
    max_size=4,
)
_turns = st.lists(st.tuples(_rounds, st.booleans()), min_size=1, max_size=3)


def _script(turns: list[Turn], tag: str) -> list[AIMessage]:
    """The model's replies for `turns`: one AI message per round, then an answer."""
    ids = (f"{tag}{k}" for k in itertools.count())
    out: list[AIMessage] = []
    for rounds, _ in turns:
        for kind, size, seed in rounds:
            if kind == "read2":
                calls = [
                    tool_call("read", {"size": size, "seed": seed}, next(ids)),
                    tool_call("read", {"size": size // 2 + 1, "seed": seed + 1}, next(ids)),
                ]
            elif kind == "plan":
                calls = [tool_call("set_plan", {"step": f"step {seed}"}, next(ids))]
            elif kind == "note":
                calls = [tool_call("write_note", {"name": f"n{seed}"}, next(ids))]
            elif kind == "forget":
                calls = [tool_call("forget", {}, next(ids))]
            else:
                calls = [tool_call("read", {"size": size, "seed": seed}, next(ids))]
            out.append(ai_calls(*calls, content="" if seed % 3 else f"looking {seed}"))
        out.append(AIMessage(f"answer {len(out)}"))
    return out


def _inputs(turns: list[Turn], tag: str) -> list[dict[str, Any]]:
    """Each turn's input: a user message, after a system message when the turn says so."""
    out = []
    for k, (_, system) in enumerate(turns):
        user = HumanMessage(f"{tag} request {k}", id=f"{tag}-h{k}")
        note = SystemMessage(f"note from a node {k}", id=f"{tag}-s{k}")
        messages = [note, user] if system else [user]
        out.append({"messages": messages})
    return out


def _agent(
    middleware: ContextMiddleware, scripts: dict[str, list[AIMessage]]
) -> tuple[Any, _Model]:
    """An agent with the log tools, `middleware` and a model replying from `scripts`."""
    model = _Model(responses=[AIMessage("unused")])
    model.scripts = scripts
    agent = create_agent(
        model,
        tools=_TOOLS,
        middleware=[middleware],
        state_schema=_State,
        checkpointer=InMemorySaver(),
        system_prompt="You read logs.",
    )
    return agent, model


def _run(
    turns: list[Turn],
    max_tokens: int,
    *,
    steady: bool,
    threads: tuple[str, ...],
    script: Any = _script,
) -> tuple[dict[str, Any], ContextMiddleware]:
    """Run `turns` on each thread, their steps interleaved, on one agent; what it saw."""
    middleware = ContextMiddleware(max_tokens)
    if not steady:
        middleware._steady = None  # the full path on every call
    agent, model = _agent(middleware, {t: script(turns, t) for t in threads})

    def steps(thread: str) -> Iterator[Any]:
        config = {"configurable": {"thread_id": thread}, "recursion_limit": 200}
        for start in _inputs(turns, thread):
            yield from agent.stream(start, config, stream_mode="updates")

    # One time on every stamp, in both runs: a rendered date never differs between them.
    with mock.patch.object(stamp, "_stamp", return_value="2026-01-05T10:00:00+00:00"):
        for _ in itertools.zip_longest(*(steps(t) for t in threads)):
            pass
    states = {t: agent.get_state({"configurable": {"thread_id": t}}).values for t in threads}
    return {"requests": model.requests, "states": states}, middleware


def _canonical(value: Any) -> Any:
    """`value` as plain data: message ids by order of appearance, no time stamps."""
    names: dict[str, str] = {}

    def walk(item: Any) -> Any:
        if isinstance(item, BaseMessage):
            data = item.model_dump()
            data["additional_kwargs"] = {
                k: v for k, v in data["additional_kwargs"].items() if k != MESSAGE_TIME_KEY
            }
            data["id"] = names.setdefault(str(item.id), f"m{len(names)}")
            data.pop("response_metadata", None)
            return {"class": type(item).__name__, **walk(data)}
        if isinstance(item, dict):
            return {k: walk(v) for k, v in item.items()}
        if isinstance(item, list | tuple):
            return [walk(v) for v in item]
        if isinstance(item, str):  # ids quoted in text (the context renders some)
            return _UUID.sub(lambda m: names.setdefault(m.group(), f"m{len(names)}"), item)
        return item

    return walk(value)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns=_turns, max_tokens=st.sampled_from([700, 1_500, 4_000, 20_000]))
def test_steady_requests_and_states_equal_the_full_paths(
    turns: list[Turn], max_tokens: int
) -> None:
    """Generated turns on two interleaved threads: every request and state as the full path's."""
    fast, middleware = _run(turns, max_tokens, steady=True, threads=("a", "b"))
    full, _ = _run(turns, max_tokens, steady=False, threads=("a", "b"))
    assert _canonical(fast) == _canonical(full)
    assert middleware._steady is not None
    assert middleware._steady.hits + middleware._steady.misses == sum(
        len(r) for r in fast["requests"].values()
    )


def _long_turn() -> list[Turn]:
    return [([("read", 30, k) for k in range(6)], False), ([("read", 20, 7)], False)]


def test_steady_calls_are_taken_inside_a_turn() -> None:
    """Six reads in a turn: the calls after the first extend the last request."""
    fast, middleware = _run(_long_turn(), 20_000, steady=True, threads=("a",))
    full, _ = _run(_long_turn(), 20_000, steady=False, threads=("a",))
    assert _canonical(fast) == _canonical(full)
    steady = middleware._steady
    assert steady is not None
    assert (steady.hits, steady.misses) == (6, 3)  # a turn's first call and its answer's


def test_a_message_edited_in_place_is_not_served_stale() -> None:
    """A tool edits the first message in place: the next call takes the full path."""
    turns: list[Turn] = [([("read", 10, 1), ("edit", 0, 0), ("read", 10, 2)], False)]

    def script(_: list[Turn], tag: str) -> list[AIMessage]:
        return [
            ai_calls(tool_call("read", {"size": 10, "seed": 1}, f"{tag}0")),
            ai_calls(tool_call("edit_first", {}, f"{tag}1")),
            ai_calls(tool_call("read", {"size": 10, "seed": 2}, f"{tag}2")),
            AIMessage("answer"),
        ]

    fast, middleware = _run(turns, 20_000, steady=True, threads=("a",), script=script)
    full, _ = _run(turns, 20_000, steady=False, threads=("a",), script=script)
    assert _canonical(fast) == _canonical(full)
    steady = middleware._steady
    assert steady is not None
    # Call 1 has no tool output (not hardened: never extended), call 2 has no record,
    # call 3 follows the edit (the first message's content was replaced): full path.
    assert (steady.hits, steady.misses) == (1, 3)


def test_async_calls_equal_sync_calls() -> None:
    """The same turns through `astream` send the same requests and leave the same state."""
    turns = _long_turn()
    sync, _ = _run(turns, 1_500, steady=True, threads=("a",))
    middleware = ContextMiddleware(1_500)
    agent, model = _agent(middleware, {"a": _script(turns, "a")})
    config: Any = {"configurable": {"thread_id": "a"}, "recursion_limit": 200}

    async def run() -> dict[str, Any]:
        for start in _inputs(turns, "a"):
            async for _ in agent.astream(start, config, stream_mode="updates"):
                pass
        state = await agent.aget_state(config)
        return {"requests": model.requests, "states": {"a": state.values}}

    assert _canonical(asyncio.run(run())) == _canonical(sync)
    assert middleware._steady is not None
    assert middleware._steady.hits == 6


def test_threads_running_at_once_each_take_their_steady_calls() -> None:
    """Four threads at once on one middleware: each call's report reaches its own record."""
    turns, threads = _long_turn(), ("a", "b", "c", "d")
    full, _ = _run(turns, 20_000, steady=False, threads=threads)
    middleware = ContextMiddleware(20_000)
    agent, model = _agent(middleware, {t: _script(turns, t) for t in threads})

    def config(thread: str) -> Any:
        return {"configurable": {"thread_id": thread}, "recursion_limit": 200}

    async def run(thread: str) -> None:
        for start in _inputs(turns, thread):
            await agent.ainvoke(start, config(thread))

    async def run_all() -> None:
        await asyncio.gather(*map(run, threads))

    with mock.patch.object(stamp, "_stamp", return_value="2026-01-05T10:00:00+00:00"):
        asyncio.run(run_all())
    for t in threads:
        seen = {"requests": model.requests[t], "state": agent.get_state(config(t)).values}
        assert _canonical(seen) == _canonical(
            {"requests": full["requests"][t], "state": full["states"][t]}
        )
    steady = middleware._steady
    assert steady is not None
    # As each thread alone (`test_steady_calls_are_taken_inside_a_turn`): 6 hits, 3 misses.
    assert (steady.hits, steady.misses) == (6 * len(threads), 3 * len(threads))


def test_records_go_with_their_threads_and_stay_bounded() -> None:
    """A finished run leaves no record; more threads than the bound keep the bound."""
    steady = SteadyCalls(None, 1_000)
    held = []
    for k in range(STEADY_THREADS + 5):
        first, second = HumanMessage(f"hi {k}"), AIMessage("hello")
        view: list[BaseMessage] = [SystemMessage("s"), HumanMessage(f"hi {k}")]
        request = _Request(first)
        sent = _Request(first, [HumanMessage(f"hi {k}")])
        steady.remember(request, "", [first, second], [first, second], view, (view, 10), sent)
        held.append((first, second))
    assert len(steady) == STEADY_THREADS
    ref = weakref.ref(held[-1][0])
    held.clear()
    del first, second, request, sent
    gc.collect()
    assert ref() is None
    assert len(steady) == 0


class _Request:
    """The fields of a model request `SteadyCalls.remember` reads."""

    def __init__(self, first: BaseMessage, messages: list[BaseMessage] | None = None) -> None:
        self.messages = messages if messages is not None else [first]
        self.system_message = SystemMessage("s")
        self.model = None
        self.state: dict[str, Any] = {}


def test_a_record_does_not_keep_its_first_message_alive() -> None:
    """The first message sent as itself is not held: the record still goes with it."""
    steady = SteadyCalls(None, 1_000)
    first, second = HumanMessage("hi"), AIMessage("hello")
    view = [SystemMessage("s"), first]
    report = (view, 10)
    steady.remember(
        _Request(first), "", [first, second], [first, second], view, report, _Request(first)
    )
    assert len(steady) == 1
    ref = weakref.ref(first)
    del first, view, report
    gc.collect()
    assert ref() is None
    assert len(steady) == 0
