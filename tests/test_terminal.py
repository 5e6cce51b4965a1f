"""The sandboxed terminal does real work: commands, pipes, cd state, caps, timeouts, tool use."""

from __future__ import annotations

import os
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from langgraph_context.tools.terminal import (
    Terminal,
    TerminalStateMixin,
    _landlock,
    create_terminal_tool,
)
from langgraph_context.tools.terminal._sandbox import split_words
from tests.conftest import ScriptedChatModel, ai_calls, call


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "user.py").write_text("class UserService:\n    pass\n# TODO fix\n")
    (root / "src" / "main.py").write_text("import pkg\n# TODO later\n")
    (root / "data.csv").write_text("name,team\nann,red\nbob,blue\ncid,red\n")
    (root / ".hidden").write_text("h\n")
    return root


def test_everyday_commands_give_exact_output(ws: Path) -> None:
    """cat, grep -rn, find, wc, head, cut|sort|uniq, awk and sed work as in a shell."""
    t = Terminal(ws)
    assert t.run("head -n 2 data.csv").output == "name,team\nann,red\n"
    assert (
        t.run("grep -rn TODO src").output
        == "src/main.py:2:# TODO later\nsrc/pkg/user.py:3:# TODO fix\n"
    )
    assert sorted(t.run("find . -name '*.py' -type f").output.splitlines()) == [
        "./src/main.py",
        "./src/pkg/user.py",
    ]
    assert t.run("wc -l data.csv").output == "4 data.csv\n"
    tally = t.run("cut -d, -f2 data.csv | tail -n +2 | sort | uniq -c")
    assert tally.output.split() == ["1", "blue", "2", "red"]
    assert t.run("awk -F, '$2 == \"red\" {print $1}' data.csv").output == "ann\ncid\n"
    assert t.run("sed -n 's/^bob,//p' data.csv").output == "blue\n"
    assert t.run("grep -c red data.csv").exit_code == 0
    assert t.run("echo 'a|b' | tr '|' '-'").output == "a-b\n"
    assert t.run("cat src/*.py").output == "import pkg\n# TODO later\n"
    assert t.run("egrep 'ann|bob' data.csv").output == "ann,red\nbob,blue\n"
    assert t.run("awk 'NR > 1 && $0 ~ /r.d|blu/ {n++} END {print n}' data.csv").output == "3\n"


def test_tree_pwd_and_cd_keep_state_and_stay_confined(ws: Path) -> None:
    """tree draws the workspace; cd changes directory per instance and never leaves it."""
    t = Terminal(ws)
    tree = t.run("tree").output
    assert "├── data.csv" in tree
    assert ".hidden" not in tree
    assert "2 directories, 3 files" in tree
    assert ".hidden" in t.run("tree -a").output
    assert t.run("tree -L 1 -d").output == ".\n└── src\n\n1 directories\n"
    assert t.run("cd src/pkg").output == f"{ws.resolve()}/src/pkg\n"
    assert t.run("pwd").output == f"{ws.resolve()}/src/pkg\n"
    assert t.run("cat user.py").exit_code == 0
    assert t.run("cd ../../..").refused is not None
    assert t.run("cd user.py").refused == "cd: 'user.py' is not a directory in the workspace"
    assert t.run("cd").output == f"{ws.resolve()}\n"
    other = Terminal(ws)
    t.run("cd src")
    assert other.run("pwd").output == f"{ws.resolve()}\n"


def test_exit_codes_and_stderr_are_reported(ws: Path) -> None:
    """A failing command reports its exit code and its stderr under a label."""
    t = Terminal(ws)
    miss = t.run("grep nothing-here data.csv")
    assert (miss.exit_code, miss.output, miss.render()) == (1, "", "[exit code 1]")
    err = t.run("cat missing.txt")
    assert err.exit_code == 1
    assert err.output.startswith("[stderr]\n")
    assert "missing.txt: No such file or directory" in err.output


