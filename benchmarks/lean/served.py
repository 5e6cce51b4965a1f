"""Served throughput: `langgraph dev` serving bare `create_agent` and ours, runs per second.

Run: `.venv/bin/python -m benchmarks.lean.served [--threads 20] [--runs 20]`

Starts `langgraph dev` (in-memory runtime, no reload) on a free port with the two graphs
of `_served_graphs.py`, then for each graph creates `--threads` threads and sends each
`--runs` runs one after the other (the threads in parallel, `runs.wait`); prints runs
per second per graph and ours over bare. Each run is one user turn: a tool call
returning a ~2,000-token log, then an answer (two model calls). Graphs alternate over
`--rounds` rounds; the medians are printed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from langgraph_sdk import get_client

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
GRAPHS = ("bare", "ours")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serve(port: int, workdir: Path) -> subprocess.Popen[bytes]:
    """Start `langgraph dev` with a config naming the two graphs; wait until it answers."""
    module = HERE / "_served_graphs.py"
    config = {"dependencies": [str(REPO)], "graphs": {g: f"{module}:{g}" for g in GRAPHS}}
    path = workdir / "langgraph.json"
    path.write_text(json.dumps(config))
    command = [sys.executable, "-m", "langgraph_cli", "dev", "--config", str(path)]
    command += ["--port", str(port), "--no-browser", "--no-reload"]
    log = (workdir / "server.log").open("wb")
    env = {**os.environ, "LANGSMITH_TRACING": "false", "LANGCHAIN_TRACING_V2": "false"}
    server = subprocess.Popen(command, cwd=workdir, stdout=log, stderr=log, env=env)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/ok", timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(1)
    server.terminate()
    msg = f"langgraph dev did not start; see {workdir / 'server.log'}"
    raise SystemExit(msg)


async def _throughput(url: str, graph: str, threads: int, runs: int) -> float:
    """Runs per second: `threads` threads in parallel, `runs` runs each in a row."""
    client = get_client(url=url)

    async def one_thread(k: int) -> None:
        thread = await client.threads.create()
        for j in range(runs):
            message = {"role": "user", "content": f"Turn {j} of {k}: why does billing time out?"}
            out = await client.runs.wait(thread["thread_id"], graph, input={"messages": [message]})
            if not isinstance(out, dict) or "messages" not in out:
                msg = f"{graph}: run failed: {str(out)[:300]}"
                raise RuntimeError(msg)

    started = time.perf_counter()
    await asyncio.gather(*(one_thread(k) for k in range(threads)))
    return threads * runs / (time.perf_counter() - started)


def main() -> None:
    """Serve, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=20)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        server = _serve(port, Path(tmp))
        try:
            url = f"http://127.0.0.1:{port}"
            asyncio.run(_throughput(url, "ours", 2, 2))  # warm both graphs up
            asyncio.run(_throughput(url, "bare", 2, 2))
            rates: dict[str, list[float]] = {g: [] for g in GRAPHS}
            for r in range(args.rounds):
                for graph in GRAPHS if r % 2 == 0 else GRAPHS[::-1]:
                    rate = asyncio.run(_throughput(url, graph, args.threads, args.runs))
                    rates[graph].append(rate)
                    print(f"round {r + 1} {graph}: {rate:.1f} runs/s", flush=True)
        finally:
            server.terminate()
            server.wait(timeout=30)
    bare, ours = (statistics.median(rates[g]) for g in GRAPHS)
    # The pair of one round ran back to back: its ratio is the least disturbed figure.
    ratio = statistics.median(o / b for o, b in zip(rates["ours"], rates["bare"], strict=True))
    print(f"{args.threads} threads x {args.runs} runs, median of {args.rounds} rounds:")
    print(f"  bare create_agent  {bare:6.1f} runs/s")
    print(f"  ours               {ours:6.1f} runs/s  (median of the rounds' ratios: {ratio:.2f}x)")


if __name__ == "__main__":
    main()
