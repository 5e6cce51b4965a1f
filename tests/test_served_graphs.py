"""The served graphs in `graphs/` load, and the context agent's window is configurable."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from langgraph_context.errors import InvalidTypeError

GRAPHS = Path(__file__).resolve().parents[1] / "graphs"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"served_{name}", GRAPHS / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_context_window_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """LGC_CONTEXT_WINDOW sizes compaction and the model input; default 32,000."""
    monkeypatch.delenv("LGC_CONTEXT_WINDOW", raising=False)
    assert _load("context_agent").WINDOW == 32_000
    monkeypatch.setenv("LGC_CONTEXT_WINDOW", "128_000")
    served = _load("context_agent")
    assert served.WINDOW == 128_000
    assert "model" in served.graph.get_graph().nodes
    assert "compaction" in served.graph.channels  # compaction runs inside the model call


@pytest.mark.parametrize("raw", ["lots", "4096", "-1"])
def test_unusable_context_window_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, raw: str
) -> None:
    """A window that is not a number, or too small to work with, fails at load."""
    monkeypatch.setenv("LGC_CONTEXT_WINDOW", raw)
    with pytest.raises(ValueError, match="LGC_CONTEXT_WINDOW must be a whole number"):
        _load("context_agent")


@pytest.mark.parametrize("name", ["context_agent", "codebase_maintainer"])
def test_served_graphs_run_the_output_guard(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both served graphs check every answer; the guard's record is state, not an input."""
    monkeypatch.setenv("LGC_WORKSPACE", str(GRAPHS))
    served = _load(name).graph
    nodes = set(served.get_graph().nodes)
    assert any(node.startswith("OutputGuardMiddleware") for node in nodes), sorted(nodes)
    assert "injection_flags" in served.get_output_jsonschema()["properties"]
    assert "injection_flags" not in served.get_input_jsonschema()["properties"]


WRONG_SHAPES = [
    ("plan", ["a", "b"], r"state key 'plan' must be a list of \{\"content\": str"),
    ("note", ["a"], r"state key 'note' must be a dict of note name \(str\)"),
    ("constraints", "never push", r"state key 'constraints' must be a list of \{\"id\": str"),
    ("hot_issues", [1, 2], r"state key 'hot_issues' must be a list of \{\"id\": str"),
]


@pytest.mark.parametrize("name", ["context_agent", "codebase_maintainer"])
@pytest.mark.parametrize(("key", "value", "match"), WRONG_SHAPES)
def test_served_graphs_name_a_wrong_shaped_input_key(
    name: str, key: str, value: object, match: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A state value of the wrong shape sent as input is the package's typed error naming
    the key and its shape, raised before any model call, never a reducer's TypeError."""
    monkeypatch.setenv("LGC_WORKSPACE", str(GRAPHS))
    served = _load(name).graph
    assert key in served.get_input_jsonschema()["properties"]
    config = {"configurable": {"thread_id": "t", "user_id": "u", "model_factory": "missing"}}
    with pytest.raises(InvalidTypeError, match=match):
        served.invoke({"messages": [{"role": "user", "content": "hi"}], key: value}, config)
