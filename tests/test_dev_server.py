"""Round trip through the real `langgraph dev` server with a scripted model."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
LANGGRAPH = Path(sys.executable).parent / "langgraph"
START_TIMEOUT = 40.0

pytestmark = pytest.mark.slow


def _config_in(tmp_path: Path) -> Path:
    """Copy the repo's langgraph.json with absolute paths, so the server runs in tmp_path.

    The in-memory server keeps its files in `.langgraph_api/` of its working directory;
    running it in `tmp_path` leaves the repository untouched.
    """
    spec = json.loads((ROOT / "langgraph.json").read_text())
    for graph_id, target in spec["graphs"].items():
        path, _, attribute = target.rpartition(":")
        spec["graphs"][graph_id] = f"{(ROOT / path).resolve()}:{attribute}"
    spec["dependencies"] = [str((ROOT / d).resolve()) for d in spec["dependencies"]]
    config = tmp_path / "langgraph.json"
    config.write_text(json.dumps(spec))
    return config


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_ready(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"langgraph dev exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    pytest.fail(f"langgraph dev did not start in {START_TIMEOUT}s:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny codebase for the served maintainer."""
    root = tmp_path_factory.mktemp("codebase")
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "core.py").write_text("def run():\n    return 1  # TODO: real work\n")
    return root


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, workspace: Path) -> Iterator[str]:
    """Start `langgraph dev` once for this module on a free port; always stop it."""
    tmp_path = tmp_path_factory.mktemp("server")
    if not LANGGRAPH.exists():
        pytest.skip("langgraph-cli[inmem] is not installed")
    port = _free_port()
    env = {
        **os.environ,
        "LGC_MODEL_FACTORIES": (
            "scripted=tests._server_models:scripted,named=tests._server_models:named"
        ),
        "PYTHONPATH": str(ROOT),
        "LANGSMITH_TRACING": "false",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LGC_WORKSPACE": str(workspace),
    }
    log = tmp_path / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                str(LANGGRAPH),
                "dev",
                "--config",
                str(_config_in(tmp_path)),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--no-browser",
                "--no-reload",
            ],
            cwd=tmp_path,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(url, proc, log)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def _config(script: list[dict[str, Any]], user: str) -> dict[str, Any]:
    return {"configurable": {"model_factory": "scripted", "script": script, "user_id": user}}


async def _round_trip(url: str) -> tuple[Any, Any, Any, Any]:
    from langgraph_sdk import get_client

    client = get_client(url=url)
    first = await client.threads.create()
    script = [
        {
            "tool_calls": [
                {"name": "write_plan", "args": {"plan": ["look", "answer"]}, "id": "p1"},
                {"name": "write_note", "args": {"file_name": "fact", "content": "x=1"}, "id": "n1"},
            ]
        },
        {"content": "Noted x=1."},
    ]
    await client.runs.wait(
        first["thread_id"],
        "context_agent",
        input={"messages": [{"role": "user", "content": "remember x=1"}]},
        config=_config(script, "alice"),
    )
    state_one = await client.threads.get_state(first["thread_id"])
    items = await client.store.search_items(("langgraph_context", "notes", "alice"))
    second = await client.threads.create()
    await client.runs.wait(
        second["thread_id"],
        "context_agent",
        input={"messages": [{"role": "user", "content": "what is x?"}]},
        config=_config([{"content": "x is 1"}], "alice"),
    )
    state_two = await client.threads.get_state(second["thread_id"])
    other = await client.threads.create()
    await client.runs.wait(
        other["thread_id"],
        "context_agent",
        input={"messages": [{"role": "user", "content": "hi"}]},
        config=_config([{"content": "hello"}], "bob"),
    )
    state_bob = await client.threads.get_state(other["thread_id"])
    return state_one, items, state_two, state_bob


