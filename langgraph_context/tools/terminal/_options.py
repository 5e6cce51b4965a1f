"""Option and path checks of one command: confinement, option tables, find expressions.

`vet_options` walks a command's arguments the way GNU getopt does for that tool (see
`_policies`); `confine` resolves a path with symlinks and keeps it in the workspace.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from langgraph_context.tools.terminal._checks import find_primary_arity
from langgraph_context.tools.terminal._policies import CommandPolicy, CommandRefused

__all__ = ["check_value", "confine", "vet_find", "vet_options"]


def confine(word: str, cwd: Path, root: Path) -> Path:
    """Resolve `word` (symlinks included) from `cwd`; it must stay inside `root`.

    Raises:
        CommandRefused: If the resolved path is outside the workspace.
    """
    try:
        real = Path(os.path.realpath(os.path.join(cwd, word)))
    except (OSError, ValueError):
        # Another process changed the path while it was being resolved (a link turned
        # into a file between lstat and readlink), or it cannot be a path at all.
        raise CommandRefused(f"path {word!r} changed while being checked; retry") from None
    if real != root and root not in real.parents:
        msg = f"path {word!r} is outside the workspace; only files under it can be accessed"
        raise CommandRefused(msg)
    return real


def _looks_like_path(word: str, cwd: Path) -> bool:
    if word in {"", "-"}:
        return False
    return "/" in word or word in {".", ".."} or os.path.lexists(os.path.join(cwd, word))


def vet_options(
    policy: CommandPolicy, args: list[str], cwd: Path, root: Path
) -> tuple[list[str], bool]:
    """Check options and paths of one command.

    Returns the operands and whether a script/pattern option (`grep -e`, ...) was given.
    """
    operands: list[str] = []
    script_given = False
    i = 0
    only_operands = False
    while i < len(args):
        arg = args[i]
        i += 1
        if only_operands or arg == "-" or not arg.startswith("-") or policy.no_options:
            operands.append(arg)
            only_operands = only_operands or not policy.permute
            continue
        if arg == "--":
            only_operands = True
            continue
        if arg.startswith("--") and policy.no_long:
            raise CommandRefused(f"{policy.name} long options are not allowed")
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            denied = [d for d in policy.denied_long if d.startswith(name) and name]
            if denied:
                reason = policy.denied_long[denied[0]]
                raise CommandRefused(f"{policy.name} --{denied[0]} is not allowed: {reason}")
            full = name if name in policy.long_values else None
            if full is None and name and any(o.startswith(name) for o in policy.long_values):
                # GNU getopt resolves an abbreviation against every option of the tool,
                # flags included (`grep --binary` is a flag, not `--binary-files`): only
                # full names of value-taking options are read the same way by both.
                msg = f"{policy.name} --{name}: write options that take a value in full"
                raise CommandRefused(msg)
            if full is not None and not eq:
                if i >= len(args):
                    raise CommandRefused(f"{policy.name} --{full} needs a value")
                value, eq = args[i], "="
                i += 1
            if eq and (full or name) not in policy.free_long:
                check_value(value, cwd, root)
            script_given = script_given or (full or name) in policy.script_long
            continue
        if policy.numeric_short and arg[1:].isdigit():
            continue
        for j, flag in enumerate(arg[1:], start=1):
            if flag in policy.denied_short:
                reason = policy.denied_short[flag]
                raise CommandRefused(f"{policy.name} -{flag} is not allowed: {reason}")
            if policy.only_short is not None and flag not in policy.only_short:
                allowed = ", ".join(f"-{f}" for f in policy.only_short)
                msg = f"{policy.name} -{flag} is not allowed here; allowed options: {allowed}"
                raise CommandRefused(msg)
            if flag in policy.short_values:
                value = arg[j + 1 :]
                if not value:
                    if i >= len(args):
                        raise CommandRefused(f"{policy.name} -{flag} needs a value")
                    value = args[i]
                    i += 1
                if flag not in policy.free_short:
                    check_value(value, cwd, root)
                script_given = script_given or flag in policy.script_short
                break
    return operands, script_given


def check_value(value: str, cwd: Path, root: Path) -> None:
    if _looks_like_path(value, cwd):
        confine(value, cwd, root)


def vet_find(args: list[str], cwd: Path, root: Path) -> None:
    i = 0
    while i < len(args) and (args[i] in {"-H", "-P", "-L", "-D"} or re.fullmatch(r"-O\d", args[i])):
        if args[i] == "-L":
            raise CommandRefused("find -L is not allowed: it follows symlinks out of the workspace")
        i += 2 if args[i] == "-D" else 1
    paths: list[str] = []
    while i < len(args) and not (args[i].startswith("-") or args[i] in {"(", ")", "!", ","}):
        paths.append(args[i])
        i += 1
    for path in paths:
        confine(path, cwd, root)
    while i < len(args):
        token = args[i]
        i += 1
        if token in {"(", ")", "!", ","}:
            continue
        arity, takes_path = find_primary_arity(token)
        if i + arity > len(args):
            raise CommandRefused(f"find {token} needs a value")
        if takes_path:
            confine(args[i], cwd, root)
        i += arity
