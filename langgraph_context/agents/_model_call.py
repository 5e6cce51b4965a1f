"""The model node of `create_context_agent` (private to `agents`).

The model's input is assembled here, once per call: a view-mode compaction node and
the context node run on the state, the agent's instructions go first in the system
message, and the result goes to the model. Nothing of it is written to state unless
`store_view` asks for it (the compaction record is: it carries the running summary).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from typing import Any, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.runnables.config import merge_configs
from langchain_core.tools import BaseTool
from langgraph.constants import TAG_NOSTREAM

from langgraph_context.agents._overflow import (
    Failed,
    Retry,
    Window,
    adrive,
    drive,
    history_rewrite,
    overflowed,
    with_messages,
)
from langgraph_context.agents.models import (
    ModelFactory,
    bind_model_tools,
    is_chat_model,
    with_run_context,
)
from langgraph_context.compaction import CompactionNode
from langgraph_context.context import stamp_message
from langgraph_context.context.breakpoints import (
    CacheBreakpoints,
    cache_control_for,
    mark_cache_breakpoints,
)
from langgraph_context.context.stamp import stamped_history, without_stamps
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.memory import render_memory
from langgraph_context.messages import as_messages, content_text, repair_history
from langgraph_context.state import get_state_value, render_plan
from langgraph_context.tokens import USAGE_KEY

__all__ = [
    "DEFAULT_MAX_NOTE_NAMES",
    "LLM_INPUT_KEY",
    "ModelInput",
    "PromptLike",
    "model_node",
    "render_state_block",
]

LLM_INPUT_KEY = "llm_input_messages"
DEFAULT_MAX_NOTE_NAMES = 50

PromptLike = str | Callable[[Any], str] | None
"""A system prompt, or a function of the state returning one (e.g. per mode)."""


def render_state_block(
    state: Any, *, max_note_names: int = DEFAULT_MAX_NOTE_NAMES, read_tool: str = "query_note"
) -> str:
    """Render pinned memory, the plan and the note names as a short `[State]` block.

    Args:
        state: Graph state (dict or object) with optional `constraints`,
            `hot_issues`, `plan` and `note`.
        max_note_names: At most this many note names are listed (the rest counted).
        read_tool: The note-reading tool the block names (`notes_query_note` with a
            note prefix).

    Returns:
        The block, or `""` when all of them are empty.

    Example:
        >>> print(render_state_block({"plan": [{"content": "read", "status": "done"}]}))
        [State]
        Plan:
        1. [done] read
    """
    plan = get_state_value(state, "plan", [])
    notes = get_state_value(state, "note", {})
    lines: list[str] = []
    memory = render_memory(state)
    if memory:
        lines.append(memory)
    if plan:
        lines += ["Plan:", render_plan(list(plan))]
    if notes:
        names = sorted(notes)
        shown = ", ".join(names[:max_note_names])
        more = f" (+{len(names) - max_note_names} more)" if len(names) > max_note_names else ""
        lines.append(f"Notes (read with {read_tool}): {shown}{more}")
    return "\n".join(["[State]", *lines]) if lines else ""


def _with_prompt(view: list[BaseMessage], text: str) -> list[BaseMessage]:
    """The view with the agent's instructions first in its (single) system message."""
    messages = list(view)
    if messages and isinstance(messages[0], SystemMessage) and not messages[0].content:
        messages.pop(0)  # an empty system message: some providers refuse it
    if not text:
        return messages
    if messages and isinstance(messages[0], SystemMessage):
        # One system message: the agent's instructions first (a stable, cacheable
        # prefix), then the assembled context.
        assembled = content_text(messages[0].content)
        messages[0] = SystemMessage(f"{text}\n\n{assembled}" if assembled else text)
    else:
        messages.insert(0, SystemMessage(text))
    return messages


