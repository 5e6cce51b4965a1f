"""Replay a session through a compiled agent graph and meter every model call.

* `ScriptedModel` returns the recorded assistant turns in order, whatever it is sent,
  and meters what it received: the messages and the tools bound at that call.
* `ReplayTool` returns the recorded output of each call (by tool-call id).
* `StandInSummarizer` is the one summarizer every summarizing configuration gets: it
  answers with the first `SUMMARY_TOKENS` tokens of the text it is asked to summarize
  (the shared instructions removed), so a summary depends on its input and no
  configuration is handed a better or worse summary than another. The instructions
  are ours for every configuration that takes a prompt; deepagents keeps its own
  prompt, whose fixed head (up to `PEER_PROMPT_MARK`) is dropped the same way.
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
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import ConfigDict

from benchmarks.bill.meter import Meter, request_chunks
from benchmarks.bill.sessions import Session
from benchmarks.compaction.facts import view_text
from langgraph_context.messages import content_text
from langgraph_context.tokens.counter import DEFAULT_ENCODING

SUMMARY_TOKENS = 400
SUMMARY_INSTRUCTIONS = (
    "Summarize the conversation so far for a handoff: the user's requests, files and "
    "identifiers, errors and fixes, and what remains to do."
)
CLEARED = "[cleared]"  # the placeholder context editing puts in place of a tool result
PEER_PROMPT_MARK = "Messages to summarize:"  # ends LangChain's (and deepagents') prompt head
SCRIPT_EXHAUSTED = "(the recorded script has no more turns)"
# The replay's models report usage as this provider does (so LangChain's summarization
# middleware, which only trusts reported usage from its own provider, reads it too).
PROVIDER = "openai"
_ENCODING = tiktoken.get_encoding(DEFAULT_ENCODING)


@dataclass
class CallLog:
    """What a run's model calls received, metered call by call."""

    window: int
    script: list[AIMessage] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    cached: list[int] = field(default_factory=list)
    breakpoint_read: list[int] = field(default_factory=list)  # Anthropic's cache (meter)
    breakpoint_written: list[int] = field(default_factory=list)
    rewrites: int = 0  # calls whose non-system history does not extend the previous one
    cleared_events: int = 0  # calls showing more cleared tool results than the call before
    over_window: int = 0
    exhausted: int = 0
    position: int = 0  # next script entry (shared by the model and its bound copies)
    texts: dict[int, str] = field(default_factory=dict)  # call index -> what the model saw
    keep_text: frozenset[int] = frozenset()
    last_text: str = ""
    meter: Meter = field(default_factory=Meter)
    summary_tokens: list[int] = field(default_factory=list)  # metered summary calls only
    summary_cached: list[int] = field(default_factory=list)
    _history: list[str] = field(default_factory=list)
    _cleared: int = 0

    def __repr__(self) -> str:
        # Short: LangChain serializes the model (and so its log) for callbacks.
        return f"CallLog(calls={len(self.tokens)})"

    def record(self, messages: list[BaseMessage], tools: list[dict[str, Any]]) -> None:
        """Meter one request and remember what is needed for the quality checks."""
        chunks, system, marked = request_chunks(messages, tools)
        total, cached = self.meter.measure(chunks)
        read, written = self.meter.measure_breakpoints(chunks, system, marked)
        self.breakpoint_read.append(read)
        self.breakpoint_written.append(written)
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


class _Provider(BaseChatModel):
    """A replay model that names `PROVIDER` as its provider, as the agent's model does."""

    def _get_ls_params(self, stop: Any = None, **kwargs: Any) -> Any:
        return {**super()._get_ls_params(stop=stop, **kwargs), "ls_provider": PROVIDER}


