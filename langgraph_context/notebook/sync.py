"""Keep the `note` state in step with a LangGraph store, so notes outlive a thread.

Two nodes for `create_context_agent`: `create_load_notes_node` (a `pre_model` step)
pulls the notes saved in the store into the thread's `note` state, and
`create_save_notes_node` (a `post_tools` step) writes the notes the last tool round
created or changed back to the store. Served by `langgraph dev` or LangGraph Platform,
the graph then shares its notes through the server's store across threads; compiled
locally, it uses whatever store you pass to `compile(store=...)`.

Notes live under `(*namespace, <user>)`, one item per note (`{"content": text}`), where
`<user>` is `config["configurable"][user_key]` or the run context's `user_key` (a key
of a mapping context, an attribute of a dataclass one). There is no fallback user: a
run without one fails before the model is called, so one user never reads another's
notes. Build both nodes with `user_key=None` to opt in to one namespace shared by
every user. The store wins when both changed; a graph without a store runs as if the
nodes were absent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from langgraph_context.errors import InvalidArgumentError
from langgraph_context.notebook.langgraph_store import check_namespace, escape_label
from langgraph_context.state import get_state_value

__all__ = [
    "create_load_notes_node",
    "create_save_notes_node",
    "load_store_notes",
    "run_user",
]

STATE_NOTES_NAMESPACE: tuple[str, ...] = ("langgraph_context", "notes")
DEFAULT_USER_KEY = "user_id"
_PAGE = 100


def _check_namespace(namespace: tuple[str, ...], user_key: str | None) -> None:
    check_namespace(namespace)
    if user_key is not None and (not isinstance(user_key, str) or not user_key):
        msg = f"user_key must be a non-empty string or None (shared notes), got {user_key!r}"
        raise InvalidArgumentError(msg)


def run_user(config: RunnableConfig | None, context: Any, user_key: str) -> str | None:
    """The run's user: `configurable[user_key]`, else the runtime context's `user_key`.

    Example:
        >>> run_user({"configurable": {"user_id": "u1"}}, None, "user_id")
        'u1'
        >>> run_user({}, {"user_id": "u2"}, "user_id")
        'u2'
    """
    value = ((config or {}).get("configurable") or {}).get(user_key)
    if value in (None, "") and context is not None:
        if isinstance(context, Mapping):
            value = context.get(user_key)
        else:
            value = getattr(context, user_key, None)
    return None if value in (None, "") else str(value)


def _full_namespace(
    namespace: tuple[str, ...], user_key: str | None, config: RunnableConfig, runtime: Any
) -> tuple[str, ...]:
    if user_key is None:
        return namespace
    user = run_user(config, getattr(runtime, "context", None), user_key)
    if user is None:
        msg = (
            f"notes are kept per user: pass config['configurable'][{user_key!r}] (or "
            f"{user_key!r} in the run context), or build the notes nodes with user_key=None "
            "to share one namespace between all users"
        )
        raise InvalidArgumentError(msg)
    return (*namespace, escape_label(user))


def load_store_notes(store: BaseStore, namespace: tuple[str, ...]) -> dict[str, str]:
    """Return every note saved under exactly `namespace` (name -> content).

    Args:
        store: The LangGraph store.
        namespace: The full namespace, user part included.

    Returns:
        The notes, read page by page.
    """
    notes: dict[str, str] = {}
    offset = 0
    while True:
        page = store.search(namespace, limit=_PAGE, offset=offset)
        for item in page:
            value = item.value
            content = value.get("content") if isinstance(value, Mapping) else None
            if tuple(item.namespace) == namespace and isinstance(content, str):
                notes[item.key] = content
        if len(page) < _PAGE:
            return notes
        offset += _PAGE


def create_load_notes_node(
    *,
    namespace: tuple[str, ...] = STATE_NOTES_NAMESPACE,
    user_key: str | None = DEFAULT_USER_KEY,
) -> Any:
    """Create a node that merges the store's notes into the `note` state.

    Args:
        namespace: Namespace prefix of the notes in the store.
        user_key: `configurable` (or run context) key naming the user whose notes
            are loaded; `None` for one namespace shared by every user.

    Returns:
        A node function `(state, config, runtime) -> update`; at run time it raises
        `ValueError` when the run names no user (and `user_key` is not `None`).

    Raises:
        ValueError: If `namespace` or `user_key` is invalid.
    """
    _check_namespace(namespace, user_key)

    def load_notes(state: Any, config: RunnableConfig, runtime: Runtime) -> dict[str, Any]:
        store = runtime.store
        if store is None:
            return {}
        saved = load_store_notes(store, _full_namespace(namespace, user_key, config, runtime))
        current: Mapping[str, str] = get_state_value(state, "note", {})
        changed = {k: v for k, v in saved.items() if current.get(k) != v}
        return {"note": changed} if changed else {}

    return load_notes


def create_save_notes_node(
    *,
    namespace: tuple[str, ...] = STATE_NOTES_NAMESPACE,
    user_key: str | None = DEFAULT_USER_KEY,
) -> Any:
    """Create a node that writes new or changed notes from the state to the store.

    Args:
        namespace: Namespace prefix of the notes in the store.
        user_key: `configurable` (or run context) key naming the user whose notes
            are saved; `None` for one namespace shared by every user.

    Returns:
        A node function `(state, config, runtime) -> {}`; at run time it raises
        `ValueError` when the run names no user (and `user_key` is not `None`).

    Raises:
        ValueError: If `namespace` or `user_key` is invalid.
    """
    _check_namespace(namespace, user_key)

    def save_notes(state: Any, config: RunnableConfig, runtime: Runtime) -> dict[str, Any]:
        store = runtime.store
        if store is None:
            return {}
        full = _full_namespace(namespace, user_key, config, runtime)
        saved = load_store_notes(store, full)
        notes: Mapping[str, str] = get_state_value(state, "note", {})
        for name, content in notes.items():
            if saved.get(name) != content:
                store.put(full, name, {"content": content})
        return {}

    return save_notes
