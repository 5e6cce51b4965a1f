"""Keep a user's constraints in a LangGraph store, so they carry over to new threads.

A rule the user set in one thread ("never create requirements.txt") still holds in
their next thread of the same workspace. The constraints of a run live under
`(*namespace, <user>[, <workspace>])`, one item per constraint (key: its id, value:
the constraint), where `<user>` is `config["configurable"][user_key]` or the run
context's `user_key`, and `<workspace>` likewise from `workspace_key` when the run
names one. As LangGraph's long-term memory guide does, the user id comes from the run,
never from the model. A run with no user is refused: one user never reads another's
rules.

`sync_constraints` reconciles the thread's `constraints` with the store, both ways,
using the ids this thread has already seen (`stored_constraints`,
`ConstraintStoreStateMixin`):

* active here, never seen: new in this thread, written to the store;
* seen, gone from here, still stored: resolved in this thread, deleted from the store;
* seen, active here, gone from the store: resolved in another thread, resolved here;
* stored, never seen: set in another thread (or before this one), added here.

The entries keep their `source`, so a rule the model recorded in its own words stays
fenced data in every thread, and the user's own stays a rule.
`create_constraint_store_node` runs it as a node (before the model call); a graph
compiled without a store runs as if the node were absent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore
from typing_extensions import TypedDict

from langgraph_context.errors import InvalidArgumentError
from langgraph_context.state import Constraint, get_state_value

__all__ = [
    "ConstraintStoreStateMixin",
    "aload_stored_constraints",
    "async_constraints",
    "constraint_store_namespace",
    "create_constraint_store_node",
    "load_stored_constraints",
    "sync_constraints",
]

DEFAULT_CONSTRAINT_NAMESPACE: tuple[str, ...] = ("langgraph_context", "constraints")
DEFAULT_USER_KEY = "user_id"
DEFAULT_WORKSPACE_KEY = "workspace"
_PAGE = 100
_FIELDS = ("id", "text", "status", "source", "quoted_from")


class ConstraintStoreStateMixin(TypedDict, total=False):
    """Adds `stored_constraints`: the ids of the constraints this thread has synced."""

    stored_constraints: list[str]


def _label(value: str) -> str:
    # Store namespace labels may not contain '.': percent-escape it (and '%'), one-to-one.
    return value.replace("%", "%25").replace(".", "%2E")


def _run_value(config: Mapping[str, Any] | None, context: Any, key: str) -> str | None:
    value = ((config or {}).get("configurable") or {}).get(key)
    if value in (None, "") and context is not None:
        value = context.get(key) if isinstance(context, Mapping) else getattr(context, key, None)
    return None if value in (None, "") else str(value)


def constraint_store_namespace(
    config: Mapping[str, Any] | None,
    context: Any = None,
    *,
    namespace: tuple[str, ...] = DEFAULT_CONSTRAINT_NAMESPACE,
    user_key: str = DEFAULT_USER_KEY,
    workspace_key: str | None = DEFAULT_WORKSPACE_KEY,
) -> tuple[str, ...]:
    """Return the store namespace of the run's user (and workspace) constraints.

    Args:
        config: The run's config; `configurable[user_key]` names the user.
        context: The run's runtime context (a mapping or an object), read when the
            config does not name them.
        namespace: The prefix.
        user_key: Key of the user id.
        workspace_key: Key of the workspace (e.g. a repository); `None` ignores it.

    Returns:
        `(*namespace, user)` or `(*namespace, user, workspace)`, dots escaped.

    Raises:
        ValueError: If the run names no user, or `namespace` is not a tuple of
            non-empty strings without dots.

    Example:
        >>> constraint_store_namespace({"configurable": {"user_id": "ann", "workspace": "a.b"}})
        ('langgraph_context', 'constraints', 'ann', 'a%2Eb')
    """
    if not isinstance(namespace, tuple) or not all(
        isinstance(p, str) and p and "." not in p for p in namespace
    ):
        msg = f"namespace must be a tuple of non-empty strings without '.', got {namespace!r}"
        raise InvalidArgumentError(msg)
    user = _run_value(config, context, user_key)
    if user is None:
        msg = (
            f"constraints are kept per user: pass config['configurable'][{user_key!r}] (or "
            f"{user_key!r} in the run context); they are never put where users share them"
        )
        raise InvalidArgumentError(msg)
    workspace = _run_value(config, context, workspace_key) if workspace_key else None
    return (*namespace, _label(user), *((_label(workspace),) if workspace else ()))


def _entry(value: Any) -> Constraint | None:
    if not isinstance(value, Mapping) or not all(
        isinstance(value.get(k), str) for k in ("id", "text")
    ):
        return None
    entry = {k: value[k] for k in _FIELDS if isinstance(value.get(k), str)}
    return Constraint(**{**entry, "status": "active"})  # type: ignore[typeddict-item]


def load_stored_constraints(store: BaseStore, namespace: tuple[str, ...]) -> list[Constraint]:
    """Return the constraints stored under exactly `namespace`, oldest first.

    Args:
        store: The LangGraph store.
        namespace: The full namespace (`constraint_store_namespace`).

    Returns:
        The constraints (items that are not constraints are skipped).
    """
    items: list[Any] = []
    while True:
        page = store.search(namespace, limit=_PAGE, offset=len(items))
        items += page
        if len(page) < _PAGE:
            break
    items = sorted((i for i in items if tuple(i.namespace) == namespace), key=_created)
    return [e for e in (_entry(i.value) for i in items) if e is not None]


async def aload_stored_constraints(
    store: BaseStore, namespace: tuple[str, ...]
) -> list[Constraint]:
    """Async twin of `load_stored_constraints`."""
    items: list[Any] = []
    while True:
        page = await store.asearch(namespace, limit=_PAGE, offset=len(items))
        items += page
        if len(page) < _PAGE:
            break
    items = sorted((i for i in items if tuple(i.namespace) == namespace), key=_created)
    return [e for e in (_entry(i.value) for i in items) if e is not None]


def _created(item: Any) -> Any:
    return (item.created_at, item.key)


def _plan(
    stored: Sequence[Constraint], active: Sequence[Constraint], seen: Sequence[str]
) -> tuple[list[Constraint], list[str], list[Constraint], list[str]]:
    """(to put, ids to delete, state update, ids seen after) for one reconciliation."""
    here = {c["id"]: c for c in active}
    there = {c["id"]: c for c in stored}
    known = set(seen)
    put = [c for i, c in here.items() if i not in known and i not in there]
    delete = [i for i in known if i not in here and i in there]
    update: list[Constraint] = [
        Constraint(**{**c, "status": "resolved"})
        for i, c in here.items()
        if i in known and i not in there
    ]
    update += [c for i, c in there.items() if i not in known and i not in here]
    gone = {c["id"] for c in update if c["status"] == "resolved"}
    after = [i for i in [*here, *(c["id"] for c in update)] if i not in gone]
    return put, delete, update, sorted(set(after))


def sync_constraints(
    store: BaseStore,
    namespace: tuple[str, ...],
    *,
    constraints: Sequence[Constraint],
    seen: Sequence[str],
) -> tuple[list[Constraint], list[str]]:
    """Reconcile a thread's active constraints with the store, both ways (see module).

    Args:
        store: The LangGraph store.
        namespace: The full namespace (`constraint_store_namespace`).
        constraints: The thread's active constraints.
        seen: Ids this thread synced before (`stored_constraints`).

    Returns:
        The `constraints` update for the thread (added, or resolved elsewhere) and
        the ids seen after this sync.
    """
    put, delete, update, after = _plan(load_stored_constraints(store, namespace), constraints, seen)
    for entry in put:
        store.put(namespace, entry["id"], dict(entry))
    for key in delete:
        store.delete(namespace, key)
    return update, after


async def async_constraints(
    store: BaseStore,
    namespace: tuple[str, ...],
    *,
    constraints: Sequence[Constraint],
    seen: Sequence[str],
) -> tuple[list[Constraint], list[str]]:
    """Async twin of `sync_constraints`."""
    stored = await aload_stored_constraints(store, namespace)
    put, delete, update, after = _plan(stored, constraints, seen)
    for entry in put:
        await store.aput(namespace, entry["id"], dict(entry))
    for key in delete:
        await store.adelete(namespace, key)
    return update, after


def create_constraint_store_node(
    *,
    namespace: tuple[str, ...] = DEFAULT_CONSTRAINT_NAMESPACE,
    user_key: str = DEFAULT_USER_KEY,
    workspace_key: str | None = DEFAULT_WORKSPACE_KEY,
    constraints_key: str = "constraints",
) -> Any:
    """Create a node that keeps the thread's constraints in step with the store.

    Put it before the model call (`START -> constraints -> agent`, and after the tool
    node): it brings in the user's constraints from other threads, stores the ones
    recorded here, and propagates resolutions both ways. The state needs
    `PinnedStateMixin` and `ConstraintStoreStateMixin`.

    Args:
        namespace: Namespace prefix of the constraints in the store.
        user_key: `configurable` (or run context) key naming the user.
        workspace_key: Key naming the workspace, if the run names one; `None` keeps
            one set of constraints per user.
        constraints_key: State key of the constraints.

    Returns:
        A node function `(state, config, runtime) -> update`; at run time it raises
        `ValueError` when a store is compiled in and the run names no user.

    Raises:
        ValueError: If `namespace` is invalid.
    """
    constraint_store_namespace({"configurable": {user_key: "check"}}, namespace=namespace)

    def sync_stored_constraints(
        state: Any, config: RunnableConfig, runtime: Runtime
    ) -> dict[str, Any]:
        store = runtime.store
        if store is None:
            return {}
        full = constraint_store_namespace(
            config,
            getattr(runtime, "context", None),
            namespace=namespace,
            user_key=user_key,
            workspace_key=workspace_key,
        )
        active = get_state_value(state, constraints_key, []) or []
        seen = get_state_value(state, "stored_constraints", []) or []
        update, after = sync_constraints(store, full, constraints=active, seen=seen)
        out: dict[str, Any] = {constraints_key: update} if update else {}
        return {**out, "stored_constraints": after} if sorted(seen) != after else out

    return sync_stored_constraints
