"""Sub-agents: hand a task to a fresh context window, get back a condensed report.

The parent agent calls the tool with a self-contained task. The sub-agent (a compiled
graph, or a chat model with tools run in a small loop) starts from that task alone,
never from the parent's history, works through as many tool calls as it needs, and
only its final answer comes back, cut to a token cap. The parent's context grows by
one short tool result however much the sub-agent read.

Rules the parent model can rely on:

* The result is the sub-agent's last answer, at most `max_result_tokens` tokens by the
  configured counter. A longer answer is condensed by `summarizer` when one is given,
  then cut with a visible marker.
* With `share_notes`, the notes the sub-agent wrote come back into the parent's
  `note` state under `<tool name>/<note name>` (`<tool name>-<k>/...` for the k-th of
  several calls in one turn), never overwriting a parent note.
* A sub-run that fails or runs out of steps returns an error tool result saying so;
  the parent's state is unchanged.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, cast

from langchain_core.language_models import BaseChatModel, BaseLanguageModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool, InjectedToolCallId
from langgraph.errors import GraphRecursionError
from langgraph.graph.state import StateGraph
from langgraph.prebuilt import InjectedState
from langgraph.types import Command

from langgraph_context.agents.context_agent import create_context_agent
from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.messages import content_text
from langgraph_context.packet import ContextPacket
from langgraph_context.providers.models import ModelFactory, is_chat_model
from langgraph_context.safety.boundary import HARDENING_INSTRUCTION, fenced_block
from langgraph_context.state import get_state_value
from langgraph_context.tokens import TokenCounter, resolve_counter, truncate_text
from langgraph_context.toolkit import ToolSpec, earlier_sibling_calls, error_result
from langgraph_context.tools.state_notes import fresh_note_name

__all__ = [
    "acondense_result",
    "condense_result",
    "create_subagent_tool",
]

logger = logging.getLogger(__name__)

DEFAULT_SUBAGENT_NAME = "delegate_task"
DEFAULT_MAX_RESULT_TOKENS = 1500
DEFAULT_SUBAGENT_RECURSION_LIMIT = 40
TRUNCATION_MARKER = "\n[... result cut to fit the token cap]"
DEFAULT_SUBAGENT_DESCRIPTION = (
    "Hand a self-contained task to a sub-agent that works in a fresh context window with "
    "its own tools and returns only a condensed report. It cannot see this conversation: "
    "put every fact, path and constraint it needs into `task`. Several calls in one turn "
    "run in parallel."
)
_RESULT_INSTRUCTION = (
    "\n\nWhen you are done, reply with your findings only: conclusions, the evidence "
    "(file paths, numbers, error lines) and anything left open, in at most {cap} tokens."
)
_SUMMARY_FAILED = "sub-agent report summarizer failed; cutting instead"
_SUMMARY_PROMPT = (
    "Condense this report to at most {cap} tokens. Keep conclusions, file paths, names, "
    "numbers, error lines and open questions; drop narration. Do not add anything that "
    "is not in the report."
)
# Configurable keys that address a checkpoint lineage or LangGraph internals: a sub-run
# gets its own thread instead, so it starts from a clean window and never touches the
# parent's checkpoints.
_PARENT_ONLY_KEYS = frozenset({"thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint_map"})

_SUBAGENT = ToolSpec(DEFAULT_SUBAGENT_NAME, DEFAULT_SUBAGENT_DESCRIPTION)


def _check_positive(value: int, parameter: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        msg = f"{parameter} must be a positive int, got {value!r}"
        raise InvalidArgumentError(msg)


def _summary_request(
    text: str, max_tokens: int, count: TokenCounter, summarizer: BaseChatModel | None
) -> list[BaseMessage] | None:
    """The summarizer's input when `text` is over the cap and a summarizer is set."""
    if summarizer is None or count(text) <= max_tokens:
        return None
    # The report is the sub-agent's text (it may repeat injected tool output): fenced,
    # under the hardening line, never plain user text.
    report = fenced_block([ContextPacket(text, type="report", source="sub-agent")], hardening="")
    return [
        SystemMessage(f"{_SUMMARY_PROMPT.format(cap=max_tokens)}\n{HARDENING_INSTRUCTION}"),
        HumanMessage(report),
    ]


