"""Graph steps per model call: this checkout versus a baseline commit.

`python -m benchmarks.steps [--baseline REV]` runs three agents, each for two model
calls (a plan tool round, then an answer) with a scripted model, once on this checkout
and once on the package as it was at `REV` (default `155d399`, main before issue 15's
API half), extracted with `git archive`:

* `create_agent` with the compaction, context, pinned and state-tools middleware;
* `create_context_agent(model)` with its defaults;
* `create_context_agent(model, compaction=<node>, context=True)`.

It counts the graph steps (`stream_mode="updates"`) before each answer and the
messages streamed (`stream_mode="messages"`), prints them, and writes
`benchmarks/results/steps.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks._common import REPO, write_result
from benchmarks.imports.__main__ import _extract

BASELINE = "155d399"

# Run in a fresh interpreter with the package under test first on sys.path; uses only
# names both versions have.
MEASURE = """
import json
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langgraph_context.agents import (
    CompactionMiddleware, create_context_agent, ContextMiddleware,
    PinnedMiddleware, StateToolsMiddleware,
)
from langgraph_context.compaction import create_compaction_node
from langgraph_context.testing import ScriptedChatModel, ai_calls, tool_call


def model():
    plan = ai_calls(tool_call("write_plan", {"items": ["a"]}, "p"))
    return ScriptedChatModel(responses=[plan, AIMessage("done")])


def middleware_agent():
    middleware = [
        CompactionMiddleware(trigger_tokens=2000), ContextMiddleware(),
        PinnedMiddleware(), StateToolsMiddleware(),
    ]
    return create_agent(model(), [], middleware=middleware)


BUILDS = {
    "create_agent + compaction/context/pinned/state-tools middleware": middleware_agent,
    "create_context_agent(model)": lambda: create_context_agent(model()),
    "create_context_agent(model, compaction=node, context=True)": lambda: create_context_agent(
        model(), compaction=CompactionMiddleware(trigger_tokens=2000), context=True
    ),
}
inputs = {"messages": [HumanMessage("hi")]}
out = {}
for name, build in BUILDS.items():
    steps = [n for chunk in build().stream(inputs, stream_mode="updates") for n in chunk]
    streamed = [type(m).__name__ for m, _ in build().stream(inputs, stream_mode="messages")]
    calls = steps.count("model")
    before = len(steps) - steps.count("tools")
    out[name] = {"steps_per_model_call": before / calls, "steps": steps, "streamed": streamed}
print(json.dumps(out))
"""


def _measure(root: Path) -> dict[str, dict[str, object]]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, "-c", MEASURE],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
    )
    figures: dict[str, dict[str, object]] = json.loads(done.stdout)
    return figures


def main(argv: list[str] | None = None) -> int:
    """Count the steps on both versions, print a table; return 0."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.steps")
    parser.add_argument("--baseline", default=BASELINE, help="git revision to compare with")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        base = _measure(_extract(args.baseline, Path(tmp)))
    now = _measure(REPO)
    print("graph steps per model call (tool rounds not counted)")
    print(f"{'agent':<62} {'baseline':>8} {'now':>5}")
    for name, figures in now.items():
        before = base.get(name, {}).get("steps_per_model_call", "-")
        print(f"{name:<62} {before:>8} {figures['steps_per_model_call']:>5}")
    for label, figures in (("baseline", base), ("now", now)):
        for name, row in figures.items():
            print(f"{label}: {name}: {row['steps']}; streamed {row['streamed']}")
    write_result("steps", {"baseline": args.baseline, "baseline_steps": base, "now": now})
    return 0


if __name__ == "__main__":
    sys.exit(main())
