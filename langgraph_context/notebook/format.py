"""The on-disk note format: YAML front matter between `---` lines, then the Markdown body.

Rendering quotes every string that contains a line break, so no line of the front
matter can ever read `---` and end it early; the safe loader reads it back exactly.

Parsing treats the file as hostile: the front matter is at most
`MAX_FRONT_MATTER_BYTES`, may not use YAML anchors or aliases (no "billion laughs"),
nests at most `MAX_FRONT_MATTER_DEPTH` levels and holds at most
`MAX_FRONT_MATTER_NODES` values; dates stay text (an impossible date cannot crash the
loader) and must be ISO-8601; every field must have the right type. A file without
front matter is a plain Markdown note (missing fields get defaults); a file whose front
matter breaks any rule raises `NotebookError` naming the rule, so the store can skip and
report that one file.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime
from typing import Any

import yaml

from langgraph_context.notebook.model import (
    DEFAULT_NOTE_TYPE,
    NOTE_TYPES,
    Note,
    NotebookError,
    checked_text,
)

__all__ = [
    "parse_note",
    "render_note",
]

MAX_FRONT_MATTER_BYTES = 64 * 1024
MAX_FRONT_MATTER_DEPTH = 8
MAX_FRONT_MATTER_NODES = 2_000

_LINE_BREAKS = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)


_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


class _FrontMatterLoader(_Loader):  # type: ignore[valid-type,misc]
    """The safe loader, minus implicit timestamps: dates stay strings and are checked later."""

    yaml_implicit_resolvers = {  # noqa: RUF012 - the class attribute PyYAML reads
        first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP_TAG]
        for first, resolvers in _Loader.yaml_implicit_resolvers.items()
    }


_FrontMatterLoader.add_constructor(_TIMESTAMP_TAG, _FrontMatterLoader.construct_yaml_str)
_BaseDumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _NoteDumper(_BaseDumper):  # type: ignore[valid-type,misc]
    """A safe dumper that never emits a multi-line string block."""


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if _LINE_BREAKS.search(value) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_NoteDumper.add_representer(str, _str_representer)


def render_note(note: Note) -> str:
    """Return the file text of `note`: front matter, a blank line, then the content."""
    header = yaml.dump(
        note.metadata(),
        Dumper=_NoteDumper,
        allow_unicode=True,
        sort_keys=False,
        default_flow_style=None,
        width=2**31 - 1,
    )
    return f"---\n{header}---\n\n{note.content}"


def _split(text: str) -> tuple[str | None, str]:
    """Return (front matter text or None, body); raise if the front matter never ends."""
    if text.startswith("\ufeff"):  # a byte-order mark written by some editors
        text = text[1:]
    first, newline, rest = text.partition("\n")
    if first.rstrip("\r") != "---" or not newline:
        return None, text
    lines = rest.split("\n")
    for index, line in enumerate(lines):
        if line.rstrip("\r") in {"---", "..."}:
            body = "\n".join(lines[index + 1 :])
            for blank in ("\n", "\r\n"):  # the blank line after the front matter
                if body.startswith(blank):
                    return "\n".join(lines[:index]), body[len(blank) :]
            return "\n".join(lines[:index]), body
    msg = "the front matter starts with '---' but has no closing '---' line"
    raise NotebookError(msg)


def _check_events(header: str) -> None:
    """Refuse anchors, aliases, deep nesting and too many values before building anything."""
    depth = nodes = 0
    for event in yaml.parse(header, Loader=_Loader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            msg = "the front matter uses YAML anchors or aliases ('&', '*'), which are refused"
            raise NotebookError(msg)
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_FRONT_MATTER_DEPTH:
                msg = f"the front matter nests deeper than {MAX_FRONT_MATTER_DEPTH} levels"
                raise NotebookError(msg)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
        if isinstance(event, yaml.NodeEvent):
            nodes += 1
            if nodes > MAX_FRONT_MATTER_NODES:
                msg = f"the front matter holds more than {MAX_FRONT_MATTER_NODES} values"
                raise NotebookError(msg)


def _load_front_matter(header: str) -> dict[str, Any]:
    size = len(header.encode("utf-8", "surrogatepass"))
    if size > MAX_FRONT_MATTER_BYTES:
        msg = f"the front matter is {size} bytes, over the {MAX_FRONT_MATTER_BYTES}-byte limit"
        raise NotebookError(msg)
    try:
        _check_events(header)
        meta = yaml.load(header, Loader=_FrontMatterLoader)  # a safe loader subclass
    except NotebookError:
        raise
    except yaml.YAMLError as error:
        problem = getattr(error, "problem", None) or type(error).__name__
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        msg = f"the front matter is not valid YAML: {problem}{where}"
        raise NotebookError(msg) from None
    except (ValueError, TypeError, OverflowError, RecursionError) as error:
        msg = f"the front matter has a value that cannot be read: {str(error)[:200]}"
        raise NotebookError(msg) from None
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        msg = f"the front matter must be a mapping of fields, got a {type(meta).__name__}"
        raise NotebookError(msg)
    return meta


def _scalar_text(value: Any, name: str) -> str | None:
    """Return a text field (numbers and booleans as text), None if absent, else raise."""
    if value is None:
        return None
    if isinstance(value, bool | int | float):
        value = str(value)
    return checked_text(value, name)


def _as_time(value: Any, name: str) -> str | None:
    text = _scalar_text(value, name)
    if text is None or not text.strip():
        return None
    try:
        stamp = datetime.fromisoformat(text.strip())
    except ValueError:
        msg = f"{name} {text[:40]!r} is not an ISO-8601 date or time (e.g. 2025-01-19T15:30:00Z)"
        raise NotebookError(msg) from None
    stamp = stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)
    return stamp.isoformat(timespec="microseconds")


def _as_tags(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        items: list[Any] = value.split(",")
    elif isinstance(value, list):
        items = value
    else:
        msg = f"tags must be a list of text values, got a {type(value).__name__}"
        raise NotebookError(msg)
    tags: list[str] = []
    for item in items:
        text = _scalar_text(item, "each tag")
        tag = unicodedata.normalize("NFC", (text or "").strip())
        if tag and tag not in tags:
            tags.append(tag)
    return tuple(tags)


def parse_note(text: str, *, note_id: str, modified: float) -> Note:
    """Read a note file's text; the file name (`note_id`) always wins over the header.

    Args:
        text: The file's text.
        note_id: The id from the file name.
        modified: The file's modification time (POSIX seconds), used for missing times.

    Returns:
        The note.

    Raises:
        NotebookError: If the front matter breaks a rule (size, aliases, nesting, field
            types, dates); the message names the rule.
    """
    header, body = _split(text)
    meta = {} if header is None else _load_front_matter(header)
    fallback = datetime.fromtimestamp(modified, UTC).isoformat(timespec="microseconds")
    title = _scalar_text(meta.get("title"), "title")
    if not title or not title.strip():
        heading = _HEADING.search(body)
        title = heading.group(1) if heading else note_id
    note_type = meta.get("type")
    created = _as_time(meta.get("created_at"), "created_at") or fallback
    return Note(
        id=note_id,
        title=title,
        content=body,
        type=note_type if note_type in NOTE_TYPES else DEFAULT_NOTE_TYPE,
        tags=_as_tags(meta.get("tags")),
        created_at=created,
        updated_at=_as_time(meta.get("updated_at"), "updated_at") or created,
    )
