"""The package's shape: one-way layers, no cycles, a small top level, short modules.

These tests read the package's own source (imports, definitions, line counts), so a
change that breaks the architecture fails here, not in review.
"""

from __future__ import annotations

import ast
import difflib
import importlib
import json
import re
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

import langgraph_context

PACKAGE = Path(langgraph_context.__file__).parent

# Lowest first. A module may import from its own unit or from a unit of a lower layer,
# never from its own layer's other units or from above. The root `__init__` (the
# re-export facade) and `__main__` sit above everything.
LAYERS: list[set[str]] = [
    {"errors"},
    {"_gc", "_memo", "_steps"},
    {"messages", "state", "scoring", "transcripts", "testing"},
    {"tokens", "toolkit"},
    {"packet"},
    {"safety"},
    {"pinned", "notebook", "tools", "compaction"},
    {"context", "recall"},
    {"providers"},
    {"agents"},
    {"cli"},
]
LOWER_LAYERS = {
    "errors",
    "_gc",
    "_memo",
    "_steps",
    "tokens",
    "messages",
    "state",
    "packet",
    "scoring",
    "toolkit",
}
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
MAX_TWIN_LINES = 10
MAX_TOP_LEVEL_NAMES = 30
# Run as a script (`python -I -S`) inside the terminal's sandboxed child: it can import
# only the standard library, and its errors never leave the child (exit code 126).
STANDALONE_MODULES = {
    "langgraph_context.tools.terminal._landlock",
    "langgraph_context.tools.terminal._privileges",
    "langgraph_context.tools.terminal._seccomp",
}
# One spelling per idea: these parameter names have a single house spelling.
BANNED_PARAMETERS = {
    "input_key": "messages_key",
    "message_key": "messages_key",
    "counter": "token_counter",
    "context_tokens": "max_tokens",
    "history_tokens": "max_tokens",
    "max_output_bytes": "max_output_chars",
}
# The spec's spellings, accepted as an alias only beside the house spelling (resolved
# in one place, `ToolSpec.customize`).
SPEC_ALIASES = {"message_key": "messages_key"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources() -> Iterator[tuple[str, Path, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield _module_name(path), path, ast.parse(path.read_text(encoding="utf-8"))


def _is_package(module: str) -> bool:
    return (PACKAGE.parent / module.replace(".", "/") / "__init__.py").exists()


def _imports(module: str, tree: ast.Module) -> set[str]:
    """Every `langgraph_context` module `module` imports, at any depth of its code."""
    found: set[str] = set()
    base = module if _is_package(module) else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base.split(".")[: len(base.split(".")) - (node.level - 1)]
                target = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target == "langgraph_context" or target.startswith("langgraph_context."):
                found.add(target)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("langgraph_context"))
    return found - {module}


GRAPH = {name: _imports(name, tree) for name, _, tree in _sources()}


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "<root>"


def _rank(unit: str) -> int:
    for rank, layer in enumerate(LAYERS):
        if unit in layer:
            return rank
    if unit in {"<root>", "__main__"}:
        return len(LAYERS)
    pytest.fail(f"{unit!r} is in no layer: add it to LAYERS in {__file__}")


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return result


def test_every_import_runs_down_the_layers() -> None:
    """A module imports only from its own unit or from a lower layer."""
    upward = [
        f"{src} -> {dst}"
        for src, targets in GRAPH.items()
        for dst in targets
        if _unit(src) != _unit(dst) and _rank(_unit(dst)) >= _rank(_unit(src))
    ]
    assert upward == []


def test_lower_layers_import_only_lower_layers() -> None:
    """errors, tokens, messages, state, packet, scoring and toolkit import no subpackage."""
    bad = [
        f"{src} -> {dst}"
        for src, targets in GRAPH.items()
        if _unit(src) in LOWER_LAYERS
        for dst in targets
        if _unit(dst) not in LOWER_LAYERS
    ]
    assert bad == []


def test_no_import_cycles_between_units_or_modules() -> None:
    """Neither the units (subpackages, top modules) nor any two modules import in a circle."""
    units: dict[str, set[str]] = defaultdict(set)
    for src, targets in GRAPH.items():
        units[_unit(src)].update(_unit(t) for t in targets if _unit(t) != _unit(src))
    units.pop("<root>", None)
    assert _cycles(units) == []
    modules = {
        src: {t for t in targets if t != "langgraph_context"}
        for src, targets in GRAPH.items()
        if src != "langgraph_context"
    }
    # A package's __init__ re-exports its own modules; that edge is not a cycle of logic.
    for src, targets in modules.items():
        targets.difference_update(t for t in list(targets) if src.startswith(t + "."))
    assert _cycles(modules) == []


def test_no_module_imports_another_packages_private_module() -> None:
    """`a.b._x` is imported only by modules inside `a.b`."""
    bad = []
    for src, targets in GRAPH.items():
        for dst in targets:
            parts = dst.split(".")
            for i, part in enumerate(parts):
                owner = ".".join(parts[:i])
                if part.startswith("_") and not part.startswith("__"):
                    if not (src == owner or src.startswith(owner + ".")):
                        bad.append(f"{src} -> {dst}")
                    break
    assert bad == []


def test_import_loads_no_cli_demo_checkpointer_or_langgraph() -> None:
    """`import langgraph_context` is cheap: names load on first use."""
    code = (
        "import json, sys, langgraph_context\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('lang'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    loaded = json.loads(out.stdout)
    assert not [m for m in loaded if m.startswith("langgraph_context.cli")]
    assert not [m for m in loaded if "demo" in m or "checkpoint" in m]
    assert not [m for m in loaded if m.startswith(("langgraph.", "langchain"))]


def test_top_level_is_small_and_every_name_resolves() -> None:
    """At most 30 top-level names, each loading from its home module."""
    assert len(langgraph_context.__all__) <= MAX_TOP_LEVEL_NAMES
    assert langgraph_context.__all__ == sorted(langgraph_context.__all__)
    for name in langgraph_context.__all__:
        assert getattr(langgraph_context, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = langgraph_context.nope  # type: ignore[attr-defined]


def test_no_constant_is_in_a_public_all() -> None:
    """`__all__` lists what a user calls; constants stay importable from their module."""
    import importlib

    exported = {
        name: getattr(importlib.import_module(name), "__all__", [])
        for name, _, _ in _sources()
        if not any(part.startswith("_") for part in name.split("."))
        and _unit(name) not in {"cli", "__main__"}
    }
    assert {m: [n for n in names if n.isupper()] for m, names in exported.items()} == {
        m: [] for m in exported
    }


def test_modules_are_short() -> None:
    """No module is longer than 500 lines."""
    long = {
        name: n
        for name, path, _ in _sources()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def _functions(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int]:
    """First and last line of the function's code, its docstring excluded."""
    body = node.body
    first = body[0]
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        docstring_lines = (first.end_lineno or first.lineno) - first.lineno + 1
        return node.lineno, (node.end_lineno or node.lineno) - docstring_lines
    return node.lineno, node.end_lineno or node.lineno


def test_functions_are_short() -> None:
    """No function is longer than 80 lines, docstring excluded."""
    long = {}
    for name, _, tree in _sources():
        for fn in _functions(tree):
            start, end = _body_lines(fn)
            if end - start + 1 > MAX_FUNCTION_LINES:
                long[f"{name}.{fn.name}"] = end - start + 1
    assert long == {}


def _normalized(lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        text = text.replace("await ", "").replace("async ", "")
        text = re.sub(r"\ba(\w+)\(", r"\1(", text)  # acall( -> call(
        out.append(text)
    return out


def _code(source: list[str], fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The function's statements: signature and docstring left out."""
    body = fn.body
    first = body[0]
    if isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant):
        body = body[1:]
    if not body:
        return []
    return source[body[0].lineno - 1 : fn.end_lineno or body[-1].lineno]


def test_sync_and_async_twins_share_one_core() -> None:
    """No `f`/`af` pair repeats more than 10 lines: the pipeline is written once."""
    twins = {}
    for name, path, tree in _sources():
        source = path.read_text(encoding="utf-8").splitlines()
        functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        for fn in _functions(tree):
            functions.setdefault(fn.name, fn)
        for fname, fn in functions.items():
            twin = functions.get("a" + fname) or functions.get("_a" + fname.lstrip("_"))
            if twin is None or twin is fn:
                continue
            left, right = _normalized(_code(source, fn)), _normalized(_code(source, twin))
            matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
            shared = sum(block.size for block in matcher.get_matching_blocks())
            if shared > MAX_TWIN_LINES:
                twins[f"{name}.{fname}/{twin.name}"] = shared
    assert twins == {}


def test_one_spelling_per_idea() -> None:
    """Public signatures use messages_key, token_counter, max_tokens and max_output_chars."""
    bad = []
    for name, _, tree in _sources():
        for fn in _functions(tree):
            if fn.name.startswith("_") and fn.name != "__init__":
                continue
            args = fn.args
            names = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                if SPEC_ALIASES.get(arg.arg) in names:
                    continue
                if arg.arg in BANNED_PARAMETERS:
                    bad.append(f"{name}.{fn.name}({arg.arg}=): use {BANNED_PARAMETERS[arg.arg]}")
    assert bad == []


# One keyword, one quantity: every token budget a public signature (or a public
# `*Config` / `*Options` record) takes is one of these, and means this.
BUDGET_KEYWORDS = {
    "max_tokens": "the most input tokens one model call is sent",
    "trigger_tokens": "compaction's high mark: the history size that starts one",
    "target_tokens": "compaction's low mark: the size a compaction brings the history to",
    "keep_tokens": "the newest history a summary keeps verbatim",
    "max_result_tokens": "the most tokens one tool result (or sub-agent report) keeps",
    "explorer_result_tokens": "max_result_tokens of the maintainer's explorer sub-agent",
    "max_summary_tokens": "the most tokens one summary is asked for and given room for",
    "max_input_tokens": "the most input tokens one summarizer call is sent",
    "max_briefing_tokens": "the most tokens of the maintainer's workspace briefing",
    "max_selected_tokens": "the most tokens of the packets one selection keeps",
    "max_snapshot_tokens": "the most tokens of one rendered state snapshot",
    "max_text_tokens": "the most tokens `truncate_text` returns",
    "max_recall_tokens": "the most tokens of archived passages recalled into one model call",
}
# Token counts an object reports (not budgets a user sets).
MEASURED_TOKENS = {"sent_tokens", "retried_tokens"}
# `max_tokens` is taken only where the number is the model input: the agents, the
# context middleware, and the context builder whose assembled text is that input.
MAX_TOKENS_OWNERS = {
    "langgraph_context.agents.context_agent.create_context_agent",
    "langgraph_context.agents.context_middleware.ContextMiddleware.__init__",
    "langgraph_context.agents.maintainer.create_codebase_maintainer_graph",
    "langgraph_context.context.builder.ContextBuilder.build_result",
    "langgraph_context.context.builder.ContextBuilder.abuild_result",
    "langgraph_context.context.compress.compress_context",
    "langgraph_context.context.compress.acompress_context",
    "langgraph_context.context.config.ContextConfig",
}


def _budget_parameters() -> Iterator[tuple[str, str]]:
    """(qualified owner, parameter) for every `*_tokens` keyword a user can set."""
    for name, _, tree in _sources():
        if any(part.startswith("_") for part in name.split(".")):
            continue
        yield from _owner_parameters(name, tree.body)


def _owner_parameters(prefix: str, body: list[ast.stmt]) -> Iterator[tuple[str, str]]:
    for node in body:
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            owner = f"{prefix}.{node.name}"
            if node.name.endswith(("Config", "Options")):
                fields = [
                    item.target.id
                    for item in node.body
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                ]
                yield from ((owner, f) for f in fields if f.endswith("_tokens"))
            yield from _owner_parameters(owner, node.body)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name.startswith("_") and node.name != "__init__":
                continue
            args = node.args
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                if arg.arg.endswith("_tokens"):
                    yield f"{prefix}.{node.name}", arg.arg


def test_one_keyword_per_budget() -> None:
    """Each budget keyword is in the table, and `max_tokens` sizes only a model input."""
    found = [(o, a) for o, a in _budget_parameters() if a not in MEASURED_TOKENS]
    unknown = sorted(f"{owner}({arg}=)" for owner, arg in found if arg not in BUDGET_KEYWORDS)
    assert unknown == [], "add the keyword and its quantity to BUDGET_KEYWORDS, or rename it"
    owners = {owner for owner, arg in found if arg == "max_tokens"}
    assert owners == MAX_TOKENS_OWNERS
    assert {arg for _, arg in found} == set(BUDGET_KEYWORDS)


def test_every_raised_error_derives_from_the_package_base() -> None:
    """Code raises package errors (or re-raises), never a bare built-in exception class."""
    allowed = {"AttributeError", "KeyError", "NotImplementedError", "StopIteration"}
    bad = []
    for name, _, tree in _sources():
        if name in STANDALONE_MODULES:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                func = node.exc.func
                called = func.id if isinstance(func, ast.Name) else None
                if called in {"ValueError", "TypeError", "RuntimeError", "Exception", "OSError"}:
                    bad.append(f"{name}:{node.lineno} raises {called}")
                elif called and called not in allowed and called.endswith("Error"):
                    error = _resolve(called)
                    if error is not None and not issubclass(
                        error, langgraph_context.LangGraphContextError
                    ):
                        bad.append(f"{name}:{node.lineno} raises {called}")
    assert bad == []


def _resolve(class_name: str) -> type | None:
    import importlib

    for module_name, _, tree in _sources():
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == class_name:
                value = getattr(importlib.import_module(module_name), class_name)
                return value if isinstance(value, type) else None
    return None


def _calls(tree: ast.Module, name: str) -> list[int]:
    """Lines where `name(...)` (or `x.name(...)`) is called."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if called == name:
                lines.append(node.lineno)
    return lines


def test_one_agent_runtime() -> None:
    """Every prebuilt agent is `create_agent` plus middleware: one call site, no loop of ours."""
    built = {name: lines for name, _, tree in _sources() if (lines := _calls(tree, "create_agent"))}
    assert list(built) == ["langgraph_context.agents.context_agent"]
    loops = [
        f"{name}:{line}"
        for name, _, tree in _sources()
        if _unit(name) == "agents"
        for helper in ("StateGraph", "create_react_agent", "ToolNode")
        for line in _calls(tree, helper)
    ]
    assert loops == []


def _subpackages() -> list[str]:
    """The package's subpackages, by directory name."""
    return sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))


MODEL_INPUT_WORDS = ("llm_input_messages", "PreModelViewState", "pre_model_hook", "LLM_INPUT")


def test_no_middleware_writes_the_model_input_into_state() -> None:
    """The agents send the model input through `request.override`, never a state key."""
    from langchain.agents.middleware import AgentMiddleware
    from typing_extensions import get_type_hints

    mentions = [
        f"{name}: {word}"
        for name, path, _ in _sources()
        if _unit(name) in {"agents", "providers", "recall", "cli"}
        for word in MODEL_INPUT_WORDS
        if word in path.read_text(encoding="utf-8")
    ]
    assert mentions == []
    middleware = {
        value
        for unit in _subpackages()
        for value in vars(importlib.import_module(f"langgraph_context.{unit}")).values()
        if isinstance(value, type) and issubclass(value, AgentMiddleware)
    }
    assert len(middleware) >= 10
    for value in middleware:
        name = value.__name__
        if value.__module__.startswith("langgraph_context"):
            keys = set(get_type_hints(value.state_schema))
            assert "llm_input_messages" not in keys, name
            overrides = value.wrap_model_call is not AgentMiddleware.wrap_model_call
            assert overrides == (value.awrap_model_call is not AgentMiddleware.awrap_model_call)
