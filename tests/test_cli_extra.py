"""The command line's own dependencies are the `cli` extra; the library never needs them."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from langgraph_context import cli


def test_without_the_cli_extra_the_command_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing `rich` is a one-line error naming the extra, exit code 2."""
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name == "rich" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    assert cli.main(["demo"]) == 2
    err = capsys.readouterr().err
    assert "needs rich" in err
    assert "pip install 'langgraph-context[cli]'" in err


_BLOCKED_IMPORTS = """
import importlib, sys
from importlib.abc import MetaPathFinder

BLOCKED = ("rich", "langgraph.checkpoint.sqlite", "aiosqlite", "sqlite_vec")

class Block(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if any(name == b or name.startswith(b + ".") for b in BLOCKED):
            raise ModuleNotFoundError(f"blocked: {name}", name=name)
        return None

sys.meta_path.insert(0, Block())
import langgraph_context
for sub in sys.argv[1:]:
    importlib.import_module(sub)
print(sorted(m for m in sys.modules if m.split(".")[0] in {"rich"} or "sqlite" in m))
"""

_LIBRARY = [
    "langgraph_context.agents",
    "langgraph_context.compaction",
    "langgraph_context.context",
    "langgraph_context.messages",
    "langgraph_context.notebook",
    "langgraph_context.pinned",
    "langgraph_context.safety",
    "langgraph_context.tokens",
    "langgraph_context.tools",
    "langgraph_context.testing",
    "langgraph_context.transcripts",
]


def test_the_library_imports_without_the_cli_extra() -> None:
    """With `rich` and the SQLite checkpointer unimportable, every subpackage but cli loads."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _BLOCKED_IMPORTS, *_LIBRARY],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
    blocked_cli = subprocess.run(
        [sys.executable, "-c", _BLOCKED_IMPORTS, "langgraph_context.cli.demo"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert "blocked: " in blocked_cli.stderr  # the hook bites: the cli's demo needs them
