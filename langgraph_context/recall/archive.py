"""Where restorable text is kept: handles, the thread's index in state, store or state.

Every cut tool result and every evicted message is kept under a handle fixed when
it is kept (`out-<hash>` of the call id and the text, `msg-<hash>` of the message),
so the notice the model read never changes. The thread's index (`recall`: handle ->
`RecallEntry`) is checkpointed state, so a handle is only ever found in the thread
that made it. The text itself sits in the graph's `BaseStore` under
`(*namespace, <user>, <thread>)` when one is compiled in and the run names its user
(`configurable["user_id"]` or the run context's `user_id`, as the constraint store
reads it), else in checkpointed state. Either way nothing is shared across threads
or users.

In state, a text first sits in its index entry. Once those texts pass `HOT_CHARS`,
the round that passes it moves them all to `recall_texts` (handle -> text) and leaves
their entries without a text. A checkpointer writes every channel that changed at
each step in full, so an index holding every text would rewrite all of them at every
tool round (a 200-entry archive is about 1 MB per round, kept per checkpoint);
`recall_texts` changes only at a move, about once per `HOT_CHARS` of new text. A
dropped entry's text stays in `recall_texts`, out of reach (a handle is read through
the index), until the next move clears it: at most about `HOT_CHARS` more.

The thread's archive is bounded (`RecallLimits`): past `max_items` or `max_bytes`
the oldest entries are dropped first, counted in `recall_dropped` and logged;
entries older than `ttl_seconds` are dropped too (and written with the store's TTL
where it supports one). Deleting the thread with the checkpointer deletes the
index and any text kept in state; `delete_recall` clears the thread's store items.
"""

from __future__ import annotations

import hashlib
import logging
import operator
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from langchain_core.messages import BaseMessage
from langgraph.store.base import BaseStore, PutOp
from typing_extensions import TypedDict

from langgraph_context.errors import InvalidArgumentError

__all__ = [
    "RecallEntry",
    "RecallLimits",
    "RecallStateMixin",
    "adelete_recall",
    "count_dropped",
    "delete_recall",
    "entry_text",
    "found_texts",
    "held_texts",
    "merge_recall",
    "merge_texts",
    "message_handle",
    "output_handle",
    "recall_namespace",
]

logger = logging.getLogger(__name__)

DEFAULT_RECALL_NAMESPACE: tuple[str, ...] = ("langgraph_context", "recall")
RECALL_KEY = "recall"
DROPPED_KEY = "recall_dropped"
TEXTS_KEY = "recall_texts"
HOT_CHARS = 64_000
DEFAULT_MAX_ITEMS = 200
DEFAULT_MAX_BYTES = 4_000_000
_USER_KEY = "user_id"
_NO_THREAD = "_"
_PAGE = 100

EntryKind = Literal["output", "message"]
_chars = operator.itemgetter("chars")


class RecallEntry(TypedDict, total=False):
    """One kept text: what it is, who wrote it, its size, when; its text until it moves."""

    kind: EntryKind
    source: str
    chars: int
    at: float
    text: str


def merge_recall(
    left: Mapping[str, RecallEntry | None] | None,
    right: Mapping[str, RecallEntry | None] | None,
) -> dict[str, RecallEntry]:
    """Merge two archive indexes by handle; a `None` entry on the right deletes one.

    A handle's first entry stays, except that the same entry without its `text`
    replaces it (the text moved to `recall_texts`).

    Args:
        left: The current index (or `None`).
        right: The update (or `None`).

    Returns:
        A new index, older handles first.

    Example:
        >>> merge_recall({"a": {"chars": 1}}, {"b": {"chars": 2}, "a": None})
        {'b': {'chars': 2}}
    """
    merged: dict[str, RecallEntry] = {k: v for k, v in (left or {}).items() if v is not None}
    for handle, entry in (right or {}).items():
        if entry is None:
            merged.pop(handle, None)
        elif handle not in merged or _moved(merged[handle], entry):
            merged[handle] = entry  # else the first write stays: a handle's text never changes
    return merged


