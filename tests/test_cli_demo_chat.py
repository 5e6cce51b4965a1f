"""The `demo` and `chat` commands, their model options and every error path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage

from langgraph_context.cli import main
from langgraph_context.cli.models import register_model_factory
from tests.conftest import ScriptedChatModel, feed_input

pytestmark = pytest.mark.usefixtures("no_model_env")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A small code folder with a TODO, for the demo to explore."""
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "tokens.py").write_text(
        '"""Token counting."""\n\n\ndef count(text):\n    # TODO: use tiktoken\n'
        "    return len(text.split())\n"
    )
    (root / "pkg" / "app.py").write_text("from pkg.tokens import count\n\nprint(count('a b'))\n")
    return root


def scripted_factory(replies: list[AIMessage]) -> str:
    """Register a factory returning a scripted model with `replies`; return its name."""
    model = ScriptedChatModel(responses=replies)
    model.seen = []
    register_model_factory("scripted-test", lambda config: model)
    return "scripted-test"


def test_demo_offline_runs_every_part(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without a model the demo says so and runs the maintainer, context and compaction."""
    assert main(["demo", "--workspace", str(workspace)]) == 0
    out = capsys.readouterr().out
    assert "No LLM is used" in out
    assert "session 2" in out
    assert "[done] map the layout" in out
    assert "TODO" in out
    assert "tokens per section" in out
    assert "tool calls and results still paired: yes" in out


def test_demo_rejects_a_missing_workspace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A workspace that is not a directory is one error line and exit code 1."""
    assert main(["demo", "--workspace", str(tmp_path / "nope")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("error: workspace")
    assert "is not a directory" in err[0]


def test_demo_with_a_configured_model(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With a model, the maintainer runs on it and its answer is shown."""
    name = scripted_factory([AIMessage("The project counts tokens in pkg/tokens.py.")])
    assert main(["demo", "--workspace", str(workspace), "--model-factory", name]) == 0
    out = capsys.readouterr().out
    assert "No LLM is used" not in out
    assert "counts tokens in pkg/tokens.py" in out


def test_demo_with_an_unreachable_model(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An endpoint that refuses connections is one error line naming it, exit code 1."""
    monkeypatch.setenv("LGC_API_KEY", "sk-test")
    code = main(["demo", "--workspace", str(workspace), "--base-url", "http://127.0.0.1:9/v1"])
    assert code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "the model at http://127.0.0.1:9/v1 failed" in err[0]


def test_unknown_model_factory_is_one_line(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Naming a factory nobody registered fails cleanly."""
    assert main(["demo", "--workspace", str(workspace), "--model-factory", "nope"]) == 1
    assert "model_factory 'nope' is not registered" in capsys.readouterr().err


def test_chat_persists_threads_in_sqlite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two chat sessions on one thread share the history saved in SQLite."""
    db = tmp_path / "chat.sqlite"
    name = scripted_factory([AIMessage("Noted: you like tea."), AIMessage("You like tea.")])
    feed_input(monkeypatch, ["I like tea", "/exit"])
    assert main(["chat", "--model-factory", name, "--db", str(db), "--thread", "t1"]) == 0
    feed_input(monkeypatch, ["", "What do I like?"])
    assert main(["chat", "--model-factory", name, "--db", str(db), "--thread", "t1"]) == 0
    out = capsys.readouterr().out
    assert "assistant> Noted: you like tea." in out
    assert "assistant> You like tea." in out
    assert "tokens (" in out  # the context-use bar
    assert db.exists()


def test_chat_second_session_sees_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The model of a resumed thread is sent the earlier turns."""
    db = tmp_path / "chat.sqlite"
    model = ScriptedChatModel(responses=[AIMessage("ok"), AIMessage("tea")])
    model.seen = []
    register_model_factory("scripted-seen", lambda config: model)
    feed_input(monkeypatch, ["remember: I like tea"])
    main(["chat", "--model-factory", "scripted-seen", "--db", str(db)])
    feed_input(monkeypatch, ["what do I like?"])
    main(["chat", "--model-factory", "scripted-seen", "--db", str(db)])
    second = "\n".join(str(m.content) for m in model.seen[-1])
    assert "remember: I like tea" in second
    assert "what do I like?" in second


def test_chat_needs_a_model(capsys: pytest.CaptureFixture[str]) -> None:
    """Without any model configured, chat explains how to configure one."""
    assert main(["chat"]) == 1
    assert "chat needs a model" in capsys.readouterr().err


def test_chat_rejects_a_tiny_window(capsys: pytest.CaptureFixture[str]) -> None:
    """A window below 1000 tokens is refused before anything runs."""
    name = scripted_factory([AIMessage("x")])
    assert main(["chat", "--model-factory", name, "--window", "10"]) == 1
    assert "--window must be at least 1000" in capsys.readouterr().err


def test_bad_flags_are_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    """Unknown commands and malformed flags exit 2 with a single error line."""
    assert main(["bogus"]) == 2
    assert main(["chat", "--window", "many"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2
    assert all(line.startswith("error: ") for line in err)


def test_installed_entry_point_runs() -> None:
    """The console script is installed and prints its help."""
    exe = Path(sys.executable).parent / "langgraph-context"
    done = subprocess.run([str(exe), "--help"], capture_output=True, text=True, check=False)
    assert done.returncode == 0
    assert "demo" in done.stdout
    assert "chat" in done.stdout


def test_chat_compact_command_compacts_before_the_next_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`/compact` (even first in a new thread) makes the next turn compact the history."""
    db = tmp_path / "chat.sqlite"
    name = scripted_factory([AIMessage("one"), AIMessage("two"), AIMessage("three")])
    feed_input(monkeypatch, ["/compact", "hello", "more", "/compact", "again"])
    assert main(["chat", "--model-factory", name, "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert out.count("compaction requested") == 2
    assert "history compacted (1 so far in this thread)" in out


def test_chat_prints_the_session_report_on_exit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Leaving the chat prints the thread's session report (model calls, compactions)."""
    name = scripted_factory([AIMessage("one"), AIMessage("two")])
    feed_input(monkeypatch, ["hello", "more", "/exit"])
    assert main(["chat", "--model-factory", name, "--db", str(tmp_path / "c.sqlite")]) == 0
    out = capsys.readouterr().out
    assert "session: 2 model calls, 0 input tokens sent, 0 compactions" in out
    assert "hot issues found: 0, resolved: 0" in out
