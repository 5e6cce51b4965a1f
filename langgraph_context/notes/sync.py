"""Keep the `note` state in step with a LangGraph store, so notes outlive a thread.

Two nodes for `create_context_agent`: `create_load_notes_node` (a `pre_model` step)
pulls the notes saved in the store into the thread's `note` state, and
`create_save_notes_node` (a `post_tools` step) writes the notes the last tool round
created or changed back to the store. Served by `langgraph dev` or LangGraph Platform,
the graph then shares its notes through the server's store across threads; compiled
locally, it uses whatever store you pass to `compile(store=...)`.

Notes live under `(*namespace, <user>)`, one item per note (`{"content": text}`), where
`<user>` is `configurable[user_key]` (default `"default"`). The store wins when both
changed; a graph without a store runs as if the nodes were absent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore

from langgraph_context.errors import InvalidArgumentError
from langgraph_context.notes.langgraph_store import check_namespace
from langgraph_context.state import get_state_value

__all__ = [
    "DEFAULT_NOTES_NAMESPACE",
    "DEFAULT_USER_KEY",
    "create_load_notes_node",
    "create_save_notes_node",
    "load_store_notes",
]

DEFAULT_NOTES_NAMESPACE: tuple[str, ...] = ("langgraph_context", "notes")
DEFAULT_USER_KEY = "user_id"
_PAGE = 100


def _check_namespace(namespace: tuple[str, ...], user_key: str) -> None:
    check_namespace(namespace)
    if not isinstance(user_key, str) or not user_key:
        msg = f"user_key must be a non-empty string, got {user_key!r}"
        raise InvalidArgumentError(msg)


def _full_namespace(
    namespace: tuple[str, ...], user_key: str, config: RunnableConfig | None
) -> tuple[str, ...]:
    user = ((config or {}).get("configurable") or {}).get(user_key) or "default"
    return (*namespace, str(user).replace(".", "_"))


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
    namespace: tuple[str, ...] = DEFAULT_NOTES_NAMESPACE,
    user_key: str = DEFAULT_USER_KEY,
) -> Any:
    """Create a node that merges the store's notes into the `note` state.

    Args:
        namespace: Namespace prefix of the notes in the store.
        user_key: `configurable` key naming the user whose notes are loaded.

    Returns:
        A node function `(state, config, *, store) -> update`.

    Raises:
        ValueError: If `namespace` or `user_key` is invalid.
    """
    _check_namespace(namespace, user_key)

    def load_notes(state: Any, config: RunnableConfig, *, store: BaseStore) -> dict[str, Any]:
        if store is None:
            return {}
        saved = load_store_notes(store, _full_namespace(namespace, user_key, config))
        current: Mapping[str, str] = get_state_value(state, "note", {})
        changed = {k: v for k, v in saved.items() if current.get(k) != v}
        return {"note": changed} if changed else {}

    return load_notes


def create_save_notes_node(
    *,
    namespace: tuple[str, ...] = DEFAULT_NOTES_NAMESPACE,
    user_key: str = DEFAULT_USER_KEY,
) -> Any:
    """Create a node that writes new or changed notes from the state to the store.

    Args:
        namespace: Namespace prefix of the notes in the store.
        user_key: `configurable` key naming the user whose notes are saved.

    Returns:
        A node function `(state, config, *, store) -> {}`.

    Raises:
        ValueError: If `namespace` or `user_key` is invalid.
    """
    _check_namespace(namespace, user_key)

    def save_notes(state: Any, config: RunnableConfig, *, store: BaseStore) -> dict[str, Any]:
        if store is None:
            return {}
        full = _full_namespace(namespace, user_key, config)
        saved = load_store_notes(store, full)
        notes: Mapping[str, str] = get_state_value(state, "note", {})
        for name, content in notes.items():
            if saved.get(name) != content:
                store.put(full, name, {"content": content})
        return {}

    return save_notes
