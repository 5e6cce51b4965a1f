"""Notes on LangGraph stores: InMemoryStore, SqliteStore and a real PostgreSQL server."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.store.postgres import PostgresStore
from langgraph.store.sqlite import SqliteStore

from langgraph_context.notebook import LangGraphNotebookStore
from langgraph_context.notebook.langgraph_store import resolve_notebook_namespace
from langgraph_context.notebook.tool import create_notebook_tools
from tests.conftest import ScriptedChatModel, ai_calls, call

BACKENDS = ["memory", "sqlite", "postgres"]


def _pg_binary(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A throwaway PostgreSQL cluster on a free localhost port, stopped at session end."""
    required = os.environ.get("LGC_REQUIRE_POSTGRES") == "1"

    def unavailable(reason: str) -> None:
        if required:
            pytest.fail(f"PostgreSQL is required here (LGC_REQUIRE_POSTGRES=1): {reason}")
        pytest.skip(reason)

    initdb, pg_ctl = _pg_binary("initdb"), _pg_binary("pg_ctl")
    if initdb is None or pg_ctl is None:
        unavailable("PostgreSQL server binaries not found; run scripts/ensure-postgres.sh")
    assert initdb is not None
    assert pg_ctl is not None
    base = Path(tempfile.mkdtemp(prefix="lgc-pg-"))
    prefix: list[str] = []
    if os.geteuid() == 0:  # postgres refuses to run as root: use its own OS user
        runuser = shutil.which("runuser")
        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            user = None
        if runuser is None or user is None:
            shutil.rmtree(base)
            unavailable("running as root without runuser or a 'postgres' OS user")
        assert runuser is not None
        assert user is not None
        os.chown(base, user.pw_uid, user.pw_gid)
        prefix = [runuser, "-u", "postgres", "--"]
    data, port = base / "data", _free_port()
    options = f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off"
    try:
        subprocess.run(
            [
                *prefix,
                initdb,
                "-D",
                str(data),
                "-A",
                "trust",
                "-U",
                "postgres",
                "-E",
                "UTF8",
                "--no-sync",
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
        subprocess.run(
            [
                *prefix,
                pg_ctl,
                "-D",
                str(data),
                "-l",
                str(base / "log"),
                "-w",
                "-t",
                "60",
                "-o",
                options,
                "start",
            ],
            check=True,
            capture_output=True,
            timeout=90,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as error:
        shutil.rmtree(base, ignore_errors=True)
        unavailable(f"could not start PostgreSQL: {error}")
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*prefix, pg_ctl, "-D", str(data), "-m", "immediate", "stop"],
            capture_output=True,
            timeout=60,
            check=False,
        )
        shutil.rmtree(base, ignore_errors=True)


@contextlib.contextmanager
def _open_store(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[BaseStore]:
    if kind == "memory":
        yield InMemoryStore()
    elif kind == "sqlite":
        with SqliteStore.from_conn_string(str(tmp_path / "notes.sqlite")) as store:
            store.setup()
            yield store
    else:
        url = request.getfixturevalue("postgres_url")
        with PostgresStore.from_conn_string(url) as store:
            store.setup()
            yield store


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, BaseStore]]:
    with _open_store(request.param, tmp_path, request) as store:
        yield request.param, store


def _namespace() -> tuple[str, ...]:
    return ("notes", f"test-{uuid.uuid4().hex[:12]}")


def test_operations_behave_the_same_on_every_store(backend: tuple[str, BaseStore]) -> None:
    """Create/read/update/search/list/summary/delete give the same answers on each store."""
    _, store = backend
    notes = LangGraphNotebookStore(store, namespace=_namespace())
    blocker = notes.create("CI runner offline", "jobs queue forever", note_type="blocker")
    done = notes.create("Parser rewrite", "finished: ---\nkey: value", tags=["parser"])
    assert notes.read(done.id) == done
    updated = notes.update(done.id, note_type="conclusion", tags=["parser", "done"])
    assert notes.read(done.id) == updated
    assert [n.id for n, _ in notes.search("runner offline")] == [blocker.id]
    assert [n.id for n in notes.list(tags=["done"])] == [done.id]
    assert notes.summary()["type_distribution"] == {"conclusion": 1, "blocker": 1}
    assert notes.delete(blocker.id) == blocker
    assert [n.id for n in notes.list()] == [done.id]


