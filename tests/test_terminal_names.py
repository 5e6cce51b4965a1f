"""Names that are not UTF-8: shown escaped as `ls -b` shows them, never a crash or a surrogate."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from langgraph_context.errors import InvalidArgumentError
from langgraph_context.tools.terminal import TerminalStateMixin, create_terminal_tool
from langgraph_context.tools.terminal._names import escape_name, unescape_name
from tests.conftest import call

# Not starting with a dot: `cd *`, like a shell's glob, does not match hidden names.
names = st.binary(min_size=1, max_size=12).filter(
    lambda b: b"/" not in b and b"\0" not in b and not b.startswith(b".")
)


class State(MessagesState, TerminalStateMixin):
    """Messages plus the terminal's directory."""


def _strict(text: str) -> str:
    text.encode("utf-8")  # raises on a lone surrogate
    return text


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=names)
def test_any_byte_name_is_listed_entered_and_shown_without_surrogates(name: bytes) -> None:
    """ls, tree, find, cd (by glob) and pwd on any byte name: messages are valid UTF-8."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.mkdir(os.path.join(os.fsencode(tmp), name))
        tool = create_terminal_tool(root, timeout=10)
        for index, command in enumerate(["ls", "tree", "find .", "cd *", "pwd", "ls -R"]):
            message = tool.invoke(
                {
                    "name": "terminal",
                    "args": {"command": command},
                    "id": f"c{index}",
                    "type": "tool_call",
                }
            )
            assert isinstance(message, ToolMessage)
            _strict(str(message.content))
            _strict(str(message.artifact["cwd"]))
            _strict(str(message.artifact["relative_cwd"]))
        terminal = tool.metadata["terminal"]  # type: ignore[index]
        assert os.fsencode(terminal.cwd) == os.path.join(os.fsencode(str(root.resolve())), name)
        shown = terminal.run("pwd").output
        assert shown == escape_name(os.fsdecode(os.fsencode(str(terminal.cwd)))) + "\n"


@given(name=st.binary(max_size=40))
def test_escaping_round_trips_every_byte_string(name: bytes) -> None:
    """`unescape_name(escape_name(n)) == n` for any bytes, and the escaped text is valid UTF-8."""
    text = escape_name(os.fsdecode(name))
    _strict(text)
    assert os.fsencode(unescape_name(text)) == name


def test_escaping_matches_ls_escape_style() -> None:
    """Bad bytes become octal, control characters C escapes, a backslash doubles."""
    assert escape_name(os.fsdecode(b"caf\xe9\tx\\y")) == "caf\\351\\tx\\\\y"
    assert escape_name("café") == "café"
    with pytest.raises(InvalidArgumentError, match="not an escaped name"):
        unescape_name("a\\q")


def test_cd_into_a_non_utf8_folder_is_checkpointed_and_resumed(tmp_path: Path) -> None:
    """The escaped directory goes through the checkpointer and the next turn is still there."""
    os.mkdir(os.path.join(os.fsencode(tmp_path), b"d\xff"))
    (Path(os.fsdecode(os.path.join(os.fsencode(tmp_path), b"d\xff"))) / "in.txt").write_text("x\n")
    graph = StateGraph(State)
    graph.add_node("tools", ToolNode([create_terminal_tool(tmp_path, timeout=10)]))
    graph.add_edge(START, "tools")
    app = graph.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    first = app.invoke(
        {"messages": [AIMessage("", tool_calls=[call("terminal", {"command": "cd d*"}, "a")])]},
        config,
    )
    assert first["terminal_cwd"] == "d\\377"
    assert _strict(first["messages"][-1].content) == f"{tmp_path.resolve()}/d\\377\n"
    second = app.invoke(
        {"messages": [AIMessage("", tool_calls=[call("terminal", {"command": "ls"}, "b")])]}, config
    )
    assert second["messages"][-1].content == "in.txt\n"
