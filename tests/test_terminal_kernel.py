"""The kernel layer alone: with every policy check bypassed, nothing is written, read or leaked.

The private hook `Terminal._bypass_policy` hands the raw command line to `/bin/sh -c`
inside the Landlock + seccomp sandbox: no word checks, no option tables, no path
confinement, a real shell with redirections and variables, and every binary in /usr.
The whole adversarial corpus of `test_terminal_attacks` runs that way, plus attacks
aimed at the kernel layer itself.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from langgraph_context.tools.terminal import Terminal
from langgraph_context.tools.terminal._landlock import landlock_abi
from tests.test_terminal_attacks import (
    ATTACKS,
    CANARY,
    CANARY_NAME,
    CAP,
    MARGIN,
    OUTSIDE_SECRET,
    TIMEOUT,
    _snapshot,
    build_arena,
    launcher_params,
)

pytestmark = pytest.mark.skipif(landlock_abi() == 0, reason="the kernel has no Landlock")

PID = os.getpid()

# Aimed at the kernel layer; `{out}` is the outside directory, `{pid}` the host process,
# `{fd}` an inheritable descriptor the host holds open on the outside secret, `{port}`
# a TCP port and `{sock}` a unix socket the host listens on.
KERNEL_ATTACKS: list[str] = [
    "echo pwned > a.txt",
    "echo pwned >> a.txt",
    ": > a.txt",
    "touch pwned",
    "touch a.txt",
    "touch -d 2000-01-01 a.txt",
    "chmod 777 a.txt",
    "chmod 777 .",
    "truncate -s 0 a.txt",
    "rm -f a.txt",
    "rm -rf sub",
    "mv a.txt b.txt",
    "mkdir newdir",
    "mkfifo newfifo",
    "ln -s {out}/secret.txt newlink",
    "ln {out}/secret.txt hardlink",
    "cp a.txt {out}/copy",
    "cat {out}/secret.txt",
    "cat link_out",
    "cat link_dir/secret.txt",
    "cat /proc/self/root{out}/secret.txt",
    "cat /proc/{pid}/root{out}/secret.txt",
    "cat /proc/{pid}/cwd/../../../..{out}/secret.txt",
    "ls /proc/{pid}/cwd",
    "cat /proc/{pid}/environ",
    "cat /proc/*/environ",
    "cat /proc/self/environ",
    "cat /proc/{pid}/fd/{fd}",
    "cat /proc/self/fd/{fd}",
    "cat <&{fd}",
    "cat /dev/fd/{fd}",
    "env",
    "set",
    "cat /etc/passwd",
    "cat /etc/shadow",
    "ls {out}",
    "LD_PRELOAD={out}/evil.so cat a.txt",
    "LD_LIBRARY_PATH={out} cat a.txt",
    "kill -9 {pid}",
    "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}))'",
    "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"{sock}\")'",
    "python3 -c 'import os; os.utime(\"a.txt\", (0, 0))'",
    "python3 -c 'import os; os.chmod(\"a.txt\", 0o777)'",
    "python3 -c 'import os; os.truncate(\"a.txt\", 0)'",
    'python3 -c \'import os; os.setxattr("a.txt", "user.x", b"1")\'',
    "python3 -c 'print(open(\"{out}/secret.txt\").read())'",
    "sed -i s/hello/pwned/ a.txt",
    'awk \'BEGIN{{system("touch pwned"); print "x" > "a.txt"}}\'',
    "awk 'BEGIN{{while ((getline l < \"{out}/secret.txt\") > 0) print l}}'",
    "find / -name secret.txt -exec cat {{}} +",
    "grep -r OUTSIDE /",
    "tar cf - {out}",
    "sort -o a.txt a.txt",
]


@pytest.fixture(scope="module", params=launcher_params())
def bypassed(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[tuple[Path, Terminal, dict]]:
    base = tmp_path_factory.mktemp("kernel")
    with build_arena(base, launcher=request.param) as terminal:
        terminal._bypass_policy = True
        out = base / "outside"
        os.link(out / "secret.txt", out / "hard-source")  # same file system for `ln`
        fd = os.open(out / "secret.txt", os.O_RDONLY)
        os.set_inheritable(fd, True)
        server = socket.create_server(("127.0.0.1", 0))
        unix = socket.socket(socket.AF_UNIX)
        unix_path = str(out / "sock")
        unix.bind(unix_path)
        unix.listen()
        values = {"out": str(out), "pid": PID, "fd": fd, "port": server.getsockname()[1]}
        values["sock"] = unix_path
        server.settimeout(0.01)
        try:
            yield base, terminal, values
        finally:
            os.close(fd)
            server.close()
            unix.close()


def _assert_harmless(base: Path, terminal: Terminal, command: str) -> None:
    before = _snapshot(base)
    start = time.monotonic()
    result = terminal.run(command)
    elapsed = time.monotonic() - start
    text = result.render()
    assert _snapshot(base) == before, text
    assert CANARY not in text, text
    assert OUTSIDE_SECRET not in text, text
    assert "root:x:0:0" not in text, text
    assert elapsed <= TIMEOUT + MARGIN
    assert len(result.output.encode()) <= CAP + 200
    # The kernel layer stopped it, not the parser (argv cannot carry a NUL byte at all).
    assert result.refused is None or "NUL" in result.refused, text


@pytest.mark.parametrize(
    "command", [cmd for _, cmd, _ in ATTACKS], ids=[cmd[:40] for _, cmd, _ in ATTACKS]
)
def test_corpus_with_the_policy_bypassed_does_no_harm(
    bypassed: tuple[Path, Terminal, dict], command: str
) -> None:
    """Every attack of the corpus, run by a real shell with no policy, changes and leaks nothing."""
    base, terminal, _ = bypassed
    _assert_harmless(base, terminal, command)


@pytest.mark.parametrize("template", KERNEL_ATTACKS)
def test_attacks_on_the_kernel_layer_do_no_harm(
    bypassed: tuple[Path, Terminal, dict], template: str
) -> None:
    """Writes, outside reads, /proc, inherited fds, loader variables, sockets: all stopped."""
    base, terminal, values = bypassed
    _assert_harmless(base, terminal, template.format(**values))


def test_network_connect_never_reaches_the_listener(bypassed: tuple[Path, Terminal, dict]) -> None:
    """A TCP connect from the sandbox fails: the listening socket never sees a connection."""
    _, terminal, values = bypassed
    command = KERNEL_ATTACKS[39].format(**values)
    result = terminal.run(command)
    assert "PermissionError" in result.output or "Operation not permitted" in result.output
    assert result.exit_code != 0


def test_the_bypass_really_runs_a_shell(bypassed: tuple[Path, Terminal, dict]) -> None:
    """The hook is real: the shell runs, reads the workspace, and its writes are denied."""
    _, terminal, _ = bypassed
    assert terminal.run("cat a.txt | tr a-z A-Z; echo done").output == "HELLO\nWORLD\ndone\n"
    denied = terminal.run("echo x > a.txt")
    # Landlock says EACCES; under bubblewrap the read-only bind mount answers first.
    refusal = "Permission denied" if terminal.launcher == "stdlib" else "Read-only file system"
    assert refusal in denied.output
    assert terminal.enforcement == "landlock"


def test_symlink_swapped_after_the_check_reads_nothing_outside(tmp_path: Path) -> None:
    """With the policy on, a file flipped to an outside symlink after the check leaks nothing."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(OUTSIDE_SECRET + "\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    terminal = Terminal(ws, timeout=TIMEOUT)
    stop = threading.Event()
    flips = [0]

    def flip() -> None:
        target, tmp = ws / "swap", ws / "swap.tmp"
        while not stop.is_set():
            try:
                tmp.unlink(missing_ok=True)
                if target.is_symlink():
                    tmp.write_text("inside\n")
                else:
                    tmp.symlink_to(outside / "secret.txt")
                os.replace(tmp, target)
                flips[0] += 1
            except OSError:
                continue

    (ws / "swap").write_text("inside\n")
    flipper = threading.Thread(target=flip, daemon=True)
    flipper.start()
    try:
        results = [terminal.run("cat swap") for _ in range(60)]
    finally:
        stop.set()
        flipper.join()
    assert flips[0] >= 3  # the file really changed under the commands
    assert not any(OUTSIDE_SECRET in result.render() for result in results)


