"""`chat`/`demo`: broken model factories and unusable `--db` files are one error line."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage

from langgraph_context.cli import main
from langgraph_context.cli.models import register_model_factory
from langgraph_context.testing import ScriptedChatModel

pytestmark = pytest.mark.usefixtures("no_model_env")


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("error: ")
    return err[0]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("bad=no_such_module_xyz:make", "cannot be loaded"),
        ("bad=os.path:no_such_attribute", "cannot be loaded"),
    ],
)
@pytest.mark.parametrize("command", ["chat", "demo"])
def test_unloadable_factories_are_one_line(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    spec: str,
    expected: str,
    command: str,
) -> None:
    """A missing module or attribute in LGC_MODEL_FACTORIES is no traceback."""
    monkeypatch.setenv("LGC_MODEL_FACTORIES", spec)
    extra = ["--db", str(tmp_path / "c.sqlite")] if command == "chat" else ["--workspace", "."]
    assert main([command, "--model-factory", "bad", *extra]) == 1
    assert expected in _one_error_line(capsys)


@pytest.mark.parametrize("command", ["chat", "demo"])
def test_a_factory_raising_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    """A factory raising RuntimeError is reported with its type, no traceback."""

    def broken(config: object) -> ScriptedChatModel:
        raise RuntimeError("no GPU here")

    register_model_factory("broken-test", broken)  # type: ignore[arg-type]
    extra = ["--db", str(tmp_path / "c.sqlite")] if command == "chat" else ["--workspace", "."]
    assert main([command, "--model-factory", "broken-test", *extra]) == 1
    assert "RuntimeError: no GPU here" in _one_error_line(capsys)


@pytest.mark.parametrize("kind", ["directory", "text"])
def test_an_unusable_db_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str
) -> None:
    """--db naming a folder or a file that is not SQLite fails before the chat."""
    db = tmp_path / "db"
    if kind == "directory":
        db.mkdir()
    else:
        db.write_text("not a database at all\n" * 50)
    register_model_factory("db-test", lambda config: ScriptedChatModel(responses=[AIMessage("x")]))
    assert main(["chat", "--model-factory", "db-test", "--db", str(db)]) == 1
    line = _one_error_line(capsys)
    assert "--db" in line
    assert "directory" in line if kind == "directory" else "not a SQLite database" in line