def _cut_report(text: str, reply: BaseMessage | None, max_tokens: int, count: TokenCounter) -> str:
    """The summary (or, without a usable one, the report) cut to the cap."""
    if reply is not None:
        text = content_text(reply.content) or text
    return truncate_text(text, max_tokens, token_counter=count, marker=TRUNCATION_MARKER)


def condense_result(
    text: str,
    *,
    max_result_tokens: int = DEFAULT_MAX_RESULT_TOKENS,
    token_counter: TokenCounter | BaseLanguageModel | None = None,
    summarizer: BaseChatModel | None = None,
) -> str:
    """Fit a sub-agent's report under `max_result_tokens`, summarizing first when it can.

    Args:
        text: The report.
        max_result_tokens: The cap.
        token_counter: Counter for the cap (`None` = offline tiktoken).
        summarizer: Optional chat model asked to condense an over-long report; if it
            fails, the report is cut instead (a warning is logged).

    Returns:
        The report (or its summary) cut to the cap.

    Raises:
        ValueError: If `max_result_tokens` is not a positive int.
    """
    _check_positive(max_result_tokens, "max_result_tokens")
    count = resolve_counter(token_counter)
    request = _summary_request(text, max_result_tokens, count, summarizer)
    reply = None
    if request is not None and summarizer is not None:
        try:
            reply = summarizer.invoke(request)
        except Exception:
            logger.warning(_SUMMARY_FAILED, exc_info=True)
    return _cut_report(text, reply, max_result_tokens, count)


async def acondense_result(
    text: str,
    *,
    max_result_tokens: int = DEFAULT_MAX_RESULT_TOKENS,
    token_counter: TokenCounter | BaseLanguageModel | None = None,
    summarizer: BaseChatModel | None = None,
) -> str:
    """Async twin of `condense_result`: the same arguments, result and errors."""
    _check_positive(max_result_tokens, "max_result_tokens")
    count = resolve_counter(token_counter)
    request = _summary_request(text, max_result_tokens, count, summarizer)
    reply = None
    if request is not None and summarizer is not None:
        try:  # a cancellation is a BaseException and passes through
            reply = await summarizer.ainvoke(request)
        except Exception:
            logger.warning(_SUMMARY_FAILED, exc_info=True)
    return _cut_report(text, reply, max_result_tokens, count)


