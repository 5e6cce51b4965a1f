"""The injection rules' literal prefilter: it never skips a pattern that can match.

The prefilter tests a pattern's required literals against the same string the
pattern then runs on (the view), so soundness is a property of each regex alone:
for every string the pattern matches, some literal of its set occurs in that string.
The strings are therefore generated straight from each pattern with `from_regex`
(prefix and suffix included), not run through the shadowing first; shadowing only
decides which string a pattern sees, and the same string is what both see.
"""

from __future__ import annotations

import base64
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langgraph_context.safety import _literals, find_injections, sanitize
from langgraph_context.safety._literals import LiteralFilter, required_literals
from langgraph_context.safety.patterns import COMPLIANCE_PATTERNS
from langgraph_context.safety.sanitize import _find, _rule_filter
from tests._corpus import CORPUS

FILTER = _rule_filter()
RULES = FILTER.patterns
ALL_PATTERNS = (*RULES, *COMPLIANCE_PATTERNS)
GENERATION = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much]
)


def _kept(pattern: re.Pattern[str], text: str) -> bool:
    return LiteralFilter([pattern]).matchable(text)[0]


@pytest.mark.parametrize("index", range(len(ALL_PATTERNS)))
@GENERATION
@given(data=st.data())
def test_prefilter_keeps_every_pattern_on_its_own_matches(index: int, data: Any) -> None:
    """A string a rule matches always contains one of the rule's literals."""
    pattern = ALL_PATTERNS[index]
    text = data.draw(st.from_regex(pattern, fullmatch=False))
    assert pattern.search(text)
    assert _kept(pattern, text)


def test_the_rules_have_literals() -> None:
    """Nearly every rule gets a literal set, so the prefilter skips most of them."""
    without = [p.pattern for p in RULES if required_literals(p) is None]
    assert without == []


CONSTRUCTS = [
    r"ab(?:c|d)e",
    r"x?(?:ab|)cd",
    r"(?:foo|bar\s+baz)+qux",
    r"a{0,3}b{2}c",
    r"(?:\w+|lit)z",
    r"[abc]{1,2}\d[x-z]",
    r"(?<=q)ab(?=cd)c",
    r"^(?:system|user)\s*:",
    r"(?i)kite",
    r"(?i)in[-_]?",
    r"i(?i:n)x",
    r"(?i:SIGN)\s+ok",
    r"(?>ab|cd)ef",
    r"[^a]bc|de",
]


@pytest.mark.parametrize("source", CONSTRUCTS)
@GENERATION
@given(data=st.data())
def test_prefilter_is_sound_on_each_regex_construct(source: str, data: Any) -> None:
    """Branches, repeats, classes, anchors, lookarounds and flags all keep the match."""
    pattern = re.compile(source)
    text = data.draw(st.from_regex(pattern, fullmatch=False))
    assert _kept(pattern, text)


LITERALS = sorted(FILTER._prefixes)
literal_soup = st.lists(
    st.one_of(st.sampled_from(LITERALS), st.sampled_from(LITERALS).map(lambda s: s[1:]), st.text()),
    max_size=6,
).map("".join)


@GENERATION
@given(text=literal_soup)
def test_the_literal_finder_finds_exactly_the_literals_in_the_text(text: str) -> None:
    """Overlapping, nested and cut literals: both searches find each one."""
    expected = {lit for lit in LITERALS if lit in text}
    assert FILTER.present_by_regex(text) == expected
    assert FILTER.present(text) == expected


def test_the_automaton_is_used_when_pyahocorasick_is_installed() -> None:
    """The dev extra installs it (as the fast one does), so the tests above check it."""
    pytest.importorskip("ahocorasick")
    assert FILTER._automaton is not None
    assert FILTER.present("please IGNORE".lower()) == FILTER.present_by_regex("please ignore")


def test_ignorecase_letters_are_not_literals() -> None:
    """Under IGNORECASE `i` also matches the dotless i U+0131: a cased letter is no literal."""
    assert required_literals(re.compile("(?i)kit")) is None
    assert _kept(re.compile("(?i)kit"), "\u212ait")
    assert required_literals(re.compile("(?i)k-9")) == frozenset({"-9"})


def test_optional_and_alternative_items_give_their_union_or_nothing() -> None:
    """An optional item needs nothing; a branch needs the union of its branches."""
    assert required_literals(re.compile(r"(?:ab|cd)\s")) == frozenset({"ab", "cd"})
    assert required_literals(re.compile(r"(?:ab|\w)\s")) is None
    assert required_literals(re.compile(r"instructions?\b")) == frozenset({"instruction"})
    assert required_literals(re.compile(r"(?:ab)?\s+")) is None


def _corpus_texts() -> list[str]:
    texts: list[str] = []
    for items in CORPUS.values():
        for item in items:
            texts.append(item["text"] if isinstance(item, dict) else str(item))
    return texts


CORPUS_TEXTS = _corpus_texts()


def test_findings_are_unchanged_on_the_attack_corpus() -> None:
    """Every corpus text (attacks, benign, held-out, replies) gets identical findings."""
    assert len(CORPUS_TEXTS) > 200
    for text in CORPUS_TEXTS:
        assert find_injections(text) == _find(text, 0, prefilter=False), text
    encoded = [base64.b64encode(t.encode()).decode() for t in CORPUS_TEXTS[:40]]
    for text in encoded:
        assert find_injections(text) == _find(text, 0, prefilter=False), text


def _disguised(text: str, style: int) -> str:
    if style == 1:
        return text.upper()
    if style == 2:
        return text.replace("o", "0").replace("e", "3").replace("a", "\u0430")
    if style == 3:
        return "\u200b".join(text)
    return text


pieces = st.one_of(
    st.sampled_from(CORPUS_TEXTS),
    st.sampled_from(ALL_PATTERNS).flatmap(lambda p: st.from_regex(p, fullmatch=False)),
    st.text(max_size=20),
    st.sampled_from(["\n", " ", ". ", "SYSTEM: ", "\uff49gnore ", "<|im_start|>"]),
)
generated = st.tuples(st.lists(pieces, max_size=4).map("".join), st.integers(0, 3)).map(
    lambda pair: _disguised(*pair)
)


@GENERATION
@given(text=generated)
def test_findings_are_unchanged_on_generated_text(text: str) -> None:
    """Mixed attacks, benign text, rule matches and disguises: identical findings."""
    assert find_injections(text) == _find(text, 0, prefilter=False)


def test_without_pyahocorasick_the_regex_finds_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fallback end to end: a filter built without the automaton gives `_find`'s
    findings on the whole attack corpus."""
    monkeypatch.setattr(_literals, "ahocorasick", None)
    plain = LiteralFilter(FILTER.patterns)
    assert plain._automaton is None
    expected = [_find(text, 0) for text in CORPUS_TEXTS]
    monkeypatch.setattr(sanitize, "_rule_filter", lambda: plain)
    assert [_find(text, 0) for text in CORPUS_TEXTS] == expected
    assert any(expected)