class ScriptedModel(_Provider):
    """Return the recorded assistant turns (`log.script`) in order; meter every request.

    With `summarizer` set (deepagents, which summarizes with the agent's own model and
    always binds its own tools), a call on the unbound model is a summary request: it
    goes to the summarizer and is not metered as an agent call.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)
    log: CallLog
    summarizer: BaseChatModel | None = None
    is_bound: bool = False
    bound: list[dict[str, Any]] = []  # noqa: RUF012 - pydantic copies the default

    @property
    def _llm_type(self) -> str:
        return "scripted-replay"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:  # type: ignore[override]
        """Return a copy that meters the tools (as OpenAI tool schemas) with each request."""
        bound = [convert_to_openai_tool(t) for t in tools]
        return self.model_copy(update={"bound": bound, "is_bound": True})

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        if not self.is_bound and self.summarizer is not None:
            return self.summarizer._generate(messages)  # the one stand-in for all
        log = self.log
        log.record(messages, self.bound)
        if log.position < len(log.script):
            reply = log.script[log.position]
        else:
            log.exhausted += 1
            reply = AIMessage(SCRIPT_EXHAUSTED)
        log.position += 1
        # Usage as a provider reports it: the request's metered input tokens.
        output = len(_ENCODING.encode(content_text(reply.content), disallowed_special=()))
        message = AIMessage(
            reply.content,
            tool_calls=reply.tool_calls,
            id=f"ai-{log.position}",
            usage_metadata={
                "input_tokens": log.tokens[-1],
                "output_tokens": output,
                "total_tokens": log.tokens[-1] + output,
            },
            response_metadata={"model_provider": PROVIDER},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


class StandInSummarizer(_Provider):
    """Answer with the first `SUMMARY_TOKENS` tokens of the text to summarize.

    With `log` set, each request is metered in the agent's call sequence (it is sent to
    the same provider, whose cache holds the agent's previous request): `tokens_in` is
    then the metered request, and `log.summary_cached` what the cache served of it.
    `bind_tools` binds in place (the counters stay on one object).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    log: CallLog | None = None
    bound: list[dict[str, Any]] = []  # noqa: RUF012 - pydantic copies the default

    @property
    def _llm_type(self) -> str:
        return "stand-in-summarizer"

    def bind_tools(self, tools: Any, **kwargs: Any) -> StandInSummarizer:  # type: ignore[override]
        """Meter these tools with the next requests (the agent's, for its cached prefix)."""
        self.bound = [convert_to_openai_tool(t) for t in tools]
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        parts = [content_text(m.content) for m in messages if not isinstance(m, SystemMessage)]
        text = "\n".join(parts).replace(SUMMARY_INSTRUCTIONS, "")
        text = text.split(PEER_PROMPT_MARK, 1)[-1].strip()  # a peer's fixed prompt
        tokens = _ENCODING.encode(text, disallowed_special=())
        summary = _ENCODING.decode(tokens[:SUMMARY_TOKENS])
        self.calls += 1
        if self.log is not None:
            total, cached = self.log.meter.measure(request_chunks(messages, self.bound)[0])
            self.tokens_in += total
            self.log.summary_tokens.append(total)
            self.log.summary_cached.append(cached)
        else:
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
    session: Session,
    build: BuildGraph,
    *,
    skip: frozenset[str] = frozenset(),
    unbound_summarizes: bool = False,
    metered_summaries: bool = False,
) -> tuple[CallLog, StandInSummarizer, dict[str, Any]]:
    """Replay `session` through the compiled graph `build(...)` returns; meter every call.

    Args:
        session: The session.
        build: `build(model=, tools=, system_prompt=, window=, summarizer=, native=)`
            -> a compiled graph with a `messages` state key (`native`: the names in
            `skip` the session calls, which the configuration provides itself).
        skip: Recorded tool names the configuration provides itself.
        unbound_summarizes: Calls on the unbound model are summary requests.
        metered_summaries: The summarizer's requests are metered in the agent's call
            sequence (its prefix cache applies to them).

    Returns:
        The call log, the summarizer (its call and token counts) and the final state.
    """
    log = CallLog(
        window=session.window, script=session.script, keep_text=frozenset({session.probe})
    )
    summarizer = StandInSummarizer(log=log if metered_summaries else None)
    model = ScriptedModel(
        log=log,
        summarizer=summarizer if unbound_summarizes else None,
        profile={"max_input_tokens": session.window},
    )
    graph = build(
        model=model,
        tools=replay_tools(session, skip=skip),
        system_prompt=session.system_prompt,
        window=session.window,
        summarizer=summarizer,
        native=skip & frozenset(session.tool_args),
    )
    # A thread, as an application runs one: each turn sends only the new user messages
    # and the checkpointer keeps the whole state (internal keys such as our compaction
    # record are not accepted as input).
    graph.checkpointer = InMemorySaver()
    config: RunnableConfig = {"recursion_limit": 100_000, "configurable": {"thread_id": "t"}}
    for texts in session.turns:
        graph.invoke({"messages": [HumanMessage(t) for t in texts]}, config)
    return log, summarizer, dict(graph.get_state(config).values)
