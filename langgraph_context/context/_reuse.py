"""A builder's latest builds, read back when the same inputs come again (private to `context`).

A context node rebuilds its system head on every model call, from state that rarely
changes (the instructions, notes, pinned items, the turns before the window). A
build whose every stage is the builder's own (no query source, embeddings,
summarizer, reranker, renderer or detector of the caller's) is a function of its
query, its gathered packets, its budget and the builder's settings: those are the
key, compared by equality (`_memo.RecentMemo`, identity first), so a build over
equal packets returns the result the first one made. Sources and state sources are
still read every time; only the pipeline after the gather is skipped.
"""

from __future__ import annotations

import copy
import dataclasses
import time
from typing import Any

from langgraph_context._memo import RecentMemo
from langgraph_context.context.gather import DEFAULT_STATE_SOURCES, GatherResult
from langgraph_context.context.result import ContextResult
from langgraph_context.state import get_state_value

__all__ = ["REUSE_CHARS", "REUSE_ENTRIES", "HeadBuilds", "Reuse"]

REUSE_ENTRIES = 4
"""Builds (and fixed-section counts) each builder keeps."""
REUSE_CHARS = 200_000
"""A build is kept only when its packets hold at most this many characters."""


class Reuse:
    """One builder's latest builds and fixed-section counts.

    Each lookup reads the settings of the builder it is given (a copy of a builder
    shares its `Reuse`; a changed setting is another key).
    """

    __slots__ = ("_builds", "_fixed")

    def __init__(self) -> None:
        self._builds: RecentMemo[ContextResult] = RecentMemo(REUSE_ENTRIES)
        self._fixed: RecentMemo[int] = RecentMemo(REUSE_ENTRIES)

    def _settings(self, builder: Any) -> tuple[Any, ...] | None:
        """What a build depends on besides its inputs (`None`: a caller's stage runs)."""
        own = (
            builder.embeddings,
            builder.summarizer,
            builder.reranker,
            builder.wrap_untrusted,
            builder.detector,
        )
        if builder.sources or any(stage is not None for stage in own):
            return None
        return (
            builder.config,
            builder.token_counter,
            builder.hardening,
            builder.protect_untrusted,
            builder.sanitize,
        )

    def build_key(
        self, builder: Any, query: str, gathered: GatherResult, max_tokens: int | None
    ) -> tuple[Any, ...] | None:
        """The key of a build of `builder` (`None`: not kept, a caller's stage runs)."""
        settings = self._settings(builder)
        if settings is None or sum(len(p.content) for p in gathered.packets) > REUSE_CHARS:
            return None
        return (settings, query, max_tokens, gathered)

    def build(self, key: tuple[Any, ...] | None, started: float) -> ContextResult | None:
        """The build kept under `key`, timed as this build (`None`: none)."""
        found = self._builds.get(key) if key is not None else None
        if found is None:
            return None
        return dataclasses.replace(found, elapsed_ms=(time.perf_counter() - started) * 1000)

    def keep(self, key: tuple[Any, ...] | None, result: ContextResult) -> None:
        """Keep `result` under `key` (nothing when `key` is `None`)."""
        if key is not None:
            self._builds.put(key, result)

    def fixed_key(
        self, builder: Any, query: str, system_instructions: str | None
    ) -> tuple[Any, ...] | None:
        """The key of `builder.fixed_tokens(query, system_instructions)`."""
        settings = self._settings(builder)
        return None if settings is None else (settings, query, system_instructions)

    def fixed(self, key: tuple[Any, ...] | None) -> int | None:
        """The fixed-section count kept under `key`, or `None`."""
        return self._fixed.get(key) if key is not None else None

    def keep_fixed(self, key: tuple[Any, ...] | None, tokens: int) -> None:
        """Keep a fixed-section count under `key` (nothing when `key` is `None`)."""
        if key is not None:
            self._fixed.put(key, tokens)


_READ_STATE = ("note", "constraints", "hot_issues")
"""What the default state sources read besides the messages and the plan."""


class HeadBuilds:
    """A cache node's latest system heads over no messages, by the state they read.

    While the whole history fits, a cache node builds its system head from its
    instructions and the pinned state alone (no message goes into it), on every model
    call; the state rarely changes. With the default state sources and no stage of
    the caller's (`Reuse`), such a build is a function of the builder's settings, the
    instructions, the budget and the `note`, `constraints` and `hot_issues` values:
    those are the key. The values are kept as deep copies (a state value edited in
    place is another key) and compared by equality, so the gather, the key of
    `Reuse` over the gathered packets and the pipeline are all skipped. At most two
    builds, no message in either: bounded by the pinned state of one thread.
    """

    __slots__ = ("_builds",)

    def __init__(self) -> None:
        self._builds: RecentMemo[ContextResult] = RecentMemo(2)

    def key(self, builder: Any, state: Any, instructions: str | None, head: int) -> Any:
        """The key of a build over no messages (`None`: it is not kept)."""
        if builder.state_sources != DEFAULT_STATE_SOURCES:
            return None
        settings = builder._reuse._settings(builder)
        if settings is None:
            return None
        values = tuple(get_state_value(state, name, None) for name in _READ_STATE)
        return (settings, instructions, head, values)

    def get(self, key: Any, builder: Any) -> ContextResult | None:
        """The build kept under `key`, its findings and debug line logged as a build's."""
        found = self._builds.get(key) if key is not None else None
        if found is not None:
            builder._replayed(found)
        return found

    def keep(self, key: Any, result: ContextResult) -> None:
        """Keep `result` under `key`, its state values copied (nothing when uncopyable)."""
        if key is None:
            return
        settings, instructions, head, values = key
        try:
            copied = copy.deepcopy(values)
        except Exception:  # a state value that cannot be copied: not kept
            return
        self._builds.put((settings, instructions, head, copied), result)
