"""`SizedMemo`: a memo bounded by the size of what it holds, least recently used out first.

The package memoizes work keyed by content (token counts, sanitized text, BM25 terms,
rendered packet costs). Each memo is bounded by a weight (bytes, by default one per
entry), and a full memo evicts its least recently used entries one by one: a working
set that fits keeps hitting, instead of the whole memo being cleared and every entry
recomputed. Keys are content, never message objects; the process-wide memos key a text
by its hash and length (`memo_by_text`), so they keep no text alive: a server's memory
does not grow with the threads it has served, and a finished thread's texts are freed
with it. The process-wide memos and their bounds:

* `tokens.TiktokenCounter` (the shared default counter): text and message counts,
  1 MB each;
* `scoring`: BM25 terms of texts, 2 MB; stems of English words, 8,192 words;
* `compaction._facts`: ids and facts of message texts, 0.5 MB each; the
  `is_identifier` verdicts of 2,048 words (of at most 48 characters);
* `context._sizing.PacketSizer` (one per builder): rendered packet costs, 2 MB;
* `tokens._cut`: token counts of the stretches of the tool-output cut's notices (at
  most 64 bytes each, kept as bytes: fixed wording, numbers as zeros), 0.25 MB per
  tiktoken encoding.
* `toolkit`: the pydantic argument schema inferred for each tool function signature
  (`SCHEMAS_KEPT`, 256 schemas), and `tokens.tools`: each tool's compact JSON schema
  (`TOOL_JSON_KEPT`, 256 texts): both keyed by code and signature, not by thread, so
  an agent built again (a graph factory per run) reuses them.

`PrefixMemo` is the one memo keyed by objects rather than content: it remembers
histories a check passed, by weak references to their messages (it keeps none alive),
so the next request over the same messages plus what was appended checks only the
tail. `messages` holds one, of the histories of at most 64 first messages (two
histories each: a stored one and the copies sent for it); so does each
`TiktokenCounter` (the running counts of its latest histories, which
`count_messages`, compaction's no-op check and the context's fit share:
`tokens._identity`); so do `without_stamps` and `provider_ready_history`, and each
compaction node (the histories its no-op check found clean, `compaction._quiet`).

`RecentMemo` keeps a few values by keys compared by equality (which tests identity
first): each `ContextBuilder` holds two, of its latest builds and of its fixed-section
counts (`context._reuse`), so the system head a model call rebuilds from unchanged
state is read back. At most 4 entries each, a build only when its packets hold at
most 200,000 characters: about 1 MB per builder at most, whatever it has served.
Each cache-layout context node holds two more: its latest two heads built over no
messages, keyed by copies of the pinned state they read (`context._reuse.HeadBuilds`),
and its latest system message; each `ContextMiddleware` its latest system message.
Their size is that of one thread's system head and pinned state.
"""

from __future__ import annotations

import functools
import operator
import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, Generic, TypeVar

from langgraph_context.errors import InvalidArgumentError

__all__ = [
    "ENTRY_BYTES",
    "PrefixMemo",
    "RecentMemo",
    "SizedMemo",
    "memo_by_text",
    "value_bytes",
]

ENTRY_BYTES = 300
"""What one entry keyed by `(hash, length)` costs besides its value: key, slot, size."""

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class SizedMemo(Generic[K, V]):
    """A mapping of at most `max_size` total weight, evicting the least recently used.

    Reads take no lock (a lookup and a move to the end are single operations on an
    `OrderedDict`); writes take one, so threads sharing a counter keep the total exact.

    Args:
        max_size: Upper bound on the summed weights of the entries.

    Raises:
        ValueError: If `max_size` is below 1.

    Example:
        >>> memo: SizedMemo[str, int] = SizedMemo(10)
        >>> memo.put("abc", 3, size=6)
        >>> memo.put("de", 2, size=6)  # evicts "abc"
        >>> memo.get("abc"), memo.get("de"), memo.size
        (None, 2, 6)
    """

    __slots__ = ("_data", "_lock", "max_size", "size")

    def __init__(self, max_size: int) -> None:
        if max_size < 1:
            msg = f"max_size must be >= 1, got {max_size}"
            raise InvalidArgumentError(msg)
        self.max_size = max_size
        self.size = 0
        self._data: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """The number of entries."""
        return len(self._data)

    def get(self, key: K) -> V | None:
        """Return the value for `key` (marking it recently used), or `None`."""
        entry = self._data.get(key)
        if entry is None:
            return None
        try:  # noqa: SIM105 - contextlib.suppress costs a context manager per hit
            self._data.move_to_end(key)
        except KeyError:  # evicted by another thread in between: still a valid answer
            pass
        return entry[0]

    def put(self, key: K, value: V, *, size: int = 1) -> None:
        """Remember `value` for `key`, evicting the least recently used to make room.

        An entry heavier than `max_size` alone is not kept.
        """
        if size > self.max_size:
            return
        with self._lock:
            self._store(key, value, size)

    def put_many(self, entries: Iterable[tuple[K, V, int]]) -> None:
        """`put` of each `(key, value, size)` in order, under one lock."""
        with self._lock:
            for key, value, size in entries:
                if size <= self.max_size:
                    self._store(key, value, size)

    def _store(self, key: K, value: V, size: int) -> None:
        """One write, the lock held: replace `key`'s entry, then evict down to the bound."""
        old = self._data.pop(key, None)
        if old is not None:
            self.size -= old[1]
        self._data[key] = (value, size)
        self.size += size
        while self.size > self.max_size:
            _, (_, dropped) = self._data.popitem(last=False)
            self.size -= dropped

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._data.clear()
            self.size = 0


