"""Generated tool-heavy coding threads: deterministic, seeded, of a given number of model calls.

The first user turn states three facts (a staging host, an account id, a release tag
prefix); the agent records a constraint and writes a plan (`record_constraint`,
`write_plan`, the names our agent has natively; other configurations get replay tools
of the same names). Then user tasks follow, each answered by one to six tool rounds
and a closing message. Tool outputs vary in size like a real session's: file reads
(40-400 lines of code), grep hits (3-80 lines), test logs (20-300 lines, some with
failures and tracebacks) and short shell output. The last user turn refers back to
all three facts; the model input of the call answering it is the probe.
"""

from __future__ import annotations

import random

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from benchmarks.bill.sessions import CODING_PROMPT, Session, build_session

FACTS = ("pg-staging-7741.internal", "ACCT-20931", "rel-kestrel-")
PLAN = (
    "Map the ingest pipeline modules",
    "Fix the flaky retry test in tests/test_retry.py",
    "Add backoff jitter to ingest/retry.py",
    "Run the full test suite and tag a release",
)
CONSTRAINT = "Never push to main directly; open a pull request for every change."
_MODULES = ("ingest", "retry", "storage", "api", "auth", "billing", "report", "cli")
_NAMES = ("load", "parse", "flush", "retry", "commit", "fetch", "render", "merge", "close")
_TASKS = (
    "Why does {m} time out under load? Have a look.",
    "Refactor {m}.{f} so it takes a config object.",
    "The {m} tests fail on CI since yesterday, can you check?",
    "Add type hints to src/{m}/core.py.",
    "Find every caller of {f} in src/{m} and tell me which are unsafe.",
)


def _call(name: str, args: dict[str, object], n: int) -> dict[str, object]:
    return {"name": name, "args": args, "id": f"g{n}", "type": "tool_call"}


def _code(rng: random.Random, module: str) -> str:
    lines = [f'"""The {module} module."""', "", "from __future__ import annotations", ""]
    while len(lines) < rng.randint(40, 400):
        name = f"{rng.choice(_NAMES)}_{rng.randint(1, 99)}"
        lines += [
            f"def {name}(config: Config, items: list[str]) -> int:",
            f'    """{name.title()} the {module} items."""',
            f"    total = {rng.randint(0, 9)}",
            "    for item in items:",
            f"        if item.startswith({rng.choice(_NAMES)!r}):",
            f"            total += config.weight * {rng.randint(1, 50)}",
            "    return total",
            "",
        ]
    return "\n".join(lines)


def _grep(rng: random.Random, module: str, word: str) -> str:
    return "\n".join(
        f"src/{rng.choice(_MODULES)}/{rng.choice(_NAMES)}.py:{rng.randint(1, 900)}:    "
        f"result = {word}(config, items[{rng.randint(0, 9)}:])  # {module}"
        for _ in range(rng.randint(3, 80))
    )


def _tests(rng: random.Random, module: str) -> str:
    lines = ["============================= test session starts =============================="]
    failed = 0
    for i in range(rng.randint(20, 300)):
        ok = rng.random() > 0.04
        failed += not ok
        test = f"tests/test_{module}.py::test_{rng.choice(_NAMES)}_{i}"
        lines.append(f"{test} {'PASSED' if ok else 'FAILED'}")
        if not ok:
            lines += [
                "Traceback (most recent call last):",
                f'  File "src/{module}/core.py", line {rng.randint(10, 400)}, '
                f"in {rng.choice(_NAMES)}",
                f"    raise TimeoutError('{module} backend did not answer in 30s')",
                f"TimeoutError: {module} backend did not answer in 30s",
            ]
    lines.append(
        f"=========== {failed} failed, {len(lines)} passed in {rng.uniform(1, 90):.2f}s ==========="
    )
    return "\n".join(lines)


def _round(rng: random.Random, module: str, n: int) -> tuple[dict[str, object], str]:
    kind = rng.choices(["read", "grep", "test", "bash"], [4, 3, 2, 2])[0]
    if kind == "read":
        path = f"src/{module}/{rng.choice(_NAMES)}.py"
        return _call("read_file", {"path": path}, n), _code(rng, module)
    if kind == "grep":
        word = rng.choice(_NAMES)
        return _call("grep", {"pattern": word, "path": f"src/{module}"}, n), _grep(
            rng, module, word
        )
    if kind == "test":
        return _call("run_tests", {"target": f"tests/test_{module}.py"}, n), _tests(rng, module)
    command = rng.choice(["git status --short", "git diff --stat", "ls src/" + module])
    output = "\n".join(f" M src/{module}/{rng.choice(_NAMES)}.py" for _ in range(rng.randint(1, 8)))
    return _call("bash", {"command": command}, n), output


def generate_messages(calls: int, *, seed: int) -> list[BaseMessage]:
    """A thread whose script has exactly `calls` model calls (at least 6)."""
    rng = random.Random(seed)
    host, account, prefix = FACTS
    out: list[BaseMessage] = [
        HumanMessage(
            f"Before we start: the staging database is {host}, our account id is {account}, "
            f"and release tags start with {prefix}. {CONSTRAINT}"
        ),
        AIMessage(
            "Noted; recording the rule and a plan.",
            tool_calls=[
                _call("record_constraint", {"text": CONSTRAINT}, 0),
                _call("write_plan", {"plan": list(PLAN)}, 1),
            ],
        ),
        ToolMessage("Constraint recorded.", tool_call_id="g0"),
        ToolMessage("Plan written.", tool_call_id="g1"),
        AIMessage("Plan and rule are in place."),
    ]
    used, n = 2, 2
    while used < calls - 3:
        module = rng.choice(_MODULES)
        out.append(HumanMessage(rng.choice(_TASKS).format(m=module, f=rng.choice(_NAMES))))
        for _ in range(min(rng.randint(1, 6), calls - 3 - used - 1)):
            call, output = _round(rng, module, n)
            out += [AIMessage("", tool_calls=[call]), ToolMessage(output, tool_call_id=call["id"])]
            n += 1
            used += 1
        out.append(AIMessage(f"Done with {module}: see the changes above."))
        used += 1
    tag = f"{prefix}{seed}.0"
    out += [
        HumanMessage(
            "Now run the migration against the staging database I gave you at the start, "
            "for our account, and tag the release the way I told you."
        ),
        AIMessage(
            "",
            tool_calls=[
                _call("bash", {"command": f"migrate --host {host} --account {account}"}, n)
            ],
        ),
        ToolMessage(f"migrated {account} on {host}: 14 steps applied", tool_call_id=f"g{n}"),
        AIMessage("", tool_calls=[_call("bash", {"command": f"git tag {tag}"}, n + 1)]),
        ToolMessage(f"tagged {tag}", tool_call_id=f"g{n + 1}"),
        AIMessage(f"Migrated {account} on {host} and tagged {tag}."),
    ]
    return out


def generated_session(calls: int, *, seed: int, window: int) -> Session:
    """A generated thread as a session, with its early facts and pinned strings."""
    session = build_session(
        f"gen-{calls}",
        "generated",
        generate_messages(calls, seed=seed),
        window=window,
        system_prompt=CODING_PROMPT,
    )
    session.probe = len(session.script) - 3  # the call answering the refer-back request
    session.facts = list(FACTS)
    session.pinned = [*PLAN, CONSTRAINT]
    return session
