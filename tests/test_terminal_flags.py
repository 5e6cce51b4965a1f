"""Every option must be in the tables: unknown ones are refused, named, with what is allowed."""

from __future__ import annotations

from pathlib import Path

import pytest

from langgraph_context.tools.terminal import Terminal


@pytest.fixture
def term(tmp_path: Path) -> Terminal:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x = 1\n# TODO\n")
    (root / "data.csv").write_text("b,2\na,1\na,1\n")
    return Terminal(root)


@pytest.mark.parametrize(
    "command",
    [
        "grep -rn TODO src",
        "grep -rnw5 TODO src",
        "grep -rne TODO src",
        "grep --color=never --line-number TODO src/a.py",
        "ls -la",
        "ls -1 --group-directories-first --time=ctime -lt",
        "sort -u -t, -k2 data.csv",
        "sort -rn data.csv",
        "uniq --all-repeated data.csv",
        "cut -d, -f1 --complement data.csv",
        "wc -lw data.csv",
        "du -sh --apparent-size src",
        "diff -u --strip-trailing-cr data.csv data.csv",
        "diff -W 60 --side-by-side data.csv data.csv",
        "od -An -c -w4 data.csv",
        "cat -A data.csv",
        "file -b --mime-type data.csv",
        "stat -L -c %s data.csv",
        "realpath -e --relative-to=src data.csv",
        "tail -qn 1 data.csv",
        "nl -p -ba data.csv",
    ],
)
def test_listed_options_run(term: Terminal, command: str) -> None:
    result = term.run(command)
    assert result.refused is None, result.refused
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("command", "named"),
    [
        ("grep -y TODO src", "grep -y is not a known option here"),
        ("grep -rX TODO src", "grep -X is not a known option here"),
        ("grep --bogus TODO src", "grep --bogus is not a known option here"),
        ("ls --sort-by=size", "ls --sort-by is not a known option here"),
        ("od -X data.csv", "od -X is not a known option here"),
        ("sed --follow-symlinks -n p data.csv", "sed --follow-symlinks is not a known option"),
        ("diff --old-line-format=x data.csv data.csv", "--old-line-format is not a known"),
        ("md5sum --strict data.csv", "md5sum --strict is not a known option here"),
    ],
)
def test_unknown_options_are_refused_by_name(term: Terminal, command: str, named: str) -> None:
    refused = term.run(command).refused
    assert refused is not None
    assert named in refused
    assert "allowed" in refused


def test_refusal_lists_the_first_twenty_then_ellipsis(term: Terminal) -> None:
    refused = term.run("ls -e").refused
    assert refused is not None
    listed = refused.split("allowed options: ")[1]
    assert listed.endswith(", ...")
    assert len(listed.removesuffix(", ...").split(", ")) == 20
    short = term.run("cmp -x data.csv data.csv").refused
    assert short == "cmp -x is not a known option here; allowed options: -b, -i, -l, -n, -s, -v"


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("sort --rev data.csv", "sort --rev: write long options in full (--reverse)"),
        ("ls --al", "ls --al: write long options in full (--all, --almost-all)"),
        ("grep --binary TODO src", None),  # a full name: a flag, not --binary-files
        ("sed -ni p data.csv", "sed -i is not allowed"),
        ("file -bp data.csv", "file -p is not allowed"),
        ("file --no-sandbox data.csv", "file --no-sandbox is not allowed"),
        ("diff -l data.csv data.csv", "diff -l is not allowed: it runs another program"),
        ("ls -lL", "ls -L is not allowed"),
    ],
)
def test_abbreviations_and_denials(term: Terminal, command: str, reason: str | None) -> None:
    refused = term.run(command).refused
    if reason is None:
        assert refused is None
    else:
        assert refused is not None
        assert refused.startswith(reason)


def test_value_inside_a_cluster_keeps_its_rules(term: Terminal) -> None:
    """`-f` ends a cluster and takes the rest or the next word, path-checked."""
    refused = term.run("grep -rf /etc/passwd src").refused
    assert refused is not None
    assert "outside the workspace" in refused
    assert term.run("cut -sd, -f1 data.csv").output == "b\na\na\n"
    assert term.run("sort -t, -k2n data.csv").refused is None
