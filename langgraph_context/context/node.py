"""`create_context_node`: assemble the context before each model call, inside a graph.

The node reads the conversation and any other state, keeps the most recent messages
verbatim, turns everything older plus plan, notes and sources into one budgeted system
message, and writes `[SystemMessage(context), *recent]` to `llm_input_messages`. It
never touches `messages`, so history is not destroyed; the model just sees less of it.

Use it as `pre_model_hook` of `langgraph.prebuilt.create_react_agent` (which reads
`llm_input_messages`), or as a plain node in your own `StateGraph` whose model node
calls the model on `state["llm_input_messages"]`.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableLambda
from typing_extensions import TypedDict

from langgraph_context.compaction import fenced_compaction_message, is_untrusted_compaction
from langgraph_context.compaction.provenance import is_trusted_system, mark_later_system
from langgraph_context.context._calls import Call, Steps, adrive, drive
from langgraph_context.context._window import (
    defused,
    lead_turn,
    split_pinned,
    state_tail,
    sticky_cut,
)
from langgraph_context.context.builder import ContextBuilder
from langgraph_context.context.result import ContextResult
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.messages import as_messages, content_text, safe_cut_points, tool_result_ids
from langgraph_context.safety.boundary import HARDENING_INSTRUCTION
from langgraph_context.safety.detector import Detector
from langgraph_context.state import get_state_value, require_state_keys
from langgraph_context.tokens import TokenCounter, truncate_text

__all__ = [
    "DEFAULT_KEEP_LAST",
    "DEFAULT_NODE_NAME",
    "DEFAULT_OUTPUT_KEY",
    "LAYOUTS",
    "ContextStateMixin",
    "Layout",
    "create_context_node",
]

logger = logging.getLogger(__name__)

DEFAULT_KEEP_LAST = 6
Layout = Literal["cache", "focus"]
LAYOUTS: tuple[Layout, ...] = ("cache", "focus")
DEFAULT_OUTPUT_KEY = "llm_input_messages"
DEFAULT_NODE_NAME = "assemble_context"
_MIN_SHORTENED_TOKENS = 32


class ContextStateMixin(TypedDict, total=False):
    """Adds `llm_input_messages`, the messages the next model call should see."""

    llm_input_messages: list[AnyMessage]


class _StateView(Mapping[str, Any]):
    """Graph state as the builder's state sources see it: `messages` = older history.

    Readable both ways a state source may read state: `view["plan"]`, `view.get(...)`
    and `view.plan` (a dict state, a TypedDict or a pydantic/dataclass state).
    """

    def __init__(
        self,
        state: Any,
        older: list[BaseMessage],
        messages_key: str,
        hidden: frozenset[str] = frozenset(),
    ) -> None:
        self._state = state
        self._messages_key = messages_key
        self._hidden = hidden
        self.messages = older

    def _keys(self) -> list[str]:
        if isinstance(self._state, Mapping):
            keys = [str(k) for k in self._state]
        elif hasattr(self._state, "model_fields"):
            keys = list(type(self._state).model_fields)
        else:
            keys = [k for k in getattr(self._state, "__dict__", {}) if not k.startswith("_")]
        keys = [k for k in keys if k not in self._hidden]
        return list(dict.fromkeys([*keys, "messages", self._messages_key]))

    def __getitem__(self, key: str) -> Any:
        if key in ("messages", self._messages_key):
            return self.messages
        if key not in self._keys():
            raise KeyError(key)
        return get_state_value(self._state, key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self._hidden:
            return None
        return get_state_value(self._state, name)


def _split_history(
    messages: list[BaseMessage], keep_last: int
) -> tuple[list[SystemMessage], list[BaseMessage], list[BaseMessage]]:
    head = 0
    while head < len(messages) and is_trusted_system(messages[head]):
        head += 1
    system = [m for m in messages[:head] if isinstance(m, SystemMessage)]
    body = messages[head:]
    if keep_last == 0 or not body:
        return system, body, []
    want = max(0, len(body) - keep_last)
    # First cut at or after `want` that keeps every tool call with its results.
    cut = next((c for c in safe_cut_points(body) if c >= want), len(body))
    if cut == len(body):
        cut = max(c for c in safe_cut_points(body) if c < len(body))
    return system, body[:cut], body[cut:]


def _query(messages: Sequence[BaseMessage], state: Any, query_key: str | None) -> str:
    if query_key is not None:
        return str(get_state_value(state, query_key, ""))
    for message in reversed(messages):
        if isinstance(message, HumanMessage) and not is_untrusted_compaction(message):
            return content_text(message.content)
    return ""


def create_context_node(
    builder: ContextBuilder | None = None,
    *,
    system_instructions: str | None = None,
    messages_key: str = "messages",
    query_key: str | None = None,
    keep_last: int = DEFAULT_KEEP_LAST,
    layout: Layout = "cache",
    output_key: str = DEFAULT_OUTPUT_KEY,
    name: str = DEFAULT_NODE_NAME,
    harden_from_start: bool = False,
) -> RunnableLambda[Any, dict[str, Any]]:
    """Create a node that writes the assembled context for the next model call.

    Two layouts. `"cache"` (default) is built for providers' prompt caches: one
    system message with the instructions, the pinned state and a selection of older
    turns; then the history verbatim from a sticky cut point (it moves forward in
    steps of half the room, so each call's input starts with the previous call's);
    then the plan in a closing message. `"focus"` rebuilds the context for every
    call around the current query: one system message with task, state and the most
    relevant older turns, then the last `keep_last` messages.

    The whole model input (context system message plus the recent messages) fits the
    builder's `config.max_tokens`. The context always keeps room for its role, task
    and output sections (`ContextBuilder.fixed_tokens`) and at least a third of the
    window for pinned state and older turns (at most half in all); the recent messages
    get the rest. When they are over it, older rounds move into the
    context pool (never splitting a tool call from its results), then the longest
    texts are shortened with a notice, tool results first. Only the model's view is
    shortened: `messages` in state stay whole.

    The output is always one system message first, then at least one other message:
    later system messages in the history (e.g. a summary another node inserted) join
    the context, and with nothing recent the last user turn is passed on. Recent tool
    results are passed on unchanged; with `ContextBuilder(sanitize=True)` they are
    rewritten in-band too (plain and text-block content).

    Args:
        builder: The `ContextBuilder` (default: `ContextBuilder()`).
        system_instructions: Role text; leading system messages in the history are
            added to it.
        messages_key: State key of the conversation.
        query_key: State key holding the query; default: the last human message.
        keep_last: With `layout="focus"`, how many recent messages are passed on
            verbatim (moved to a tool round boundary).
        layout: `"cache"` (a stable prefix and an append-only tail) or `"focus"`.
        output_key: State key written (`llm_input_messages` for `pre_model_hook`).
        name: The runnable's name.
        harden_from_start: Cache layout: hardening line from the first call (tools).

    Returns:
        A runnable with sync and async paths, usable as a node or `pre_model_hook`.

    Raises:
        ValueError: If `keep_last` is negative, `layout` is unknown or a key is empty.

    Example:
        >>> node = create_context_node(keep_last=1)
        >>> out = node.invoke({"messages": [{"role": "user", "content": "hi"}]})
        >>> [m.type for m in out["llm_input_messages"]]
        ['system', 'human']
    """
    if keep_last < 0:
        msg = f"keep_last must be >= 0, got {keep_last}"
        raise InvalidArgumentError(msg)
    if layout not in LAYOUTS:
        msg = f"layout must be one of {list(LAYOUTS)}, got {layout!r}"
        raise InvalidArgumentError(msg)
    for key_name, key in (("messages_key", messages_key), ("output_key", output_key)):
        if not isinstance(key, str) or not key:
            msg = f"{key_name} must be a non-empty string, got {key!r}"
            raise InvalidArgumentError(msg)
    context_builder = builder or ContextBuilder()
    if layout == "cache":
        keys = (messages_key, output_key)
        return _cache_node(context_builder, system_instructions, keys, name, harden_from_start)
    counter = context_builder.token_counter
    limit = context_builder.config.max_tokens

    def plan(state: Any) -> tuple[str, str | None, _StateView, list[BaseMessage], int]:
        require_state_keys({output_key: "ContextStateMixin"}, node=name)
        messages = mark_later_system(as_messages(get_state_value(state, messages_key, [])))
        defuse = context_builder.detector if context_builder.sanitize else False
        system, older, recent = _model_view(messages, keep_last, defuse=defuse)
        parts = [content_text(m.content) for m in system]
        if system_instructions:
            parts.append(system_instructions)
        instructions = "\n\n".join(p for p in parts if p)
        # The query is rendered in [Task] and also stays in the recent turns: a huge
        # pasted message is cut in [Task] to a quarter of the window.
        query = truncate_text(_query(messages, state, query_key), limit // 4, token_counter=counter)
        # The context message always has room for role, task and output; the recent
        # messages get the rest.
        overhead = max(0, counter([SystemMessage("")]))
        # The context keeps at least a third of the window (pinned plan, constraints,
        # briefings live there) and always its fixed sections, but never more than
        # half: with instructions that large, the recent turns still get a fair share.
        fixed = min(
            max(context_builder.fixed_tokens(query, instructions or None), limit // 3),
            limit // 2,
        )
        allowed = max(0, limit - overhead - fixed)
        older, recent = _fit_recent(older, recent, query, allowed, counter)
        room = max(1, limit - overhead - (counter(recent) if recent else 0))
        view = _StateView(state, older, messages_key)
        return query, instructions or None, view, recent, room

    def output(result: ContextResult, recent: list[BaseMessage]) -> dict[str, Any]:
        return {output_key: [SystemMessage(result.text), *recent]}

    def run(state: Any) -> dict[str, Any]:
        query, instructions, view, recent, room = plan(state)
        result = context_builder.build_result(
            query, system_instructions=instructions, state=view, max_tokens=room
        )
        return output(result, recent)

    async def arun(state: Any) -> dict[str, Any]:
        query, instructions, view, recent, room = plan(state)
        result = await context_builder.abuild_result(
            query, system_instructions=instructions, state=view, max_tokens=room
        )
        return output(result, recent)

    return RunnableLambda(run, afunc=arun, name=name)


def _model_view(
    messages: list[BaseMessage], keep_last: int, *, defuse: Detector | bool | None
) -> tuple[list[SystemMessage], list[BaseMessage], list[BaseMessage]]:
    """Split the history into leading system messages, older turns and recent ones.

    Providers such as Anthropic take system text only at the very start: a later
    system message (a summary another node inserted) joins the older turns, and so
    the context. With nothing recent, the last user turn is passed on; unless `defuse`
    is `False`, recent tool results are sanitized (with it, when it is a `Detector`).
    """
    system, older, recent = _split_history(messages, keep_last)
    older = older + [m for m in recent if isinstance(m, SystemMessage)]
    recent = [m for m in recent if not isinstance(m, SystemMessage)]
    if not recent:
        recent, older = _last_human_turn(older)
    recent = [fenced_compaction_message(m) for m in recent]
    if defuse is not False:
        chosen = defuse if isinstance(defuse, Detector) else None
        recent = [defused(m, chosen) for m in recent]
    return system, older, recent


def _fit_recent(
    older: list[BaseMessage],
    recent: list[BaseMessage],
    query: str,
    allowed: int,
    counter: TokenCounter,
) -> tuple[list[BaseMessage], list[BaseMessage]]:
    """Fit the recent messages into `allowed` tokens, with a user turn among them.

    Whole tool rounds move to the older turns first, then the largest texts (stale
    tool output first) are shortened.
    """
    while recent and counter(recent) > allowed:
        cuts = [c for c in safe_cut_points(recent) if 0 < c < len(recent)]
        if not cuts:
            break
        older, recent = older + recent[: cuts[0]], recent[cuts[0] :]
    if recent and counter(recent) > allowed:
        recent = _shorten(recent, allowed, counter)
    if query and not any(isinstance(m, HumanMessage) and not tool_result_ids(m) for m in recent):
        # Providers want a user turn (Anthropic: first): when the recent messages
        # hold none (a long tool loop, a system-only history, a query from
        # `query_key`), the task goes first as one.
        rest = recent
        recent = [HumanMessage(query), *rest]
        if rest and counter(recent) > allowed:
            added = counter(recent) - counter(rest)
            recent = [recent[0], *_shorten(rest, max(0, allowed - added), counter)]
    return older, recent


def _last_human_turn(older: list[BaseMessage]) -> tuple[list[BaseMessage], list[BaseMessage]]:
    """With nothing recent, still pass the last user turn: a request needs one.

    A user message that only carries tool results (Anthropic's native format) is not a
    turn of its own: moved alone it would be a result without its call.
    """
    for i in range(len(older) - 1, -1, -1):
        if isinstance(older[i], HumanMessage) and not tool_result_ids(older[i]):
            return [older[i]], older[:i] + older[i + 1 :]
    return [], older


_SHORTENED = (
    "\n[... shortened by langgraph-context to fit the context window: {shown} of {total} "
    "tokens shown; the full text stays in the conversation history]"
)


def _text_blocks_only(content: Any) -> bool:
    if isinstance(content, str):
        return True
    return all(
        isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text") for b in content
    )


def _shorten(recent: list[BaseMessage], allowed: int, counter: TokenCounter) -> list[BaseMessage]:
    """Shorten the longest texts of `recent` until it fits `allowed` tokens.

    Tool results go first (stale output is what overflows), then the user's and the
    model's own text; images, tool calls and ids are kept, so every tool call still
    has its result. Texts keep at least `_MIN_SHORTENED_TOKENS` at first; if that is
    not enough (many parallel results), tool results are cut down to the notice alone.
    Every pass visits each message once, so this always ends; when even the shortest
    form is too long it returns that, with a warning.
    """
    messages = list(recent)
    originals: dict[int, tuple[str, int]] = {}
    shown: dict[int, int] = {}  # tokens of the original still shown, once shortened
    passes = (
        ((ToolMessage,), _MIN_SHORTENED_TOKENS),
        ((HumanMessage, AIMessage), _MIN_SHORTENED_TOKENS),
        ((ToolMessage,), 0),
    )
    for kinds, floor in passes:
        candidates = []
        for i, m in enumerate(messages):
            if isinstance(m, kinds) and _text_blocks_only(m.content):
                if i not in originals:
                    text = content_text(m.content)
                    originals[i] = (text, counter(text))
                candidates.append((originals[i][1], i))
        for total, i in sorted(candidates, reverse=True):
            excess = counter(messages) - allowed
            if excess <= 0:
                return messages
            now = shown.get(i, total)
            # The first cut of a message also pays for its notice.
            extra = 0 if i in shown else counter(_SHORTENED.format(shown=total, total=total))
            keep = max(floor, now - excess - extra)
            if keep >= now:
                continue
            head = truncate_text(originals[i][0], keep, token_counter=counter)
            shorter = messages[i].model_copy(
                update={"content": head + _SHORTENED.format(shown=counter(head), total=total)}
            )
            if counter([shorter]) >= counter([messages[i]]):
                continue  # the notice would cost more than it saves
            shown[i] = counter(head)
            messages[i] = shorter
    if counter(messages) > allowed:
        logger.warning(
            "recent messages need %d tokens even shortened, over the %d left for them",
            counter(messages),
            allowed,
        )
    return messages


def _cache_node(
    builder: ContextBuilder,
    system_instructions: str | None,
    keys: tuple[str, str],
    name: str,
    harden_from_start: bool,
) -> RunnableLambda[Any, dict[str, Any]]:
    """The `layout="cache"` node: stable system message, sticky window, plan last.

    `keys` are the messages key and the output key; with `harden_from_start` the
    hardening line is in the system message from the first call.
    """
    messages_key, output_key = keys
    counter = builder.token_counter
    limit = builder.config.max_tokens
    # The system message renders no task and no output section (they would change
    # with every request); its share of the window is fixed, so its selection only
    # changes when the turns before the window or the pinned state do.
    head_builder = copy.copy(builder)
    head_builder.config = dataclasses.replace(builder.config, output_instructions="")
    protect = builder.protect_untrusted and builder.wrap_untrusted is None
    # Tool output sits verbatim in the window, so the hardening text is due from the
    # first call when the model has tools (its arrival would rewrite the prefix), else
    # once the history holds tool output (once there, it stays).
    hardening = builder.hardening if builder.hardening is not None else HARDENING_INSTRUCTION
    if protect:
        head_builder.hardening = ""

    def verbatim(older: list[BaseMessage], window: list[BaseMessage]) -> list[BaseMessage]:
        # A compaction message an older version stored unfenced is fenced whole, with
        # or without the opt-in rewriting of tool results.
        window = [fenced_compaction_message(m) for m in [*lead_turn(older, window), *window]]
        return [defused(m, builder.detector) for m in window] if builder.sanitize else window

    def steps(state: Any) -> Steps[dict[str, Any]]:
        require_state_keys({output_key: "ContextStateMixin"}, node=name)
        messages = mark_later_system(as_messages(get_state_value(state, messages_key, [])))
        system, later, body = split_pinned(messages)
        parts = [content_text(m.content) for m in system]
        due = harden_from_start or any(
            isinstance(m, ToolMessage) or tool_result_ids(m) for m in body
        )
        parts += [system_instructions or "", hardening if protect and due else ""]
        instructions = "\n\n".join(p for p in parts if p) or None
        head = min(max(builder.fixed_tokens("", instructions), limit // 4), limit // 2)
        tail = state_tail(state)

        def build(older: list[BaseMessage]) -> Call:
            view = _StateView(state, [*older, *later], messages_key, frozenset({"plan"}))
            kwargs = {"system_instructions": instructions, "state": view, "max_tokens": head}
            return Call(head_builder.build_result, head_builder.abuild_result, ("",), kwargs)

        # While the whole history fits beside the system message as it is, it is sent
        # whole: the share set aside for turns before the window waits until there are
        # some, so nothing moves before the budget is really reached.
        whole: ContextResult = yield build([])
        window = verbatim([], body)
        if counter([SystemMessage(whole.text), *window, *tail]) <= limit:
            return {output_key: [SystemMessage(whole.text), *window, *tail]}
        overhead = max(0, counter([SystemMessage("")]))
        room = max(0, limit - overhead - head - (counter(tail) if tail else 0))
        cut = sticky_cut(body, room, counter)
        window = verbatim(body[:cut], body[cut:])
        if window and counter(window) > room:
            window = _shorten(window, room, counter)
        result: ContextResult = (yield build(body[:cut])) if cut else whole
        return {output_key: [SystemMessage(result.text), *window, *tail]}

    def run(state: Any) -> dict[str, Any]:
        return drive(steps(state))

    async def arun(state: Any) -> dict[str, Any]:
        return await adrive(steps(state))

    return RunnableLambda(run, afunc=arun, name=name)
