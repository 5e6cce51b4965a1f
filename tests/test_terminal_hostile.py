"""Hostile input: every call returns a message, within its deadline, and writes nothing."""

from __future__ import annotations

import os
import time
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langgraph_context.tools.terminal import (
    KernelSandboxUnavailableError,
    Terminal,
    _landlock,
    _process,
    create_terminal_tool,
)

TIMEOUT = 2.0
MARGIN = 1.0


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x = 1\n")
    (root / "notes.txt").write_text("hello\n")
    return root


def _timed(terminal: Terminal, command: str) -> tuple[str | None, float]:
    start = time.monotonic()
    result = terminal.run(command)
    return result.refused, time.monotonic() - start


def test_lone_surrogate_is_a_refusal_and_leaks_no_descriptor(ws: Path) -> None:
    """A lone surrogate comes back as a refusal; no descriptor is left open."""
    terminal = Terminal(ws)
    before = len(os.listdir("/proc/self/fd"))
    for command in ["cat \ud800", "echo '\udcff'", "ls \ud800 | head"]:
        assert "surrogate" in (terminal.run(command).refused or "")
    assert len(os.listdir("/proc/self/fd")) == before


def test_tool_returns_a_message_for_a_surrogate(ws: Path) -> None:
    """Through the tool interface too, the answer is an error message, not an exception."""
    tool = create_terminal_tool(ws)
    message = tool.invoke(
        {"type": "tool_call", "name": "terminal", "args": {"command": "cat \ud800"}, "id": "1"}
    )
    assert message.status == "error"


def test_tree_over_a_very_deep_directory_returns(ws: Path) -> None:
    """tree on 1,100 nested directories draws them (or stops at its cap), never recursing."""
    fd = os.open(ws, os.O_RDONLY)
    try:
        for _ in range(1_100):
            os.mkdir("d", dir_fd=fd)
            new = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = new
    finally:
        os.close(fd)
    try:
        result = Terminal(ws, max_output_chars=5_000_000).run("tree -d")
        assert result.refused is None
        assert "1101 directories" in result.output  # 1,100 levels of d, and src
        capped = Terminal(ws, max_output_chars=1_000).run("tree -d")
        assert capped.truncated
    finally:
        _flatten(ws / "d")


def _flatten(top: Path) -> None:
    """Remove a deep d/d/d/... chain one level at a time (rmtree would recurse)."""
    spare = top.with_name("spare")
    while (top / "d").is_dir():
        os.rename(top / "d", spare)
        os.rmdir(top)
        os.rename(spare, top)
    os.rmdir(top)


@pytest.mark.parametrize(
    ("build", "reason"),
    [
        (lambda: "ls " + " ".join(["*"] * 200), "glob"),
        (lambda: "echo " + "a" * 1_000_000, "longer than"),
        (lambda: " | ".join(["cat notes.txt"] + ["cat"] * 1_999), "pipeline stages"),
        (lambda: "echo " + "a " * 5_000, "words"),
    ],
    ids=["200-globs", "1MB-word", "2000-stages", "5000-words"],
)
def test_host_work_is_capped_with_a_clear_refusal(ws: Path, build: object, reason: str) -> None:
    """Glob floods, huge words, long pipelines and word floods are refused quickly."""
    for i in range(3_000):
        (ws / f"f{i:04d}.txt").write_text("")
    command = build()  # type: ignore[operator]
    refused, elapsed = _timed(Terminal(ws, timeout=TIMEOUT), command)
    assert reason in (refused or "")
    assert elapsed < TIMEOUT


def test_working_directory_is_rechecked_after_cd(ws: Path, tmp_path: Path) -> None:
    """A cwd deleted between calls sends the terminal back to the root with a refusal."""
    terminal = Terminal(ws)
    (ws / "gone").mkdir()
    assert terminal.run("cd gone").ok
    (ws / "gone").rmdir()
    assert terminal.run("ls").refused is not None
    assert terminal.cwd == terminal.root
    assert terminal.run("ls").ok


def test_enforcement_is_reported_and_required(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """enforcement names the layer; without Landlock a warning once, or an error if required."""
    expected = "landlock" if _landlock.landlock_abi() else "policy-only"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert Terminal(ws).enforcement == expected
    monkeypatch.setattr(_landlock, "landlock_abi", lambda: 0)
    monkeypatch.setattr(_process, "_warned_policy_only", False)
    with pytest.warns(RuntimeWarning, match="policy-only"):
        assert Terminal(ws).enforcement == "policy-only"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        terminal = Terminal(ws)  # the warning is given once per process
    assert terminal.run("cat notes.txt").output == "hello\n"
    with pytest.raises(KernelSandboxUnavailableError, match="Landlock"):
        Terminal(ws, require_kernel_sandbox=True)
    with pytest.raises(KernelSandboxUnavailableError):
        create_terminal_tool(ws, require_kernel_sandbox=True)


def test_memory_limit_is_checked(ws: Path) -> None:
    """memory_limit must be a positive integer."""
    with pytest.raises(ValueError, match="memory_limit"):
        Terminal(ws, memory_limit=0)


_ALPHABET = st.sampled_from(
    [
        *"abcgrepcatlsfindsedawk -'\"|;&<>$`()*?[]~/.\\\t=,{}#!\n",
        "\ud800",
        "\x00",
        "é",
        "..",
        "/etc/passwd",
        "../",
        "-exec",
        "--",
        "-rf",
        "a.txt",
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_ALPHABET, max_size=40).map("".join))
def test_generated_commands_never_raise_overrun_or_write(tmp_path_factory, command: str) -> None:
    """Any generated line: a result, within timeout + margin, and no file changed."""
    ws = tmp_path_factory.getbasetemp() / "hostile-ws"
    if not ws.exists():
        (ws / "src").mkdir(parents=True)
        (ws / "a.txt").write_text("hello\n")
    terminal = Terminal(ws, timeout=1.0)
    before = sorted((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in ws.rglob("*"))
    start = time.monotonic()
    result = terminal.run(command)
    assert time.monotonic() - start <= 1.0 + MARGIN
    assert isinstance(result.render(), str)
    after = sorted((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in ws.rglob("*"))
    assert after == before
