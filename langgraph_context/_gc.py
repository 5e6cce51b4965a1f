"""`paused_gc`: hold off the cyclic garbage collector over one CPU-bound pass.

A context build over many packets allocates tens of thousands of short-lived
containers (scored packets, drops, term lists) that stay alive until the build
returns. Each batch that survives the young generations counts toward a full
collection, and a full collection walks every tracked object in the process, the
memos and the caller's packets included: a build of 30k packets paid two full
collections (half its time), a build of 3k none, so the cost curve had a step. The
pass frees its temporaries by reference counting; pausing the collector for its
duration leaves nothing uncollected, only deferred until it ends.
"""

from __future__ import annotations

import gc
import threading
from types import TracebackType

__all__ = ["paused_gc"]

_LOCK = threading.Lock()
_state = {"depth": 0, "resume": False}


class _Paused:
    """The pause itself: a plain class, not a generator (entered several times a call)."""

    __slots__ = ()

    def __enter__(self) -> None:
        with _LOCK:
            if _state["depth"] == 0:
                _state["resume"] = gc.isenabled()
                gc.disable()
            _state["depth"] += 1

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        with _LOCK:
            _state["depth"] -= 1
            if _state["depth"] == 0 and _state["resume"]:
                gc.enable()


_PAUSED = _Paused()


def paused_gc() -> _Paused:
    """Disable the cyclic collector inside the block, restoring it on the way out.

    Nested and concurrent blocks share one pause: the collector comes back when the
    last block exits, and only if it was enabled when the first one entered.

    Example:
        >>> import gc
        >>> with paused_gc():
        ...     gc.isenabled()
        False
        >>> gc.isenabled()
        True
    """
    return _PAUSED
