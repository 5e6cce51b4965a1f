"""Where replace-mode compaction archives what it evicts: the store and a sink's writes.

Split from `_step.py` (the module cap); the step calls these after a compaction.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.config import get_store
from langgraph.store.base import BaseStore, PutOp

from langgraph_context.compaction.options import ArchiveSink
from langgraph_context.errors import InvalidArgumentError

Archived = tuple[BaseStore, list[PutOp]]


def sunk(
    sink: ArchiveSink, evicted: list[BaseMessage], update: dict[str, Any], archive: Archived | None
) -> Archived | None:
    """Add the sink's state update to `update`; its store writes join `archive`'s."""
    more, ops = sink(evicted)
    update.update(more)
    if not ops:
        return archive
    if archive is not None:
        return archive[0], [*archive[1], *ops]
    return _current_store("Archive(sink=...) wrote to the store"), ops


def _current_store(what: str) -> BaseStore:
    try:
        store = get_store()
    except RuntimeError:
        store = None
    if store is None:
        msg = f"{what} but the graph has no store: compile it with store=..."
        raise InvalidArgumentError(msg)
    return store


def store_archive(namespace: tuple[str, ...], count: int, text: str, n: int) -> Archived:
    """Return (store, [the write of one archive item]); the caller writes it."""
    try:
        store = get_store()
    except RuntimeError:
        store = None
    if store is None:
        msg = (
            "Archive(namespace=...) needs a store: compile the graph with store=... "
            "(e.g. InMemoryStore()) or use Archive(note_key=...) to archive to a note"
        )
        raise InvalidArgumentError(msg)
    return store, [PutOp(namespace, f"evicted-{count}", {"text": text, "messages": n})]
