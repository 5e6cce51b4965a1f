"""Shared plumbing for tool factories: `ToolSpec`, results, and same-turn sibling calls."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.types import Command

from langgraph_context._memo import SizedMemo
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.state import get_state_value, require_state_keys

DEFAULT_MESSAGES_KEY = "messages"
# The mixin that declares each state key a package tool writes.
_MIXINS = {
    "plan": "PlanStateMixin",
    "note": "NoteStateMixin",
    "constraints": "PinnedStateMixin",
    "hot_issues": "PinnedStateMixin",
}
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

SCHEMAS_KEPT = 256
"""Inferred tool argument schemas kept process-wide (`ToolSpec.build`), one per tool
name and function signature: a bound by count, as each is one small pydantic class."""
_SCHEMAS: SizedMemo[tuple[Any, ...], Any] = SizedMemo(SCHEMAS_KEPT)
_PLAIN_DEFAULTS = frozenset({type(None), bool, int, float, str, type})  # `type`: no default


def _schema_key(name: str, func: Callable[..., Any]) -> tuple[Any, ...] | None:
    """What `StructuredTool.from_function` infers a schema from, or `None` if unhashable.

    The function's code, names, docstring and every parameter (name, kind, annotation,
    default): a factory's closure made again for another agent has the same key, so
    the pydantic class inferred the first time serves it (inferring one takes about 4
    ms and some 300 objects). A default that is not a plain value (None, a bool, a
    number, a string), an annotation that cannot be hashed, or a callable without code
    is inferred every time.
    """
    code = getattr(func, "__code__", None)
    if code is None:
        return None
    try:
        # the default's type too: 1, 1.0 and True are equal keys, not equal schemas
        params = tuple(
            (p.name, p.kind, p.annotation, type(p.default), p.default)
            for p in inspect.signature(func).parameters.values()
        )
        # A default other than a plain value (an object made per build) would be kept
        # alive by the key, and never match again: such a function is not kept.
        if any(type(default) not in _PLAIN_DEFAULTS for *_, default in params):
            return None
        key = (name, code, func.__module__, func.__qualname__, func.__doc__, params)
        hash(key)
    except (TypeError, ValueError):
        return None
    return key


def check_workspace(workspace: Any, name: str = "workspace") -> None:
    """Refuse an empty or blank path (it would silently mean the current directory).

    Raises:
        ValueError: Naming the parameter.
    """
    if isinstance(workspace, str | os.PathLike) and not os.fspath(workspace).strip():
        msg = f"{name} must be a directory path, got an empty or blank string {workspace!r}"
        raise InvalidArgumentError(msg)


def _check_tool_name(name: str | None, default: str) -> str:
    """Return the tool name to use, rejecting names chat providers refuse.

    Raises:
        ValueError: If `name` is not 1-64 letters, digits, `_` or `-`.
    """
    if name is None:
        return default
    if not isinstance(name, str) or not _TOOL_NAME.match(name):
        msg = f"name must be 1-64 characters of [A-Za-z0-9_-], got {name!r}"
        raise InvalidArgumentError(msg)
    return name


def _prefixed(name: str | None, prefix: str | None, default: str) -> str | None:
    """The tool name `name` or `<prefix>_<default>` asks for (`None` for the default).

    Raises:
        ValueError: If both are given, or `prefix` is not a non-empty string.
    """
    if prefix is None:
        return name
    if name is not None:
        msg = f"pass name or prefix, not both (got name={name!r}, prefix={prefix!r})"
        raise InvalidArgumentError(msg)
    if not isinstance(prefix, str) or not prefix:
        msg = f"prefix must be a non-empty string, got {prefix!r}"
        raise InvalidArgumentError(msg)
    return f"{prefix}_{default}"


def _describe_tool(origin: str, tool: Any) -> str:
    """`origin 'name' (first line of its description)` for an error message."""
    described = str(getattr(tool, "description", "") or "").strip().splitlines()
    summary = described[0][:60] if described else type(tool).__name__
    return f"{origin} {tool_name(tool)!r} ({summary})"


def tool_name(tool: Any) -> str | None:
    """The name of a tool: a `BaseTool`, a function, or a provider's tool dict."""
    if isinstance(tool, dict):
        function = tool.get("function")
        found = function.get("name") if isinstance(function, dict) else tool.get("name")
        return str(found) if found is not None else None
    name = getattr(tool, "name", None) or getattr(tool, "__name__", None)
    return str(name) if name is not None else None