def test_notes_survive_reopening_the_store(
    backend: tuple[str, BaseStore], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A new connection (another machine, in production) sees the same notes."""
    kind, store = backend
    if kind == "memory":
        pytest.skip("an in-memory store does not outlive its object")
    namespace = _namespace()
    note = LangGraphNotebookStore(store, namespace=namespace).create("kept", "across restarts")
    with _open_store(kind, tmp_path, request) as again:
        assert LangGraphNotebookStore(again, namespace=namespace).read(note.id) == note


def test_namespaces_isolate_users_and_skip_nested_items(backend: tuple[str, BaseStore]) -> None:
    """Each namespace is its own notebook; items in deeper namespaces are not listed."""
    _, store = backend
    root = _namespace()
    alice = LangGraphNotebookStore(store, namespace=(*root, "alice"))
    bob = LangGraphNotebookStore(store, namespace=(*root, "bob"))
    mine = alice.create("alice's", "private")
    LangGraphNotebookStore(store, namespace=(*root, "alice", "sub")).create("nested", "x")
    assert [n.id for n in alice.list()] == [mine.id]
    assert bob.list() == []
    assert bob.search("private") == []


def test_namespace_template_is_filled_from_config() -> None:
    """`{name}` parts come from config['configurable']; dots are escaped for the store."""
    config = {"configurable": {"user_id": "ann@example.com", "project": "p1"}}
    assert resolve_notebook_namespace(("notes", "{user_id}", "{project}"), config) == (
        "notes",
        "ann@example%2Ecom",
        "p1",
    )
    with pytest.raises(ValueError, match=r"needs config\['configurable'\]\['user_id'\]"):
        resolve_notebook_namespace(("notes", "{user_id}"), {"configurable": {}})
    with pytest.raises(ValueError, match="template parts must be strings"):
        resolve_notebook_namespace(("notes", 3), {})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="namespace must be a non-empty tuple"):
        resolve_notebook_namespace(("a.b",), {})


def test_langgraph_note_store_rejects_bad_arguments() -> None:
    """A non-store object or a malformed namespace is refused at construction."""
    with pytest.raises(TypeError, match="store must be a langgraph BaseStore"):
        LangGraphNotebookStore({}, namespace=("notes",))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="namespace must be a non-empty tuple"):
        LangGraphNotebookStore(InMemoryStore(), namespace=())


def _graph(tools: list[Any], model: ScriptedChatModel) -> StateGraph[Any]:
    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph


def test_agent_notes_go_to_the_compiled_store_per_user(backend: tuple[str, BaseStore]) -> None:
    """Tools with no explicit store write to the graph's store under the run's user."""
    _, store = backend
    project = uuid.uuid4().hex[:12]
    tools = create_notebook_tools(namespace=("notes", "{user_id}", project))
    model = ScriptedChatModel(
        responses=[
            ai_calls(
                call(
                    "notebook_create",
                    {"title": "Flaky test", "content": "test_io times out", "note_type": "blocker"},
                    "c1",
                ),
                call("notebook_read", {"note_id": "../../etc/passwd"}, "c2"),
            ),
            ai_calls(call("notebook_search", {"query": "flaky times out"}, "c3")),
            AIMessage("done"),
        ]
    )
    app = _graph(tools, model).compile(store=store)
    config = {"configurable": {"user_id": "alice"}}
    result = app.invoke({"messages": [("user", "remember the flaky test")]}, config)
    tool_messages = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert [m.status for m in tool_messages] == ["success", "error", "success"]
    assert tool_messages[0].content.startswith("Created note note_")
    assert "Invalid note id '../../etc/passwd'" in tool_messages[1].content
    assert "Flaky test" in tool_messages[2].content
    saved = LangGraphNotebookStore(store, namespace=("notes", "alice", project)).list()
    assert [(n.title, n.type) for n in saved] == [("Flaky test", "blocker")]
    assert LangGraphNotebookStore(store, namespace=("notes", "bob", project)).list() == []


class _SlowStore(InMemoryStore):
    """A store with per-operation latency, like a database over the network."""

    def batch(self, ops: Any) -> Any:
        time.sleep(0.02)
        return super().batch(ops)


def test_parallel_updates_of_one_note_in_one_turn_both_land() -> None:
    """ToolNode runs two notebook_update calls at once; both changes reach the store."""
    store = _SlowStore()
    note = LangGraphNotebookStore(store, namespace=("notes", "u")).create(
        "CI", "runner offline", tags=["ci"]
    )
    model = ScriptedChatModel(
        responses=[
            ai_calls(
                call("notebook_update", {"note_id": note.id, "title": "CI fixed"}, "c1"),
                call("notebook_update", {"note_id": note.id, "tags": ["ci", "resolved"]}, "c2"),
            ),
            AIMessage("done"),
        ]
    )
    app = _graph(create_notebook_tools(), model).compile(store=store)
    result = app.invoke(
        {"messages": [("user", "close the CI blocker")]}, {"configurable": {"user_id": "u"}}
    )
    statuses = [m.status for m in result["messages"] if isinstance(m, ToolMessage)]
    assert statuses == ["success", "success"]
    stored = LangGraphNotebookStore(store, namespace=("notes", "u")).read(note.id)
    assert (stored.title, stored.tags) == ("CI fixed", ("ci", "resolved"))


def test_instances_share_a_lock_per_store_and_namespace() -> None:
    """Same store and namespace: one lock; another namespace or store: another lock."""
    store = InMemoryStore()
    first = LangGraphNotebookStore(store, namespace=("notes", "a"))
    assert first._mutex is LangGraphNotebookStore(store, namespace=("notes", "a"))._mutex
    assert first._mutex is not LangGraphNotebookStore(store, namespace=("notes", "b"))._mutex
    assert (
        first._mutex is not LangGraphNotebookStore(InMemoryStore(), namespace=("notes", "a"))._mutex
    )
