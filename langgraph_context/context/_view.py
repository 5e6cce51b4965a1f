"""The graph state as the context builder's state sources see it (private to `context`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from langchain_core.messages import BaseMessage

from langgraph_context.state import get_state_value

__all__ = ["StateView"]


class StateView(Mapping[str, Any]):
    """Graph state as the builder's state sources see it: `messages` = older history.

    Readable both ways a state source may read state: `view["plan"]`, `view.get(...)`
    and `view.plan` (a dict state, a TypedDict or a pydantic/dataclass state).
    """

    def __init__(
        self,
        state: Any,
        older: list[BaseMessage],
        messages_key: str,
        hidden: frozenset[str] = frozenset(),
    ) -> None:
        self._state = state
        self._messages_key = messages_key
        self._hidden = hidden
        self.messages = older

    def _keys(self) -> list[str]:
        if isinstance(self._state, Mapping):
            keys = [str(k) for k in self._state]
        elif hasattr(self._state, "model_fields"):
            keys = list(type(self._state).model_fields)
        else:
            keys = [k for k in getattr(self._state, "__dict__", {}) if not k.startswith("_")]
        keys = [k for k in keys if k not in self._hidden]
        return list(dict.fromkeys([*keys, "messages", self._messages_key]))

    def __getitem__(self, key: str) -> Any:
        if key in ("messages", self._messages_key):
            return self.messages
        if key not in self._keys():
            raise KeyError(key)
        return get_state_value(self._state, key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self._hidden:
            return None
        return get_state_value(self._state, name)
