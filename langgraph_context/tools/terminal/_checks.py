"""The `find` expression check: which primaries exist, their arity, and which are refused."""

from __future__ import annotations

import re
from collections.abc import Mapping

from langgraph_context.tools.terminal._policies import (
    FILE_LIST_REASON,
    SYMLINK_REASON,
    WRITES_REASON,
    CommandRefused,
)

__all__ = ["find_primary_arity"]

_WRITES = WRITES_REASON
_SYMLINK = SYMLINK_REASON
_FILE_LIST = FILE_LIST_REASON

# find: primaries and how many values they take; `True` marks a value that is a path.
_FIND_FLAGS = frozenset(
    [
        "-print",
        "-print0",
        "-ls",
        "-prune",
        "-quit",
        "-true",
        "-false",
        "-empty",
        "-readable",
        "-writable",
        "-executable",
        "-nouser",
        "-nogroup",
        "-depth",
        "-d",
        "-mount",
        "-xdev",
        "-noleaf",
        "-ignore_readdir_race",
        "-noignore_readdir_race",
        "-daystart",
        "-not",
        "-and",
        "-or",
        "-a",
        "-o",
        "-nowarn",
        "-warn",
    ]
)
_FIND_TEXT = frozenset(
    [
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-regextype",
        "-type",
        "-xtype",
        "-size",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-used",
        "-user",
        "-group",
        "-uid",
        "-gid",
        "-perm",
        "-links",
        "-inum",
        "-maxdepth",
        "-mindepth",
        "-lname",
        "-ilname",
        "-fstype",
        "-printf",
        "-context",
    ]
)
_FIND_PATH = frozenset(["-newer", "-anewer", "-cnewer", "-samefile"])
_FIND_DENIED: Mapping[str, str] = {
    "-exec": "it runs other programs",
    "-execdir": "it runs other programs",
    "-ok": "it runs other programs",
    "-okdir": "it runs other programs",
    "-delete": "it deletes files",
    "-fprint": _WRITES,
    "-fprint0": _WRITES,
    "-fprintf": _WRITES,
    "-fls": _WRITES,
    "-follow": _SYMLINK,
    "-files0-from": _FILE_LIST,
}
_NEWER_XY = re.compile(r"^-newer([aBcm])([aBcmt])$")


def find_primary_arity(token: str) -> tuple[int, bool]:
    """Return how many values a find primary takes and whether its value is a path.

    Raises:
        CommandRefused: If the primary is forbidden or unknown.
    """
    if token in _FIND_DENIED:
        raise CommandRefused(f"find {token} is not allowed: {_FIND_DENIED[token]}")
    if token in _FIND_FLAGS:
        return 0, False
    if token in _FIND_TEXT:
        return 1, False
    if token in _FIND_PATH:
        return 1, True
    newer = _NEWER_XY.match(token)
    if newer:
        return 1, newer.group(2) != "t"
    msg = (
        f"find {token!r} is not supported here. Use tests like -name, -path, -type, -size, "
        "-mtime, -maxdepth and actions -print, -print0, -printf, -ls."
    )
    raise CommandRefused(msg)
