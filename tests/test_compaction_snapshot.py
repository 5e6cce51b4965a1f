"""Rule-based state snapshots: extraction, merging, rendering under a budget."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from langgraph_context.compaction import StateSnapshot, extract_snapshot
from langgraph_context.compaction.entry import cut_tool_result, without_cut_notice
from langgraph_context.compaction.provenance import compaction_kind
from langgraph_context.compaction.snapshot import snapshot_message
from langgraph_context.messages import CANCELLED_TOOL_RESULT


def call(name: str, args: dict, cid: str) -> AIMessage:
    """An AI message making one tool call."""
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": cid}])


EVICTED = [
    SystemMessage("system rules are not facts to extract"),
    HumanMessage("Book flight HAT136 for user mia_li_3668; pay with certificate_7504069"),
    call("Read", {"file_path": "lib/app/user.ex"}, "c1"),
    ToolMessage(
        "defmodule User do\n  # {:error, reason} handled here\nend", tool_call_id="c1", name="Read"
    ),
    call("Bash", {"command": "mix test test/user_test.exs"}, "c2"),
    ToolMessage(
        "Compiling 3 files\n** (CompileError) lib/app/user.ex:12: undefined function foo/1",
        tool_call_id="c2",
        name="Bash",
        status="error",
    ),
    call("Edit", {"file_path": "lib/app/user.ex", "old": "foo", "new": "bar"}, "c3"),
    ToolMessage("ok", tool_call_id="c3", name="Edit"),
    call(
        "TodoWrite",
        {
            "todos": [
                {"content": "write docs", "status": "pending"},
                {"content": "fix", "status": "completed"},
            ]
        },
        "c4",
    ),
    ToolMessage("ok", tool_call_id="c4", name="TodoWrite"),
    AIMessage("TODO: update CHANGELOG.md after the fix"),
    call("Grep", {"pattern": "x"}, "c5"),
    ToolMessage(CANCELLED_TOOL_RESULT, tool_call_id="c5", name="Grep", status="error"),
]


def test_extracts_each_kind_of_fact() -> None:
    """Requests, files with their use, commands, errors with follow-up, ids and open items."""
    snap = extract_snapshot(EVICTED)
    assert snap.requests == (
        "Book flight HAT136 for user mia_li_3668; pay with certificate_7504069",
    )
    assert "lib/app/user.ex (edited, read)" in snap.files
    assert "CHANGELOG.md" not in snap.files  # no directory: not path-like enough
    assert snap.commands == ("mix test test/user_test.exs",)
    assert snap.errors == (
        "Bash: ** (CompileError) lib/app/user.ex:12: undefined function foo/1"
        " -> then Edit(lib/app/user.ex)",
    )
    assert {"HAT136", "mia_li_3668", "certificate_7504069"} <= set(snap.identifiers)
    assert "[pending] write docs" in snap.open_items
    assert "TODO: update CHANGELOG.md after the fix" in snap.open_items
    assert "call Grep was cancelled" in snap.open_items
    assert snap.message_count == len(EVICTED)


def test_read_outputs_do_not_count_as_errors() -> None:
    """Code that merely mentions 'error' in a file read is not reported as an error."""
    snap = extract_snapshot(EVICTED[:4])
    assert snap.errors == ()


def test_merge_keeps_older_facts_first() -> None:
    """Merging appends newer facts, unions file uses and adds message counts."""
    older = extract_snapshot([HumanMessage("task one in src/a.py")])
    newer = extract_snapshot([call("Edit", {"file_path": "src/a.py"}, "e"), HumanMessage("two")])
    merged = older.merge(newer)
    assert merged.requests == ("task one in src/a.py", "two")
    assert merged.files == ("src/a.py (edited)",)
    assert merged.message_count == 3


def test_previous_snapshot_messages_are_merged_not_reread() -> None:
    """A snapshot message among evicted messages contributes its structured facts."""
    first = extract_snapshot(EVICTED)
    marked = snapshot_message(first.render(), first)
    assert compaction_kind(marked) == "snapshot"
    again = extract_snapshot([marked, HumanMessage("next request")])
    assert again.requests[0] == first.requests[0]
    assert again.requests[-1] == "next request"
    assert again.message_count == first.message_count + 1


def test_round_trip_through_dict() -> None:
    """to_dict / from_dict preserve every field."""
    snap = extract_snapshot(EVICTED)
    assert StateSnapshot.from_dict(snap.to_dict()) == snap


def test_render_under_budget_keeps_some_of_each_section() -> None:
    """A tight budget keeps the header and items from several sections, within budget."""
    from langgraph_context.tokens import count_tokens

    snap = extract_snapshot(EVICTED * 3)
    full = snap.render()
    small = snap.render(max_snapshot_tokens=130)  # the header and the fence take about 70
    assert count_tokens(small) <= 130
    assert len(small) < len(full)
    assert "User requests:" in small
    assert "Files (touched first):" in small


def test_render_returns_empty_when_nothing_fits_or_nothing_extracted() -> None:
    """No room for the header, or no facts, renders as an empty string."""
    snap = extract_snapshot(EVICTED)
    assert snap.render(max_snapshot_tokens=5) == ""
    assert StateSnapshot().render() == ""
    assert extract_snapshot([SystemMessage("only rules")]).empty


def test_non_marker_messages_have_no_kind() -> None:
    """Ordinary messages are not compaction messages."""
    assert compaction_kind(HumanMessage("hi")) is None
    assert compaction_kind(HumanMessage("x", additional_kwargs={"lgc_compaction": "bad"})) is None


def test_file_contents_printed_by_shell_reads_are_not_errors() -> None:
    """Output of `cat`/`head` is file content: its 'error' words are not recorded as errors."""
    from langchain_core.messages import AIMessage, ToolMessage

    from langgraph_context.compaction import extract_snapshot

    source = 'raise ValueError("parse failed")\n'
    calls = [
        AIMessage(
            "", tool_calls=[{"name": "terminal", "args": {"command": "head -n 5 a.py"}, "id": "r"}]
        ),
        ToolMessage(source, tool_call_id="r", name="terminal"),
        AIMessage(
            "", tool_calls=[{"name": "terminal", "args": {"command": "pytest -q"}, "id": "t"}]
        ),
        ToolMessage(
            "FAILED tests/test_a.py::test_x - AssertionError", tool_call_id="t", name="terminal"
        ),
    ]
    snap = extract_snapshot(calls)
    assert not any("parse failed" in e for e in snap.errors)
    assert any("FAILED tests/test_a.py::test_x" in e for e in snap.errors)


def test_a_cut_notice_and_its_handle_are_not_facts_of_the_snapshot() -> None:
    """A result cut on entry is condensed from its kept ends: no notice size or handle."""
    body = "\n".join(["see lib/app/order.ex", *["filler line"] * 400, "done"])
    read_back = 'full text kept: read_tool_output(handle="out-0123456789ab", offset or pattern)'
    result = ToolMessage(body, tool_call_id="c9", name="Bash")
    cut = cut_tool_result(result, 60, read_back=read_back)
    assert cut is not None
    assert "out-0123456789ab" in cut.content
    snap = extract_snapshot([call("Bash", {"command": "cat log"}, "c9"), cut])
    rendered = snap.render()
    assert "lib/app/order.ex" in rendered
    assert "out-0123456789ab" not in rendered
    assert "read_tool_output" not in rendered
    assert without_cut_notice(cut.content).count("\n") == cut.content.count("\n") - 1
    unmarked = cut.model_copy(update={"additional_kwargs": {}})  # not known as cut: read as is
    assert "out-0123456789ab" in extract_snapshot([unmarked]).identifiers
