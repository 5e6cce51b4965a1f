"""Static half of the terminal sandbox: parse a command line and vet it, without a shell.

`plan_command` turns a command line into a list of argv vectors (a pipeline) or
raises `CommandRefused` with a reason the model can act on. Nothing here runs a
process. The rules:

* Lexing follows POSIX quoting (`'...'`, `"..."`, backslash) but every shell feature
  beyond words and `|` is refused: `;`, `&`, `&&`, `||`, `<`, `>`, backticks, `$`
  (variables and `$(...)`), parentheses, comments, line breaks and NUL bytes.
* Unquoted globs are expanded here (like a shell would) relative to the current
  directory; every result is then path-checked like any other argument.
* Each command has a `CommandPolicy`: forbidden options (short and long, GNU-style
  long-option abbreviations included), which options take values, which values and
  operands are paths. Every path (an argument that exists, contains `/`, is `.`/`..`
  or starts with `~`) is resolved with symlinks and must stay inside the workspace.
* `awk` programs are not scanned: under Landlock the kernel contains whatever they do
  (`system`, pipes, `getline`, redirections); on policy-only hosts the terminal runs
  `gawk --sandbox` or refuses awk (`awk_mode`). `sed` always runs with `--sandbox`.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from langgraph_context.tools.terminal._options import check_value, confine, vet_find, vet_options
from langgraph_context.tools.terminal._policies import (
    BUILTINS,
    POLICIES,
    CommandRefused,
)

__all__ = [
    "AWK_UNAVAILABLE",
    "MAX_GLOB_MATCHES",
    "AwkMode",
    "CommandRefused",
    "Stage",
    "confine",
    "plan_command",
    "split_words",
]

AwkMode = Literal["kernel", "gawk-sandbox", "refused"]
AWK_UNAVAILABLE = (
    "awk is refused on this host: it has no Landlock, so nothing would contain awk's "
    "system(), pipes, getline and output redirection, and gawk (whose --sandbox turns "
    "them off) is not installed. Use grep, cut, sort, uniq, sed or tr instead."
)
_GAWK_DIRECTIVE = (
    "'@' is not allowed in awk programs on this host: gawk's @include and @load read "
    "files even under --sandbox. Write a literal @ as \\100 inside strings and regexes."
)

MAX_GLOB_MATCHES = 5_000
MAX_GLOB_ENTRIES = 50_000
MAX_WORDS = 2_000
MAX_WORD_CHARS = 20_000
MAX_STAGES = 16
_GLOB_CHARS = frozenset("*?[")
_REFUSED_CHARS: Mapping[str, str] = {
    ";": "command chaining with ';' is not allowed; run one command (pipes are fine)",
    "&": "'&', '&&' and background jobs are not allowed; run one command at a time",
    "<": "input redirection is not allowed; pass the file name as an argument",
    ">": "output redirection is not allowed; this terminal is read-only",
    "`": "command substitution is not allowed",
    "$": "shell variables and $(...) substitution are not allowed; write values literally",
    "(": "subshells and parentheses are not allowed (quote them for find: '(' ... ')')",
    ")": "subshells and parentheses are not allowed (quote them for find: '(' ... ')')",
}


@dataclass
class _Word:
    """One word being lexed; characters are collected in lists (linear, not quadratic)."""

    chars: list[str] = field(default_factory=list)
    pattern_chars: list[str] = field(default_factory=list)
    globbing: bool = False
    tilde: bool = False
    started: bool = False
    text: str = ""
    pattern: str = ""

    def add(self, text: str, *, quoted: bool) -> None:
        self.started = True
        self.chars.append(text)
        self.pattern_chars.append(glob.escape(text) if quoted else text)

    def close(self) -> None:
        self.text = "".join(self.chars)
        self.pattern = "".join(self.pattern_chars)
        if len(self.text) > MAX_WORD_CHARS:
            msg = f"a word is longer than {MAX_WORD_CHARS} characters; shorten it"
            raise CommandRefused(msg)


@dataclass(frozen=True)
class Stage:
    """One command of a pipeline: its policy name and final argv (without the binary)."""

    name: str
    args: tuple[str, ...]
    builtin: bool = False
    extra: Mapping[str, object] = field(default_factory=dict)


def split_words(command: str) -> list[list[_Word]]:
    """Split a command line into pipeline stages of words, refusing shell syntax.

    Raises:
        CommandRefused: On any shell feature other than quoting and `|`.
    """
    if "\x00" in command:
        raise CommandRefused("NUL bytes are not allowed")
    if any(c in command for c in "\n\r\x0b\x0c\x85\u2028\u2029"):
        raise CommandRefused("line breaks are not allowed; run one command per call")
    stages: list[list[_Word]] = [[]]
    word = _Word()
    i, n = 0, len(command)

    def finish() -> None:
        nonlocal word
        if word.started:
            word.close()
            stages[-1].append(word)
            if sum(len(stage) for stage in stages) > MAX_WORDS:
                raise CommandRefused(f"more than {MAX_WORDS} words; narrow the command")
        word = _Word()

    while i < n:
        c = command[i]
        if c in " \t":
            finish()
        elif c == "|":
            if i + 1 < n and command[i + 1] == "|":
                raise CommandRefused("'||' chaining is not allowed; run one command")
            finish()
            if len(stages) >= MAX_STAGES:
                raise CommandRefused(f"more than {MAX_STAGES} pipeline stages; simplify it")
            stages.append([])
        elif c in _REFUSED_CHARS:
            raise CommandRefused(_REFUSED_CHARS[c])
        elif c == "#" and not word.started:
            raise CommandRefused("shell comments are not allowed")
        elif c == "\\":
            if i + 1 >= n:
                raise CommandRefused("a trailing backslash is not allowed")
            word.add(command[i + 1], quoted=True)
            i += 1
        elif c in "'\"":
            end = command.find(c, i + 1)
            if c == '"':
                chunk, end = _double_quoted(command, i + 1)
            else:
                if end < 0:
                    raise CommandRefused("unterminated single quote")
                chunk = command[i + 1 : end]
            word.add(chunk, quoted=True)
            i = end
        else:
            if c == "~" and not word.started:
                word.tilde = True
            word.add(c, quoted=False)
            word.globbing = word.globbing or c in _GLOB_CHARS
        i += 1
    finish()
    if any(not stage for stage in stages):
        raise CommandRefused("empty pipeline stage: write 'command | command'")
    return stages


def _double_quoted(command: str, start: int) -> tuple[str, int]:
    """Return the text of a double-quoted string opened before `start`, and its end."""
    parts: list[str] = []
    end, n = start, len(command)
    while end < n and command[end] != '"':
        ch = command[end]
        if ch in "$`":
            raise CommandRefused(_REFUSED_CHARS[ch] + " (also inside double quotes)")
        if ch == "\\" and end + 1 < n and command[end + 1] in '"\\':
            end += 1
            ch = command[end]
        parts.append(ch)
        end += 1
    if end >= n:
        raise CommandRefused("unterminated double quote")
    return "".join(parts), end


@dataclass
class _Budget:
    """The host's own work for one call: glob entries and matches, and the deadline."""

    deadline: float | None
    entries: int = 0
    matches: int = 0

    def tick(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise CommandRefused("checking the command took longer than the timeout; narrow it")

    def spend(self, entries: int, matches: int, shown: str) -> None:
        self.entries += entries
        self.matches += matches
        if self.entries > MAX_GLOB_ENTRIES:
            msg = f"glob {shown!r} walks more than {MAX_GLOB_ENTRIES} entries; narrow it"
            raise CommandRefused(msg)
        if self.matches > MAX_GLOB_MATCHES:
            msg = f"glob {shown!r} matches more than {MAX_GLOB_MATCHES} paths; narrow it"
            raise CommandRefused(msg)
        self.tick()


def _expand(words: list[_Word], cwd: Path, root: Path, budget: _Budget) -> list[str]:
    out: list[str] = []
    for word in words:
        budget.tick()
        text = word.text
        if word.tilde:
            if text == "~" or text.startswith("~/"):
                text = str(root) + text[1:]
                word.pattern = glob.escape(str(root)) + word.pattern[1:]
            else:
                raise CommandRefused("'~user' paths are not allowed; use paths in the workspace")
        if word.globbing:
            # Refuse before expanding when the fixed part already leaves the workspace, so
            # `/*/*/*` never walks the whole file system.
            fixed = re.split(r"(?<!\[)[*?\[]", word.pattern, maxsplit=1)[0]
            confine(os.path.dirname(fixed) or ".", cwd, root)
            if ".." in word.pattern[len(fixed) :].split("/"):
                msg = f"'..' after a wildcard is not allowed in {word.text!r}"
                raise CommandRefused(msg)
            matches = sorted(_bounded_glob(word.pattern, cwd, word.text, budget))
            budget.spend(0, len(matches), word.text)
            if matches:
                for match in matches:
                    try:
                        confine(match, cwd, root)
                    except CommandRefused:
                        # Say no more than that: the outside name is not the model's to see.
                        msg = f"glob {word.text!r} reaches outside the workspace"
                        raise CommandRefused(msg) from None
                out.extend(matches)
                continue
        out.append(text)
    return out


def _bounded_glob(pattern: str, cwd: Path, shown: str, budget: _Budget) -> list[str]:
    """Expand `pattern` like `glob.glob(pattern, root_dir=cwd)`, within fixed limits.

    `glob` itself walks in this process with no limit: symlinked directory loops make
    `*/*/*/*/*/*/x` take minutes before any command timeout starts. Here every directory
    entry looked at counts against `MAX_GLOB_ENTRIES`, and matches against
    `MAX_GLOB_MATCHES`, for all the words of the command together, and the call's
    deadline is checked as it goes; going over any refuses the command.
    """
    absolute = pattern.startswith("/")
    parts = [p for p in pattern.split("/") if p]
    trailing_slash = pattern.endswith("/")
    bases = ["/" if absolute else ""]
    for index, part in enumerate(parts):
        last = index == len(parts) - 1 and not trailing_slash
        found: list[str] = []
        for base in bases:
            directory = os.path.join(cwd, base) if base else str(cwd)
            if not glob.has_magic(part):
                candidate = os.path.join(base, part)
                full = os.path.join(cwd, candidate)
                if os.path.lexists(full) if last else os.path.isdir(full):
                    found.append(candidate)
                continue
            try:
                entries = list(os.scandir(directory))
            except OSError:
                continue
            budget.spend(len(entries), 0, shown)
            for entry in entries:
                if entry.name.startswith(".") and not part.startswith("."):
                    continue
                if not fnmatch.fnmatchcase(entry.name, part):
                    continue
                if not last and not _is_dir(entry):
                    continue
                found.append(os.path.join(base, entry.name))
            if budget.matches + len(found) > MAX_GLOB_MATCHES:
                budget.spend(0, len(found), shown)
        bases = found
        if not bases:
            return []
    return [b + "/" for b in bases] if trailing_slash else bases


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def plan_command(
    command: str,
    *,
    cwd: Path,
    root: Path,
    allowed: frozenset[str],
    deadline: float | None = None,
    awk_mode: AwkMode = "kernel",
) -> list[Stage]:
    """Parse and vet `command`; return the pipeline to run.

    Args:
        command: The command line.
        cwd: The current directory (a real path inside `root`).
        root: The workspace (a real path).
        allowed: Command names that may run.
        deadline: `time.monotonic()` by which checking must be done (None: no limit).
        awk_mode: `"kernel"` runs awk programs as given (Landlock contains them),
            `"gawk-sandbox"` adds `--sandbox` and refuses `@` directives, `"refused"`
            refuses awk.

    Returns:
        The stages, each with the final argument list.

    Raises:
        CommandRefused: If any rule is broken.
    """
    if not command.strip():
        raise CommandRefused("empty command")
    stages: list[Stage] = []
    words_list = split_words(command)
    budget = _Budget(deadline)
    for index, words in enumerate(words_list):
        if words[0].globbing or words[0].tilde:
            raise CommandRefused("the command name must be a plain word")
        name = words[0].text
        if name not in allowed:
            hint = (
                " Pagers are interactive; use cat, head or tail instead."
                if name in {"less", "more", "most", "pg"}
                else ""
            )
            msg = f"command {name!r} is not allowed.{hint} Allowed: {', '.join(sorted(allowed))}"
            raise CommandRefused(msg)
        if name == "awk" and awk_mode == "refused":
            raise CommandRefused(AWK_UNAVAILABLE)
        args = _expand(words[1:], cwd, root, budget)
        if name in BUILTINS:
            if name == "cd" and (index > 0 or len(words_list) > 1):
                raise CommandRefused("cd cannot be part of a pipeline")
            stages.append(Stage(name, tuple(args), builtin=True))
            continue
        policy = POLICIES[name]
        if name == "find":
            vet_find(args, cwd, root)
        else:
            operands, script_given = vet_options(policy, args, cwd, root)
            if policy.leading_free and not script_given:
                if not operands:
                    raise CommandRefused(f"{name} needs a {policy.leading_free_name}")
                if name == "awk" and awk_mode == "gawk-sandbox" and "@" in operands[0]:
                    raise CommandRefused(_GAWK_DIRECTIVE)
                operands = operands[1:]
            if policy.max_operands is not None and len(operands) > policy.max_operands:
                msg = f"{name} takes at most {policy.max_operands} file operand(s) here"
                raise CommandRefused(msg)
            if policy.operands_are_paths:
                for operand in operands:
                    # awk treats only ASCII-identifier `var=value` operands as
                    # assignments; anything else is a file and is path-checked.
                    if name == "awk" and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", operand):
                        continue
                    check_value(operand, cwd, root)
        prefix = ("--sandbox",) if name == "awk" and awk_mode == "gawk-sandbox" else ()
        stages.append(Stage(name, prefix + tuple(policy.prefix_args) + tuple(args)))
    if any(s.builtin for s in stages[1:]):
        raise CommandRefused("builtins (cd, tree, pwd) can only start a pipeline")
    return stages
