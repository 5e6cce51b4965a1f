"""`report` and `chat --prices`: the measured prompt cache of a saved thread, costed.

The wire test runs `chat` on a real `ChatOpenAI` client against the local server
(which reports `cached_tokens` as OpenAI does), then `report` on the saved thread.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from langgraph_context.cli import main
from langgraph_context.cli.report import parse_prices
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.providers import cache_cost, cache_hit_rate
from tests._wire_server import MODEL, WireServer, reply
from tests.conftest import feed_input

pytestmark = pytest.mark.usefixtures("no_model_env")

PRICES = "input=2.5,cached_input=1.25,output=10"
TABLE = {"input": 2.5, "cached_input": 1.25, "cache_write": 2.5, "output": 10.0}
LONG = "The billing service retries each invoice three times before it gives up. " * 80


def _saved_state(db: Path, thread: str) -> dict[str, Any]:
    """The thread's last checkpoint values, read straight from SQLite."""
    config: Any = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    with SqliteSaver.from_conn_string(str(db)) as saver:
        found = saver.get_tuple(config)
    assert found is not None
    return dict(found.checkpoint["channel_values"])


def test_chat_and_report_show_the_wire_hit_rate_and_cost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three chat turns on the wire: chat's exit report and `report` show the cached share
    the server reported and its cost at `--prices`."""
    db = tmp_path / "chat.sqlite"
    with WireServer() as server:
        server.script(reply("Three retries."), reply("Then it gives up."), reply("Yes."))
        monkeypatch.setenv("LGC_API_KEY", "sk-wire-test")
        feed_input(monkeypatch, [f"What does this say? {LONG}", "And then?", "Sure?"])
        args = ["chat", "--base-url", server.base_url, "--model", MODEL, "--db", str(db)]
        assert main([*args, "--thread", "bill", "--prices", PRICES]) == 0
        chat_out = capsys.readouterr().out
        cached = sum(server.cached)
    usage = _saved_state(db, "bill")["cache_usage"]
    assert usage["calls"] == 3
    assert usage["cache_read"] == cached > 0
    rate = cache_hit_rate(usage)
    assert rate is not None
    assert rate > 0.5
    line = (
        f"prompt cache: {rate:.0%} of {usage['input']:,} input tokens read from cache "
        f"({usage['cache_read']:,} read, 0 written, 3 calls, 0 misses); "
        f"cost ${cache_cost(usage, TABLE):.4f}"  # type: ignore[arg-type]
    )
    assert line in chat_out
    assert main(["report", "--db", str(db), "--thread", "bill", "--prices", PRICES]) == 0
    report = capsys.readouterr().out
    assert "session: 3 model calls" in report
    assert line in report
    assert main(["report", "--db", str(db), "--thread", "bill"]) == 0
    assert "cost $" not in capsys.readouterr().out


def test_a_price_file_is_read_and_cache_write_defaults_to_input(tmp_path: Path) -> None:
    """A JSON object works as well as inline pairs; `cache_write` falls back to `input`."""
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"input": 3, "cached_input": 0.3, "output": 15}))
    assert parse_prices(str(path)) == {
        "input": 3.0,
        "cached_input": 0.3,
        "output": 15.0,
        "cache_write": 3.0,
    }
    written = parse_prices("input=3, cached_input=0.3, cache_write=3.75, output=15")
    assert written["cache_write"] == 3.75


def test_a_named_table_is_read_from_a_file_of_several() -> None:
    """`FILE#NAME` picks one of the bill benchmark's price tables; its label is no price."""
    path = Path(__file__).parents[1] / "benchmarks" / "bill" / "prices.json"
    table = parse_prices(f"{path}#anthropic-claude-sonnet-4")
    assert table == {"input": 3.0, "cached_input": 0.3, "cache_write": 3.75, "output": 15.0}
    with pytest.raises(InvalidArgumentError, match=r"no price table 'nope' in .*openai-gpt-5"):
        parse_prices(f"{path}#nope")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "expected a JSON file or key=number pairs"),
        ("input=2,cached_input", "expected key=number pairs"),
        ("input=2,cached_input=0.5", "missing price 'output'"),
        ("input=2,cached_input=0.5,output=8,tip=1", "unknown price 'tip'"),
        ("input=2,input=3,cached_input=0.5,output=8", "price 'input' is given twice"),
        ("input=-1,cached_input=0.5,output=8", "price 'input' must be a number >= 0"),
        ("input=nan,cached_input=0.5,output=8", "price 'input' must be a number >= 0"),
        ("input=two,cached_input=0.5,output=8", "price 'input' must be a number >= 0"),
        ("no-such-prices.json", "cannot read the price file 'no-such-prices.json'"),
    ],
)
def test_bad_prices_are_refused_naming_the_fault(text: str, match: str) -> None:
    """Each malformed price table is an InvalidArgumentError saying what is wrong."""
    with pytest.raises(InvalidArgumentError, match=match):
        parse_prices(text)


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("[1, 2]", "must hold a JSON object, got list"),
        ("{input: 2", "is not JSON"),
        ('{"input": true, "cached_input": 0.5, "output": 8}', "price 'input' must be a number"),
    ],
)
def test_bad_price_files_are_refused(tmp_path: Path, content: str, match: str) -> None:
    """A price file that is not a JSON object of numbers is refused."""
    path = tmp_path / "prices.json"
    path.write_text(content)
    with pytest.raises(InvalidArgumentError, match=match):
        parse_prices(str(path))


@pytest.mark.parametrize("command", ["chat", "report"])
def test_bad_prices_on_the_command_line_are_one_line_exit_2(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--prices` with a bad table is one error line naming the option, exit code 2."""
    assert main([command, "--prices", "input=2,cached_input=0.5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "argument --prices: missing price 'output'" in err[0]


def test_report_on_a_missing_database_or_thread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing file, a file that is not SQLite and an unknown thread: one line, exit 1."""
    db = tmp_path / "none.sqlite"
    assert main(["report", "--db", str(db)]) == 1
    assert "is not a file" in capsys.readouterr().err
    bad = tmp_path / "bad.sqlite"
    bad.write_text("not a database " * 100)
    assert main(["report", "--db", str(bad)]) == 1
    assert "holds no chat threads" in capsys.readouterr().err
    with SqliteSaver.from_conn_string(str(db)) as saver:
        saver.setup()
    assert main(["report", "--db", str(db), "--thread", "gone"]) == 1
    assert capsys.readouterr().err.strip() == f"error: no thread 'gone' in {str(db)!r}"