def _model_input(
    state: Any, view: list[BaseMessage] | None, prompt: PromptLike, how: ModelInput
) -> list[BaseMessage]:
    """What the model is sent: the assembled view, else prompt, [State] and history."""
    view = view or get_state_value(state, LLM_INPUT_KEY, None)
    if view:
        text = "" if prompt is None else prompt if isinstance(prompt, str) else prompt(state)
        return _with_prompt(list(view), text)
    parts: list[str] = []
    if prompt is not None:
        parts.append(prompt if isinstance(prompt, str) else prompt(state))
    if how.state_in_prompt:
        parts.append(render_state_block(state, read_tool=how.read_tool))
    system = "\n\n".join(p for p in parts if p)
    history = list(get_state_value(state, "messages", []))
    return [SystemMessage(system), *history] if system else history


@dataclass(frozen=True)
class ModelInput:
    """How the model node prepares each call's input and learns from its answer."""

    context: Runnable[Any, Any] | None
    state_in_prompt: bool
    store_view: bool
    window: Window
    name: str | None = None
    read_tool: str = "query_note"
    compaction: CompactionNode | None = None
    cache_breakpoints: CacheBreakpoints = None

    def for_model(self, messages: list[BaseMessage], chat: Any) -> list[BaseMessage]:
        """`messages` with prompt-cache marks when the model's provider needs them."""
        mark = cache_control_for(self.cache_breakpoints, chat)
        return messages if mark is None else mark_cache_breakpoints(messages, mark)

    def quiet(self, config: RunnableConfig) -> RunnableConfig:
        """The config the context node runs with: nothing of it is streamed.

        Its view goes to the model, never to state, so the node's check that the
        graph has a channel for its output key (`state.require_state_keys`, which
        reads the task's channel reader) does not apply: the reader is left out.
        """
        quiet = merge_configs(config, {"tags": [TAG_NOSTREAM]})
        configurable = dict(quiet.get("configurable") or {})
        configurable.pop("__pregel_read", None)
        return {**quiet, "configurable": configurable}

    def assembled(self, out: Any) -> list[BaseMessage]:
        """The view a context node returned (`llm_input_messages`)."""
        if isinstance(out, Failed):
            raise out.error
        view = out.get(LLM_INPUT_KEY) if isinstance(out, Mapping) else None
        if not view:
            msg = f"the context node must return a non-empty {LLM_INPUT_KEY!r}, got {out!r}"
            raise InvalidArgumentError(msg)
        return list(view)

    def compacted(self, out: Any) -> tuple[list[BaseMessage] | None, dict[str, Any]]:
        """The view a view-mode compaction node returned, and its other keys (its record)."""
        if isinstance(out, Failed):
            raise out.error
        if not isinstance(out, Mapping) or self.compaction is None:
            msg = f"the compaction node must return a mapping, got {out!r}"
            raise InvalidArgumentError(msg)
        learned = dict(out)
        view = learned.pop(self.compaction.output_key, None)
        return (list(view) if view else None), learned

    def update(
        self, state: Any, sent: list[BaseMessage], call: _Call, stamped: list[BaseMessage]
    ) -> dict[str, Any]:
        """The model node's state update: the answer, what it taught, the debug copy.

        Messages that arrived undated since the last call (`stamped`) are replaced by
        their stamped copies, and the answer is stamped with the time it came back.
        """
        response, retry, chat = call
        answer = [stamp_message(m) for m in _answer_invalid_calls(response)]
        if self.name is not None:
            answer = [
                m.model_copy(update={"name": self.name}) if isinstance(m, AIMessage) else m
                for m in answer
            ]
        update: dict[str, Any] = {
            "messages": [*stamped, *answer] if retry is None else history_rewrite(retry, answer)
        }
        usage = self.window.usage(sent, response, chat)
        if usage is not None:
            update[USAGE_KEY] = usage
        if self.store_view:
            update[LLM_INPUT_KEY] = sent
        elif get_state_value(state, LLM_INPUT_KEY, None):
            update[LLM_INPUT_KEY] = []  # a pre_model step's view is used once
        return update


_Call = tuple[Any, Retry | None, Any]
"""A model call's answer, its overflow retry (or `None`) and the chat model called."""
_Request = tuple[str, Any]
"""`("compaction" | "context", state)` for those nodes, `("model", messages)` for the model."""