def check_distinct_tools(tools: Sequence[tuple[str, Any]]) -> None:
    """Refuse two tools with one name: the tool node would keep one and drop the other.

    LangGraph's `ToolNode` (and `create_agent`) index tools by name, so a second tool
    of the same name silently replaces the first (the note tool `ls` would replace
    deepagents' filesystem `ls`).

    Args:
        tools: `(origin, tool)` pairs; the origin says where a tool came from
            (`"tools[0]"`, `"note tool"`, ...).

    Raises:
        ValueError: Naming both tools of the first name used twice.

    Example:
        >>> from langchain_core.tools import tool
        >>> @tool
        ... def ls() -> str:
        ...     "List files."
        ...     return ""
        >>> check_distinct_tools([("tools[0]", ls), ("tools[1]", ls)])
        Traceback (most recent call last):
        ...
        langgraph_context.errors.InvalidArgumentError: two tools are named 'ls': ...
    """
    seen: dict[str, tuple[str, Any]] = {}
    for origin, tool in tools:
        name = tool_name(tool)
        if name is None:
            continue
        if name in seen:
            first = _describe_tool(*seen[name])
            msg = (
                f"two tools are named {name!r}: {first} and {_describe_tool(origin, tool)}; "
                "one would silently replace the other. Rename one (the note tools take "
                "prefix=..., e.g. note_prefix='notes' on the agent; any tool factory "
                "takes name=...)."
            )
            raise InvalidArgumentError(msg)
        seen[name] = (origin, tool)


def _check_description(description: str | None, default: str) -> str:
    """Return the description to use.

    Raises:
        ValueError: If `description` is given but blank.
    """
    if description is None:
        return default
    if not isinstance(description, str) or not description.strip():
        msg = f"description must be a non-empty string, got {description!r}"
        raise InvalidArgumentError(msg)
    return description


def _check_messages_key(messages_key: str | None, default: str) -> str:
    """Return the state key tool messages go to.

    Raises:
        ValueError: If `messages_key` is given but empty.
    """
    if messages_key is None:
        return default
    if not isinstance(messages_key, str) or not messages_key:
        msg = f"messages_key must be a non-empty string, got {messages_key!r}"
        raise InvalidArgumentError(msg)
    return messages_key


def error_result(content: str, tool_call_id: str) -> ToolMessage:
    """A tool result telling the model what went wrong; the state is left unchanged."""
    return ToolMessage(content, tool_call_id=tool_call_id, status="error")


