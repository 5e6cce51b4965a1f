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

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, cast

from langchain_core.language_models import BaseChatModel, BaseLanguageModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool, InjectedToolCallId
from langgraph.errors import GraphRecursionError
from langgraph.graph.state import StateGraph
from langgraph.prebuilt import InjectedState
from langgraph.types import Command

from langgraph_context.agents.models import ModelFactory, is_chat_model
from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.messages import content_text
from langgraph_context.state import get_state_value
from langgraph_context.tokens import TokenCounter, resolve_counter, truncate_text
from langgraph_context.toolkit import ToolSpec, earlier_sibling_calls, error_result
from langgraph_context.tools.state_notes import fresh_note_name

__all__ = [
    "DEFAULT_MAX_RESULT_TOKENS",
    "DEFAULT_SUBAGENT_DESCRIPTION",
    "DEFAULT_SUBAGENT_NAME",
    "DEFAULT_SUBAGENT_RECURSION_LIMIT",
    "TRUNCATION_MARKER",
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
_SUMMARY_PROMPT = (
    "Condense this report to at most {cap} tokens. Keep conclusions, file paths, names, "
    "numbers, error lines and open questions; drop narration. Do not add anything that "
    "is not in the report.\n\n<report>\n{report}\n</report>"
)
# Configurable keys that address a checkpoint lineage or LangGraph internals: a sub-run
# gets its own thread instead, so it starts from a clean window and never touches the
# parent's checkpoints.
_PARENT_ONLY_KEYS = frozenset({"thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint_map"})

_SUBAGENT = ToolSpec(DEFAULT_SUBAGENT_NAME, DEFAULT_SUBAGENT_DESCRIPTION)


def _check_cap(max_tokens: int) -> None:
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        msg = f"max_result_tokens must be a positive int, got {max_tokens!r}"
        raise InvalidArgumentError(msg)


def condense_result(
    text: str,
    *,
    max_tokens: int = DEFAULT_MAX_RESULT_TOKENS,
    token_counter: TokenCounter | BaseLanguageModel | None = None,
    summarizer: BaseChatModel | None = None,
) -> str:
    """Fit a sub-agent's report under `max_tokens`, summarizing first when it can.

    Args:
        text: The report.
        max_tokens: The cap.
        token_counter: Counter for the cap (`None` = offline tiktoken).
        summarizer: Optional chat model asked to condense an over-long report; if it
            fails, the report is cut instead (a warning is logged).

    Returns:
        The report (or its summary) cut to the cap.

    Raises:
        ValueError: If `max_tokens` is not a positive int.
    """
    _check_cap(max_tokens)
    count = resolve_counter(token_counter)
    if summarizer is not None and count(text) > max_tokens:
        prompt = _SUMMARY_PROMPT.format(cap=max_tokens, report=text)
        try:
            reply = summarizer.invoke([HumanMessage(prompt)])
        except Exception:
            logger.warning("sub-agent report summarizer failed; cutting instead", exc_info=True)
        else:
            text = content_text(reply.content) or text
    return truncate_text(text, max_tokens, token_counter=count, marker=TRUNCATION_MARKER)


async def acondense_result(
    text: str,
    *,
    max_tokens: int = DEFAULT_MAX_RESULT_TOKENS,
    token_counter: TokenCounter | BaseLanguageModel | None = None,
    summarizer: BaseChatModel | None = None,
) -> str:
    """Async twin of `condense_result`.

    Args:
        text: The report.
        max_tokens: The cap.
        token_counter: Counter for the cap (`None` = offline tiktoken).
        summarizer: Optional chat model asked to condense an over-long report; if it
            fails, the report is cut instead (a warning is logged).

    Returns:
        The report (or its summary) cut to the cap.

    Raises:
        ValueError: If `max_tokens` is not a positive int.
    """
    _check_cap(max_tokens)
    count = resolve_counter(token_counter)
    if summarizer is not None and count(text) > max_tokens:
        prompt = _SUMMARY_PROMPT.format(cap=max_tokens, report=text)
        try:
            reply = await summarizer.ainvoke([HumanMessage(prompt)])
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.warning("sub-agent report summarizer failed; cutting instead", exc_info=True)
        else:
            text = content_text(reply.content) or text
    return truncate_text(text, max_tokens, token_counter=count, marker=TRUNCATION_MARKER)


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
    configurable["thread_id"] = f"subagent:{tool_call_id}"
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
    input_key: str = "messages",
    name: str | None = None,
    description: str | None = None,
    messages_key: str | None = None,
) -> BaseTool:
    """Create a `delegate_task(task)` tool that runs a sub-agent in a clean context.

    Args:
        agent: A compiled graph (`Pregel`, `RemoteGraph`) taking
            `{input_key: [HumanMessage]}` and returning a state with messages (and
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
        input_key: The sub-graph's messages key.
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
    tool_name, key = spec.name, spec.messages_key
    _check_cap(max_result_tokens)
    if (
        isinstance(recursion_limit, bool)
        or not isinstance(recursion_limit, int)
        or recursion_limit < 1
    ):
        msg = f"recursion_limit must be a positive int, got {recursion_limit!r}"
        raise InvalidArgumentError(msg)
    if isinstance(agent, StateGraph):
        msg = "agent is an uncompiled StateGraph; pass graph.compile() instead"
        raise InvalidTypeError(msg)
    is_model = is_chat_model(agent)  # any runnable but a compiled graph, like a wrapped model
    is_factory = not is_model and not isinstance(agent, Runnable) and callable(agent)
    if is_model or is_factory:
        from langgraph_context.agents.context_agent import (  # noqa: PLC0415 - avoids a cycle
            create_context_agent,
        )

        runner: Runnable[Any, Any] = create_context_agent(
            cast("Runnable[Any, Any] | ModelFactory", agent),
            tools,
            system_prompt=system_prompt,
            plan_tools=False,
            note_tools=share_notes,
            memory_tools=False,
        ).compile()
    elif isinstance(agent, Runnable):
        if tools or system_prompt is not None:
            msg = (
                "tools and system_prompt only apply when agent is a chat model; "
                "a compiled graph brings its own"
            )
            raise InvalidArgumentError(msg)
        runner = agent
    else:
        msg = (
            "agent must be a chat model, a model factory or a compiled graph, "
            f"got {type(agent).__name__}"
        )
        raise InvalidTypeError(msg)
    count = resolve_counter(token_counter)
    instruction = _RESULT_INSTRUCTION.format(cap=max_result_tokens)

    def _prepare(task: str, tool_call_id: str, config: RunnableConfig) -> tuple[Any, Any]:
        inputs = {input_key: [HumanMessage(task.strip() + instruction)]}
        return inputs, _child_config(config, tool_call_id, recursion_limit)

    def _finish(
        final: Any, report: str, state: Any, tool_call_id: str
    ) -> Command[Any] | ToolMessage:
        if not report:
            return error_result(
                "Error: the sub-agent finished without an answer. Rephrase the task with a "
                "clear question and what to return.",
                tool_call_id,
            )
        if not share_notes:
            return ToolMessage(report, tool_call_id=tool_call_id)
        notes = get_state_value(final, "note", {})
        siblings = [
            c for c in earlier_sibling_calls(state, tool_call_id, key) if c["name"] == tool_name
        ]
        later = _has_later_sibling(state, tool_call_id, tool_name, key)
        prefix = f"{tool_name}-{len(siblings) + 1}" if siblings or later else tool_name
        shared = _shared_notes(notes if isinstance(notes, Mapping) else {}, prefix, _parent(state))
        suffix = f"\n\nShared notes: {', '.join(shared)}" if shared else ""
        return spec.command({"note": shared}, report + suffix, tool_call_id)

    def _failure(exc: Exception, tool_call_id: str) -> ToolMessage:
        if isinstance(exc, GraphRecursionError):
            text = (
                f"Error: the sub-agent did not finish within {recursion_limit} steps. "
                "Split the task into smaller ones or narrow it."
            )
        else:
            text = f"Error: the sub-agent failed ({type(exc).__name__}: {exc}). Nothing changed."
        return error_result(text, tool_call_id)

    def delegate_task(
        task: str,
        tool_call_id: Annotated[str, InjectedToolCallId],
        state: Annotated[Any, InjectedState],
        config: RunnableConfig,
    ) -> Command[Any] | ToolMessage:
        if not task.strip():
            return error_result("Error: task is empty; describe the task in full.", tool_call_id)
        inputs, child = _prepare(task, tool_call_id, config)
        try:
            final = runner.invoke(inputs, child)
            report = condense_result(
                _final_answer(get_state_value(final, input_key, [])),
                max_tokens=max_result_tokens,
                token_counter=count,
                summarizer=summarizer,
            )
        except Exception as exc:
            return _failure(exc, tool_call_id)
        return _finish(final, report, state, tool_call_id)

    async def adelegate_task(
        task: str,
        tool_call_id: Annotated[str, InjectedToolCallId],
        state: Annotated[Any, InjectedState],
        config: RunnableConfig,
    ) -> Command[Any] | ToolMessage:
        if not task.strip():
            return error_result("Error: task is empty; describe the task in full.", tool_call_id)
        inputs, child = _prepare(task, tool_call_id, config)
        try:
            final = await runner.ainvoke(inputs, child)
            report = await acondense_result(
                _final_answer(get_state_value(final, input_key, [])),
                max_tokens=max_result_tokens,
                token_counter=count,
                summarizer=summarizer,
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return _failure(exc, tool_call_id)
        return _finish(final, report, state, tool_call_id)

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
