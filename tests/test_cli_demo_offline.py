"""`demo` stays offline unless a model flag is given, and survives odd `*.py` paths."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage

from langgraph_context.cli import main
from langgraph_context.cli.models import register_model_factory
from langgraph_context.testing import ScriptedChatModel

pytestmark = pytest.mark.usefixtures("no_model_env")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A tiny code folder."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "tokens.py").write_text("def count(text):\n    # TODO: tiktoken\n    return 1\n")
    return root


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("OPENAI_API_KEY", "sk-not-a-real-key"),
        ("LGC_BASE_URL", "http://127.0.0.1:9/v1"),
        ("LGC_MODEL", "gpt-4o-mini"),
    ],
)
def test_environment_alone_keeps_the_demo_offline(
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    value: str,
) -> None:
    """A key, endpoint or model in the environment does not make the demo call an LLM."""
    monkeypatch.setenv(name, value)
    assert main(["demo", "--workspace", str(workspace)]) == 0
    assert "No LLM is used" in capsys.readouterr().out


def test_a_model_flag_switches_the_demo_to_the_model(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--model-factory` (like `--model`/`--base-url`) runs the maintainer on a model."""
    model = ScriptedChatModel(responses=[AIMessage("Mapped: tokens.py counts tokens.")])
    register_model_factory("offline-test", lambda config: model)
    assert main(["demo", "--workspace", str(workspace), "--model-factory", "offline-test"]) == 0
    out = capsys.readouterr().out
    assert "No LLM is used" not in out
    assert "Mapped: tokens.py counts tokens." in out


def test_dangling_links_and_folders_named_py_are_skipped(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A dangling `*.py` symlink and a directory named `x.py` do not crash the demo."""
    (workspace / "gone.py").symlink_to(workspace / "missing" / "gone.py")
    (workspace / "pkg.py").mkdir()
    assert main(["demo", "--workspace", str(workspace)]) == 0
    captured = capsys.readouterr()
    assert "tokens per section" in captured.out
    assert captured.err == ""


def test_the_compaction_line_tells_the_truth_under_budget(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A history under the budget is reported as not compacted, with no snapshot claim."""
    assert main(["demo", "--workspace", str(workspace)]) == 0
    out = capsys.readouterr().out
    assert "nothing compacted" in out
    assert "a state snapshot added" not in out
