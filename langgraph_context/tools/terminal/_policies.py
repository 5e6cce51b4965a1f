"""Per-command option policies for the read-only terminal, and its `CommandRefused` error.

A policy lists which options take a value (so the value is never mistaken for an
operand), which of those values are free text rather than paths, and which options are
forbidden and why. Listing a value option that does not exist would let a real
operand escape the path check, so only options documented as taking a required value
are listed; optional-value options (`--color[=WHEN]`) are left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from langgraph_context.errors import LangGraphContextError
from langgraph_context.tools.terminal._flags import FLAGS

__all__ = ["BUILTINS", "POLICIES", "CommandPolicy", "CommandRefused"]


class CommandRefused(LangGraphContextError):
    """The command breaks a sandbox rule; the message says which and what is allowed."""


@dataclass(frozen=True)
class CommandPolicy:
    """How one command's arguments are vetted.

    Attributes:
        name: The command name the model types.
        binary: The executable run (default: `name`).
        prefix_args: Arguments always placed first (e.g. `--sandbox` for sed).
        short_values: Short options taking a required value.
        long_values: Long options taking a required value.
        short_flags: Short options taking no value (filled from `_flags.FLAGS`).
        short_optional: Short flags whose optional value is the rest of their word
            (`od -w8`); it is free text, never the next word.
        long_flags: Long options taking no value, or an optional one (from `_flags`).
        free_short: Short options whose value is free text (not a path).
        free_long: Long options whose value is free text.
        script_short: Short options that give the pattern/script/program.
        script_long: Long options that give the pattern/script/program.
        denied_short: Forbidden short options and why.
        denied_long: Forbidden long options (abbreviations included) and why.
        only_short: If set, the only short options accepted; any other is refused.
        no_long: Refuse every long option.
        leading_free: The first operand is a pattern/script/program, not a path.
        leading_free_name: What that operand is called in messages.
        max_operands: Most operands allowed (None: any).
        operands_are_paths: Path-check the operands.
        numeric_short: Accept `-NUM` (e.g. `head -5`).
        no_options: Every argument is an operand (echo).
        permute: Options may follow operands (GNU); False stops at the first operand.
    """

    name: str
    binary: str = ""
    prefix_args: tuple[str, ...] = ()
    short_values: str = ""
    long_values: frozenset[str] = frozenset()
    short_flags: str = ""
    short_optional: str = ""
    long_flags: frozenset[str] = frozenset()
    free_short: str = ""
    free_long: frozenset[str] = frozenset()
    script_short: str = ""
    script_long: frozenset[str] = frozenset()
    denied_short: Mapping[str, str] = field(default_factory=dict)
    denied_long: Mapping[str, str] = field(default_factory=dict)
    only_short: str | None = None
    no_long: bool = False
    leading_free: bool = False
    leading_free_name: str = "pattern"
    max_operands: int | None = None
    operands_are_paths: bool = True
    numeric_short: bool = False
    no_options: bool = False
    permute: bool = True


def _fs(*names: str) -> frozenset[str]:
    return frozenset(names)


SYMLINK_REASON = "it follows symlinks, possibly out of the workspace"
WRITES_REASON = "it writes files and this terminal is read-only"
FILE_LIST_REASON = "it reads file names from a file, bypassing the path checks"
_SYMLINK, _WRITES, _FILE_LIST = SYMLINK_REASON, WRITES_REASON, FILE_LIST_REASON
_FOLLOW = "following a file never ends; use tail -n N instead"
_DECOMPRESS = "it runs a decompressor program"
_TIMES = "it sets the files' access times back (a write)"
_NO_SANDBOX = "it turns off file's own system-call sandbox"
_PAGINATE = "it runs another program (pr)"

_GREP_FREE = _fs(
    "regexp",
    "max-count",
    "after-context",
    "before-context",
    "context",
    "include",
    "exclude",
    "exclude-dir",
    "label",
    "binary-files",
    "devices",
    "directories",
    "group-separator",
)


def _grep(name: str, prefix: tuple[str, ...]) -> CommandPolicy:
    return CommandPolicy(
        name,
        binary="grep",
        prefix_args=prefix,
        short_values="efmABCdD",
        long_values=_GREP_FREE | _fs("file", "exclude-from"),
        free_short="emABCdD",
        free_long=_GREP_FREE,
        script_short="ef",
        script_long=_fs("regexp", "file"),
        denied_short={"R": _SYMLINK + "; use -r"},
        denied_long={"dereference-recursive": _SYMLINK + "; use -r"},
        leading_free=True,
        numeric_short=True,
    )


_POLICY_LIST: tuple[CommandPolicy, ...] = (
    _grep("grep", ()),
    _grep("egrep", ("-E",)),
    _grep("fgrep", ("-F",)),
    CommandPolicy(
        "sed",
        prefix_args=("--sandbox",),
        short_values="el",
        long_values=_fs("expression", "line-length"),
        free_short="el",
        free_long=_fs("expression", "line-length"),
        script_short="e",
        script_long=_fs("expression"),
        denied_short={"i": "in-place editing writes files", "f": "script files are not allowed"},
        denied_long={"in-place": "in-place editing writes files", "file": "script files"},
        leading_free=True,
        leading_free_name="script",
    ),
    CommandPolicy(
        "awk",
        short_values="vF",
        free_short="vF",
        denied_short={
            "f": "program files are not allowed; pass the program inline",
            "W": "implementation options are not allowed",
        },
        # gawk's -d/-o/-p write files, -i/-l/-E/-e load code: allow only what is needed.
        only_short="vF",
        no_long=True,
        leading_free=True,
        leading_free_name="program",
        permute=False,
    ),
    CommandPolicy("find"),
    CommandPolicy(
        "ls",
        short_values="ITw",
        long_values=_fs(
            "ignore",
            "hide",
            "tabsize",
            "width",
            "format",
            "sort",
            "time",
            "time-style",
            "quoting-style",
            "indicator-style",
            "block-size",
        ),
        free_short="ITw",
        free_long=_fs(
            "ignore",
            "hide",
            "tabsize",
            "width",
            "format",
            "sort",
            "time",
            "time-style",
            "quoting-style",
            "indicator-style",
            "block-size",
        ),
        denied_short={"L": _SYMLINK},
        denied_long={"dereference": _SYMLINK},
    ),
    CommandPolicy("cat"),
    CommandPolicy(
        "head",
        short_values="nc",
        long_values=_fs("lines", "bytes"),
        free_short="nc",
        free_long=_fs("lines", "bytes"),
        numeric_short=True,
    ),
    CommandPolicy(
        "tail",
        short_values="nc",
        long_values=_fs("lines", "bytes"),
        free_short="nc",
        free_long=_fs("lines", "bytes"),
        denied_short={"f": _FOLLOW, "F": _FOLLOW, "s": _FOLLOW},
        denied_long={
            "follow": _FOLLOW,
            "retry": _FOLLOW,
            "pid": _FOLLOW,
            "sleep-interval": _FOLLOW,
            "max-unchanged-stats": _FOLLOW,
        },
        numeric_short=True,
    ),
    CommandPolicy("wc", denied_long={"files0-from": _FILE_LIST}),
    CommandPolicy(
        "sort",
        short_values="kt",
        long_values=_fs("key", "field-separator", "parallel", "batch-size", "sort"),
        free_short="kt",
        free_long=_fs("key", "field-separator", "parallel", "batch-size", "sort"),
        denied_short={
            "o": _WRITES,
            "T": "it writes temporary files",
            "S": "a small buffer makes sort write temporary files",
        },
        denied_long={
            "buffer-size": "a small buffer makes sort write temporary files",
            "output": _WRITES,
            "temporary-directory": "it writes temporary files",
            "compress-program": "it runs another program",
            "files0-from": _FILE_LIST,
            "random-source": "it reads an arbitrary file",
        },
    ),
    CommandPolicy(
        "uniq",
        short_values="fsw",
        long_values=_fs("skip-fields", "skip-chars", "check-chars"),
        free_short="fsw",
        free_long=_fs("skip-fields", "skip-chars", "check-chars"),
        max_operands=1,
    ),
    CommandPolicy(
        "cut",
        short_values="bcdf",
        long_values=_fs("bytes", "characters", "delimiter", "fields", "output-delimiter"),
        free_short="bcdf",
        free_long=_fs("bytes", "characters", "delimiter", "fields", "output-delimiter"),
    ),
    CommandPolicy("tr", operands_are_paths=False),
    CommandPolicy(
        "file",
        short_values="FeP",
        long_values=_fs("separator", "exclude", "exclude-quiet", "parameter"),
        free_short="FeP",
        free_long=_fs("separator", "exclude", "exclude-quiet", "parameter"),
        denied_short={
            "f": _FILE_LIST,
            "m": "custom magic files",
            "C": _WRITES,
            "z": _DECOMPRESS,
            "Z": _DECOMPRESS,
            "p": _TIMES,
            "S": _NO_SANDBOX,
        },
        denied_long={
            "files-from": _FILE_LIST,
            "magic-file": "custom magic",
            "compile": _WRITES,
            "uncompress": _DECOMPRESS,
            "uncompress-noreport": _DECOMPRESS,
            "preserve-date": _TIMES,
            "no-sandbox": _NO_SANDBOX,
        },
    ),
    CommandPolicy(
        "stat",
        short_values="c",
        long_values=_fs("format", "printf", "cached"),
        free_short="c",
        free_long=_fs("format", "printf", "cached"),
    ),
    CommandPolicy(
        "du",
        short_values="BdtX",
        long_values=_fs(
            "block-size", "max-depth", "threshold", "exclude", "exclude-from", "time-style"
        ),
        free_short="Bdt",
        free_long=_fs("block-size", "max-depth", "threshold", "exclude", "time-style"),
        denied_short={"L": _SYMLINK},
        denied_long={"dereference": _SYMLINK, "files0-from": _FILE_LIST},
    ),
    CommandPolicy("echo", no_options=True, operands_are_paths=False),
    CommandPolicy(
        "nl",
        short_values="bdfhilnsvw",
        free_short="bdfhilnsvw",
        no_long=True,
    ),
    CommandPolicy(
        "tac",
        short_values="s",
        long_values=_fs("separator"),
        free_short="s",
        free_long=_fs("separator"),
    ),
    CommandPolicy("rev"),
    CommandPolicy(
        "fold", short_values="w", long_values=_fs("width"), free_short="w", free_long=_fs("width")
    ),
    CommandPolicy(
        "paste",
        short_values="d",
        long_values=_fs("delimiters"),
        free_short="d",
        free_long=_fs("delimiters"),
    ),
    CommandPolicy(
        "comm",
        long_values=_fs("output-delimiter"),
        free_long=_fs("output-delimiter"),
        max_operands=2,
    ),
    CommandPolicy(
        "diff",
        prefix_args=("--no-dereference",),
        short_values="CUDFILSWxX",
        long_values=_fs(
            "ifdef",
            "show-function-line",
            "ignore-matching-lines",
            "label",
            "starting-file",
            "exclude",
            "exclude-from",
            "from-file",
            "to-file",
            "tabsize",
            "horizon-lines",
            "line-format",
            "palette",
            "width",
        ),
        free_short="CUDFILSWx",
        denied_short={"l": _PAGINATE},
        denied_long={"paginate": _PAGINATE},
        free_long=_fs(
            "line-format",
            "palette",
            "width",
            "ifdef",
            "show-function-line",
            "ignore-matching-lines",
            "label",
            "starting-file",
            "exclude",
            "tabsize",
            "horizon-lines",
        ),
    ),
    CommandPolicy(
        "cmp",
        short_values="in",
        long_values=_fs("ignore-initial", "bytes"),
        free_short="in",
        free_long=_fs("ignore-initial", "bytes"),
        max_operands=4,
    ),
    CommandPolicy(
        "od",
        short_values="AjNtS",
        short_optional="w",
        free_short="AjNtS",
        long_values=_fs("address-radix", "skip-bytes", "read-bytes", "format", "endian"),
        free_long=_fs("address-radix", "skip-bytes", "read-bytes", "format", "endian"),
    ),
    CommandPolicy("md5sum", denied_short={"c": _FILE_LIST}, denied_long={"check": _FILE_LIST}),
    CommandPolicy("sha256sum", denied_short={"c": _FILE_LIST}, denied_long={"check": _FILE_LIST}),
    CommandPolicy(
        "basename",
        short_values="s",
        long_values=_fs("suffix"),
        free_short="s",
        free_long=_fs("suffix"),
        operands_are_paths=False,
    ),
    CommandPolicy("dirname", operands_are_paths=False),
    CommandPolicy("realpath", long_values=_fs("relative-to", "relative-base")),
)


def _with_flags(policy: CommandPolicy) -> CommandPolicy:
    short, long = FLAGS[policy.binary or policy.name]
    return replace(policy, short_flags=short, long_flags=frozenset(long.split()))


POLICIES: Mapping[str, CommandPolicy] = {p.name: _with_flags(p) for p in _POLICY_LIST}
BUILTINS: frozenset[str] = frozenset({"cd", "pwd", "tree"})
