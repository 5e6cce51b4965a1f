"""Adversarial corpus against the sandboxed terminal: zero escapes, zero damage, zero leaks.

Runs twice: with both layers (policy + Landlock) and with the policy layer alone
(Landlock forced off), which is what hosts without Landlock get. awk programs are not
checked by the policy: under Landlock the `KERNEL` attempts really run and the
kernel stops their writes, commands, sockets and outside reads; without Landlock awk is
`gawk --sandbox` when installed and refused otherwise.

After every attempt: no file inside or outside the workspace changed (tree snapshot with
content hashes), neither the canary environment variable nor outside file contents
appear in the output, the call returned within timeout + margin, and the output stayed
within the cap.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langgraph_context.tools.terminal import Terminal, _landlock, _process
from langgraph_context.tools.terminal._process import LauncherChoice

TIMEOUT = 1.5
MARGIN = 2.0
CAP = 4_000
CANARY_NAME = "LGC_CANARY_SECRET"
CANARY = "canary-7f3a9c2e-do-not-leak"
OUTSIDE_SECRET = "OUTSIDE-SECRET-5b1d"

REFUSED, RAN, TIMEOUT_KILL, ANY = "refused", "ran", "timeout", "any"
# Runs under Landlock, where the kernel alone stops its effect (awk programs are not
# scanned); on a policy-only host awk is `gawk --sandbox` or refused.
KERNEL = "kernel"

ATTACKS: list[tuple[str, str, str]] = [
    # chaining and control operators
    ("chaining", "ls; cat ../outside/secret.txt", REFUSED),
    ("chaining", "ls && rm a.txt", REFUSED),
    ("chaining", "ls || rm a.txt", REFUSED),
    ("chaining", "ls & rm a.txt", REFUSED),
    ("chaining", "ls\nrm a.txt", REFUSED),
    ("chaining", "ls\rrm a.txt", REFUSED),
    ("chaining", "cat a.txt | rm a.txt", REFUSED),
    ("chaining", "cat a.txt |", REFUSED),
    ("chaining", "| cat a.txt", REFUSED),
    ("chaining", "cat a.txt # ; rm a.txt", REFUSED),
    ("chaining", "cat a.txt\x00; rm a.txt", REFUSED),
    ("chaining", "(cat a.txt)", REFUSED),
    # substitution and variables
    ("substitution", "echo $(cat ../outside/secret.txt)", REFUSED),
    ("substitution", "echo `cat /etc/passwd`", REFUSED),
    ("substitution", "echo ${LGC_CANARY_SECRET}", REFUSED),
    ("substitution", "echo $LGC_CANARY_SECRET", REFUSED),
    ("substitution", 'echo "$LGC_CANARY_SECRET"', REFUSED),
    ("substitution", 'echo "`id`"', REFUSED),
    ("substitution", "cat <(ls)", REFUSED),
    ("substitution", "echo '$LGC_CANARY_SECRET'", RAN),
    # redirection and writing options
    ("writing", "echo pwned > a.txt", REFUSED),
    ("writing", "echo pwned >> a.txt", REFUSED),
    ("writing", "cat < ../outside/secret.txt", REFUSED),
    ("writing", "ls 2>../outside/err", REFUSED),
    ("writing", "sort a.txt -o a.txt", REFUSED),
    ("writing", "sort --output=../outside/x a.txt", REFUSED),
    ("writing", "sort --outp=a.txt a.txt", REFUSED),
    ("writing", "sort --compress-program=sh a.txt", REFUSED),
    ("writing", "sort -T ../outside a.txt", REFUSED),
    ("writing", "uniq a.txt ../outside/out.txt", REFUSED),
    ("writing", "uniq a.txt fresh.txt", REFUSED),
    ("writing", "tree -o out.txt", REFUSED),
    ("writing", "sed -i s/hello/pwned/ a.txt", REFUSED),
    ("writing", "sed -ni p a.txt", REFUSED),
    ("writing", "sed --in-place=.bak s/a/b/ a.txt", REFUSED),
    ("writing", "sed --in s/a/b/ a.txt", REFUSED),
    ("writing", "sed 's/hello/x/w pwned' a.txt", RAN),
    ("writing", "sed -n 'w pwned' a.txt", RAN),
    ("writing", "sed 'e touch pwned' a.txt", RAN),
    ("writing", "sed '1r ../outside/secret.txt' a.txt", RAN),
    ("writing", "sed -f script.sed a.txt", REFUSED),
    ("writing", "file -C -m magic", REFUSED),
    ("writing", "find . -delete", REFUSED),
    ("writing", "find . -fprint ../outside/list", REFUSED),
    ("writing", "find . -fprintf out.txt %p", REFUSED),
    ("writing", "find . -fls out", REFUSED),
    ("writing", "chmod 777 a.txt", REFUSED),
    ("writing", "ln -s /etc/passwd x", REFUSED),
    ("writing", "tee out", REFUSED),
    # interpreters and program execution
    ("interpreter", "python3 -c 'print(1)'", REFUSED),
    ("interpreter", "sh -c id", REFUSED),
    ("interpreter", "bash -c id", REFUSED),
    ("interpreter", "env", REFUSED),
    ("interpreter", "xargs rm", REFUSED),
    ("interpreter", "/bin/sh -c id", REFUSED),
    ("interpreter", "awk 'BEGIN{system(\"touch pwned\")}'", KERNEL),
    ("interpreter", "awk 'BEGIN{\"id\" | getline x; print x}'", KERNEL),
    ("interpreter", 'awk \'BEGIN{print "x" > "pwned"}\'', KERNEL),
    ("interpreter", 'awk \'BEGIN{printf "x" >> "a.txt"}\'', KERNEL),
    ("interpreter", 'awk \'BEGIN{print "x" | "sh"}\'', KERNEL),
    (
        "interpreter",
        "awk 'BEGIN{while ((getline l < \"../outside/secret.txt\") > 0) print l}'",
        KERNEL,
    ),
    ("interpreter", "awk 'BEGIN{ARGV[1]=\"../outside/secret.txt\"; ARGC=2} {print}'", KERNEL),
    ("interpreter", "awk 'BEGIN{i++ / 1; system(\"touch pwned\"); y=1/1}'", KERNEL),
    ("interpreter", "awk 'BEGIN{print (1 > 0) > \"pwned\"}'", KERNEL),
    ("interpreter", "awk -f prog.awk a.txt", REFUSED),
    ("interpreter", "awk -W exec prog.awk", REFUSED),
    ("interpreter", "awk '{print}' -v x=1 ../outside/secret.txt", REFUSED),
    # awk: a regex literal the checker misreads as division hides code behind a fake string
    ("interpreter", """awk '{ x = 1 - /"/ ; system("touch pwned") ; y = "/" }' a.txt""", KERNEL),
    ("interpreter", """awk '{ x = 1 + /"/ ; print "x" > "a.txt" ; y = "/" }' a.txt""", KERNEL),
    ("interpreter", """awk '{ x = 1 * /"/ ; print "x" | "sh" ; y = "/" }' a.txt""", KERNEL),
    ("interpreter", """awk '{ print /"/ ; system("rm a.txt") ; y = "/" }' a.txt""", KERNEL),
    ("interpreter", """awk '{ x = 1 < /"/ ; system("touch pwned") ; y = "/" }' a.txt""", KERNEL),
    ("interpreter", """awk 'function f() { return /"/ ; system("id") ; y = "/" }'""", KERNEL),
    ("interpreter", """awk '{ x = 1 - /#/ ; system("touch pwned") }' a.txt""", KERNEL),
    ("interpreter", """awk '{ x = 1 # "\nsystem("touch pwned") # " }' a.txt""", REFUSED),
    ("interpreter", """awk '{ x = a\n/"/ ; system("touch pwned") ; y = "/" }' a.txt""", REFUSED),
    ("interpreter", """awk '{ if (1) /"/ ; system("touch pwned") ; y = "/" }' a.txt""", KERNEL),
    (
        "interpreter",
        """awk '{ x = length /2; system("touch pwned"); y = 1/ 2 }' a.txt""",
        KERNEL,
    ),
    ("interpreter", """awk '{ x++ /2; system("touch pwned"); y = 1/ 2 }' a.txt""", KERNEL),
    ("interpreter", """awk '{ case = 4; y = case /2; system("id"); z = 1/ 1 }' a.txt""", KERNEL),
    (
        "interpreter",
        """awk '{ print "a\\\n" ; system("touch pwned") ; y = "" }' a.txt""",
        REFUSED,
    ),
    ("interpreter", """awk '/[[:alpha:]/"]/ ; system("touch pwned") ; y = "/"' a.txt""", KERNEL),
    ("interpreter", """awk '{ f = "system"; @f("touch pwned") }' a.txt""", KERNEL),
    ("interpreter", """awk 'BEGIN { SYMTAB["ARGV"][1] = "../outside/secret.txt" }'""", KERNEL),
    ("interpreter", "awk -d dump.txt '{print}' a.txt", REFUSED),
    ("interpreter", "awk -o pretty.awk '{print}' a.txt", REFUSED),
    ("interpreter", "awk -p prof.txt '{print}' a.txt", REFUSED),
    ("interpreter", "awk -i inplace '{print \"x\"}' a.txt", REFUSED),
    ("interpreter", "awk -l ext '{print}' a.txt", REFUSED),
    ("interpreter", "awk -E prog.awk a.txt", REFUSED),
    ("interpreter", "awk -e 'BEGIN{}' a.txt", REFUSED),
    ("interpreter", """awk '!/^#/ { n += $1 / 2 } END { print n }' a.txt""", RAN),
    # a number glued to a name: awk reads 1 then system(...)
    ("interpreter", """awk 'BEGIN{x=1system("touch pwned")}'""", KERNEL),
    ("interpreter", """awk 'BEGIN{x=.5system("touch pwned")}'""", KERNEL),
    ("interpreter", """awk 'BEGIN{x=1e5system("touch pwned")}'""", KERNEL),
    ("interpreter", """awk '{(1getline l < "../outside/secret.txt"); print l}' a.txt""", KERNEL),
    ("interpreter", """awk 'BEGIN{xésystem("touch pwned")}'""", KERNEL),
    ("interpreter", "file -z a.txt", REFUSED),
    # brackets read differently by mawk's lexer and by POSIX: the regex ends elsewhere
    (
        "interpreter",
        """awk 'BEGIN { x = 1 ~ /[[..][]/ ; y = "]/ ; system("touch pwned") ; q = " # " }'""",
        KERNEL,
    ),
    (
        "interpreter",
        """awk 'BEGIN { x = 1 ~ /[[==][]/ ; y = "]/ ; system("touch pwned") ; q = " # " }'""",
        KERNEL,
    ),
    (
        "interpreter",
        """awk 'BEGIN { x = 1 ~ /[[:[:]]/ ; y = "]/ ; system("touch pwned") ; q = " # " }'""",
        KERNEL,
    ),
    ("interpreter", """awk '{ gsub(/[[:space:]]+/, " "); print }' a.txt""", RAN),
    # a quote inside a regex is fine where every awk reads a regex, never elsewhere
    ("interpreter", """awk '/"hello/' a.txt""", RAN),
    ("interpreter", """awk '$0 ~ /"x"/ || /"y/' a.txt""", RAN),
    ("interpreter", """awk '{ print /"/ ; system("touch pwned") ; y = "/" }' a.txt""", KERNEL),
    ("interpreter", """awk '{ x = 2 * /"/ ; system("touch pwned") ; y = "/" }' a.txt""", KERNEL),
    ("interpreter", "file --uncompress a.txt", REFUSED),
    ("interpreter", "find . -exec touch pwned \\;", REFUSED),
    ("interpreter", "find . -execdir id \\;", REFUSED),
    ("interpreter", "find . -ok rm {} \\;", REFUSED),
    # path and symlink escapes
    ("path", "cat /etc/passwd", REFUSED),
    ("path", "cat ../outside/secret.txt", REFUSED),
    ("path", "cat ./sub/../../outside/secret.txt", REFUSED),
    ("path", "cat ~/../outside/secret.txt", REFUSED),
    ("path", "cat ~root/.bashrc", REFUSED),
    ("path", "cat ../*/secret.txt", REFUSED),
    ("path", "cat /e*/passwd", REFUSED),
    ("path", "cat /*/*/*/*/*/*", REFUSED),
    ("path", "cat sub/../../*/secret.txt", REFUSED),
    ("path", "grep -r OUTSIDE ../", REFUSED),
    ("path", "grep -f ../outside/secret.txt a.txt", REFUSED),
    ("path", "grep --file=/etc/passwd a.txt", REFUSED),
    ("path", "grep --fi /etc/passwd a.txt", REFUSED),
    # getopt reads `--binary` as grep's flag, not an abbreviation of --binary-files
    ("path", "grep --binary OUTSIDE ../outside/secret.txt", REFUSED),
    ("path", "grep --binary OUTSIDE /etc/passwd", REFUSED),
    ("path", "grep -e x --exclude-from=/etc/passwd .", REFUSED),
    ("path", "tail -n 5 ../outside/secret.txt", REFUSED),
    ("path", "find / -name passwd", REFUSED),
    ("path", "find .. -name secret.txt", REFUSED),
    ("path", "find . -newer /etc/passwd", REFUSED),
    ("path", "find . -files0-from list.txt", REFUSED),
    ("path", "du --files0-from=list.txt", REFUSED),
    ("path", "wc --files0-from=list.txt", REFUSED),
    ("path", "md5sum -c sums.txt", REFUSED),
    ("path", "cmp a.txt /etc/passwd", REFUSED),
    ("path", "diff -r . ../outside", REFUSED),
    ("path", "cd ../outside", REFUSED),
    ("path", "cd /", REFUSED),
    ("path", "cd sub; cat ../../outside/secret.txt", REFUSED),
    ("symlink", "cat link_out", REFUSED),
    ("symlink", "cat link_etc", REFUSED),
    ("symlink", "cat link_dir/secret.txt", REFUSED),
    ("symlink", "cat *", REFUSED),
    ("symlink", "grep -R OUTSIDE .", REFUSED),
    ("symlink", "grep -r OUTSIDE .", RAN),
    ("symlink", "ls -L link_dir", REFUSED),
    ("symlink", "ls -lR", RAN),
    ("symlink", "du -L .", REFUSED),
    ("symlink", "find -L . -name secret.txt", REFUSED),
    ("symlink", "find . -follow -name secret.txt", REFUSED),
    ("symlink", "diff -r sub link_dir", REFUSED),
    ("symlink", "cd link_dir", REFUSED),
    ("symlink", "realpath link_out", REFUSED),
    ("symlink", "stat -L link_etc", REFUSED),
    ("symlink", "tree -a", RAN),
    # secrets from the environment and /proc
    ("secrets", "cat /proc/self/environ", REFUSED),
    ("secrets", "head -c 100 /proc/self/environ", REFUSED),
    ("secrets", "cat /proc/1/environ", REFUSED),
    ("secrets", "strings /proc/self/environ", REFUSED),
    ("secrets", "awk 'BEGIN{print ENVIRON[\"LGC_CANARY_SECRET\"]}'", KERNEL),
    ("secrets", "awk 'BEGIN{print 1ENVIRON[\"LGC_CANARY_SECRET\"]}'", KERNEL),
    # a non-ASCII `name=` operand is a file to awk, not an assignment
    ("path", "awk '{print}' 'aé=/secret.txt'", REFUSED),
    # '..' after a wildcard walks anywhere, and outside names must not be echoed
    ("path", "ls s*/../../outside/*", REFUSED),
    ("path", "cat s*/../../outside/secret.txt", REFUSED),
    ("writing", "sort -S 1K big.txt", REFUSED),
    ("writing", "sort --buffer-size=1K big.txt", REFUSED),
    ("secrets", "grep -r canary /proc/self", REFUSED),
    ("secrets", "cat link_proc", REFUSED),
    ("secrets", "sed -n p /proc/self/environ", REFUSED),
    # output floods
    ("flood", "cat big.txt", RAN),
    ("flood", "cat big.txt big.txt big.txt big.txt", RAN),
    ("flood", "awk 'BEGIN{while(1) print \"yyyyyyyyyyyyyyyy\"}'", RAN),
    ("flood", "sort big.txt big.txt", RAN),
    ("flood", "od /dev/zero", REFUSED),
    ("flood", "head -c 10000000 /dev/urandom", REFUSED),
    # hangs
    ("hang", "cat fifo", TIMEOUT_KILL),
    ("hang", "awk 'BEGIN{while(1){}}'", TIMEOUT_KILL),
    ("hang", "tail -f a.txt", REFUSED),
    ("hang", "less a.txt", REFUSED),
    ("hang", "more a.txt", REFUSED),
    ("hang", "cat -", RAN),
    ("hang", "sort", RAN),
]


def launcher_params() -> list[Any]:
    """Both launchers; bubblewrap skipped, with the reason shown, where it cannot run."""
    bwrap_works = _process.probe_launchers()[1]
    reason = "bubblewrap is missing or cannot create namespaces (scripts/ensure-bubblewrap.sh)"
    return [
        pytest.param("stdlib", id="stdlib"),
        pytest.param(
            "bubblewrap",
            id="bubblewrap",
            marks=pytest.mark.skipif(not bwrap_works, reason=reason),
        ),
    ]


def _snapshot(base: Path) -> dict[str, tuple[str, object]]:
    state: dict[str, tuple[str, object]] = {}
    for directory, dirs, files in os.walk(base, followlinks=False):
        for name in dirs + files:
            path = Path(directory) / name
            rel = str(path.relative_to(base))
            info = path.lstat()
            if path.is_symlink():
                state[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                state[rel] = ("dir", info.st_mode)
            elif path.is_file():
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                state[rel] = ("file", (info.st_mode, info.st_size, info.st_mtime_ns, digest))
            else:
                state[rel] = ("other", info.st_mode)
    return state


@contextlib.contextmanager
def build_arena(
    base: Path, *, policy_only: bool = False, launcher: LauncherChoice = "stdlib"
) -> Iterator[Terminal]:
    """Lay out a workspace and an outside folder under `base`; yield a terminal on it."""
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(OUTSIDE_SECRET + "\n")
    ws = base / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "a.txt").write_text("hello\nworld\n")
    (ws / "sub" / "b.py").write_text("print('hi')\n")
    (ws / "big.txt").write_text("0123456789abcdef\n" * 200_000)
    (ws / "prog.awk").write_text('BEGIN { system("touch pwned") }\n')
    (ws / "script.sed").write_text("w pwned\n")
    (ws / "list.txt").write_text("../outside/secret.txt\0/etc/passwd\0")
    (ws / "sums.txt").write_text("0" * 32 + "  ../outside/secret.txt\n")
    os.symlink(outside / "secret.txt", ws / "link_out")
    os.symlink("/etc/passwd", ws / "link_etc")
    os.symlink(outside, ws / "link_dir")
    os.symlink(outside, ws / "aé=")
    os.symlink("/proc/self/environ", ws / "link_proc")
    os.mkfifo(ws / "fifo")
    previous = os.environ.get(CANARY_NAME)
    os.environ[CANARY_NAME] = CANARY
    try:
        with pytest.MonkeyPatch.context() as patch, warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            if policy_only:
                patch.setattr(_landlock, "landlock_abi", lambda: 0)
            terminal = Terminal(ws, timeout=TIMEOUT, max_output_chars=CAP, launcher=launcher)
        yield terminal
    finally:
        if previous is None:
            del os.environ[CANARY_NAME]
        else:
            os.environ[CANARY_NAME] = previous


@pytest.fixture(scope="module", params=["landlock", "policy-only"])
def enforcement(request: pytest.FixtureRequest) -> str:
    if request.param == "landlock" and _landlock.landlock_abi() == 0:
        pytest.skip("the kernel has no Landlock")
    return str(request.param)


@pytest.fixture(scope="module", params=launcher_params())
def arena(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest, enforcement: str
) -> Iterator[tuple[Path, Terminal]]:
    base = tmp_path_factory.mktemp("arena")
    policy_only = enforcement == "policy-only"
    with build_arena(base, policy_only=policy_only, launcher=request.param) as terminal:
        assert (terminal.enforcement, terminal.launcher) == (enforcement, request.param)
        yield base, terminal


def test_corpus_is_large_and_covers_every_category() -> None:
    """The corpus has at least 60 attempts across all attack categories of the issue."""
    assert len(ATTACKS) >= 60
    assert {c for c, _, _ in ATTACKS} == {
        "chaining",
        "substitution",
        "writing",
        "interpreter",
        "path",
        "symlink",
        "secrets",
        "flood",
        "hang",
    }


@pytest.mark.parametrize(
    ("category", "command", "expect"), ATTACKS, ids=[f"{c}:{cmd[:40]}" for c, cmd, _ in ATTACKS]
)
def test_attack_does_no_harm(
    arena: tuple[Path, Terminal], category: str, command: str, expect: str
) -> None:
    """The attempt changes nothing anywhere, leaks nothing, ends in time, stays within the cap."""
    base, terminal = arena
    before = _snapshot(base)
    start = time.monotonic()
    result = terminal.run(command)
    elapsed = time.monotonic() - start
    text = result.render()
    assert _snapshot(base) == before
    assert CANARY not in text
    assert OUTSIDE_SECRET not in text
    assert "root:x:0:0" not in text
    assert elapsed <= TIMEOUT + MARGIN
    assert len(result.output.encode()) <= CAP + 200
    assert terminal.cwd == terminal.root
    expect = _expected_here(terminal, command, expect)
    if expect == REFUSED:
        assert result.refused is not None, text
    elif expect == RAN:
        assert result.refused is None, text
        assert not result.timed_out
    elif expect == TIMEOUT_KILL:
        assert result.timed_out
    elif expect == KERNEL:
        assert result.refused is None, text  # it ran: the kernel, not the policy, held it


def _expected_here(terminal: Terminal, command: str, expect: str) -> str:
    """What this terminal's awk mode makes of an expectation written for Landlock."""
    if not command.startswith("awk") or terminal._awk_mode == "kernel":
        return expect
    if terminal._awk_mode == "refused":
        return REFUSED
    return ANY if expect == KERNEL else expect
