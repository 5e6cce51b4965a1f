"""`langgraph-context report`: a saved thread's session report, its cache cost at `--prices`.

The chat command saves its threads in SQLite; this command reads one thread's last
checkpoint (no model is needed) and prints `agents.session_report` for it: model
calls, compactions, and the provider's measured prompt cache hit rate, costed at a
price table when `--prices` is given. `parse_prices` reads that option for `chat`
too: a JSON file (`{"input": 2, "cached_input": 0.5, "output": 8}`; `FILE#NAME` picks
a table from a file of several, such as `benchmarks/bill/prices.json`) or inline pairs
(`input=2,cached_input=0.5,output=8`), USD per million tokens.
"""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path
from typing import Any, cast

from langgraph.checkpoint.sqlite import SqliteSaver

from langgraph_context.agents import session_report
from langgraph_context.cli._errors import CLIError
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.providers import Prices

__all__ = ["parse_prices", "run_report"]

_REQUIRED = ("input", "cached_input", "output")
_KNOWN = (*_REQUIRED, "cache_write")


def _price(key: str, value: Any) -> float:
    """One price: a finite number >= 0 (a JSON number, or inline text)."""
    number: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if number is None or not math.isfinite(number) or number < 0:
        msg = f"price {key!r} must be a number >= 0 (USD per 1M tokens), got {value!r}"
        raise InvalidArgumentError(msg)
    return number


def _pairs(text: str) -> dict[str, str]:
    """`input=2,cached_input=0.5` as a dict; a pair without `=` or a repeated key is refused."""
    found: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or not key:
            msg = f"expected key=number pairs separated by commas, got {part.strip()!r}"
            raise InvalidArgumentError(msg)
        if key in found:
            msg = f"price {key!r} is given twice"
            raise InvalidArgumentError(msg)
        found[key] = value
    return found


def _json_file(text: str) -> dict[str, Any]:
    """The price object in the JSON file `text` names (`PATH` or `PATH#TABLE`).

    A `#TABLE` suffix picks `tables[TABLE]` (or a top-level `TABLE`), as in the bill
    benchmark's `prices.json`; a table's `label` is its name, not a price.
    """
    name, table = text, None
    if not Path(text).expanduser().is_file() and "#" in text:
        name, _, table = text.rpartition("#")
    path = Path(name).expanduser()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        msg = f"cannot read the price file {name!r} ({exc.strerror or exc}); or pass key=number"
        raise InvalidArgumentError(msg) from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        msg = f"the price file {name!r} is not JSON: {exc}"
        raise InvalidArgumentError(msg) from exc
    if table is not None and isinstance(data, dict):
        nested = data.get("tables")
        tables: dict[str, Any] = nested if isinstance(nested, dict) else data
        if table not in tables:
            known = ", ".join(sorted(k for k, v in tables.items() if isinstance(v, dict)))
            msg = f"no price table {table!r} in {name!r} (tables: {known or 'none'})"
            raise InvalidArgumentError(msg)
        data = tables[table]
    if not isinstance(data, dict):
        msg = f"the price file {text!r} must hold a JSON object, got {type(data).__name__}"
        raise InvalidArgumentError(msg)
    return {k: v for k, v in data.items() if k != "label"}


def parse_prices(text: str) -> Prices:
    """Read a price table: a JSON file's path, or inline `key=number` pairs.

    Keys are `input`, `cached_input`, `output` (required) and `cache_write` (default:
    the `input` price, as where writing to the cache is free); USD per million tokens.

    Args:
        text: `input=2,cached_input=0.5,output=8`, or the path of a JSON file holding
            such an object; `PATH#TABLE` picks one of the file's `tables`.

    Returns:
        The `Prices` table.

    Raises:
        InvalidArgumentError: If the file is unreadable or not a JSON object, a pair
            is malformed, a key is unknown, missing or repeated, or a price is not a
            number >= 0.

    Example:
        >>> parse_prices("input=2, cached_input=0.5, output=8")["cache_write"]
        2.0
    """
    if not isinstance(text, str) or not text.strip():
        msg = f"expected a JSON file or key=number pairs, got {text!r}"
        raise InvalidArgumentError(msg)
    raw: dict[str, Any] = _pairs(text) if "=" in text else _json_file(text.strip())
    unknown = sorted(set(raw) - set(_KNOWN))
    if unknown:
        msg = f"unknown price {unknown[0]!r} (known: {', '.join(_KNOWN)})"
        raise InvalidArgumentError(msg)
    missing = [key for key in _REQUIRED if key not in raw]
    if missing:
        msg = f"missing price {missing[0]!r} (required: {', '.join(_REQUIRED)})"
        raise InvalidArgumentError(msg)
    table = {key: _price(key, raw[key]) for key in raw}
    table.setdefault("cache_write", table["input"])
    return cast("Prices", table)


def _thread_state(db: Path, thread: str) -> dict[str, Any]:
    """The values of `thread`'s last checkpoint in the SQLite file `db`."""
    if not db.is_file():
        msg = f"--db {str(db)!r} is not a file: chat saves its threads there"
        raise CLIError(msg)
    config: Any = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    try:
        with SqliteSaver.from_conn_string(str(db)) as saver:
            found = saver.get_tuple(config)
    except sqlite3.Error as exc:
        msg = f"--db {str(db)!r} holds no chat threads: {exc}"
        raise CLIError(msg) from exc
    if found is None:
        msg = f"no thread {thread!r} in {str(db)!r}"
        raise CLIError(msg)
    return dict(found.checkpoint.get("channel_values") or {})


def run_report(*, db: Path, thread: str = "default", prices: Prices | None = None) -> int:
    """Print the session report of a saved chat thread; return the exit code.

    Args:
        db: The SQLite file the chat saved its threads in.
        thread: The thread's id.
        prices: A price table to cost the recorded calls at (see `parse_prices`).

    Returns:
        0 when the report was printed.

    Raises:
        CLIError: If `db` is missing or no thread database, or `thread` is not in it.
    """
    print(session_report(_thread_state(db.expanduser(), thread), prices=prices))
    return 0
