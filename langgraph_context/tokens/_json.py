"""JSON text of any value LangChain lets into a message, without recursion (private)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, NamedTuple

from langgraph_context.errors import InvalidTypeError

# --- iterative JSON: no recursion, so any depth, cycles and non-JSON values are safe ---

_BINARY_KEYS = frozenset({"data", "base64", "file_data"})
_LEAF_TYPES = (str, int, float, bool, type(None))


class _Open(NamedTuple):
    kind: str  # "dict" or "list"
    size: int


_CLOSE = ("close",)
_CYCLE = ("cycle",)


def _json_key(key: Any) -> str:
    """A dict key as `json.dumps` writes it (other keys by `str`, never failing)."""
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, (bool, int, float)):
        return json.dumps(key)
    return _text_of_object(key)


def _text_of_object(value: Any) -> str:
    """A stable text for a value JSON cannot hold (no memory addresses)."""
    cls = type(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(value)} bytes>"
    default: Any = object.__str__, object.__repr__
    if (cls.__str__, cls.__repr__) == default:
        return f"<{cls.__name__}>"
    try:
        return str(value)
    except Exception:  # a broken __str__ must not break counting
        return f"<{cls.__name__}>"


def _events(value: Any, *, sort_keys: bool) -> Iterator[Any]:
    """Walk a JSON-like value depth-first without recursion, yielding a flat stream.

    `_Open(kind, size)` starts a container (a dict's keys and values alternate after
    it), `_CLOSE` ends it, `_CYCLE` stands for a container inside itself, and any
    other item is a leaf: `(type, value)` for JSON scalars, else the stable text.
    Tuples count as lists, sets as lists in a stable order.
    """
    stack: list[Any] = [value]
    open_ids: list[int] = []  # the containers being walked, innermost last
    open_set: set[int] = set()
    while stack:
        item = stack.pop()
        if item is _CLOSE:
            open_set.discard(open_ids.pop())
            yield _CLOSE
            continue
        if isinstance(item, _LEAF_TYPES):
            yield (type(item), item)
            continue
        if isinstance(item, (dict, list, tuple, set, frozenset)):
            if id(item) in open_set:
                yield _CYCLE
                continue
            if isinstance(item, dict):
                pairs = [(_json_key(k), v) for k, v in item.items()]
                if sort_keys:
                    pairs.sort(key=lambda kv: kv[0])
                children: list[Any] = [x for kv in pairs for x in kv]
                yield _Open("dict", len(pairs))
            else:
                children = (
                    sorted(item, key=_set_order)
                    if isinstance(item, (set, frozenset))
                    else list(item)
                )
                yield _Open("list", len(children))
            open_ids.append(id(item))
            open_set.add(id(item))
            stack.append(_CLOSE)
            stack.extend(reversed(children))
            continue
        yield (str, _text_of_object(item))


def _set_order(item: Any) -> str:
    return type(item).__name__ + ":" + (item if isinstance(item, str) else _text_of_object(item))


def _fingerprint(value: Any) -> tuple[Any, ...]:
    """A hashable, order-preserving snapshot of a JSON-like value (for memo keys)."""
    return tuple(_events(value, sort_keys=False))


def _to_json(value: Any, *, sort_keys: bool = False, strip_binary: bool = False) -> str:
    """`json.dumps(value, ensure_ascii=False)` for any value, without recursion.

    JSON values give exactly `json.dumps`'s text; a cycle is written `"<cycle>"`, and
    values JSON cannot hold are written as stable strings (see `_text_of_object`).
    With `strip_binary`, binary payloads (`data`, `base64`, `file_data` keys at any
    depth, and `data:` URLs) are replaced by a short marker.
    """
    if not strip_binary:
        try:
            return json.dumps(value, ensure_ascii=False, sort_keys=sort_keys, default=_refuse)
        except (TypeError, ValueError, RecursionError):
            pass  # the walk below handles what json.dumps cannot
    out: list[str] = []
    # one frame per open container: [kind, items written, key of the pending value]
    frames: list[list[Any]] = []
    for event in _events(value, sort_keys=sort_keys):
        frame = frames[-1] if frames else None
        if event is _CLOSE:
            kind = frames.pop()[0]
            out.append("}" if kind == "dict" else "]")
            continue
        is_key = frame is not None and frame[0] == "dict" and frame[1] % 2 == 0
        if frame is not None:
            if frame[1] and not is_key and frame[0] == "dict":
                out.append(": ")
            elif frame[1]:
                out.append(", ")
            frame[1] += 1
        if is_key:
            frame[2] = event[1]  # type: ignore[index]
            out.append(json.dumps(event[1], ensure_ascii=False))
        elif isinstance(event, _Open):
            out.append("{" if event.kind == "dict" else "[")
            frames.append([event.kind, 0, ""])
        elif event is _CYCLE:
            out.append('"<cycle>"')
        else:
            leaf = event[1]
            key = frame[2] if frame is not None and frame[0] == "dict" else ""
            if (
                strip_binary
                and isinstance(leaf, str)
                and (key in _BINARY_KEYS or leaf.startswith("data:"))
            ):
                leaf = f"<{len(leaf)} chars>"
            out.append(json.dumps(leaf, ensure_ascii=False))
    return "".join(out)


def _refuse(value: Any) -> Any:
    """`json.dumps` default: refuse, so the caller falls back to the iterative walk."""
    msg = f"not JSON: {type(value).__name__}"
    raise InvalidTypeError(msg)
