"""The option tables agree with the installed GNU tools on every long-option spelling.

For each allowed tool, every long option the binary lists in `--help` or the policy
names, and every prefix of it, is given to the real binary on empty input; its error
messages say how it parsed the spelling (`requires an argument`, `doesn't allow an
argument`, `ambiguous`, `unrecognized`). The checker must agree wherever it matters:
a spelling the checker reads as a value-taking option must be that option for the
binary too, and an option the binary says takes a value must be known to the checker
as one (or refused).
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


def _options(name: str, binary: str) -> set[str]:
    policy = POLICIES[name]
    help_text = subprocess.run(
        [binary, "--help"], capture_output=True, timeout=5, check=False
    ).stdout.decode(errors="replace")
    listed = set(re.findall(r"(?<![\w-])--([a-z][a-z0-9-]+)", help_text))
    return listed | set(policy.long_values) | set(policy.denied_long)


@pytest.mark.parametrize("name", _GNU)
def test_long_option_spellings_agree_with_the_binary(name: str, tmp_path: Path) -> None:
    """Every prefix of every long option is read the same way by the checker and the tool."""
    binary = _binary(name)
    assert binary is not None
    policy = POLICIES[name]
    spellings = sorted({o[:i] for o in _options(name, binary) for i in range(1, len(o) + 1)})
    # Refused by the checker whatever the tool makes of them (and never run here:
    # `file --compile` or `sort --output=x` would write in the working directory).
    spellings = [s for s in spellings if not any(d.startswith(s) for d in policy.denied_long)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        kinds = pool.map(lambda s: _probe(binary, s, tmp_path), spellings)
        probes = dict(zip(spellings, kinds, strict=True))
    assert not list(tmp_path.iterdir()), "a probe wrote a file"
    problems = []
    for spelling, (kind, full) in probes.items():
        if spelling not in policy.long_values and any(
            o.startswith(spelling) for o in policy.long_values
        ):
            continue  # an abbreviation of a value option: refused by the checker
        ours = spelling if spelling in policy.long_values else None
        if ours is not None and (kind, full) != ("value", ours):
            problems.append(f"--{spelling}: checker reads --{ours} VALUE, {name}: {kind} {full}")
        if ours is None and kind == "value":
            problems.append(f"--{spelling}: {name} reads --{full} VALUE, the checker does not")
    assert not problems, "\n".join(problems)
