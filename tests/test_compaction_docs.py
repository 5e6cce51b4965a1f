"""The code blocks of docs/compaction.md run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "compaction.md"


def test_doc_code_blocks_run(capsys: pytest.CaptureFixture[str]) -> None:
    """Every python block of the compaction docs executes in order without error."""
    if not DOC.is_file():
        pytest.skip("docs/compaction.md not present")
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    assert len(blocks) == 4
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
    printed = capsys.readouterr().out
    assert re.search(r"^(clear_tool_results|drop_oldest|drop_middle) \d+ -> \d+$", printed, re.M)
