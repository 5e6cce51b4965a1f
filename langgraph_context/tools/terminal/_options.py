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

# How many allowed option names a refusal lists before "...".
_SHOWN = 20


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

    Every option must be in the command's tables (`_policies`, `_flags`): a value
    option, a flag, or a denied one (refused with its reason); any other is refused
    with the list of allowed ones. Long options must be written in full.

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
        if policy.numeric_short and arg[1:].isdigit():
            continue
        vet = _vet_long if arg.startswith("--") else _vet_short
        i, script = vet(policy, arg, args, i, cwd, root)
        script_given = script_given or script
    return operands, script_given


def _allowed(names: list[str]) -> str:
    shown = ", ".join(names[:_SHOWN])
    return shown + (", ..." if len(names) > _SHOWN else "") if names else "none"


def _unknown_long(policy: CommandPolicy, name: str) -> CommandRefused:
    known = sorted(policy.long_values | policy.long_flags)
    matches = [o for o in known if o.startswith(name)] if name else []
    if matches:
        # GNU getopt resolves an abbreviation against every option of the tool, some
        # of which may be missing from our tables (`grep --binary` is a flag, not
        # `--binary-files`): only full names are read the same way by both.
        hint = ", ".join(f"--{o}" for o in matches[:_SHOWN])
        return CommandRefused(f"{policy.name} --{name}: write long options in full ({hint})")
    allowed = _allowed([f"--{o}" for o in known])
    return CommandRefused(
        f"{policy.name} --{name} is not a known option here; allowed long options: {allowed}"
    )


def _vet_long(
    policy: CommandPolicy, arg: str, args: list[str], i: int, cwd: Path, root: Path
) -> tuple[int, bool]:
    """Check `--name[=value]` at `args[i - 1]`; return the next index and script flag."""
    if policy.no_long:
        raise CommandRefused(f"{policy.name} long options are not allowed")
    name, eq, value = arg[2:].partition("=")
    denied = [d for d in policy.denied_long if d.startswith(name) and name]
    if denied:
        reason = policy.denied_long[denied[0]]
        raise CommandRefused(f"{policy.name} --{denied[0]} is not allowed: {reason}")
    if name in policy.long_values and not eq:
        if i >= len(args):
            raise CommandRefused(f"{policy.name} --{name} needs a value")
        value, eq = args[i], "="
        i += 1
    elif name not in policy.long_values and name not in policy.long_flags:
        raise _unknown_long(policy, name)
    if eq and name not in policy.free_long:
        check_value(value, cwd, root)
    return i, name in policy.script_long


def _vet_short(
    policy: CommandPolicy, arg: str, args: list[str], i: int, cwd: Path, root: Path
) -> tuple[int, bool]:
    """Check a cluster `-abc` at `args[i - 1]`; return the next index and script flag."""
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
            return i, flag in policy.script_short
        if flag not in policy.short_flags and not (policy.numeric_short and flag.isdigit()):
            allowed = _allowed([f"-{f}" for f in sorted(policy.short_values + policy.short_flags)])
            msg = f"{policy.name} -{flag} is not a known option here; allowed options: {allowed}"
            raise CommandRefused(msg)
        if flag in policy.short_optional:
            break
    return i, False


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
