"""The awk program check: refuse programs that could run commands, write or read files.

The check tokenizes the program the way awk does, so that strings, regex literals and
comments are skipped exactly where awk skips them. The hard part is `/`: awk reads it as
division after an operand and as the start of a regex literal elsewhere, and mawk and
gawk disagree in a few places (after `++`, after `length`, after `if (...)`, at the
start of a line). A `/` is read as division only where every awk agrees; where they may
disagree the program is refused, because a misread regex hides code from the check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from langgraph_context.tools.terminal._policies import CommandRefused

__all__ = ["check_awk_program"]

_BANNED = {
    "system": "awk system() runs other programs",
    "getline": "awk getline reads commands or arbitrary files",
    "ARGV": "changing ARGV makes awk read files the path checks never saw",
    "ARGC": "changing ARGC makes awk read files the path checks never saw",
    "ENVIRON": "the environment is not available",
    "SYMTAB": "gawk SYMTAB reaches ARGV and ENVIRON",
    "FUNCTAB": "gawk FUNCTAB allows indirect calls",
}
# Keywords: a `/` after them opens a regex in every awk.
_KEYWORDS = frozenset(
    {
        "BEGIN",
        "END",
        "function",
        "if",
        "else",
        "while",
        "for",
        "do",
        "break",
        "continue",
        "next",
        "nextfile",
        "exit",
        "return",
        "delete",
        "in",
        "print",
        "printf",
    }
)
# Names after which awks disagree about `/` (builtins, gawk-only keywords): refused.
_AMBIGUOUS_NAMES = frozenset(
    {
        "length",
        "func",
        "switch",
        "case",
        "default",
        "BEGINFILE",
        "ENDFILE",
        "substr",
        "index",
        "split",
        "sub",
        "gsub",
        "gensub",
        "match",
        "sprintf",
        "sin",
        "cos",
        "atan2",
        "exp",
        "log",
        "sqrt",
        "int",
        "rand",
        "srand",
        "tolower",
        "toupper",
        "close",
        "fflush",
        # time builtins of mawk and gawk
        "systime",
        "strftime",
        "mktime",
    }
)
_HEADERS = frozenset({"if", "while", "for", "switch"})
_TWO_CHAR = frozenset({"||", "&&", "==", "!=", "<=", ">=", ">>", "++", "--", "|&"})
_OPERAND = "operand"
_AMBIGUOUS = "ambiguous"
_REGEX_FIX = 'write the regex as a string match instead, e.g. $0 ~ "re"'


def _refuse(reason: str) -> CommandRefused:
    return CommandRefused(f"{reason}; not allowed")


def _end_of_string(program: str, start: int) -> int:
    """Return the index just past the string literal opening at `start`."""
    position = start + 1
    while position < len(program):
        char = program[position]
        if char == '"':
            return position + 1
        if char == "\n" or (char == "\\" and program[position + 1 : position + 2] in {"\n", ""}):
            break
        position += 2 if char == "\\" else 1
    raise _refuse("awk strings must end on the line they start")


def _naive_regex_end(program: str, start: int) -> int:
    """Index of the closing `/` when brackets are not special (-1 if none on the line)."""
    position = start + 1
    while position < len(program) and program[position] != "\n":
        if program[position] == "\\":
            position += 2
        elif program[position] == "/":
            return position
        else:
            position += 1
    return -1


def _bracket_end(program: str, position: int) -> int:
    """Index just past the POSIX bracket expression opening at `position` (-1 if open)."""
    position += 1
    if program[position : position + 1] == "^":
        position += 1
    if program[position : position + 1] == "]":
        position += 1
    while position < len(program) and program[position] != "\n":
        pair = program[position : position + 2]
        if pair in {"[:", "[.", "[="}:
            close = program.find(pair[1] + "]", position + 2)
            if close < 0:
                return -1
            position = close + 2
        elif program[position] == "\\":
            position += 2
        elif program[position] == "]":
            return position + 1
        else:
            position += 1
    return -1


def _posix_regex_end(program: str, start: int) -> int:
    """Index of the closing `/` when `/` inside brackets does not close (-1 if none)."""
    position = start + 1
    while position < len(program) and program[position] != "\n":
        char = program[position]
        if char == "\\":
            position += 2
        elif char == "[":
            position = _bracket_end(program, position)
            if position < 0:
                return -1
        elif char == "/":
            return position
        else:
            position += 1
    return -1


# Tokens after which every awk reads `/` as the start of a regex (never division):
# the start of the program or a line, an opening bracket, a separator, a logical or
# match operator. Only there may a regex literal hold a `"`.
_REGEX_CERTAIN = frozenset({"", "(", ",", "{", ";", "!", "~", "!~", "&&", "||"})


def _box_regex_end(program: str, start: int, *, escapes_in_box: bool) -> int:
    """Index of the closing `/` when `[...]` closes at its first `]` (mawk's lexer).

    No classes or collating elements: a box opened by `[` (a `]` right after `[` or `[^`
    is literal) closes at the next `]`. Whether a backslash escapes inside the box
    differs between implementations, hence `escapes_in_box`.
    """
    position = start + 1
    while position < len(program) and program[position] != "\n":
        char = program[position]
        if char == "\\":
            position += 2
        elif char == "[":
            position += 1
            if program[position : position + 1] == "^":
                position += 1
            if program[position : position + 1] == "]":
                position += 1
            while position < len(program) and program[position] not in "]\n":
                step = 2 if escapes_in_box and program[position] == "\\" else 1
                position += step
            if position >= len(program) or program[position] == "\n":
                return -1
            position += 1
        elif char == "/":
            return position
        else:
            position += 1
    return -1


_CLASS = re.compile(
    r"\[:(?:alpha|digit|alnum|upper|lower|space|blank|punct|print|graph|cntrl|xdigit):\]"
)


def _check_brackets(body: str) -> None:
    """Refuse a `[` inside a bracket expression unless it opens a named class.

    Awks lex `[[:x:]]`, `[[.x.]]`, `[[=x=]]` and stray `[` inside brackets differently
    (mawk's lexer does not know collating elements), so a regex could end at another
    `/` for awk than for this scanner. Only the twelve POSIX class names pass.
    """
    position, inside = 0, False
    while position < len(body):
        char = body[position]
        if char == "\\":
            position += 2
        elif not inside and char == "[":
            inside = True
            position += 1
            if body[position : position + 1] == "^":
                position += 1
            if body[position : position + 1] == "]":
                position += 1
        elif inside and char == "[":
            match = _CLASS.match(body, position)
            if match is None:
                raise _refuse(
                    "inside [...] of an awk regex only named classes such as [:alpha:] may "
                    "use [ (write \\[ for a literal bracket)"
                )
            position = match.end()
        elif inside and char == "]":
            inside = False
            position += 1
        else:
            position += 1


def _end_of_regex(program: str, start: int, *, quote_allowed: bool = False) -> int:
    """Return the index just past the regex literal opening at `start`.

    The literal must end at the same `/` however its brackets are read: plain text,
    POSIX bracket expressions, or mawk's simpler boxes (with or without escapes). A
    regex whose extent depends on the reading is refused: that disagreement is how code
    hides from the scanner (`/[[..][]/ ; y = "]/ ; system(...)`).
    """
    end = _naive_regex_end(program, start)
    if end < 0 or "\n" in program[start:end]:
        # A backslash-newline inside a regex is dropped by some awks before brackets
        # are read, so the regex must sit on one physical line.
        raise _refuse("awk regex literals must end on the line they start")
    _check_brackets(program[start + 1 : end])
    readings = {
        _posix_regex_end(program, start),
        _box_regex_end(program, start, escapes_in_box=True),
        _box_regex_end(program, start, escapes_in_box=False),
    }
    if readings != {end}:
        raise _refuse(
            "a / inside [...] in an awk regex literal is read differently by awks; use \\/"
        )
    if '"' in program[start:end] and not quote_allowed:
        raise _refuse(f'a " inside an awk regex literal is ambiguous; {_REGEX_FIX}')
    return end + 1


def _slash_kind(previous: str, newline: bool) -> str:
    """How `/` after token class `previous` is read: 'division', 'regex' or refused."""
    if previous == _AMBIGUOUS or (previous == _OPERAND and newline):
        raise _refuse(
            "this / may be read as division by one awk and as a regex by another; "
            f"keep a division on the line of its left operand, add parentheses, or {_REGEX_FIX}"
        )
    return "division" if previous == _OPERAND else "regex"


_DIGITS = frozenset("0123456789")


def _is_name_char(char: str) -> bool:
    return char.isascii() and (char.isalnum() or char == "_")


def _number_end(program: str, position: int) -> int:
    """Where an awk numeric literal starting at `position` ends (digits, '.', exponent)."""
    end = position
    while end < len(program) and (program[end] in _DIGITS or program[end] == "."):
        end += 1
    if end < len(program) and program[end] in "eE":
        after = end + 1
        if after < len(program) and program[after] in "+-":
            after += 1
        if after < len(program) and program[after] in _DIGITS:
            end = after
            while end < len(program) and program[end] in _DIGITS:
                end += 1
    return end


@dataclass
class _Scan:
    """What the scanner remembers between tokens.

    Attributes:
        previous: "", `_OPERAND`, `_AMBIGUOUS`, or the last keyword/punctuation token.
        in_print: Whether a `print`/`printf` statement is open.
        depth: Bracket depth inside the open `print` statement.
        parens: One entry per open `(`: True for the parenthesis of an if/while/for header.
    """

    previous: str = ""
    in_print: bool = False
    depth: int = 0
    parens: list[bool] = field(default_factory=list)


def check_awk_program(program: str) -> None:
    """Refuse awk programs that could run commands, write files or read other files.

    Forbidden: `system`, `getline`, `ARGV`/`ARGC`, `ENVIRON`, `@` (gawk `@include`,
    `@load`, indirect calls), any `|` other than `||`, `>`/`>>` at the top level of a
    `print`/`printf` statement (output redirection; put comparisons in parentheses:
    `print ($1 > 5)`), `"` inside a regex literal unless every awk reads a regex there
    (program or rule start, after `(`, `,`, `;`, `!`, `~`, `&&`, `||`), multi-line
    strings and regexes, and a `/` that awks may read differently (division or regex).

    Raises:
        CommandRefused: With the reason.
    """
    scan = _Scan()
    newline = False
    position = 0
    while position < len(program):
        if program[position] == "\n":
            newline, position = True, position + 1
            continue
        after_blank = _skip_blank(program, position)
        if after_blank != position:
            position = after_blank
            continue
        position = _scan_token(program, position, scan, newline=newline)
        newline = False


def _skip_blank(program: str, position: int) -> int:
    """Index past the blank, line continuation or comment at `position` (else `position`).

    A comment ends before its newline, which the caller reads as a line break.
    """
    char = program[position]
    if char.isspace() or program[position : position + 2] in {"\\\n", "\\\r"}:
        return position + (2 if char == "\\" else 1)
    if char == "#":
        end = program.find("\n", position)
        return len(program) if end < 0 else end
    return position


def _scan_token(program: str, position: int, scan: _Scan, *, newline: bool) -> int:
    """Check the token at `position`, update `scan`, and return the index past it."""
    char = program[position]
    if char == "/" and _slash_kind(scan.previous, newline) == "regex":
        certain = scan.previous in _REGEX_CERTAIN or (newline and scan.previous == "}")
        end = _end_of_regex(program, position, quote_allowed=certain)
        scan.previous = _OPERAND
        return end
    if char == '"':
        end = _end_of_string(program, position)
        scan.previous = _OPERAND
        return end
    if not char.isascii():
        # awk names and operators are ASCII; what awk makes of other bytes differs
        # between implementations, so they may appear only in strings and regexes.
        raise _refuse("non-ASCII characters are allowed only inside awk strings and regexes")
    if char.isalpha() or char == "_":
        return _scan_name(program, position, scan)
    if char in _DIGITS or (char == "." and program[position + 1 : position + 2] in _DIGITS):
        end = _number_end(program, position)
        if end < len(program) and _is_name_char(program[end]):
            # awk ends the number where strtod does and reads what follows as a
            # separate name ("1system(...)" is 1 then system(...)): refuse rather
            # than guess where a number ends.
            raise _refuse(
                "a name or letter right after a number is ambiguous in awk; "
                "put a space or an operator between them"
            )
        scan.previous = _OPERAND
        return end
    return _scan_operator(program, position, scan)


def _scan_name(program: str, position: int, scan: _Scan) -> int:
    """Check the name starting at `position`; return the index past it."""
    end = position
    while end < len(program) and _is_name_char(program[end]):
        end += 1
    name = program[position:end]
    if name in _BANNED:
        raise _refuse(_BANNED[name])
    if name in {"print", "printf"}:
        scan.in_print, scan.depth = True, 0
    if name in _KEYWORDS:
        scan.previous = name
    elif name in _AMBIGUOUS_NAMES:
        scan.previous = _AMBIGUOUS
    else:
        scan.previous = _OPERAND
    return end


def _scan_operator(program: str, position: int, scan: _Scan) -> int:
    """Check the operator or punctuation at `position`; return the index past it."""
    char = program[position]
    if char == "@":
        raise _refuse("awk @ directives and indirect calls (@include, @load, @f()) load code")
    if char == "\\":
        raise _refuse("a backslash outside strings and regexes is only allowed before a newline")
    pair = program[position : position + 2]
    token = pair if pair in _TWO_CHAR else char
    if token in {"|", "|&"}:
        raise _refuse("awk pipes run other programs")
    if token in {">", ">>"} and scan.in_print and scan.depth <= 0:
        raise _refuse(
            "awk output redirection writes files; put comparisons in parentheses: print ($1 > 5)"
        )
    if token in {";", "{", "}"}:
        scan.in_print = False
    if token in {"(", "["}:
        scan.depth += 1
        if token == "(":
            scan.parens.append(scan.previous in _HEADERS)
        scan.previous = token
    elif token in {")", "]"}:
        scan.depth -= 1
        header = token == ")" and bool(scan.parens) and scan.parens.pop()
        scan.previous = _AMBIGUOUS if header else _OPERAND
    elif token in {"++", "--"}:
        scan.previous = _AMBIGUOUS
    else:
        scan.previous = token
    return position + len(token)
