"""The package builds, installs from its wheel alone and runs as the README says.

One test builds the sdist and the wheel with `python -m build`, installs the wheel with
its runtime dependencies (no extras, no editable checkout on the path) into a fresh
virtual environment, and runs the README's first example and `langgraph-context demo`
from that environment. It takes about half a minute with pip's cache warm.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"

pytestmark = pytest.mark.slow


def _run(args: list[str | Path], *, cwd: Path, timeout: int = 600) -> str:
    """Run a command with no PYTHONPATH (so nothing from the checkout leaks in); return stdout."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(
        [str(a) for a in args],
        check=False,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, f"{args[:3]} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist and the wheel `python -m build` makes from this checkout."""
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--outdir", out, REPO], cwd=out)
    return out


def test_build_makes_an_sdist_and_a_wheel_with_license_and_real_urls(dist: Path) -> None:
    """Both artifacts exist; they ship the MIT LICENSE and name no made-up homepage."""
    (sdist,) = dist.glob("langgraph_context-*.tar.gz")
    (wheel,) = dist.glob("langgraph_context-*-py3-none-any.whl")
    with tarfile.open(sdist) as tar:
        names = {Path(n).name for n in tar.getnames()}
    assert {"LICENSE", "CHANGELOG.md", "README.md", "pyproject.toml"} <= names
    with zipfile.ZipFile(wheel) as zf:
        meta_name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(zf.read(meta_name).decode())
        assert any(n.endswith(".dist-info/licenses/LICENSE") for n in zf.namelist())
        assert "langgraph_context/py.typed" in zf.namelist()
    assert metadata["License-Expression"] == "MIT"
    assert metadata.get_all("Project-URL") is None  # no homepage exists yet: none is named
    assert "Copyright (c) 2026 The langgraph-context authors" in (REPO / "LICENSE").read_text()


def test_wheel_in_a_fresh_venv_runs_the_readme_and_the_demo(dist: Path, tmp_path: Path) -> None:
    """A venv with only the wheel, its dependencies and its cli extra runs README block 1
    and the demo."""
    (wheel,) = dist.glob("*.whl")
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", venv], cwd=tmp_path)
    bin_dir = venv / "bin"
    _run([bin_dir / "python", "-m", "pip", "install", "--quiet", f"{wheel}[cli]"], cwd=tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    first = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)[0]
    probe = "import langgraph_context, sys; print(langgraph_context.__file__)"
    where = _run([bin_dir / "python", "-c", probe], cwd=work).strip()
    assert Path(where).is_relative_to(venv), where  # the installed copy, not the checkout
    _run([bin_dir / "python", "-c", first], cwd=work)
    (work / "app.py").write_text("def add(a, b):\n    return a + b\n")
    shown = _run([bin_dir / "langgraph-context", "demo", "--workspace", work], cwd=work)
    assert "scripted" in shown.lower()
    assert "app.py" in shown
