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
