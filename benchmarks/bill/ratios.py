"""Per-session ratios of our bill: `python -m benchmarks.bill.ratios [bill.json]`.

Reads the bill benchmark's results (default `benchmarks/results/bill.json`) and prints,
for each of our configurations and every replayed session: the bare agent's headline
bill, ours / bare, ours / LangChain summarization, early facts at the probe (ours, then
summarization's and bare's), pinned strings at the last call, our compaction events,
calls over the window (ours, then bare's), and whether ours is below both.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from benchmarks._common import RESULTS

BARE = "bare create_agent"
SUMMARIZATION = "LC summarization"
OURS = ("ours create_context_agent", "ours middleware")


def _line(session: str, ours: dict[str, Any], bare: dict[str, Any], summ: dict[str, Any]) -> str:
    mine, base, peer = (r["bill"]["headline"] for r in (ours, bare, summ))
    below = "below both" if mine < base and mine < peer else "NOT below both"
    facts = (
        f"{ours['early_facts_at_probe']}/{ours['early_facts']} "
        f"({summ['early_facts_at_probe']}, {bare['early_facts_at_probe']})"
    )
    return (
        f"{session:13} {base:9.4f} {mine / base:6.3f} {mine / peer:6.3f}  {facts:13} "
        f"{ours['pinned_at_last_call']}/{ours['pinned']}  {ours['compactions']:4}  "
        f"{ours['over_window_calls']} ({bare['over_window_calls']})  {below}"
    )


def main(argv: list[str] | None = None) -> None:
    """Print the per-session table for each of our configurations."""
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0]) if args else RESULTS / "bill.json"
    rows: dict[str, dict[str, Any]] = {}
    for row in json.loads(path.read_text())["rows"]:
        rows.setdefault(row["session"], {})[row["config"]] = row
    for name in OURS:
        print(f"\n{name}")
        print("session         bare $  x bare x summ  facts (summ, bare) pinned comp  >window")
        below = total = 0
        for session, configs in rows.items():
            ours = configs.get(name)
            if ours is None or "bill" not in ours:
                print(f"{session:13} error: {ours and ours.get('error')}")
                continue
            line = _line(session, ours, configs[BARE], configs[SUMMARIZATION])
            below += not line.endswith("NOT below both")
            total += 1
            print(line)
        print(f"below both on {below} of {total} sessions")


if __name__ == "__main__":
    main()