async def _maintainer_round_trip(url: str) -> tuple[Any, Any]:
    from langgraph_sdk import get_client

    client = get_client(url=url)
    thread = await client.threads.create()
    script = [
        {
            "tool_calls": [
                {"name": "terminal", "args": {"command": "grep -rn TODO pkg"}, "id": "t1"},
                {"name": "write_plan", "args": {"plan": ["find TODOs", "fix"]}, "id": "p1"},
            ]
        },
        {
            "tool_calls": [
                {
                    "name": "notebook_create",
                    "args": {
                        "title": "run() is a stub",
                        "content": "pkg/core.py:2 TODO: real work",
                        "note_type": "action",
                    },
                    "id": "n1",
                }
            ]
        },
        {"content": "One action recorded."},
    ]
    await client.runs.wait(
        thread["thread_id"],
        "codebase_maintainer",
        input={"messages": [{"role": "user", "content": "Any TODOs?"}], "mode": "analyze"},
        config=_config(script, "alice"),
    )
    state = await client.threads.get_state(thread["thread_id"])
    items = await client.store.search_items(("codebase_maintainer", "notes"))
    return state, items


def test_dev_server_round_trip_with_store_backed_notes(server: str) -> None:
    """A served thread runs tools with the scripted model; notes reach the server's store."""
    state_one, items, state_two, state_bob = asyncio.run(_round_trip(server))
    values = state_one["values"]
    assert [m["type"] for m in values["messages"]] == ["human", "ai", "tool", "tool", "ai"]
    assert values["messages"][-1]["content"] == "Noted x=1."
    assert values["plan"] == [
        {"content": "look", "status": "in_progress"},
        {"content": "answer", "status": "pending"},
    ]
    assert values["note"] == {"fact": "x=1"}
    assert [(i["key"], i["value"]) for i in items["items"]] == [("fact", {"content": "x=1"})]
    assert state_two["values"]["note"] == {"fact": "x=1"}
    assert state_two["values"]["messages"][-1]["content"] == "x is 1"
    assert state_bob["values"]["note"] == {}


def test_dev_server_runs_the_codebase_maintainer(server: str) -> None:
    """The served maintainer reads the workspace and keeps its notes in the server's store."""
    state, items = asyncio.run(_maintainer_round_trip(server))
    values = state["values"]
    assert values["mode"] == "analyze"
    assert "./pkg/core.py:2:    return 1  # TODO: real work" in values["briefing"]
    tool_results = [m["content"] for m in values["messages"] if m["type"] == "tool"]
    assert tool_results[0] == "pkg/core.py:2:    return 1  # TODO: real work\n"
    assert values["plan"] == [
        {"content": "find TODOs", "status": "in_progress"},
        {"content": "fix", "status": "pending"},
    ]
    assert values["messages"][-1]["content"] == "One action recorded."
    assert [i["namespace"] for i in items["items"]] == [["codebase_maintainer", "notes", "alice"]]
    notes = [i["value"] for i in items["items"]]
    assert [(n["title"], n["type"]) for n in notes] == [("run() is a stub", "action")]


async def _context_round_trip(url: str) -> tuple[Any, Any, Any]:
    from langgraph_sdk import get_client

    client = get_client(url=url)
    assistants = await client.assistants.search(graph_id="context_agent")
    schemas = await client.assistants.get_schemas(assistants[0]["assistant_id"])
    thread = await client.threads.create()
    settings = {"model_factory": "named", "model": "m-ctx", "temperature": 0.3, "user_id": "c"}
    await client.runs.wait(
        thread["thread_id"],
        "context_agent",
        input={"messages": [{"role": "user", "content": "hi"}]},
        context=settings,
    )
    state = await client.threads.get_state(thread["thread_id"])
    return schemas["input_schema"], schemas["context_schema"], state


def test_dev_server_publishes_schemas_and_takes_settings_as_context(server: str) -> None:
    """The SDK sees public input keys and the run settings; a run's `context` reaches the model."""
    inputs, context, state = asyncio.run(_context_round_trip(server))
    assert set(inputs["properties"]) == {"messages", "plan", "note", "constraints", "hot_issues"}
    assert set(context["properties"]) == {"model_factory", "model", "temperature", "user_id"}
    assert state["values"]["messages"][-1]["content"] == "m-ctx at 0.3"


# (user, thread label, whether the thread runs `cd pkg` first)
CONCURRENT = [
    ("carol", "c1", True),
    ("carol", "c2", False),
    ("dave", "d1", False),
    ("dave", "d2", True),
]


def _concurrent_script(user: str, label: str, cd: bool) -> list[dict[str, Any]]:
    first = [{"name": "terminal", "args": {"command": "cd pkg"}, "id": f"{label}-cd"}] if cd else []
    first.append(
        {
            "name": "notebook_create",
            "args": {"title": f"{user} {label}", "content": f"from {label}", "note_type": "action"},
            "id": f"{label}-n",
        }
    )
    return [
        {"tool_calls": first},
        {"tool_calls": [{"name": "terminal", "args": {"command": "pwd"}, "id": f"{label}-pwd"}]},
        {"content": f"{label} done"},
    ]


