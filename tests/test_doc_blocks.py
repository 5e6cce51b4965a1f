"""Every code block of README.md and docs/*.md runs alone, as pasted into a fresh interpreter.

Each ```python block runs in its own subprocess, in an empty temporary folder, with no
model key or endpoint in the environment: a block that uses a name another block
defines, a folder that must already exist or a real provider fails here. Shell and
output blocks are fenced ```bash / ```text and skipped by their language; a fence with
no language is refused, so a Python example cannot hide from this test.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)
LANGUAGES = {"python", "bash", "text"}
NO_PROVIDER = ("OPENAI_API_KEY", "LGC_API_KEY", "OPENAI_BASE_URL", "LGC_BASE_URL", "LGC_MODEL")


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language and its code."""

    where: str
    language: str
    code: str


def _blocks() -> list[Block]:
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            where = f"{doc.relative_to(REPO)}:{line}"
            found.append(Block(where, match.group(1).strip(), match.group(2)))
    return found


BLOCKS = _blocks()
PYTHON = [b for b in BLOCKS if b.language == "python"]


def _run_alone(block: Block) -> subprocess.CompletedProcess[str]:
    """Run one block with a fresh interpreter in a fresh empty folder."""
    env = {k: v for k, v in os.environ.items() if k not in NO_PROVIDER}
    env["PYTHONPATH"] = str(REPO)  # this checkout's package, as an editable install gives
    with tempfile.TemporaryDirectory() as folder:
        return subprocess.run(
            [sys.executable, "-c", block.code],
            check=False,
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )


@pytest.fixture(scope="module")
def outcomes() -> dict[str, subprocess.CompletedProcess[str]]:
    """Every Python block run alone, a few at a time (each is a separate interpreter)."""
    with ThreadPoolExecutor(max_workers=max(2, min(4, os.cpu_count() or 1))) as pool:
        return dict(zip([b.where for b in PYTHON], pool.map(_run_alone, PYTHON), strict=True))


def test_docs_have_python_examples() -> None:
    """The README and docs show runnable code for each capability."""
    assert len(PYTHON) >= 20
    assert sum(b.where.startswith("README.md") for b in PYTHON) >= 7


def test_every_fence_names_a_known_language() -> None:
    """A fence without a language (or an unknown one) is refused: it would skip unnoticed."""
    bad = [f"{b.where} {b.language!r}" for b in BLOCKS if b.language not in LANGUAGES]
    assert bad == [], f"fence these as ```python, ```bash or ```text: {bad}"


@pytest.mark.parametrize("block", PYTHON, ids=[b.where for b in PYTHON])
def test_python_block_runs_alone(
    block: Block, outcomes: dict[str, subprocess.CompletedProcess[str]]
) -> None:
    """The block runs to the end in a fresh interpreter and folder, offline."""
    done = outcomes[block.where]
    assert done.returncode == 0, f"{block.where} failed when run alone:\n{done.stderr[-2500:]}"


def test_docs_do_not_teach_the_deprecated_create_react_agent() -> None:
    """`create_react_agent` is deprecated in LangGraph 1.x: the docs use create_agent or a graph."""
    mentions = [str(d.relative_to(REPO)) for d in DOCS if "create_react_agent" in d.read_text()]
    assert mentions == []


def test_readme_starts_with_the_two_command_quickstart_then_install_lines() -> None:
    """The first block is exactly `make demo` and `make test`; the next shows pip installs."""
    readme = [b for b in BLOCKS if b.where.startswith("README.md")]
    assert readme[0].language == "bash"
    assert readme[0].code.splitlines() == ["make demo", "make test"]
    installs = [line.split("#")[0].strip() for line in readme[1].code.splitlines()]
    assert "pip install ." in installs
    assert any(line.startswith("pip install 'langgraph-context[") for line in installs)
