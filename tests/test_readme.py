"""The README's Python examples run as written, in order, offline."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_readme_has_examples() -> None:
    """The README shows code for each capability."""
    assert len(BLOCKS) >= 7


def test_readme_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ```python block executes in one shared namespace without error."""
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "readme"}
    for number, block in enumerate(BLOCKS, 1):
        try:
            exec(compile(block, f"README block {number}", "exec"), namespace)
        except Exception as exc:  # pragma: no cover - the message names the block
            pytest.fail(f"README block {number} failed: {type(exc).__name__}: {exc}")
