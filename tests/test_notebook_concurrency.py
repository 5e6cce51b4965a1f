"""File note store under several processes: nothing lost, and crashes leave a clean store."""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from langgraph_context.notebook import FileNotebookStore, NotebookError
from langgraph_context.notebook.files import INDEX_FILE_NAME

WORKERS = 4
OPS_PER_WORKER = 200


def _worker(args: tuple[str, int]) -> dict[str, Any]:
    root, seed = args
    rng = random.Random(seed)
    store = FileNotebookStore(root, durable=False)  # fsync guards power loss, not interleaving
    alive: dict[str, str] = {}
    created: list[str] = []
    foreign_reads = 0
    for step in range(OPS_PER_WORKER):
        roll = rng.random()
        if roll < 0.5 or not alive:
            body = f"worker {seed} step {step}"
            note = store.create(f"w{seed}-{step}", body, tags=[f"w{seed}"])
            alive[note.id] = body
            created.append(note.id)
        elif roll < 0.75:
            note_id = rng.choice(sorted(alive))
            body = f"worker {seed} update {step}"
            store.update(note_id, content=body)
            alive[note_id] = body
        elif roll < 0.9:
            note_id = rng.choice(sorted(alive))
            store.delete(note_id)
            del alive[note_id]
        else:
            for note in store.list(limit=5):
                try:
                    store.read(note.id)
                    foreign_reads += 1
                except NotebookError:
                    pass  # deleted by another worker between list and read
    return {"alive": alive, "created": created, "reads": foreign_reads}


@pytest.mark.slow
def test_four_processes_interleaving_200_ops_each_lose_nothing(tmp_path: Path) -> None:
    """4 processes x 200 creates/updates/deletes: ids unique, every survivor exact, index true."""
    root = tmp_path / "notes"
    FileNotebookStore(root)
    context = multiprocessing.get_context("fork")
    with context.Pool(WORKERS) as pool:
        results = pool.map(_worker, [(str(root), seed) for seed in range(WORKERS)])
    created = [i for r in results for i in r["created"]]
    assert len(created) == len(set(created)), "an id was issued twice"
    expected = {i: body for r in results for i, body in r["alive"].items()}
    store = FileNotebookStore(root)
    notes = {n.id: n for n in store.list(limit=None)}
    assert set(notes) == set(expected)
    assert {i: n.content for i, n in notes.items()} == expected
    index = json.loads((root / INDEX_FILE_NAME).read_text(encoding="utf-8"))["notes"]
    assert set(index) == set(expected)
    for note_id, entry in index.items():
        assert entry["title"] == notes[note_id].title
        info = (root / f"{note_id}.md").stat()
        assert (entry["mtime_ns"], entry["size"]) == (info.st_mtime_ns, info.st_size)
    assert not list(root.glob(".*.tmp-*"))


def _writer(root: str, fd: int) -> None:
    store = FileNotebookStore(root)
    body = "x" * 200_000
    i = 0
    while True:
        note = store.create(f"n{i}", body + str(i), note_type="task_state")
        os.write(fd, f"{note.id}\n".encode())
        store.update(note.id, content=body + "updated")
        i += 1


def test_writer_killed_mid_write_leaves_a_store_that_opens_and_rebuilds(tmp_path: Path) -> None:
    """SIGKILLing writers at random moments never corrupts notes; the index heals."""
    root = tmp_path / "notes"
    rng = random.Random(7)
    acknowledged: list[str] = []
    context = multiprocessing.get_context("fork")
    for _ in range(4):
        read_fd, write_fd = os.pipe()
        proc = context.Process(target=_writer, args=(str(root), write_fd), daemon=True)
        proc.start()
        os.close(write_fd)
        time.sleep(0.05 + rng.random() * 0.25)
        os.kill(proc.pid or 0, signal.SIGKILL)
        proc.join()
        with os.fdopen(read_fd) as lines:
            acknowledged.extend(lines.read().split())
    store = FileNotebookStore(root)
    notes = {n.id: n for n in store.list(limit=None)}
    assert acknowledged, "the writer never got a note out"
    assert set(acknowledged) <= set(notes)
    for note in notes.values():
        assert note.title.startswith("n")
        assert note.content.startswith("x" * 200_000)
        assert note.type == "task_state"
    index = json.loads((root / INDEX_FILE_NAME).read_text(encoding="utf-8"))["notes"]
    assert set(index) == set(notes)
    assert store.rebuild_index() == len(notes)
    assert not list(root.glob(".*.tmp-*"))
