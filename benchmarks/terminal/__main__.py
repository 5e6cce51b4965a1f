"""Per-command cost of the terminal's kernel layer: `python -m benchmarks.terminal`.

Times `cat` of one file, `grep -rn` over a small tree and an `awk` count, each through
a terminal with Landlock on each launcher (the standard-library one: user + PID
namespaces, capabilities dropped, ruleset + seccomp before exec; bubblewrap, when it
runs here, doing the namespaces), and one forced to policy-only (the stdlib launcher
without the kernel rules), in one run, next to a bare `subprocess` run of the same
command as the floor; prints the medians and writes `benchmarks/results/terminal.json`.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import warnings
from pathlib import Path

import pytest

from benchmarks._common import median_ms, write_result
from langgraph_context.tools.terminal import Terminal, _landlock, _process
from langgraph_context.tools.terminal._process import LauncherChoice


def _workspace(root: Path, files: int) -> None:
    for i in range(files):
        folder = root / f"pkg{i % 20}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{i}.py").write_text(f"def f{i}():\n    return {i}  # TODO check\n" * 20)


def _terminal(root: Path, *, kernel: bool, launcher: LauncherChoice = "stdlib") -> Terminal:
    with pytest.MonkeyPatch.context() as patch, warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if not kernel:
            patch.setattr(_landlock, "landlock_abi", lambda: 0)
        return Terminal(root, launcher=launcher)


def _bare(argv: list[str]) -> None:
    subprocess.run(argv, check=False, capture_output=True)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print a table; write the JSON result."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.terminal")
    parser.add_argument("--repeat", type=int, default=31)
    parser.add_argument("--files", type=int, default=1_000)
    args = parser.parse_args(argv)
    commands = {
        "cat": "cat pkg0/mod0.py",
        "grep -rn": "grep -rn 'def f777()' .",
        "awk": "awk '/TODO/ {n++} END {print n}' pkg0/mod0.py",
    }
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _workspace(root, args.files)
        terminals = {"landlock": _terminal(root, kernel=True)}
        if _process.probe_launchers()[1]:
            terminals["landlock+bwrap"] = _terminal(root, kernel=True, launcher="bubblewrap")
        terminals["policy-only"] = _terminal(root, kernel=False)
        figures: dict[str, dict[str, float]] = {}
        print(f"{'command':<10} {'layers':<14} {'median ms':>10}")
        for label, command in commands.items():
            for mode, terminal in terminals.items():
                if mode.startswith("landlock") and terminal.enforcement != "landlock":
                    continue
                first = terminal.run(command)
                if first.refused is not None:  # awk on a policy-only host without gawk
                    print(f"{label:<10} {mode:<14} {'refused':>10}")
                    continue
                assert first.ok
                ms = median_ms(lambda t=terminal, c=command: t.run(c), repeat=args.repeat)
                figures.setdefault(label, {})[mode] = round(ms, 2)
                print(f"{label:<10} {mode:<14} {ms:>10.2f}")
            argv = ["/bin/sh", "-c", f"cd {root} && exec {command}"]
            ms = median_ms(lambda a=argv: _bare(a), repeat=args.repeat)
            figures[label]["bare subprocess"] = round(ms, 2)
            print(f"{label:<10} {'bare':<14} {ms:>10.2f}")
    payload = {"repeat": args.repeat, "files": args.files, "median_ms": figures}
    print(f"wrote {write_result('terminal', payload)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