class RecentMemo(Generic[V]):
    """The latest `entries` values, by keys compared with `==` (no hashing), latest first.

    For keys that are costly or impossible to hash (dataclasses holding dicts), looked
    up a few times per call: a lookup compares the key with at most `entries` keys,
    and Python's `==` on tuples tests each item's identity before its value. Writes
    replace the whole tuple of entries, so readers on other threads never see a torn one.

    Args:
        entries: How many values are kept (the least recently stored goes first).

    Raises:
        ValueError: If `entries` is below 1.

    Example:
        >>> memo: RecentMemo[int] = RecentMemo(2)
        >>> memo.put(("a", {"x": 1}), 1)
        >>> memo.get(("a", {"x": 1})), memo.get(("b", {}))
        (1, None)
    """

    __slots__ = ("_entries", "entries")

    def __init__(self, entries: int) -> None:
        if entries < 1:
            msg = f"entries must be >= 1, got {entries}"
            raise InvalidArgumentError(msg)
        self.entries = entries
        self._entries: tuple[tuple[Any, V], ...] = ()

    def __len__(self) -> int:
        """The number of values kept."""
        return len(self._entries)

    def get(self, key: Any) -> V | None:
        """The value stored under a key equal to `key`, or `None`."""
        for known, value in self._entries:
            if known == key:
                return value
        return None

    def put(self, key: Any, value: V) -> None:
        """Store `value` under `key` (replacing an equal key's), dropping the oldest."""
        kept = tuple((k, v) for k, v in self._entries if k != key)
        self._entries = ((key, value), *kept)[: self.entries]

    def clear(self) -> None:
        """Forget every value."""
        self._entries = ()


def value_bytes(value: Any) -> int:
    """About how many bytes `value` holds: strings, numbers and nested tuples/lists."""
    if isinstance(value, (tuple, list)):
        if set(map(type, value)) <= _FLAT:  # strings only (most memoized facts): in C
            return sys.getsizeof(value) + sum(map(sys.getsizeof, value))
        return sys.getsizeof(value) + sum(value_bytes(item) for item in value)
    return sys.getsizeof(value)


_FLAT = frozenset({str})


def memo_by_text(max_bytes: int) -> Callable[[Callable[[str], V]], Callable[[str], V]]:
    """Memoize a function of one text in a `SizedMemo` keyed by its hash and length.

    The text itself is not kept (an `lru_cache` keyed by texts keeps every one alive);
    each entry weighs `ENTRY_BYTES` plus its value (`value_bytes`), and the memo holds at
    most `max_bytes`. A wrong hit needs two texts of one length sharing a 64-bit hash.

    Args:
        max_bytes: Bound of the memo, in bytes.

    Returns:
        A decorator.

    Example:
        >>> @memo_by_text(10_000)
        ... def shout(text: str) -> str:
        ...     return text.upper()
        >>> shout("hi"), shout("hi")
        ('HI', 'HI')
    """

    def decorate(function: Callable[[str], V]) -> Callable[[str], V]:
        memo: SizedMemo[tuple[int, int], V] = SizedMemo(max_bytes)

        @functools.wraps(function)
        def memoized(text: str) -> V:
            key = (hash(text), len(text))
            found = memo.get(key)
            if found is None:
                found = function(text)
                memo.put(key, found, size=ENTRY_BYTES + value_bytes(found))
            return found

        memoized.memo = memo  # type: ignore[attr-defined]
        return memoized

    return decorate