def test_output_is_capped_in_characters_with_a_marker(ws: Path) -> None:
    """Output beyond the cap is cut, marked, and the command is stopped early."""
    (ws / "big.txt").write_text("x" * 5_000_000)
    t = Terminal(ws, max_output_chars=1000)
    start = time.monotonic()
    result = t.run("cat big.txt big.txt big.txt")
    assert time.monotonic() - start < 5
    assert result.truncated
    assert (
        result.output
        == "x" * 1000
        + "\n[output truncated at 1000 characters; narrow the command (head, grep -m)]"
    )


def test_output_cap_counts_multibyte_characters_not_bytes(ws: Path) -> None:
    """max_output_chars counts characters: 2- and 3-byte characters are cut whole."""
    (ws / "fits.txt").write_text("\u00e9" * 900, encoding="utf-8")  # 1800 bytes
    (ws / "cut.txt").write_text("\u65e5\u00e9" * 5000, encoding="utf-8")  # 25000 bytes
    t = Terminal(ws, max_output_chars=1000)
    fits = t.run("cat fits.txt")
    assert (fits.truncated, fits.output) == (False, "\u00e9" * 900)
    cut = t.run("cat cut.txt")
    assert cut.truncated
    assert cut.output == "\u65e5\u00e9" * 500 + (
        "\n[output truncated at 1000 characters; narrow the command (head, grep -m)]"
    )


def test_timeout_kills_the_process_group(ws: Path) -> None:
    """A hanging pipeline is killed at the timeout, every stage included."""
    os.mkfifo(ws / "pipe")
    t = Terminal(ws, timeout=1)
    start = time.monotonic()
    result = t.run("cat pipe | sort | uniq")
    assert time.monotonic() - start < 3
    assert result.timed_out
    assert result.exit_code is None
    assert result.render() == "[command killed: timeout reached]"


@pytest.mark.slow
def test_grep_over_ten_thousand_files_is_fast_and_capped(tmp_path: Path) -> None:
    """`grep -rn` across a 10,000-file tree returns well within the timeout, capped."""
    root = tmp_path / "tree"
    for d in range(100):
        folder = root / f"d{d:03}"
        folder.mkdir(parents=True)
        for f in range(100):
            (folder / f"f{f:03}.txt").write_text(f"line one\nneedle {d}-{f}\nline three\n")
    t = Terminal(root, timeout=30, max_output_chars=20_000)
    start = time.monotonic()
    result = t.run("grep -rn needle .")
    assert time.monotonic() - start < 30
    assert result.truncated
    assert len(result.output.encode()) <= 20_000 + 100
    assert t.run("grep -rl needle . | wc -l").output == "10000\n"


def test_allowed_commands_and_cd_switch_narrow_the_terminal(ws: Path) -> None:
    """A custom allow-list and allow_cd=False are enforced with a helpful refusal."""
    t = Terminal(ws, allowed_commands=["cat", "ls"], allow_cd=False)
    assert t.allowed == frozenset({"cat", "ls"})
    refused = t.run("grep x data.csv")
    assert refused.refused == "command 'grep' is not allowed. Allowed: cat, ls"
    assert t.run("cd src").refused is not None


def test_constructor_rejects_bad_configuration(tmp_path: Path) -> None:
    """Bad workspace, limits or command names raise ValueError at construction."""
    with pytest.raises(ValueError, match="workspace must be an existing directory"):
        Terminal(tmp_path / "nope")
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        Terminal(tmp_path, timeout=0)
    with pytest.raises(ValueError, match="max_output_chars must be a positive integer"):
        Terminal(tmp_path, max_output_chars=0)
    with pytest.raises(ValueError, match="'rm' is not supported"):
        Terminal(tmp_path, allowed_commands=["rm"])
    with pytest.raises(ValueError, match="name must be 1-64 characters"):
        create_terminal_tool(tmp_path, name="bad name")
    with pytest.raises(ValueError, match="description must be a non-empty string"):
        create_terminal_tool(tmp_path, description=" ")


