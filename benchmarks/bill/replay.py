"""Replay a session through a compiled agent graph and meter every model call.

* `ScriptedModel` returns the recorded assistant turns in order, whatever it is sent,
  and meters what it received: the messages and the tools bound at that call.
* `ReplayTool` returns the recorded output of each call (by tool-call id).
* `StandInSummarizer` is the one summarizer every summarizing configuration gets: it
  answers with the first `SUMMARY_TOKENS` tokens of the text it is asked to summarize
  (the shared instructions removed), so a summary depends on its input and no
  configuration is handed a better or worse summary than another.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import tiktoken
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict

from benchmarks.bill.meter import Meter, request_chunks
from benchmarks.bill.sessions import Session
from benchmarks.compaction.facts import view_text
from langgraph_context.messages import content_text
from langgraph_context.tokens import DEFAULT_ENCODING

SUMMARY_TOKENS = 400
SUMMARY_INSTRUCTIONS = (
    "Summarize the conversation so far for a handoff: the user's requests, files and "
    "identifiers, errors and fixes, and what remains to do."
)
CLEARED = "[cleared]"  # the placeholder context editing puts in place of a tool result
SCRIPT_EXHAUSTED = "(the recorded script has no more turns)"
_ENCODING = tiktoken.get_encoding(DEFAULT_ENCODING)


@dataclass
class CallLog:
    """What a run's model calls received, metered call by call."""

    window: int
    tokens: list[int] = field(default_factory=list)
    cached: list[int] = field(default_factory=list)
    rewrites: int = 0  # calls whose non-system history does not extend the previous one
    cleared_events: int = 0  # calls showing more cleared tool results than the call before
    over_window: int = 0
    exhausted: int = 0
    texts: dict[int, str] = field(default_factory=dict)  # call index -> what the model saw
    keep_text: frozenset[int] = frozenset()
    last_text: str = ""
    meter: Meter = field(default_factory=Meter)
    _history: list[str] = field(default_factory=list)
    _cleared: int = 0

    def record(self, messages: list[BaseMessage], tools: list[dict[str, Any]]) -> None:
        """Meter one request and remember what is needed for the quality checks."""
        chunks, system = request_chunks(messages, tools)
        total, cached = self.meter.measure(chunks)
        history = [c for c, s in zip(chunks, system, strict=True) if not s]
        if self.tokens and history[: len(self._history)] != self._history:
            self.rewrites += 1
        self._history = history
        cleared = sum(isinstance(m, ToolMessage) and m.content == CLEARED for m in messages)
        self.cleared_events += cleared > self._cleared
        self._cleared = cleared
        index = len(self.tokens)
        self.tokens.append(total)
        self.cached.append(cached)
        self.over_window += total > self.window
        text = view_text(messages)
        if index in self.keep_text:
            self.texts[index] = text
        self.last_text = text


class ScriptedModel(BaseChatModel):
    """Return the recorded assistant turns in order; meter every request."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    script: list[AIMessage]
    log: CallLog
    position: int = 0
    bound: list[dict[str, Any]] = []  # noqa: RUF012 - pydantic copies the default

    @property
    def _llm_type(self) -> str:
        return "scripted-replay"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:  # type: ignore[override]
        """Remember the tools (as OpenAI tool schemas) for the next requests; return self."""
        self.bound = [convert_to_openai_tool(t) for t in tools]
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self.log.record(messages, self.bound)
        if self.position < len(self.script):
            reply = self.script[self.position]
        else:
            self.log.exhausted += 1
            reply = AIMessage(SCRIPT_EXHAUSTED)
        self.position += 1
        message = AIMessage(reply.content, tool_calls=reply.tool_calls, id=f"ai-{self.position}")
        return ChatResult(generations=[ChatGeneration(message=message)])


class StandInSummarizer(BaseChatModel):
    """Answer with the first `SUMMARY_TOKENS` tokens of the text to summarize."""

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0

    @property
    def _llm_type(self) -> str:
        return "stand-in-summarizer"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        parts = [content_text(m.content) for m in messages if not isinstance(m, SystemMessage)]
        text = "\n".join(parts).replace(SUMMARY_INSTRUCTIONS, "").strip()
        tokens = _ENCODING.encode(text, disallowed_special=())
        summary = _ENCODING.decode(tokens[:SUMMARY_TOKENS])
        self.calls += 1
        self.tokens_in += len(_ENCODING.encode("\n".join(parts), disallowed_special=()))
        self.tokens_out += min(len(tokens), SUMMARY_TOKENS)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(summary))])


class ReplayTool(BaseTool):
    """A recorded tool: its schema from the recorded arguments, its output by call id."""

    outputs: dict[str, str]

    def _run(self, *args: Any, **kwargs: Any) -> str:
        msg = "ReplayTool answers tool calls only"
        raise NotImplementedError(msg)

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Return the recorded output of the tool call `input` as a ToolMessage."""
        call_id = input["id"]
        return ToolMessage(self.outputs.get(call_id, ""), tool_call_id=call_id, name=self.name)


def replay_tools(session: Session, *, skip: frozenset[str] = frozenset()) -> list[BaseTool]:
    """One replay tool per recorded tool name, except names the configuration provides."""
    return [
        ReplayTool(
            name=name,
            description=f"The recorded tool {name} (replayed).",
            args_schema=session.tool_schema(name),
            outputs=session.outputs,
        )
        for name in sorted(session.tool_args)
        if name not in skip
    ]


BuildGraph = Callable[..., Any]


def run_session(
    session: Session, build: BuildGraph, *, skip: frozenset[str] = frozenset()
) -> tuple[CallLog, StandInSummarizer, dict[str, Any]]:
    """Replay `session` through the compiled graph `build(...)` returns; meter every call.

    Args:
        session: The session.
        build: `build(model=, tools=, system_prompt=, window=, summarizer=)` -> a
            compiled graph with a `messages` state key.
        skip: Recorded tool names the configuration provides itself.

    Returns:
        The call log, the summarizer (its call and token counts) and the final state.
    """
    log = CallLog(window=session.window, keep_text=frozenset({session.probe}))
    model = ScriptedModel(script=session.script, log=log)
    summarizer = StandInSummarizer()
    graph = build(
        model=model,
        tools=replay_tools(session, skip=skip),
        system_prompt=session.system_prompt,
        window=session.window,
        summarizer=summarizer,
    )
    state: dict[str, Any] = {}
    for texts in session.turns:
        humans = [HumanMessage(t) for t in texts]
        state = graph.invoke(
            {**state, "messages": [*state.get("messages", []), *humans]},
            {"recursion_limit": 100_000},
        )
    return log, summarizer, state