def _final_answer(messages: Sequence[BaseMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            text = content_text(message.content).strip()
            if text:
                return text
    return ""


def _child_config(config: RunnableConfig | None, tool_call_id: str, limit: int) -> RunnableConfig:
    parent = config or {}
    configurable = {
        k: v
        for k, v in (parent.get("configurable") or {}).items()
        if not k.startswith("__") and k not in _PARENT_ONLY_KEYS
    }
    # Call ids repeat across users and threads (servers that number them from call_0):
    # the sub-run's thread, and any per-thread state such as the terminal's directory,
    # is keyed by the parent thread and the user as well.
    source = parent.get("configurable") or {}
    user = source.get("user_id", source.get("langgraph_auth_user_id"))
    owner = [source.get("thread_id"), user, tool_call_id]
    configurable["thread_id"] = "subagent:" + json.dumps(owner, default=str)
    child: RunnableConfig = {"configurable": configurable, "recursion_limit": limit}
    if parent.get("callbacks") is not None:
        child["callbacks"] = parent["callbacks"]
    return child


def _shared_notes(
    notes: Mapping[str, str], prefix: str, parent_notes: Mapping[str, str]
) -> dict[str, str]:
    taken = set(parent_notes)
    shared: dict[str, str] = {}
    for note_name in sorted(notes):
        used = fresh_note_name(f"{prefix}/{note_name}", taken)
        taken.add(used)
        shared[used] = notes[note_name]
    return shared


def _runner(
    agent: BaseChatModel | Runnable[Any, Any] | ModelFactory,
    tools: Sequence[BaseTool],
    system_prompt: str | None,
    share_notes: bool,
) -> Runnable[Any, Any]:
    """The runnable one sub-run invokes: the compiled graph, or a loop around the model."""
    if isinstance(agent, StateGraph):
        msg = "agent is an uncompiled StateGraph; pass graph.compile() instead"
        raise InvalidTypeError(msg)
    is_model = is_chat_model(agent)  # any runnable but a compiled graph, like a wrapped model
    is_factory = not is_model and not isinstance(agent, Runnable) and callable(agent)
    if is_model or is_factory:
        return cast(
            "Runnable[Any, Any]",
            create_context_agent(
                cast("Runnable[Any, Any] | ModelFactory", agent),
                tools,
                system_prompt=system_prompt,
                plan_tools=False,
                note_tools=share_notes,
                constraint_tools=False,
                recall=False,  # a one-run child: only its own tools, as plan and memory
            ),
        )
    if isinstance(agent, Runnable):
        if tools or system_prompt is not None:
            msg = (
                "tools and system_prompt only apply when agent is a chat model; "
                "a compiled graph brings its own"
            )
            raise InvalidArgumentError(msg)
        return agent
    msg = (
        "agent must be a chat model, a model factory or a compiled graph, "
        f"got {type(agent).__name__}"
    )
    raise InvalidTypeError(msg)


@dataclass(frozen=True, kw_only=True)
class _Delegation:
    """The settled settings of one sub-agent tool, and the steps around a sub-run.

    The sync and async tool functions differ only in how they await the sub-run and
    the condensing; everything else is here.
    """

    runner: Runnable[Any, Any]
    spec: ToolSpec
    agent_messages_key: str
    max_result_tokens: int
    token_counter: TokenCounter
    summarizer: BaseChatModel | None
    share_notes: bool
    recursion_limit: int

    def start(
        self, task: str, tool_call_id: str, config: RunnableConfig | None
    ) -> tuple[dict[str, Any], RunnableConfig] | ToolMessage:
        """The sub-run's input and config, or an error result for an empty task."""
        if not task.strip():
            return error_result("Error: task is empty; describe the task in full.", tool_call_id)
        instruction = _RESULT_INSTRUCTION.format(cap=self.max_result_tokens)
        inputs = {self.agent_messages_key: [HumanMessage(task.strip() + instruction)]}
        return inputs, _child_config(config, tool_call_id, self.recursion_limit)

    def answer(self, final: Any) -> str:
        """The sub-run's last non-empty AI answer (`""` when there is none)."""
        return _final_answer(get_state_value(final, self.agent_messages_key, []))

    def condense_options(self) -> dict[str, Any]:
        """Keyword arguments of `condense_result` for this tool."""
        return {
            "max_result_tokens": self.max_result_tokens,
            "token_counter": self.token_counter,
            "summarizer": self.summarizer,
        }

    def failure(self, exc: Exception, tool_call_id: str) -> ToolMessage:
        """The error result of a sub-run that raised or ran out of steps."""
        if isinstance(exc, GraphRecursionError):
            text = (
                f"Error: the sub-agent did not finish within {self.recursion_limit} steps. "
                "Split the task into smaller ones or narrow it."
            )
        else:
            text = f"Error: the sub-agent failed ({type(exc).__name__}: {exc}). Nothing changed."
        return error_result(text, tool_call_id)

    def finish(
        self, final: Any, report: str, state: Any, tool_call_id: str
    ) -> Command[Any] | ToolMessage:
        """The tool result: the report, plus the shared notes when `share_notes` is set."""
        if not report:
            return error_result(
                "Error: the sub-agent finished without an answer. Rephrase the task with a "
                "clear question and what to return.",
                tool_call_id,
            )
        if not self.share_notes:
            return ToolMessage(report, tool_call_id=tool_call_id)
        notes = get_state_value(final, "note", {})
        prefix = self._note_prefix(state, tool_call_id)
        shared = _shared_notes(notes if isinstance(notes, Mapping) else {}, prefix, _parent(state))
        suffix = f"\n\nShared notes: {', '.join(shared)}" if shared else ""
        return self.spec.command({"note": shared}, report + suffix, tool_call_id)

    def _note_prefix(self, state: Any, tool_call_id: str) -> str:
        name, key = self.spec.name, self.spec.messages_key
        siblings = [c for c in earlier_sibling_calls(state, tool_call_id, key) if c["name"] == name]
        later = _has_later_sibling(state, tool_call_id, name, key)
        return f"{name}-{len(siblings) + 1}" if siblings or later else name


def create_subagent_tool(
    agent: BaseChatModel | Runnable[Any, Any] | ModelFactory,
    *,
    tools: Sequence[BaseTool] = (),
    system_prompt: str | None = None,
    max_result_tokens: int = DEFAULT_MAX_RESULT_TOKENS,
    token_counter: TokenCounter | BaseLanguageModel | None = None,
    summarizer: BaseChatModel | None = None,
    share_notes: bool = False,
    recursion_limit: int = DEFAULT_SUBAGENT_RECURSION_LIMIT,
    agent_messages_key: str = "messages",
    name: str | None = None,
    description: str | None = None,
    messages_key: str | None = None,
) -> BaseTool:
    """Create a `delegate_task(task)` tool that runs a sub-agent in a clean context.

    Args:
        agent: A compiled graph (`Pregel`, `RemoteGraph`) taking
            `{agent_messages_key: [HumanMessage]}` and returning a state with messages (and
            `note` when it keeps notes), or a chat model (any other runnable, such
            as `model.with_retry()`), or a factory `(config) -> chat model` such as
            `resolve_chat_model`; a model is run in a tool-calling loop with `tools`
            (and the note tools when `share_notes` is set).
        tools: The sub-agent's tools; only when `agent` is a chat model.
        system_prompt: The sub-agent's instructions; only when `agent` is a chat model.
        max_result_tokens: Cap on the returned report (the book suggests 1,000-2,000).
        token_counter: Counter for the cap (`None` = offline tiktoken).
        summarizer: Optional chat model condensing a report over the cap.
        share_notes: Copy the sub-run's final `note` state into the parent's notes.
        recursion_limit: LangGraph step limit of one sub-run.
        agent_messages_key: The sub-graph's state key holding its messages.
        name: Tool name (default `delegate_task`).
        description: Tool description shown to the parent model.
        messages_key: Parent state key of the messages list (default `messages`).

    Returns:
        A tool returning the condensed report as its `ToolMessage` (a `Command` that
        also merges notes when `share_notes` is set).

    Raises:
        TypeError: If `agent` is an uncompiled `StateGraph` or not a runnable.
        ValueError: If `tools`/`system_prompt` are given with a compiled graph, or a
            numeric limit, `name`, `description` or `messages_key` is invalid.
    """
    spec = _SUBAGENT.customize(name=name, description=description, messages_key=messages_key)
    _check_positive(max_result_tokens, "max_result_tokens")
    _check_positive(recursion_limit, "recursion_limit")
    run = _Delegation(
        runner=_runner(agent, tools, system_prompt, share_notes),
        spec=spec,
        agent_messages_key=agent_messages_key,
        max_result_tokens=max_result_tokens,
        token_counter=resolve_counter(token_counter),
        summarizer=summarizer,
        share_notes=share_notes,
        recursion_limit=recursion_limit,
    )

    def delegate_task(
        task: str,
        tool_call_id: Annotated[str, InjectedToolCallId],
        state: Annotated[Any, InjectedState],
        config: RunnableConfig,
    ) -> Command[Any] | ToolMessage:
        started = run.start(task, tool_call_id, config)
        if isinstance(started, ToolMessage):
            return started
        try:
            final = run.runner.invoke(*started)
            report = condense_result(run.answer(final), **run.condense_options())
        except Exception as exc:
            return run.failure(exc, tool_call_id)
        return run.finish(final, report, state, tool_call_id)

    async def adelegate_task(
        task: str,
        tool_call_id: Annotated[str, InjectedToolCallId],
        state: Annotated[Any, InjectedState],
        config: RunnableConfig,
    ) -> Command[Any] | ToolMessage:
        started = run.start(task, tool_call_id, config)
        if isinstance(started, ToolMessage):
            return started
        try:  # a cancellation is a BaseException and passes through
            final = await run.runner.ainvoke(*started)
            report = await acondense_result(run.answer(final), **run.condense_options())
        except Exception as exc:
            return run.failure(exc, tool_call_id)
        return run.finish(final, report, state, tool_call_id)

    return spec.build(delegate_task, coroutine=adelegate_task)


def _parent(state: Any) -> Mapping[str, str]:
    notes = get_state_value(state, "note", {})
    return cast(Mapping[str, str], notes) if isinstance(notes, Mapping) else {}


def _has_later_sibling(state: Any, tool_call_id: str, tool_name: str, messages_key: str) -> bool:
    for message in reversed(get_state_value(state, messages_key, [])):
        if isinstance(message, AIMessage) and any(
            tc.get("id") == tool_call_id for tc in message.tool_calls
        ):
            ids = [tc.get("id") for tc in message.tool_calls if tc["name"] == tool_name]
            return ids.index(tool_call_id) < len(ids) - 1
    return False
