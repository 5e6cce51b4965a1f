"""The on-disk note format: YAML front matter between `---` lines, then the Markdown body.

Rendering quotes every string that contains a line break, so no line of the front
matter can ever read `---` and end it early; `yaml.safe_load` reads it back exactly.
Parsing is lenient with hand-written files: a missing or broken front matter makes the
whole file the body, and missing fields get defaults.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import yaml

from langgraph_context.notes.base import DEFAULT_NOTE_TYPE, NOTE_TYPES, Note

__all__ = ["parse_note", "render_note"]

_LINE_BREAKS = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)


_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
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


def _split(text: str) -> tuple[dict[str, Any] | None, str]:
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r") != "---":
        return None, text
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r") in {"---", "..."}:
            header = "\n".join(lines[1:index])
            body = "\n".join(lines[index + 1 :])
            try:
                meta = yaml.load(header, Loader=_Loader)
            except yaml.YAMLError:
                return None, text
            if meta is None:
                meta = {}
            if not isinstance(meta, dict):
                return None, text
            return meta, body[1:] if body.startswith("\n") else body
    return None, text


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        stamp = value if value.tzinfo else value.replace(tzinfo=UTC)
        return stamp.isoformat(timespec="microseconds")
    return str(value)


def _as_tags(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        items: list[Any] = value.split(",")
    elif isinstance(value, list | tuple):
        items = list(value)
    else:
        return ()
    tags: list[str] = []
    for item in items:
        tag = str(item).strip()
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
    """
    meta, body = _split(text)
    meta = meta or {}
    fallback = datetime.fromtimestamp(modified, UTC).isoformat(timespec="microseconds")
    title = _as_text(meta.get("title"))
    if not title or not title.strip():
        heading = _HEADING.search(body)
        title = heading.group(1) if heading else note_id
    note_type = meta.get("type")
    created = _as_text(meta.get("created_at")) or fallback
    return Note(
        id=note_id,
        title=title,
        content=body,
        type=note_type if note_type in NOTE_TYPES else DEFAULT_NOTE_TYPE,
        tags=_as_tags(meta.get("tags")),
        created_at=created,
        updated_at=_as_text(meta.get("updated_at")) or created,
    )