async def _concurrent_round(url: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    from langgraph_sdk import get_client

    client = get_client(url=url)
    threads = {label: (await client.threads.create())["thread_id"] for _, label, _ in CONCURRENT}

    async def run(user: str, label: str, script: list[dict[str, Any]], text: str) -> None:
        await client.runs.wait(
            threads[label],
            "codebase_maintainer",
            input={"messages": [{"role": "user", "content": text}]},
            config=_config(script, user),
        )

    # Two users, two threads each, all four runs at once; then a second turn, at once too.
    await asyncio.gather(
        *(run(u, t, _concurrent_script(u, t, cd), "note and pwd") for u, t, cd in CONCURRENT)
    )
    again = [
        {"tool_calls": [{"name": "terminal", "args": {"command": "pwd"}, "id": "again"}]},
        {"content": "again done"},
    ]
    await asyncio.gather(*(run(u, t, again, "where are we?") for u, t, _ in CONCURRENT))
    states = {t: await client.threads.get_state(threads[t]) for _, t, _ in CONCURRENT}
    notes = {
        user: await client.store.search_items(("codebase_maintainer", "notes", user))
        for user in ("carol", "dave")
    }
    return states, notes, threads


def test_dev_server_two_users_two_threads_concurrently(server: str, workspace: Path) -> None:
    """Four runs at once through one served graph: each thread keeps its own `cd`, each
    user sees only their own notes, and no thread holds another's messages."""
    states, notes, _threads = asyncio.run(_concurrent_round(server))
    root = workspace.resolve()
    for _user, label, cd in CONCURRENT:
        messages = states[label]["values"]["messages"]
        pwds = [
            m["content"]
            for m in messages
            if m["type"] == "tool" and m["tool_call_id"].endswith(("-pwd", "again"))
        ]
        where = f"{root / 'pkg'}\n" if cd else f"{root}\n"
        assert pwds == [where, where], (label, pwds)
        texts = " ".join(str(m["content"]) for m in messages)
        others = [t for _, t, _ in CONCURRENT if t != label]
        assert f"{label} done" in texts
        assert not [t for t in others if f"{t} done" in texts or f"from {t}" in texts]
    for user in ("carol", "dave"):
        titles = sorted(i["value"]["title"] for i in notes[user]["items"])
        mine = sorted(f"{user} {t}" for u, t, _ in CONCURRENT if u == user)
        assert titles == mine
        assert {tuple(i["namespace"]) for i in notes[user]["items"]} == {
            ("codebase_maintainer", "notes", user)
        }


async def _wrong_shape_round(url: str) -> tuple[Any, Any, Any]:
    from langgraph_sdk import get_client

    client = get_client(url=url)
    thread = await client.threads.create()
    settings = {"model_factory": "named", "model": "m-shape", "user_id": "e"}
    bad = {"messages": [{"role": "user", "content": "hi"}], "plan": ["a", "b"]}
    answer = await client.runs.wait(
        thread["thread_id"], "context_agent", input=bad, context=settings, raise_error=False
    )
    good = {"messages": [{"role": "user", "content": "again"}]}
    await client.runs.wait(thread["thread_id"], "context_agent", input=good, context=settings)
    state = await client.threads.get_state(thread["thread_id"])
    return answer, await client.runs.list(thread["thread_id"]), state


def test_dev_server_names_a_wrong_shaped_plan_instead_of_crashing(server: str) -> None:
    """`{"plan": ["a", "b"]}` over the SDK fails with the package's typed error naming the
    key and its shape (not a reducer's `string indices` TypeError); the thread runs on."""
    answer, runs, state = asyncio.run(_wrong_shape_round(server))
    error = answer["__error__"]
    assert error["error"] == "InvalidTypeError"
    assert error["message"].startswith("state key 'plan' must be a list of {\"content\": str")
    assert "string indices" not in error["message"]
    assert sorted(run["status"] for run in runs) == ["error", "success"]
    assert state["values"]["messages"][-1]["content"].startswith("m-shape")
    assert not state["values"].get("plan")
