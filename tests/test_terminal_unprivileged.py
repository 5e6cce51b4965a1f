"""The terminal's tests again as an unprivileged user (CI runs as root; servers may not).

Started as root, this re-runs the terminal's attack, thread and tool tests in a child
process under `setpriv --reuid=65534 --regid=65534 --clear-groups` (the `nobody`
user), with an interpreter and workspaces that user can read. Not root: the suite
already ran as this user, and the test says so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="not root: every terminal test in this run already ran unprivileged"
)
REPO = Path(__file__).resolve().parents[1]
NOBODY = 65534
SUBSET = ["tests/test_terminal_root.py", "tests/test_terminal_threads.py", "tests/test_terminal.py"]


def _as_nobody(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    setpriv = shutil.which("setpriv")
    assert setpriv is not None
    prefix = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]
    return subprocess.run(
        [*prefix, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False
    )


def _world_executable(path: str) -> bool:
    """Whether any user can run `path`: every folder on its real path searchable by all."""
    real = Path(os.path.realpath(path))
    folders_open = all(p.stat().st_mode & 0o001 for p in real.parents)
    return real.exists() and folders_open and bool(real.stat().st_mode & 0o001)


def _interpreter(env: dict[str, str], cwd: Path) -> str | None:
    """This Python, or the system's of the same version, if `nobody` can run it."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (sys.executable, f"/usr/bin/{version}", f"/usr/local/bin/{version}"):
        if _world_executable(candidate):
            probe = [candidate, "-c", "import langgraph_context, pytest, langgraph"]
            if _as_nobody(probe, cwd, env).returncode == 0:
                return candidate
    return None


@pytest.fixture
def home() -> Iterator[Path]:
    """A directory of `nobody`'s own outside pytest's root-only temporary tree."""
    path = Path(tempfile.mkdtemp(prefix="lgc-nobody-"))
    try:
        os.chown(path, NOBODY, NOBODY)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def test_terminal_tests_pass_as_an_unprivileged_user(home: Path) -> None:
    """The attack corpus of issue 29, the thread tests and the tool tests pass as `nobody`."""
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed")
    paths = [str(REPO), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "TMPDIR": str(home),
        "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths)),
        "PYTHONDONTWRITEBYTECODE": "1",
        "LANG": "C.UTF-8",
    }
    python = _interpreter(env, home)
    if python is None:
        pytest.skip("no Python of this version that the unprivileged user can run and import")
    argv = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--rootdir={REPO}"]
    argv += ["-c", str(REPO / "pyproject.toml"), f"--basetemp={home / 'pytest'}"]
    done = _as_nobody([*argv, *(str(REPO / t) for t in SUBSET)], home, env)
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in summary
    assert "failed" not in summary