def test_missing_binary_in_explicit_allow_list_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Asking for a supported command that is not installed raises."""
    import langgraph_context.tools.terminal._binaries as terminal_module

    monkeypatch.setattr(terminal_module.shutil, "which", lambda *a, **k: None)
    with pytest.raises(ValueError, match="'cat' is not installed"):
        Terminal(tmp_path, allowed_commands=["cat"])
    assert Terminal(tmp_path).allowed == frozenset({"cd", "pwd", "tree"})


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("", "empty command"),
        ("cat 'open", "unterminated single quote"),
        ('cat "open', "unterminated double quote"),
        ("cat a\\", "a trailing backslash is not allowed"),
        ("c* a", "the command name must be a plain word"),
        ("tree | pwd", "builtins (cd, tree, pwd) can only start a pipeline"),
        ("cd src | cat", "cd cannot be part of a pipeline"),
        ("cd a b", "cd takes one directory"),
        ("pwd x", "pwd takes no arguments"),
        ("tree -L x", "tree -L needs a positive depth"),
        ("tree nowhere", "tree: 'nowhere' is not a directory in the workspace"),
        ("tree data.csv", "tree: 'data.csv' is not a directory in the workspace"),
        ("tree -x", "tree supports -L DEPTH, -a and -d"),
        ("head -n", "head -n needs a value"),
        ("grep --regexp", "grep --regexp needs a value"),
        ("awk", "awk needs a program"),
        ("awk --version", "awk long options are not allowed"),
        ("find . -name", "find -name needs a value"),
        ("find . -nosuch", "find '-nosuch' is not supported here"),
        ("uniq a b", "uniq takes at most 1 file operand(s) here"),
        ("cat ~", ""),
    ],
)
def test_refusal_messages_say_what_is_wrong(ws: Path, command: str, reason: str) -> None:
    """Each refusal names the rule that was broken."""
    result = Terminal(ws).run(command)
    if reason:
        assert result.refused is not None
        assert reason in result.refused
    else:
        assert result.refused is None


def test_glob_flood_is_refused(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A glob matching more paths than the limit is refused instead of expanded."""
    import langgraph_context.tools.terminal._sandbox as sandbox

    monkeypatch.setattr(sandbox, "MAX_GLOB_MATCHES", 1)
    assert "matches more than 1 paths" in (Terminal(ws).run("ls src/* *").refused or "")
    assert split_words('a \'b c\' "d\\"e" f\\ g')[0][1].text == "b c"


class _State(MessagesState, TerminalStateMixin):
    pass


