"""Read graph state the same way whether it is a dict, a TypedDict or an object."""

from __future__ import annotations

from typing import Any


def get_state_value(state: Any, key: str, default: Any = None) -> Any:
    """Return `state[key]` for mappings or `getattr(state, key)` for objects, else `default`."""
    if isinstance(state, dict):
        value = state.get(key, default)
    else:
        value = getattr(state, key, default)
    return default if value is None else value
