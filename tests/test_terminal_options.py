"""The option tables agree with the installed tools on every option the checker accepts.

The checker accepts only options in its tables, long ones spelled in full; anything
else is refused. So each accepted long option of each allowed tool is given to the
real binary on empty input, in a temporary directory; its error messages say how it
parsed it (`requires an argument`, `doesn't allow an argument`, `ambiguous`,
`unrecognized`). An option the checker reads as taking a value must be that option
with a required value for the binary; one it reads as a flag must be an option of the
binary that takes no required value. Every accepted short option is probed the same
way (`invalid option`, `requires an argument`).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from langgraph_context.tools.terminal._policies import POLICIES
from langgraph_context.tools.terminal.tool import SANDBOX_PATH

_NAME = re.compile(r"option '--([a-z0-9-]+)")


def _binary(name: str) -> str | None:
    policy = POLICIES[name]
    return shutil.which(policy.binary or name, path=SANDBOX_PATH)


def _probe(binary: str, spelling: str, cwd: Path) -> tuple[str, str | None]:
    """Return how `binary` parses `--spelling`: (kind, full option name)."""
    run = [binary, f"--{spelling}"]
    kw: dict[str, Any] = {"input": b"", "capture_output": True, "timeout": 5, "cwd": cwd}
    bare = subprocess.run(run, check=False, **kw)
    err = bare.stderr.decode(errors="replace")
    if "ambiguous" in err:
        return "ambiguous", None
    if "unrecognized option" in err or "invalid option" in err:
        return "unknown", None
    if "requires an argument" in err:
        match = _NAME.search(err)
        return "value", match.group(1) if match else None
    run[-1] += "=x"
    valued = subprocess.run(run, check=False, **kw)
    err = valued.stderr.decode(errors="replace")
    if "doesn't allow an argument" in err:
        match = _NAME.search(err)
        return "flag", match.group(1) if match else None
    return "optional", None


_GNU = [
    name
    for name, policy in sorted(POLICIES.items())
    if _binary(name) and not policy.no_long and not policy.no_options and name != "find"
]


@pytest.mark.parametrize("name", _GNU)
def test_long_option_spellings_agree_with_the_binary(name: str, tmp_path: Path) -> None:
    """Each long option the checker accepts is read the same way by the tool."""
    binary = _binary(name)
    assert binary is not None
    policy = POLICIES[name]
    # Only exact names pass the checker (abbreviations and unknown options are refused),
    # so those are the spellings whose reading must agree.
    spellings = sorted(policy.long_values | policy.long_flags)
    with ThreadPoolExecutor(max_workers=8) as pool:
        kinds = pool.map(lambda s: _probe(binary, s, tmp_path), spellings)
        probes = dict(zip(spellings, kinds, strict=True))
    assert not list(tmp_path.iterdir()), "a probe wrote a file"
    problems = []
    for spelling, (kind, full) in probes.items():
        if spelling in policy.long_values and (kind, full) != ("value", spelling):
            problems.append(f"--{spelling}: checker reads a VALUE, {name}: {kind} {full}")
        if spelling in policy.long_flags and (kind, full) not in {
            ("flag", spelling),
            ("optional", None),
        }:
            problems.append(f"--{spelling}: checker reads a flag, {name}: {kind} {full}")
        # Any other spelling (an abbreviation, an option missing from the tables) is
        # refused by the checker, whatever the tool makes of it.
    assert not problems, "\n".join(problems)


_UNKNOWN_SHORT = ("invalid option", "not an option", "unrecognized option")
_VALUE_SHORT = ("requires an argument", "lacks argument")


def _probe_short(binary: str, prefix: tuple[str, ...], flag: str, cwd: Path) -> str:
    """Return how `binary` parses `-flag` alone: unknown, value or flag."""
    run = [binary, *prefix, f"-{flag}"]
    kw: dict[str, Any] = {"input": b"", "capture_output": True, "timeout": 5, "cwd": cwd}
    err = subprocess.run(run, check=False, **kw).stderr.decode(errors="replace")
    if any(marker in err for marker in _UNKNOWN_SHORT):
        return "unknown"
    if any(marker in err for marker in _VALUE_SHORT):
        return "value"
    return "flag"


_SHORT = [
    name
    for name, policy in sorted(POLICIES.items())
    if _binary(name) and not policy.no_options and name != "find"
]


@pytest.mark.parametrize("name", _SHORT)
def test_short_options_agree_with_the_binary(name: str, tmp_path: Path) -> None:
    """Each short option the checker accepts exists, and takes a value iff we say so."""
    binary = _binary(name)
    assert binary is not None
    policy = POLICIES[name]
    accepted = sorted(set(policy.short_values + policy.short_flags))
    assert accepted, f"{name}: no short option accepted"
    with ThreadPoolExecutor(max_workers=8) as pool:
        kinds = pool.map(lambda f: _probe_short(binary, policy.prefix_args, f, tmp_path), accepted)
        probes = dict(zip(accepted, kinds, strict=True))
    assert not list(tmp_path.iterdir()), "a probe wrote a file"
    problems = []
    for flag, kind in probes.items():
        ours = "value" if flag in policy.short_values else "flag"
        if kind != ours:
            problems.append(f"-{flag}: checker reads a {ours}, {name}: {kind}")
    assert not problems, "\n".join(problems)


def test_flag_tables_are_consistent() -> None:
    """No option is listed twice, or both as a flag and as a value or denied option."""
    for name, policy in POLICIES.items():
        flags, values = policy.short_flags, policy.short_values
        assert len(set(flags)) == len(flags), name
        assert not set(flags) & (set(values) | set(policy.denied_short)), name
        assert not set(values) & set(policy.denied_short), name
        assert set(policy.short_optional) <= set(flags), name
        assert not policy.long_flags & (policy.long_values | set(policy.denied_long)), name
        assert not policy.long_values & set(policy.denied_long), name
