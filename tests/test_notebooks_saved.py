"""The notebooks as saved: executed, each with a plot, no absolute paths, data read like the bench.

`tests/test_notebooks.py` executes them; these tests read the files as a reader of the
repository sees them (outputs included), so a notebook saved without its outputs, or
with a path of the machine that ran it, fails here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
IDS = [p.name for p in NOTEBOOKS]
ABSOLUTE = re.compile(r"(?<![\w<>.])/(?:work|tmp|home|root|Users|var|private)/")


def _outputs(path: Path) -> list[dict]:
    notebook = nbformat.read(path, as_version=4)
    return [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_is_saved_executed_with_a_plot(path: Path) -> None:
    """Every code cell ran, none failed, and at least one cell shows a plot."""
    notebook = nbformat.read(path, as_version=4)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code), "save the notebook executed"
    outputs = _outputs(path)
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs), "no plot in the outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_outputs_hold_no_absolute_path_and_little_text(path: Path) -> None:
    """Outputs name no folder of the machine that ran them and copy no bulk of the data."""
    texts = []
    for output in _outputs(path):
        texts.append(str(output.get("text", "")))
        texts.append(str(output.get("data", {}).get("text/plain", "")))
    text = "\n".join(texts)
    assert ABSOLUTE.findall(text) == []
    assert len(text) < 12_000


def test_notebook_01_uses_the_packages_scripted_model() -> None:
    """Notebook 01 takes its stand-in model from `langgraph_context.testing`."""
    source = "\n".join(c.source for c in nbformat.read(NOTEBOOKS[0], as_version=4).cells)
    assert "from langgraph_context.testing import ScriptedChatModel" in source
    assert "FakeMessagesListChatModel" not in source
    assert not re.search(r"^class \w+\(.*ChatModel\)", source, re.M)


def test_notebook_03_reads_lgc_data_dir_and_says_when_it_falls_back(tmp_path: Path) -> None:
    """Its data cell, run with an empty LGC_DATA_DIR, announces the fixture fallback."""
    path = next(p for p in NOTEBOOKS if p.name.startswith("03_"))
    cell = next(c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
    assert "LGC_DATA_DIR" in cell.source
    env = {**os.environ, "LGC_DATA_DIR": str(tmp_path)}
    env["PYTHONPATH"] = str(path.parents[1])
    done = subprocess.run(
        [sys.executable, "-c", cell.source],
        cwd=path.parent,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("FALLBACK: no claude-code-sessions/ under LGC_DATA_DIR")
    assert "langgraph-context bench --data DIR" in done.stdout
