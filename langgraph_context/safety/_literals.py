r"""A sound literal prefilter for the injection rules: skip a pattern that cannot match.

For each pattern, `required_literals` derives a set of strings at least one of which
every match contains (or `None`: no such set is known, so the pattern always runs).
A text containing none of them cannot match, so `finditer` over it is skipped. The
rules are 63 patterns, mostly run over short texts; most texts contain none of most
patterns' words, and finding all the literals costs about as much as two `finditer`s.

The derivation walks the parsed pattern (`re._parser`, the stdlib's own parser):

* a literal character is itself; a character class of a few literal characters is
  that set; several such items in a row are their concatenations (`instructions?`
  gives `instruction`, `instructions`), kept while the product stays small;
* an alternation is the union of its branches' sets (none if any branch has none);
* a repeat with a minimum of one or more needs what its body needs; an optional item
  needs nothing, but when its body is exact it still extends the run beside it;
* a sequence needs the most selective of its items' sets (the longest shortest
  string, then the fewest strings);
* anchors are empty and keep a run going; lookarounds, `.`, `\s`, `\w`, negated
  classes and back-references give nothing and end a run.

Case: every rule runs on a lower-cased view and is written in lower case, so a
literal is compared as written. Under `re.IGNORECASE` a cased letter also matches
other letters (`i` matches the dotless i U+0131, `k` the Kelvin sign), so there
only uncased characters count as literals.

The ~300 literals are found in one pass of an Aho-Corasick automaton when
`pyahocorasick` is installed (the `fast` extra: about 2 us for a 200-character text),
else of a regular expression shaped as their prefix tree (`_trie`, about 15 us: the
engine tries the tree's branches at every position). Both find exactly the literals
that occur; the tests compare them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from re import _casefix  # type: ignore[attr-defined]
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

try:  # optional (the `fast` extra): a C multi-literal search, ~7x the regex's speed
    import ahocorasick  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # pragma: no cover - the regular expression below does the same
    ahocorasick = None

# A run's product of exact strings is cut (and the run restarted) beyond this many.
_MAX_PRODUCT = 64
# A character class counts as exact when it holds at most this many characters.
_MAX_CLASS = 8

_Exact = frozenset[str] | None
_Needed = frozenset[str] | None


def required_literals(pattern: re.Pattern[str]) -> frozenset[str] | None:
    r"""Strings one of which every match of `pattern` contains, or `None` if unknown.

    Example:
        >>> sorted(required_literals(re.compile(r"\b(?:ignore|forget)\s+rules?")))
        ['forget', 'ignore']
    """
    parsed = sre_parse.parse(pattern.pattern, pattern.flags)
    ignore_case = bool(pattern.flags & re.IGNORECASE)
    _, needed = _sequence(list(parsed), ignore_case)
    return needed


def _best(candidates: Iterable[frozenset[str]]) -> _Needed:
    """The most selective set: longest shortest string, then fewest strings."""
    best: _Needed = None
    for found in candidates:
        reduced = _minimal(found)
        if not reduced or "" in reduced:
            continue
        if best is None or _rank(reduced) > _rank(best):
            best = reduced
    return best


def _rank(strings: frozenset[str]) -> tuple[int, int]:
    return min(len(s) for s in strings), -len(strings)


def _minimal(strings: frozenset[str]) -> frozenset[str]:
    """Drop strings containing another of the set: finding the shorter one suffices."""
    ordered = sorted(strings, key=len)
    kept: list[str] = []
    for s in ordered:
        if not any(k in s for k in kept):
            kept.append(s)
    return frozenset(kept)


def _sequence(items: Sequence[tuple[Any, Any]], ignore_case: bool) -> tuple[_Exact, _Needed]:
    """(exact strings the sequence matches, or None; strings one of which it needs)."""
    candidates: list[frozenset[str]] = []
    run: frozenset[str] = frozenset({""})
    whole_exact = True
    for op, av in items:
        exact, needed = _item(op, av, ignore_case)
        if exact is not None:
            product = frozenset(a + b for a in run for b in exact)
            if len(product) <= _MAX_PRODUCT:
                run = product
                continue
            candidates.append(run)
            run = exact
            whole_exact = False
            continue
        whole_exact = False
        candidates.append(run)
        run = frozenset({""})
        if needed is not None:
            candidates.append(needed)
    candidates.append(run)
    return (run if whole_exact else None), _best(candidates)


def _item(op: Any, av: Any, ignore_case: bool) -> tuple[_Exact, _Needed]:
    if op is sre.LITERAL:
        char = chr(av)
        if ignore_case and _cased(char):
            return None, None
        return frozenset({char}), frozenset({char})
    if op is sre.IN:
        chars = _class_chars(av, ignore_case)
        return chars, chars
    if op is sre.AT:
        return frozenset({""}), None
    if op is sre.BRANCH:
        return _branch(av[1], ignore_case)
    if op is sre.SUBPATTERN:
        _, add_flags, del_flags, body = av
        inner = (ignore_case or bool(add_flags & re.IGNORECASE)) and not (del_flags & re.IGNORECASE)
        return _sequence(list(body), inner)
    if op is sre.ATOMIC_GROUP:
        return _sequence(list(av), ignore_case)
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        low, high, body = av
        exact, needed = _sequence(list(body), ignore_case)
        if low == high == 1:
            return exact, needed
        if low == 0 and high == 1 and exact is not None:
            return exact | {""}, None
        return None, (needed if low >= 1 else None)
    # ANY, NOT_LITERAL, CATEGORY, ASSERT, ASSERT_NOT, GROUPREF, GROUPREF_EXISTS, ...
    return None, None


def _branch(branches: Sequence[Any], ignore_case: bool) -> tuple[_Exact, _Needed]:
    results = [_sequence(list(b), ignore_case) for b in branches]
    exact: _Exact = None
    if all(e is not None for e, _ in results):
        union = frozenset().union(*(e for e, _ in results if e is not None))
        exact = union if len(union) <= _MAX_PRODUCT else None
    if any(n is None for _, n in results):
        return exact, None
    needed = _minimal(frozenset().union(*(n for _, n in results if n is not None)))
    return exact, needed


def _class_chars(items: Sequence[tuple[Any, Any]], ignore_case: bool) -> _Exact:
    """The characters of a class made of literals and small ranges, else `None`."""
    chars: set[str] = set()
    for op, av in items:
        if op is sre.LITERAL:
            chars.add(chr(av))
        elif op is sre.RANGE and av[1] - av[0] < _MAX_CLASS:
            chars.update(chr(c) for c in range(av[0], av[1] + 1))
        else:  # NEGATE, CATEGORY, a wide range
            return None
        if len(chars) > _MAX_CLASS:
            return None
    if ignore_case and any(_cased(c) for c in chars):
        return None
    return frozenset(chars)


def _cased(char: str) -> bool:
    """Whether IGNORECASE matching could let `char` match another character."""
    return char.lower() != char.upper() or ord(char.lower()) in _EXTRA_CASES


_EXTRA_CASES: frozenset[int] = frozenset(_casefix._EXTRA_CASES)


class LiteralFilter:
    """Tells, per text, which of a fixed list of patterns can match it."""

    def __init__(self, patterns: Iterable[re.Pattern[str]]) -> None:
        """Derive each pattern's literals once, and one expression that finds them all."""
        self.patterns = tuple(patterns)
        self._needs = tuple(required_literals(pattern) for pattern in self.patterns)
        wanted = sorted(set().union(*(n for n in self._needs if n is not None)))
        # At every position (a lookahead matches empty, so `findall` tries each), the
        # longest literal starting there; the literals that are its prefixes start there too.
        self._finder = re.compile(f"(?=({_trie(wanted)}))") if wanted else None
        self._prefixes = {lit: [p for p in wanted if lit.startswith(p)] for lit in wanted}
        self._automaton = _automaton(wanted) if wanted and ahocorasick is not None else None
        # `matchable` of a text holding no literal: only the patterns without literals
        self._bare = tuple(need is None for need in self._needs)

    def present(self, text: str) -> set[str]:
        """The literals of any pattern that occur in `text`."""
        if self._automaton is not None:
            return {literal for _, literal in self._automaton.iter(text)}
        return self.present_by_regex(text)

    def present_by_regex(self, text: str) -> set[str]:
        """`present` by the prefix-tree expression (the search without `pyahocorasick`)."""
        if self._finder is None:
            return set()
        found: set[str] = set()
        for longest in set(self._finder.findall(text)):
            found.update(self._prefixes[longest])
        return found

    def matchable(self, text: str) -> Sequence[bool]:
        """For each pattern (in order), whether it can match `text`."""
        present = self.present(text)
        if not present:
            return self._bare
        return [need is None or not need.isdisjoint(present) for need in self._needs]

    def everything(self) -> Sequence[bool]:
        """Every pattern runs: `matchable` with the filter off."""
        return (True,) * len(self._needs)


def _automaton(literals: Sequence[str]) -> Any:
    """An Aho-Corasick automaton whose matches are the literals themselves."""
    automaton = ahocorasick.Automaton()
    for literal in literals:
        automaton.add_word(literal, literal)
    automaton.make_automaton()
    return automaton


def _trie(words: Sequence[str]) -> str:
    """An expression matching exactly `words` (distinct, sorted), as a prefix tree.

    Each branch starts with its own character, so at any position at most one branch
    goes on, and greedy optional tails make the match the longest word there. One
    alternation of ~300 words would try every word at every position (~7x slower).
    """
    ends_here = "" in words
    groups: dict[str, list[str]] = {}
    for word in words:
        if word:
            groups.setdefault(word[0], []).append(word[1:])
    branches = [re.escape(first) + _trie(rest) for first, rest in sorted(groups.items())]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    return f"(?:{body})?" if ends_here else body