def _moved(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether `new` is `old` without its text (which moved to `recall_texts`)."""
    if "text" in new or "text" not in old or len(new) != len(old) - 1:
        return False
    return all(old.get(k) == v for k, v in new.items())


def merge_texts(
    left: Mapping[str, str | None] | None, right: Mapping[str, str | None] | None
) -> dict[str, str]:
    """Merge moved texts by handle; a `None` text on the right deletes one.

    Example:
        >>> merge_texts({"a": "x"}, {"b": "y", "a": None})
        {'b': 'y'}
    """
    merged: dict[str, str] = {k: v for k, v in (left or {}).items() if v is not None}
    for handle, text in (right or {}).items():
        if text is None:
            merged.pop(handle, None)
        else:
            merged.setdefault(handle, text)
    return merged


def entry_text(
    handle: str, entry: Mapping[str, Any], texts: Mapping[str, Any] | None
) -> str | None:
    """The text of `handle` kept in state: in its entry, else in `recall_texts`."""
    text = entry.get("text")
    if text is None and isinstance(texts, Mapping):
        text = texts.get(handle)
    return text if isinstance(text, str) else None


def held_texts(state: Any) -> list[tuple[str, str | None]]:
    """Each handle of a state's index with its text kept in state (`None`: in the store)."""
    index = state.get(RECALL_KEY) if isinstance(state, Mapping) else None
    if not isinstance(index, Mapping):
        return []
    texts = state.get(TEXTS_KEY)
    return [(h, entry_text(h, e, texts)) for h, e in index.items()]


def found_texts(
    held: list[tuple[str, str | None]], stored: Mapping[str, Any]
) -> list[tuple[str, str]]:
    """`held`'s texts, those not in state read from `stored` (store key -> item value)."""
    out = []
    for handle, in_state in held:
        text = in_state
        if text is None:
            value = stored.get(handle)
            text = value.get("text") if isinstance(value, Mapping) else None
        if isinstance(text, str):
            out.append((handle, text))
    return out


def moved(index: Mapping[str, RecallEntry], texts: Mapping[str, Any] | None) -> dict[str, Any]:
    """The update moving the index's texts to `recall_texts` once they pass `HOT_CHARS`.

    Args:
        index: The index as it will stand (state and this round's entries).
        texts: `recall_texts` in state (its texts of dropped handles are cleared).

    Returns:
        `{recall: entries without text, recall_texts: their texts}`, or `{}`.
    """
    hot = {h: e for h, e in index.items() if e is not None and "text" in e}
    if sum(len(e["text"]) for e in hot.values()) <= HOT_CHARS:
        return {}
    entries = {h: {k: v for k, v in e.items() if k != "text"} for h, e in hot.items()}
    gone = {h: None for h in (texts or {}) if h not in index}
    return {RECALL_KEY: entries, TEXTS_KEY: {**gone, **{h: e["text"] for h, e in hot.items()}}}


def count_dropped(left: int | None, right: int | None) -> int:
    """Add up dropped-entry counts (`None` counts as 0)."""
    return (left or 0) + (right or 0)


class RecallStateMixin(TypedDict, total=False):
    """Adds `recall` (the archive's index), `recall_texts` (moved texts), `recall_dropped`."""

    recall: Annotated[dict[str, RecallEntry], merge_recall]
    recall_texts: Annotated[dict[str, str], merge_texts]
    recall_dropped: Annotated[int, count_dropped]


def _digest(*parts: str) -> str:
    data = "\0".join(parts).encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:12]


def output_handle(tool_call_id: str, text: str) -> str:
    """The handle of a tool result: `out-` and a hash of its call id and full text.

    Example:
        >>> output_handle("call_1", "log") == output_handle("call_1", "log")
        True
    """
    return f"out-{_digest(tool_call_id, text)}"


def message_handle(message: BaseMessage, text: str) -> str:
    """The handle of an evicted message: `msg-` and a hash of its id (or type) and text."""
    return f"msg-{_digest(message.id or message.type, text)}"


