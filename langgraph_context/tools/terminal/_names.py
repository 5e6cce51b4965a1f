"""File names as text: bytes that are not UTF-8 shown escaped, the way `ls -b` shows them.

Python reads a name that is not UTF-8 with lone surrogates standing for its bad bytes
(`os.fsdecode`). Those cannot be encoded, so they crash whatever writes them out and
must never reach a message. `escape_name` writes each such byte as a backslash and
three octal digits, control characters as C escapes, and a backslash as two, as GNU
`ls --quoting-style=escape` does; `unescape_name` reverses it exactly, so an escaped
path can live in checkpointed state and come back as the same bytes.
"""

from __future__ import annotations

import os
import re

from langgraph_context.errors import InvalidArgumentError

__all__ = ["escape_name", "unescape_name"]

_C_ESCAPES = {"\a": "a", "\b": "b", "\t": "t", "\n": "n", "\v": "v", "\f": "f", "\r": "r"}
_C_UNESCAPES = {v: k for k, v in _C_ESCAPES.items()}
_NEEDS_ESCAPE = re.compile(r"[\\\x00-\x1f\x7f\udc80-\udcff]")
_ESCAPE = re.compile(r"\\([0-3][0-7]{2}|[abtnvfr\\])")


def escape_name(name: str) -> str:
    r"""Return `name` with undecodable bytes, control characters and `\` escaped.

    Example:
        >>> escape_name(os.fsdecode(b"caf\xe9\nx\\y"))
        'caf\\351\\nx\\\\y'
    """

    def one(match: re.Match[str]) -> str:
        char = match.group()
        if char == "\\":
            return "\\\\"
        if char in _C_ESCAPES:
            return "\\" + _C_ESCAPES[char]
        code = ord(char) - 0xDC00 if ord(char) >= 0xDC80 else ord(char)
        return f"\\{code:03o}"

    return _NEEDS_ESCAPE.sub(one, name)


def unescape_name(text: str) -> str:
    r"""Reverse `escape_name`: the name as `os.fsdecode` gives it (surrogates for bad bytes).

    Raises:
        InvalidArgumentError: If `text` holds a backslash that `escape_name` would not write.

    Example:
        >>> unescape_name(escape_name(os.fsdecode(b"\xff/a"))) == os.fsdecode(b"\xff/a")
        True
    """
    out = bytearray()
    pos = 0
    for match in _ESCAPE.finditer(text):
        out += text[pos : match.start()].encode("utf-8")
        code = match.group(1)
        if code == "\\":
            out += b"\\"
        elif code in _C_UNESCAPES:
            out += _C_UNESCAPES[code].encode()
        else:
            out.append(int(code, 8) & 0xFF)
        pos = match.end()
    rest = text[pos:]
    if "\\" in rest or "\\" in _ESCAPE.sub("", text):
        raise InvalidArgumentError(f"not an escaped name: {text!r}")
    out += rest.encode("utf-8")
    return os.fsdecode(bytes(out))