def _agent(tool: Any, responses: list[AIMessage]) -> Any:
    model = ScriptedChatModel(responses=responses)

    def agent(state: _State) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(_State)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([tool]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile()


def test_tool_in_a_graph_reports_results_and_refusals(ws: Path) -> None:
    """In a graph the tool returns output, keeps cd state, and refuses with an error status."""
    tool = create_terminal_tool(ws, timeout=5)
    app = _agent(
        tool,
        [
            ai_calls(call("terminal", {"command": "cd src"}, "a")),
            ai_calls(call("terminal", {"command": "grep -n TODO main.py"}, "b")),
            ai_calls(call("terminal", {"command": "rm -rf /"}, "c")),
            ai_calls(call("terminal", {"command": "grep zzz main.py"}, "d")),
            AIMessage("done"),
        ],
    )
    out = app.invoke({"messages": [("user", "look around")]})
    msgs = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert out["terminal_cwd"] == "src"
    assert msgs["a"].status == "success"
    assert msgs["b"].content == "2:# TODO later\n"
    assert msgs["c"].status == "error"
    assert msgs["c"].content.startswith("Refused: command 'rm' is not allowed.")
    assert (msgs["d"].status, msgs["d"].content) == ("success", "[exit code 1]")
    assert msgs["d"].artifact["exit_code"] == 1
    assert (ws / "data.csv").exists()


def test_non_string_command_and_start_failure_are_refusals(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A non-string command and an OS failure to start are reported, not raised."""
    t = Terminal(ws)
    assert t.run(None).refused == "the command must be a string"  # type: ignore[arg-type]

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise OSError("no more processes")

    monkeypatch.setattr("langgraph_context.tools.terminal._process.subprocess.Popen", broken)
    assert t.run("cat data.csv").refused == "could not start the command: no more processes"


def test_awk_attacks_run_in_a_graph_and_change_nothing(ws: Path) -> None:
    """awk programs with system(), `>` and pipes run unchecked under Landlock; nothing changes."""
    if Terminal(ws).enforcement != "landlock":
        pytest.skip("the kernel has no Landlock")
    keep = ws / "data.csv"
    before = keep.read_bytes()
    tool = create_terminal_tool(ws, timeout=5)
    attacks = [
        """awk '{ x = 1 - /"/ ; system("rm data.csv") ; y = "/" }' data.csv""",
        """awk '{ print /"/ ; system("touch pwned") ; y = "/" }' data.csv""",
        """awk '{ x = 1 + /"/ ; print "x" > "data.csv" ; y = "/" }' data.csv""",
    ]
    calls = [call("terminal", {"command": c}, f"c{i}") for i, c in enumerate(attacks)]
    app = _agent(tool, [ai_calls(*calls), AIMessage("done")])
    out = app.invoke({"messages": [("user", "go")]})
    msgs = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [m.artifact["refused"] for m in msgs] == [None] * len(attacks)
    assert keep.read_bytes() == before
    assert not (ws / "pwned").exists()


def _policy_only(ws: Path, monkeypatch: pytest.MonkeyPatch, gawk: str | None) -> Terminal:
    import langgraph_context.tools.terminal._binaries as binaries

    real_which = binaries.shutil.which
    monkeypatch.setattr(_landlock, "landlock_abi", lambda: 0)
    monkeypatch.setattr(
        binaries.shutil,
        "which",
        lambda name, path=None: gawk if name == "gawk" else real_which(name, path=path),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return Terminal(ws)


def test_awk_is_refused_without_landlock_or_gawk(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a policy-only host without gawk, awk is refused with the reason and alternatives."""
    terminal = _policy_only(ws, monkeypatch, gawk=None)
    assert terminal.enforcement == "policy-only"
    result = terminal.run("awk '{print $1}' data.csv")
    assert result.refused is not None
    assert "it has no Landlock" in result.refused
    assert "gawk" in result.refused
    assert "Use grep, cut" in result.refused
    assert terminal.run("cut -d, -f1 data.csv").ok


def test_awk_runs_as_gawk_sandbox_without_landlock(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a policy-only host with gawk, awk runs `gawk --sandbox` and `@` directives are refused."""
    fake = tmp_path / "gawk"
    fake.write_text('#!/bin/sh\nprintf "%s|" "$@"\n')
    fake.chmod(0o755)
    terminal = _policy_only(ws, monkeypatch, gawk=str(fake))
    result = terminal.run("awk -F, '{print $1}' data.csv")
    assert result.output == "--sandbox|-F,|{print $1}|data.csv|"
    refused = terminal.run("""awk '@include "/etc/passwd"' data.csv""").refused
    assert refused is not None
    assert "@include and @load read files even under --sandbox" in refused
    assert terminal.run("awk '{print}' ../outside.txt").refused is not None


def test_awk_everyday_programs_run(ws: Path) -> None:
    """Regexes, divisions, comments and string matches still run."""
    result = Terminal(ws).run("awk -F, '!/^#/ && /red/ { n += NR / 2 } END { print n }' data.csv")
    assert (result.refused, result.output) == (None, "3\n")


@pytest.mark.parametrize("blank", ["", "  "])
def test_blank_workspace_is_refused(blank: str) -> None:
    """An empty path never silently means the current directory."""
    with pytest.raises(ValueError, match="workspace must be a directory path"):
        Terminal(blank)
    with pytest.raises(ValueError, match="workspace must be a directory path"):
        create_terminal_tool(blank)


def test_glob_over_symlink_loops_is_bounded(tmp_path: Path) -> None:
    """Globs walking symlinked directory loops are refused quickly, not run for minutes."""
    for i in range(10):
        os.symlink(".", tmp_path / f"l{i}")
    (tmp_path / "a.txt").write_text("x\n")
    terminal = Terminal(tmp_path, timeout=2)
    started = time.monotonic()
    result = terminal.run("echo */*/*/*/*/*/*/zzz")
    assert time.monotonic() - started < 3
    assert result.refused is not None
    assert "narrow it" in result.refused
    assert terminal.run("echo l1/l2/*.txt").output.strip() == "l1/l2/a.txt"
    assert terminal.run("ls */a.txt").refused is None
