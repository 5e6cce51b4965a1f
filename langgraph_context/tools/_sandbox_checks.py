"""Deep checks for the two commands whose arguments are programs: `find` and `awk`."""

from __future__ import annotations

import re
from collections.abc import Mapping

from langgraph_context.tools._sandbox_policies import (
    FILE_LIST_REASON,
    SYMLINK_REASON,
    WRITES_REASON,
    CommandRefused,
)

__all__ = ["check_awk_program", "find_primary_arity"]

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


_AWK_BANNED = {
    "system": "awk system() runs other programs",
    "getline": "awk getline reads commands or arbitrary files",
    "ARGV": "changing ARGV makes awk read files the path checks never saw",
    "ARGC": "changing ARGC makes awk read files the path checks never saw",
    "ENVIRON": "the environment is not available",
}
_AWK_TOKEN = re.compile(
    r'"(?:\\.|[^"\\])*"|[A-Za-z_]\w*|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\|\||&&|[=!<>]=|>>|\S'
)


# Tokens after which `/` can only open a regex literal (never divide).
_REGEX_MAY_FOLLOW = frozenset(
    {"", "(", ",", "{", "}", ";", "~", "!", "&&", "||", "?", ":", "==", "!=", "="}
)


def _skip_regex(program: str, start: int) -> int:
    position = start + 1
    while position < len(program) and program[position] != "/":
        if program[position] == "\\":
            position += 2
        elif program[position] == "[":
            position += 1
            if position < len(program) and program[position] == "^":
                position += 1
            if position < len(program) and program[position] == "]":
                position += 1
            while position < len(program) and program[position] != "]":
                position += 1
            position += 1
        else:
            position += 1
    return position + 1


def check_awk_program(program: str) -> None:
    """Refuse awk programs that could run commands, write files or read other files.

    Forbidden: `system`, `getline`, `ARGV`/`ARGC`, `ENVIRON`, any `|` other than `||`,
    and `>`/`>>` at the top level of a `print`/`printf` statement (output redirection;
    put comparisons in parentheses: `print ($1 > 5)`).

    Raises:
        CommandRefused: With the reason.
    """
    refused = CommandRefused
    in_print = False
    depth = 0
    previous = ""
    position = 0
    while position < len(program):
        if program[position].isspace():
            position += 1
            continue
        if program[position] == "/" and previous in _REGEX_MAY_FOLLOW:
            position = _skip_regex(program, position)
            previous = "/re/"
            continue
        match = _AWK_TOKEN.match(program, position)
        if match is None:  # pragma: no cover - \S always matches
            break
        token = match.group(0)
        position = match.end()
        if token in _AWK_BANNED:
            raise refused(f"{_AWK_BANNED[token]}; not allowed")
        if token in {"print", "printf"}:
            in_print, depth = True, 0
        elif token in {";", "{", "}"}:
            in_print = False
        elif token in {"(", "["}:
            depth += 1
        elif token in {")", "]"}:
            depth -= 1
        elif token == "|" or (token.startswith("|") and token != "||"):
            raise refused("awk pipes run other programs; not allowed")
        elif token in {">", ">>"} and in_print and depth <= 0:
            raise refused(
                "awk output redirection writes files; put comparisons in parentheses: "
                "print ($1 > 5)"
            )
        previous = token