@dataclass(frozen=True, kw_only=True)
class RecallLimits:
    """How much one thread's archive keeps.

    Attributes:
        max_items: Most entries per thread (oldest dropped first).
        max_bytes: Most bytes of kept text per thread (oldest dropped first).
        ttl_seconds: Drop entries older than this (`None`: kept until dropped by size).

    Raises:
        ValueError: If a cap is not a positive int or `ttl_seconds` is not positive.

    Example:
        >>> RecallLimits(max_items=10).max_items
        10
    """

    max_items: int = DEFAULT_MAX_ITEMS
    max_bytes: int = DEFAULT_MAX_BYTES
    ttl_seconds: float | None = None

    def __post_init__(self) -> None:
        for name in ("max_items", "max_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                msg = f"{name} must be a positive int, got {value!r}"
                raise InvalidArgumentError(msg)
        ttl = self.ttl_seconds
        if ttl is not None and (
            isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not ttl > 0
        ):
            msg = f"ttl_seconds must be a positive number of seconds or None, got {ttl!r}"
            raise InvalidArgumentError(msg)

    def over(self, index: Mapping[str, RecallEntry], now: float) -> list[str]:
        """The handles to drop from `index`: expired ones, then the oldest over a cap."""
        if self.ttl_seconds is None and len(index) <= self.max_items:  # the usual call
            try:
                size = sum(map(_chars, index.values()))  # C loop: every entry has `chars`
            except (KeyError, TypeError):
                size = sum(int(e.get("chars", 0)) for e in index.values())
            if size <= self.max_bytes:
                return []
        entries = list(index.items())
        drop = []
        if self.ttl_seconds is not None:
            drop = [h for h, e in entries if now - float(e.get("at", now)) > self.ttl_seconds]
        expired = set(drop)
        kept = [(h, e) for h, e in entries if h not in expired]
        size = sum(int(e.get("chars", 0)) for _, e in kept)
        while kept and (len(kept) > self.max_items or size > self.max_bytes):
            handle, entry = kept.pop(0)
            size -= int(entry.get("chars", 0))
            drop.append(handle)
        return drop


def _label(value: str) -> str:
    # Store namespace labels may not contain '.': percent-escape it (and '%'), one-to-one.
    return value.replace("%", "%25").replace(".", "%2E")


def _run_user(config: Mapping[str, Any] | None, context: Any) -> str | None:
    value = ((config or {}).get("configurable") or {}).get(_USER_KEY)
    if value in (None, "") and context is not None:
        get = context.get if isinstance(context, Mapping) else None
        value = get(_USER_KEY) if get else getattr(context, _USER_KEY, None)
    return None if value in (None, "") else str(value)


def recall_namespace(
    config: Mapping[str, Any] | None,
    context: Any = None,
    *,
    namespace: tuple[str, ...] = DEFAULT_RECALL_NAMESPACE,
) -> tuple[str, ...] | None:
    """The store namespace of the run's archive, or `None` when the run names no user.

    Args:
        config: The run's config (`configurable["user_id"]`, `["thread_id"]`).
        context: The run's runtime context, read for `user_id` when the config has none.
        namespace: The prefix.

    Returns:
        `(*namespace, user, thread)` with dots escaped, or `None` (keep it in state).

    Example:
        >>> recall_namespace({"configurable": {"user_id": "ann", "thread_id": "t.1"}})
        ('langgraph_context', 'recall', 'ann', 't%2E1')
    """
    user = _run_user(config, context)
    if user is None:
        return None
    thread = ((config or {}).get("configurable") or {}).get("thread_id")
    return (*namespace, _label(user), _label(str(thread) if thread else _NO_THREAD))


def kept_entries(
    texts: list[tuple[str, EntryKind, str, str]],
    namespace: tuple[str, ...] | None,
    *,
    ttl_seconds: float | None = None,
    store: BaseStore | None = None,
) -> tuple[dict[str, RecallEntry], list[PutOp]]:
    """Index entries for `(handle, kind, source, text)`s, and the store writes of their text.

    With a `namespace` the text goes to the store (one `PutOp` per entry, with the
    store's TTL in minutes when `store` supports it); without, into the entry.
    """
    now = time.time()
    index: dict[str, RecallEntry] = {}
    ops: list[PutOp] = []
    ttl = None
    if ttl_seconds is not None and store is not None and store.supports_ttl:
        ttl = ttl_seconds / 60.0
    for handle, kind, source, text in texts:
        entry = RecallEntry(kind=kind, source=source, chars=len(text), at=now)
        if namespace is None:
            entry["text"] = text
        else:
            value = {"kind": kind, "source": source, "text": text}
            ops.append(PutOp(namespace, handle, value, index=False, ttl=ttl))
        index[handle] = entry
    return index, ops


def dropped(
    index: Mapping[str, RecallEntry],
    limits: RecallLimits,
    namespace: tuple[str, ...] | None,
) -> tuple[dict[str, Any], list[PutOp]]:
    """The state update and store deletes that bring `index` within `limits`."""
    handles = limits.over(index, time.time())
    if not handles:
        return {}, []
    logger.info("recall: dropped %d oldest entries (%s)", len(handles), ", ".join(handles))
    update: dict[str, Any] = {RECALL_KEY: dict.fromkeys(handles), DROPPED_KEY: len(handles)}
    ops = []
    if namespace is not None:
        ops = [PutOp(namespace, h, None) for h in handles if "text" not in index[h]]
    return update, ops


def delete_recall(
    store: BaseStore,
    *,
    user_id: str,
    thread_id: str,
    namespace: tuple[str, ...] = DEFAULT_RECALL_NAMESPACE,
) -> int:
    """Delete a thread's archived texts from the store (call it beside `delete_thread`).

    Args:
        store: The graph's store.
        user_id: The thread's user.
        thread_id: The thread.
        namespace: The prefix the middleware was given.

    Returns:
        How many items were deleted.

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> delete_recall(InMemoryStore(), user_id="ann", thread_id="t1")
        0
    """
    where = recall_namespace({"configurable": {"user_id": user_id, "thread_id": thread_id}})
    where = (*namespace, *(where or ())[len(DEFAULT_RECALL_NAMESPACE) :])
    count = 0
    while items := store.search(where, limit=_PAGE):
        store.batch([PutOp(where, item.key, None) for item in items])
        count += len(items)
    return count


async def adelete_recall(
    store: BaseStore,
    *,
    user_id: str,
    thread_id: str,
    namespace: tuple[str, ...] = DEFAULT_RECALL_NAMESPACE,
) -> int:
    """Async twin of `delete_recall`."""
    where = recall_namespace({"configurable": {"user_id": user_id, "thread_id": thread_id}})
    where = (*namespace, *(where or ())[len(DEFAULT_RECALL_NAMESPACE) :])
    count = 0
    while items := await store.asearch(where, limit=_PAGE):
        await store.abatch([PutOp(where, item.key, None) for item in items])
        count += len(items)
    return count