def _input(
    state: Any, how: ModelInput, prompt: PromptLike
) -> Generator[_Request, Any, tuple[list[BaseMessage], dict[str, Any]]]:
    """Assemble one call's input and the compaction record to keep.

    A view-mode compaction node runs first; its view is laid over the state as the
    `llm_input_messages` a pre-model step would have written (in memory only). The
    context node, when there is one, assembles from that view (the compaction's, or
    one a `pre_model` step wrote) in place of the stored history.
    """
    learned: dict[str, Any] = {}
    if how.compaction is not None:
        compacted, learned = how.compacted((yield ("compaction", state)))
        if compacted:
            state = with_messages(state, compacted, LLM_INPUT_KEY)
    view = None
    if how.context is not None:
        stored = get_state_value(state, LLM_INPUT_KEY, None)
        source = with_messages(state, list(stored)) if stored else state
        view = how.assembled((yield ("context", source)))
    return without_stamps(_model_input(state, view, prompt, how)), learned


def _steps(
    state: Any, how: ModelInput, prompt: PromptLike, chat: Any
) -> Generator[_Request, Any, dict[str, Any]]:
    """One model step: assemble, call; on an overflow, compact the history, call again."""
    # New arrivals are dated before the context node first renders them.
    history, stamped = stamped_history(as_messages(get_state_value(state, "messages", [])))
    if stamped:
        state = with_messages(state, history)
    sent, learned = yield from _input(state, how, prompt)
    answer = yield ("model", sent)
    retry = None
    if overflowed(answer):
        history = as_messages(get_state_value(state, "messages", []))
        retry = how.window.shrink(history, chat, state)
        # The retry sees the compacted history; a stored pre_model view is stale now.
        shrunk = with_messages(with_messages(state, retry.messages), [], LLM_INPUT_KEY)
        sent, learned = yield from _input(shrunk, how, prompt)
        answer = retry.check((yield ("model", sent)))
    return {**learned, **how.update(state, sent, (answer, retry, chat), stamped)}


def model_node(
    model: BaseChatModel | Runnable[Any, Any] | ModelFactory,
    tools: list[BaseTool],
    system_prompt: PromptLike,
    how: ModelInput,
) -> RunnableLambda[Any, dict[str, Any]]:
    """The `model` node: assembles the input for this call, binds the tools, calls.

    A provider refusing the request as over the model's window is answered by one
    retry on the history compacted rule-based (`agents._overflow`); the update then
    rewrites the history in state.
    """
    fixed = (
        bind_model_tools(cast("Runnable[Any, Any]", model), tools) if is_chat_model(model) else None
    )

    def _chat(config: RunnableConfig) -> Any:
        if fixed is not None:
            return fixed
        return bind_model_tools(model(with_run_context(config)), tools)  # type: ignore[operator]

    def call_model(state: Any, config: RunnableConfig) -> dict[str, Any]:
        chat = _chat(config)

        def call(request: _Request) -> Any:
            kind, value = request
            step = how.context if kind == "context" else how.compaction
            if kind != "model" and step is not None:
                return step.invoke(value, how.quiet(config))
            return chat.invoke(how.for_model(value, chat), config)

        return drive(_steps(state, how, system_prompt, chat), call)

    async def acall_model(state: Any, config: RunnableConfig) -> dict[str, Any]:
        chat = _chat(config)

        async def acall(request: _Request) -> Any:
            kind, value = request
            step = how.context if kind == "context" else how.compaction
            if kind != "model" and step is not None:
                return await step.ainvoke(value, how.quiet(config))
            return await chat.ainvoke(how.for_model(value, chat), config)

        return await adrive(_steps(state, how, system_prompt, chat), acall)

    return RunnableLambda(call_model, afunc=acall_model, name="model")


def _answer_invalid_calls(response: BaseMessage) -> list[BaseMessage]:
    """The reply, then an error result for each call whose arguments did not parse.

    `langchain-openai` turns a malformed tool call into `invalid_tool_calls`; nothing
    would run it, and the provider refuses the next request while it has no result.
    """
    if not (isinstance(response, AIMessage) and response.invalid_tool_calls):
        return [response]
    return repair_history([response], allow_pending_tool_calls=True).messages
