"""Named hostile inputs for the history and token APIs, each with the error it must raise.

Every case is `(name, messages, error class, regex the message must match)`; the
regex names the bad item and its position. `tests/test_history_hostile.py` runs each
case through every public function that takes a history.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from langgraph_context.errors import InvalidArgumentError, InvalidTypeError


def _mutated_tool_message() -> ToolMessage:
    """A tool message whose tool_call_id was cleared after construction."""
    message = ToolMessage("r", tool_call_id="1")
    message.tool_call_id = None  # type: ignore[assignment]
    return message


def _mutated_content() -> HumanMessage:
    """A human message whose content was replaced by a number after construction."""
    message = HumanMessage("hi")
    message.content = 5  # type: ignore[assignment]
    return message


def _nameless_call() -> AIMessage:
    """An AI message built without validation, its call missing name and args."""
    return AIMessage.model_construct(content="", tool_calls=[{"id": "1"}], invalid_tool_calls=[])


CASES: list[tuple[str, Any, type[Exception], str]] = [
    ("none", None, InvalidTypeError, "got a single NoneType"),
    ("int", 5, InvalidTypeError, "got a single int"),
    ("string", "hello", InvalidTypeError, "got a single str"),
    ("single dict", {"role": "user", "content": "x"}, InvalidTypeError, "single dict"),
    ("single message", HumanMessage("x"), InvalidTypeError, "single HumanMessage"),
    ("list of ints", [1, 2, 3], InvalidTypeError, r"messages\[0\]: .*got int"),
    ("list with None", [HumanMessage("q"), None], InvalidTypeError, r"messages\[1\]: .*NoneType"),
    ("bytes item", [b"hi"], InvalidTypeError, r"messages\[0\]: .*got bytes"),
    ("float item", [1.5], InvalidTypeError, r"messages\[0\]: .*got float"),
    (
        "tool dict without tool_call_id",
        [{"role": "user", "content": "q"}, {"role": "tool", "content": "x"}],
        InvalidArgumentError,
        r"messages\[1\]: a tool message needs tool_call_id",
    ),
    (
        "tool dict with numeric tool_call_id",
        [{"role": "tool", "content": "x", "tool_call_id": 7}],
        InvalidArgumentError,
        r"messages\[0\]: a tool message needs tool_call_id",
    ),
    ("dict without role", [{"content": "x"}], InvalidArgumentError, r"messages\[0\]: .*'role'"),
    ("dict with None role", [{"role": None, "content": "x"}], InvalidArgumentError, r"\[0\]"),
    ("dict without content", [{"role": "user"}], InvalidArgumentError, r"messages\[0\]: .*content"),
    (
        "unknown role",
        [{"role": "wizard", "content": "x"}],
        InvalidArgumentError,
        r"messages\[0\]: cannot convert.*wizard",
    ),
    ("content is a number", [{"role": "user", "content": 5}], InvalidArgumentError, r"\[0\]"),
    ("nested list content", [{"role": "user", "content": [[["x"]]]}], InvalidArgumentError, "0"),
    ("one-element tuple", [("user",)], InvalidArgumentError, r"messages\[0\]: .*\(role, content\)"),
    ("three-element tuple", [("user", "a", "b")], InvalidArgumentError, r"messages\[0\]"),
    ("tuple with numeric role", [(1, "a")], InvalidArgumentError, r"messages\[0\]"),
    ("tuple with unknown role", [("wizard", "a")], InvalidArgumentError, r"messages\[0\]"),
    (
        "tool message id cleared after construction",
        [HumanMessage("q"), _mutated_tool_message()],
        InvalidArgumentError,
        r"messages\[1\]: a tool message needs tool_call_id",
    ),
    (
        "content replaced by a number",
        [_mutated_content()],
        InvalidTypeError,
        r"messages\[0\]: content must be a string or a list",
    ),
    (
        "tool call without name or args (model_construct)",
        [_nameless_call()],
        InvalidArgumentError,
        r"messages\[0\]: tool_calls\[0\] needs a string name",
    ),
    (
        "openai tool_calls that are not a list of dicts",
        [{"role": "assistant", "content": "", "tool_calls": [5]}],
        InvalidArgumentError,
        r"messages\[0\]: cannot convert",
    ),
]