@dataclass(frozen=True)
class ToolSpec:
    """A tool's name, description and messages key: a factory's defaults, then the user's.

    A tool module keeps its defaults as a spec constant; its factory calls `customize`
    once with the user's options, which checks them.

    Attributes:
        name: The tool name shown to the model.
        description: The tool description shown to the model.
        messages_key: The state key of the messages list the tool's `ToolMessage` joins.

    Example:
        >>> PING = ToolSpec("ping", "Answer pong.")
        >>> spec = PING.customize(name="pong", messages_key="chat")
        >>> (spec.name, spec.description, spec.messages_key)
        ('pong', 'Answer pong.', 'chat')
    """

    name: str
    description: str
    messages_key: str = DEFAULT_MESSAGES_KEY

    def customize(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        messages_key: str | None = None,
        prefix: str | None = None,
        message_key: str | None = None,
    ) -> ToolSpec:
        """Return this spec with the user's options; None keeps this spec's value.

        Args:
            name: Tool name: 1-64 letters, digits, `_` or `-`.
            prefix: Instead of `name`: the tool is named `<prefix>_<default name>`.
            description: Tool description: non-empty text.
            messages_key: State key of the messages list: a non-empty string.
            message_key: The spec's spelling of `messages_key` (the original
                library's), accepted as an alias.

        Returns:
            The checked spec.

        Raises:
            ValueError: If a given name, prefix, description or messages key is
                invalid, or both `name` and `prefix`, or both `messages_key` and
                `message_key`, are given.
        """
        if message_key is not None:
            if messages_key is not None:
                msg = (
                    f"pass messages_key or its alias message_key, not both (got "
                    f"messages_key={messages_key!r}, message_key={message_key!r})"
                )
                raise InvalidArgumentError(msg)
            messages_key = message_key
        return ToolSpec(
            name=_check_tool_name(_prefixed(name, prefix, self.name), self.name),
            description=_check_description(description, self.description),
            messages_key=_check_messages_key(messages_key, self.messages_key),
        )

    def build(
        self,
        func: Callable[..., Any],
        *,
        coroutine: Callable[..., Awaitable[Any]] | None = None,
    ) -> BaseTool:
        """Return `func` (and its async twin `coroutine`) as a tool with this name.

        Every `ToolMessage` the tool returns (alone or in a `Command`) carries the
        tool's name, errors included: ToolNode does not add it to a returned message.
        """

        @functools.wraps(func)
        def named(*args: Any, **kwargs: Any) -> Any:
            return self._named(func(*args, **kwargs))

        anamed: Callable[..., Awaitable[Any]] | None = None
        if coroutine is not None:
            acall = coroutine

            @functools.wraps(acall)
            async def anamed(*args: Any, **kwargs: Any) -> Any:
                return self._named(await acall(*args, **kwargs))

        key = _schema_key(self.name, func)
        schema = None if key is None else _SCHEMAS.get(key)  # the memo locks its writes
        made = StructuredTool.from_function(
            func=named,
            coroutine=anamed,
            name=self.name,
            description=self.description,
            args_schema=schema,
        )
        if schema is None and key is not None:
            _SCHEMAS.put(key, made.args_schema)
        return made

    def _named(self, result: Any) -> Any:
        """`result` with this tool's name on each of its tool messages that lacks one."""
        if isinstance(result, ToolMessage):
            return result if result.name else result.model_copy(update={"name": self.name})
        if isinstance(result, Command) and isinstance(result.update, dict):
            messages = result.update.get(self.messages_key)
            if isinstance(messages, list):
                named = [self._named(m) for m in messages]
                update = {**result.update, self.messages_key: named}
                return dataclasses.replace(result, update=update)
        return result

    def command(self, update: dict[str, Any], content: str, tool_call_id: str) -> Command[Any]:
        """A state update carrying the tool's `ToolMessage` under `messages_key`.

        Raises:
            InvalidArgumentError: Inside a graph whose state lacks a key of `update`
                (LangGraph would drop the write silently while the tool reports
                success), naming the key and the mixin that declares it.
        """
        keys = {k: _MIXINS.get(k, f"a {k!r} field") for k in update if k != self.messages_key}
        require_state_keys(keys, node=f"tool {self.name!r}")
        return Command(
            update={
                **update,
                self.messages_key: [ToolMessage(content, tool_call_id=tool_call_id)],
            }
        )


def earlier_sibling_calls(state: Any, tool_call_id: str, messages_key: str) -> list[ToolCall]:
    """Return the calls made before `tool_call_id` in the same AI message.

    Parallel calls in one AI turn all see the same state; tools use their earlier
    siblings to agree on a deterministic outcome (fresh note names, one plan change).
    """
    messages = get_state_value(state, messages_key, [])
    for message in reversed(messages):
        if isinstance(message, AIMessage) and any(
            tc.get("id") == tool_call_id for tc in message.tool_calls
        ):
            calls = list(message.tool_calls)
            index = next(i for i, tc in enumerate(calls) if tc.get("id") == tool_call_id)
            return calls[:index]
    return []