def test_working_directory_swapped_for_an_outside_symlink_is_refused(tmp_path: Path) -> None:
    """After cd, replacing the directory by a symlink to an outside folder is caught next call."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(OUTSIDE_SECRET + "\n")
    ws = tmp_path / "ws"
    (ws / "d").mkdir(parents=True)
    terminal = Terminal(ws)
    assert terminal.run("cd d").ok
    (ws / "d").rmdir()
    (ws / "d").symlink_to(outside)
    result = terminal.run("ls")
    assert result.refused is not None
    assert "secret.txt" not in result.render()
    assert terminal.cwd == terminal.root
    assert "secret.txt" not in terminal.run("ls d").render()


def test_canary_is_in_the_host_environment(bypassed: tuple[Path, Terminal, dict]) -> None:
    """The leak checks are meaningful: the host process really holds the canary."""
    assert os.environ[CANARY_NAME] == CANARY


AWK_UNDER_LANDLOCK: list[str] = [
    "awk 'BEGIN{{system(\"rm -rf {ws} {out}\")}}'",
    "awk 'BEGIN{{system(\"rm -rf a.txt sub; touch {tmp_mark}\")}}'",
    'awk \'BEGIN{{print "pwned" > "a.txt"; print "x" > "new.txt"; print "y" >> "{out}/new"}}\'',
    'awk \'BEGIN{{printf "pwned" > "{tmp_mark}"; print "z" | "cat > sub/b.py"}}\'',
    'awk \'BEGIN{{"cat {out}/secret.txt" | getline x; print x; "id -u" | getline y; print y}}\'',
    "awk 'BEGIN{{while ((getline line < \"{out}/secret.txt\") > 0) print line}}'",
    "awk 'BEGIN{{system(\"curl -s --max-time 2 http://127.0.0.1:{port}/ -o {tmp_mark}\")}}'",
    "awk 'BEGIN{{system(\"wget -q -T 2 -O - http://127.0.0.1:{port}/\")}}'",
    'awk \'BEGIN{{system("kill -9 {pid}"); system("cat /proc/{pid}/environ")}}\'',
]


@pytest.mark.parametrize("template", AWK_UNDER_LANDLOCK)
def test_unchecked_awk_programs_are_contained_by_the_kernel(tmp_path: Path, template: str) -> None:
    """system("rm -rf"), `>` files, `cmd | getline` and curl run inside awk and do nothing."""
    mark = Path("/tmp") / f"lgc-awk-mark-{os.getpid()}-{tmp_path.name}"
    with build_arena(tmp_path) as terminal:
        server = socket.create_server(("127.0.0.1", 0))
        server.settimeout(0.2)
        ws, out = terminal.root, tmp_path / "outside"
        values = {"ws": ws, "out": out, "port": server.getsockname()[1], "pid": PID}
        command = template.format(tmp_mark=mark, **values)
        before = _snapshot(tmp_path)
        result = terminal.run(command)
        text = result.render()
        assert result.refused is None, text  # the policy let it through: no awk check
        assert _snapshot(tmp_path) == before, text
        assert not mark.exists()
        assert OUTSIDE_SECRET not in text
        assert CANARY not in text
        with pytest.raises(TimeoutError):
            server.accept()  # nothing connected
        server.close()