class PrefixMemo(Generic[V]):
    """Sequences of objects a check passed, remembered by identity, weakly.

    A sequence is found by its first object; `matched` returns how many leading
    objects of a new sequence are the very objects of the remembered one (and the
    data remembered with it), so a caller re-checks only the rest. A few sequences
    may share a first object (`variants`): a model call passes both the stored
    history and the copies sent for it, which part after a shared first message (a
    compaction summary is copied for no one). A sequence that extends or edits a
    remembered one (it shares more than the first object) replaces it.
    The objects are held by weak references: a remembered sequence keeps nothing
    alive, and the sequences whose first object is freed are dropped. The objects
    must not be changed in place after the check (LangGraph's message reducer
    replaces a message, it never edits one).

    Args:
        max_entries: How many first objects are kept (least recently used out first).
        variants: How many sequences one first object keeps (least recently used out).

    Raises:
        ValueError: If `max_entries` or `variants` is below 1.

    Example:
        >>> class Item:
        ...     pass
        >>> a, b, c = Item(), Item(), Item()
        >>> memo: PrefixMemo[str] = PrefixMemo(4)
        >>> memo.remember([a, b], "checked")
        >>> memo.matched([a, b, c]), memo.matched([a, c])[0], memo.matched([c])[0]
        ((2, 'checked'), 1, 0)
    """

    __slots__ = ("_data", "_lock", "max_entries", "variants")

    def __init__(self, max_entries: int, *, variants: int = 2) -> None:
        for name, value in (("max_entries", max_entries), ("variants", variants)):
            if value < 1:
                msg = f"{name} must be >= 1, got {value}"
                raise InvalidArgumentError(msg)
        self.max_entries = max_entries
        self.variants = variants
        self._data: OrderedDict[int, list[tuple[list[weakref.ref[Any]], V]]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """The number of sequences remembered."""
        return sum(len(entry) for entry in list(self._data.values()))

    def matched(self, items: Sequence[Any]) -> tuple[int, V | None]:
        """`(n, data)`: `items[:n]` are the objects of the sequence remembered with `data`.

        The longest match among the sequences starting with `items[0]` (the latest
        on a tie); `(0, None)` when none does.
        """
        if not items:
            return 0, None
        entry = self._data.get(id(items[0]))
        if not entry:
            return 0, None
        best, found = 0, None
        for refs, data in reversed(list(entry)):  # the latest first: it wins a tie
            n = _shared(refs, items)
            if n > best:
                best, found = n, data
        return best, found

    def remember(
        self, items: Sequence[Any], data: V, *, known: tuple[int, V | None] | None = None
    ) -> None:
        """Remember `items` (which passed the check) with `data`.

        It replaces the sequence with its first object that it shares most with, when
        that is more than the first object; else it joins them (the oldest goes past
        `variants`). Objects that cannot be weakly referenced are not remembered.
        `known`: what `matched` answered for these items (unchanged since), so the
        sequences are not walked again to find the one they share most with.
        """
        if not items:
            return
        key = id(items[0])
        with self._lock:
            entry = self._data.pop(key, None)
            kept: list[weakref.ref[Any]] = []
            if entry:
                shared = _known_shares(entry, known) or [_shared(old, items) for old, _ in entry]
                k = max(range(len(entry)), key=shared.__getitem__)
                if shared[k] > 1:  # the history it extends: its references are reused
                    kept = entry.pop(k)[0][: shared[k]]
                else:
                    kept = entry[0][0][:1]  # every sequence of the entry holds this one
            try:
                if not kept:
                    # Dropped with its first object: a finished thread leaves no entry.
                    kept = [weakref.ref(items[0], functools.partial(self._forget, key))]
                refs = [*kept, *map(weakref.ref, items[len(kept) :])]
            except TypeError:
                if entry:
                    self._data[key] = entry
                return
            entry = entry or []
            entry.append((refs, data))
            del entry[: -self.variants]
            self._data[key] = entry
            while len(self._data) > self.max_entries:
                self._data.popitem(last=False)

    def _forget(self, key: int, ref: weakref.ref[Any]) -> None:
        """Drop the entry whose first object `ref` was freed (unless since replaced).

        No lock: this runs when the object is freed, which may be inside `remember`
        on this very thread. A race at worst drops a fresh entry (a miss, not an error).
        """
        entry = self._data.get(key)
        if entry and entry[0][0][0] is ref:
            self._data.pop(key, None)

    def clear(self) -> None:
        """Forget every sequence."""
        with self._lock:
            self._data.clear()


def _known_shares(entry: list[tuple[Any, Any]], known: tuple[int, Any] | None) -> list[int] | None:
    """What each sequence of `entry` shares, from a `matched` answer (`None`: walk them).

    The sequence remembered with the answer's data shares what it found; the others
    share at most that (it was the longest), and `remember` keeps the longest. Data
    no longer in the entry (replaced meanwhile) or an answer of no match: `None`.
    """
    if known is None or known[1] is None or known[0] < 1:
        return None
    n, data = known
    mine = [found is data for _, found in entry]
    return [n if m else 1 for m in mine] if mine.count(True) == 1 else None


def _shared(refs: list[weakref.ref[Any]], items: Sequence[Any]) -> int:
    """How many leading `items` are the objects `refs` point at (the shorter decides)."""
    same = list(map(operator.is_, map(_deref, refs), items))  # in C: no Python per item
    return same.index(False) if False in same else len(same)


_deref = weakref.ref.__call__
