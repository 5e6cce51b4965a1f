"""Hostile note files and store items: skipped and reported, never fatal, never changed."""

from __future__ import annotations

import os
import stat
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import Item
from langgraph.store.memory import InMemoryStore

from langgraph_context.notebook import (
    FileNotebookStore,
    LangGraphNotebookStore,
    NotebookError,
    UnreadableNote,
    UnreadableNoteWarning,
)
from langgraph_context.notebook.base import DEFAULT_MAX_NOTE_BYTES
from tests.corpus_notes import BAD_ID, CORPUS, LENIENT

FAST = 2.0  # seconds allowed for one full round of reads on a hostile store


def _snapshot(path: Path) -> tuple[Any, ...]:
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        return ("link", os.readlink(path))
    if stat.S_ISDIR(info.st_mode):
        return ("dir", sorted(os.listdir(path)), (path / "inside.md").read_bytes())
    if stat.S_ISFIFO(info.st_mode):
        return ("fifo", info.st_ino)
    return ("file", path.read_bytes(), info.st_mtime_ns)


def _seeded(root: Path) -> tuple[FileNotebookStore, list[str]]:
    store = FileNotebookStore(root, durable=False)
    good = [
        store.create("Deploy plan", "roll out the searchable canary", tags=["ops"]).id,
        store.create("Flaky test", "searchable retry loop", note_type="blocker").id,
    ]
    return store, good


def _read_everything(store: FileNotebookStore, good: list[str]) -> None:
    assert {n.id for n in store.list(limit=None)} >= set(good)
    assert {n.id for n, _ in store.search("searchable", limit=None)} >= set(good)
    assert store.summary()["total_notes"] >= len(good)
    for note_id in good:
        assert store.read(note_id).id == note_id
    assert [n.id for n in store.list(tags=["ops"])] == [good[0]]


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_hostile_file_is_skipped_reported_and_left_untouched(tmp_path: Path, name: str) -> None:
    """Each hostile file: the other notes stay usable, it is reported, fast, byte-for-byte kept."""
    root = tmp_path / "notes"
    _, good = _seeded(root)
    planted = CORPUS[name](root)
    before = _snapshot(planted)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        store = FileNotebookStore(root, durable=False)  # a fresh process opening the folder
        _read_everything(store, good)
        _read_everything(store, good)  # cached bad files are not parsed again
    assert time.perf_counter() - start < FAST
    if planted.name == ".notes.lock":
        with pytest.raises(NotebookError, match=r"cannot lock the notes folder: .*remove it"):
            store.create("new", "text")
    else:
        reported = {Path(u.location).name: u.reason for u in store.unreadable()}
        assert planted.name.encode("utf-8", "backslashreplace").decode() in reported, reported
        assert any(issubclass(w.category, UnreadableNoteWarning) for w in caught)
        store.create("still writable", "yes")
    if planted.name == f"{BAD_ID}.md":
        for attempt in (
            lambda: store.read(BAD_ID),
            lambda: store.update(BAD_ID, content="overwrite"),
            lambda: store.delete(BAD_ID),
        ):
            with pytest.raises(NotebookError, match=rf"{BAD_ID}\.md cannot be read: "):
                attempt()
    assert _snapshot(planted) == before


@pytest.mark.parametrize("name", sorted(LENIENT))
def test_odd_but_readable_files_are_served(tmp_path: Path, name: str) -> None:
    """Odd files that are still notes (BOM, CRLF, no front matter, ...) are listed, not reported."""
    root = tmp_path / "notes"
    _, good = _seeded(root)
    planted = LENIENT[name](root)
    store = FileNotebookStore(root, durable=False)
    _read_everything(store, good)
    assert BAD_ID in {n.id for n in store.list(limit=None)}
    assert store.unreadable() == []
    note = store.read(BAD_ID)
    assert note.title.strip()
    assert isinstance(note.content, str)
    assert planted.exists()


def test_lenient_files_parse_to_sensible_fields(tmp_path: Path) -> None:
    """BOM and CRLF files keep their title; dates are normalized; tags are NFC strings."""
    root = tmp_path / "notes"
    root.mkdir()
    for name, expected in [
        ("byte-order mark", ("with bom", "body", ())),
        ("crlf line ends", ("crlf", "body\r\n", ("a",))),
        ("numeric tags", (BAD_ID, "body", ("1", "2.5", "True"))),
        ("nfd tag", (BAD_ID, "body", ("caf\u00e9",))),
    ]:
        LENIENT[name](root)
        note = FileNotebookStore(root, durable=False).read(BAD_ID)
        assert (note.title, note.content, note.tags) == expected, name
    LENIENT["date only"](root)
    assert FileNotebookStore(root).read(BAD_ID).created_at == "2024-01-05T00:00:00.000000+00:00"


def test_stale_temp_files_are_removed_on_open_and_others_kept(tmp_path: Path) -> None:
    """Opening a store removes temp files of killed writers, but no look-alike user file."""
    root = tmp_path / "notes"
    _, good = _seeded(root)
    stale = [root / f".{good[0]}.md.tmp-0123abcd", root / ".notes_index.json.tmp-deadbeef"]
    for path in stale:
        path.write_text("half a write")
    keep = [root / ".my.tmp-notes", root / "draft.tmp-0123abcd"]
    for path in keep:
        path.write_text("mine")
    (root / ".dir.md.tmp-0123abcd").mkdir()
    FileNotebookStore(root, durable=False)
    assert not any(p.exists() for p in stale)
    assert all(p.exists() for p in keep)
    assert (root / ".dir.md.tmp-0123abcd").is_dir()


def test_size_cap_refuses_big_notes_with_a_clear_error(tmp_path: Path) -> None:
    """Content over max_note_bytes is refused on create and update; the cap is configurable."""
    store = FileNotebookStore(tmp_path, durable=False)
    big = "é" * (DEFAULT_MAX_NOTE_BYTES // 2 + 1)  # fewer characters than bytes
    with pytest.raises(
        NotebookError, match=r"content is 1000002 bytes; notes are limited to 1000000"
    ):
        store.create("big", big)
    note = store.create("ok", "x" * 1000)
    with pytest.raises(NotebookError, match="limited to 1000000 bytes"):
        store.update(note.id, content=big)
    with pytest.raises(NotebookError, match=r"title and tags together are \d+ bytes"):
        store.create("t" * 9000, "x")
    small = FileNotebookStore(tmp_path, durable=False, max_note_bytes=100)
    with pytest.raises(NotebookError, match="limited to 100 bytes"):
        small.create("x", "y" * 101)
    assert [u.reason for u in small.unreadable()] == []
    assert {n.id for n in small.list()} == {note.id}  # 1000-byte note is under 100+64 KiB
    with pytest.raises(ValueError, match="max_note_bytes must be a positive integer, got 0"):
        FileNotebookStore(tmp_path, max_note_bytes=0)


def test_tags_are_nfc_normalized_everywhere(tmp_path: Path) -> None:
    """'café' typed as one or two code points is one tag, in writes and in filters."""
    store = FileNotebookStore(tmp_path, durable=False)
    composed, decomposed = "caf\u00e9", "cafe\u0301"
    note = store.create("t", "b", tags=[composed, decomposed])
    assert note.tags == (composed,)
    other = store.create("u", "b", tags=[decomposed])
    assert {n.id for n in store.list(tags=[composed])} == {note.id, other.id}
    assert {n.id for n in store.list(tags=[decomposed])} == {note.id, other.id}


def test_a_fixed_file_disappears_from_the_report(tmp_path: Path) -> None:
    """Once a bad file is fixed (or removed by the user), it is read again and unreported."""
    root = tmp_path / "notes"
    store, _ = _seeded(root)
    path = CORPUS["impossible date"](root)
    with pytest.warns(UnreadableNoteWarning, match="is not an ISO-8601 date"):
        store.list()
    assert [Path(u.location).name for u in store.unreadable()] == [path.name]
    path.write_text("---\ntitle: fixed\ncreated_at: 2024-12-25\n---\nbody")
    os.utime(path, ns=(1, 1))
    time.sleep(0.01)
    assert store.read(BAD_ID).title == "fixed"
    store.rebuild_index()
    assert BAD_ID in {n.id for n in store.list(limit=None)}
    assert store.unreadable() == []


def test_summary_lists_unreadable_notes(tmp_path: Path) -> None:
    """The summary names every skipped note and why, so a person can fix it."""
    root = tmp_path / "notes"
    store, _ = _seeded(root)
    CORPUS["alias bomb"](root)
    with pytest.warns(UnreadableNoteWarning):
        summary = store.summary()
    assert summary["total_notes"] == 2
    [entry] = summary["unreadable_notes"]
    assert entry["location"].endswith(f"{BAD_ID}.md")
    assert "anchors or aliases" in entry["reason"]


# -- property tests over generated file contents ----------------------------------------
_FIELDS = st.sampled_from(["title", "tags", "type", "created_at", "updated_at", "id", "x"])
_VALUES = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["2024-13-45", "&a x", "*a", "[", "{", "!!binary x", "!!timestamp 2024-02-30"]),
    st.lists(st.text(max_size=5), max_size=3).map(str),
)
_HEADERS = st.lists(st.tuples(_FIELDS, _VALUES), max_size=6).map(
    lambda pairs: "\n".join(f"{k}: {v}" for k, v in pairs)
)
_FILES = st.one_of(
    st.binary(max_size=400),
    st.tuples(_HEADERS, st.text(max_size=100)).map(lambda p: f"---\n{p[0]}\n---\n{p[1]}".encode()),
    st.tuples(_HEADERS, st.binary(max_size=60)).map(lambda p: b"---\n" + p[0].encode() + p[1]),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files=st.lists(_FILES, min_size=1, max_size=4))
def test_generated_files_never_break_the_other_notes(
    tmp_path_factory: Any, files: list[bytes]
) -> None:
    """Whatever bytes sit in note files, list/search/read of the good notes work, fast."""
    root = tmp_path_factory.mktemp("notes")
    _, good = _seeded(root)
    paths = [root / f"note_gen_{i}.md" for i in range(len(files))]
    for path, data in zip(paths, files, strict=True):
        path.write_bytes(data)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnreadableNoteWarning)
        store = FileNotebookStore(root, durable=False)
        _read_everything(store, good)
        listed = {n.id for n in store.list(limit=None)}
        skipped = {Path(u.location).stem for u in store.unreadable()}
    assert time.perf_counter() - start < FAST
    assert listed | skipped == {*good, *(p.stem for p in paths)}
    assert not listed & skipped
    for note in store.list(limit=None):
        assert note.title.encode("utf-8")
        assert all(isinstance(t, str) and t.encode("utf-8") for t in note.tags)
    assert [p.read_bytes() for p in paths] == files


_NOTE_TEXT = st.characters(blacklist_characters="\x00", blacklist_categories=["Cs"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    title=st.text(_NOTE_TEXT, min_size=1, max_size=200).filter(lambda t: t.strip()),
    content=st.text(_NOTE_TEXT, max_size=500),
    tags=st.lists(
        st.text(_NOTE_TEXT, min_size=1, max_size=20).filter(lambda t: t.strip()), max_size=4
    ),
)
def test_valid_notes_round_trip_exactly(
    tmp_path_factory: Any, title: str, content: str, tags: list[str]
) -> None:
    """A note created through the store reads back identical from a fresh store."""
    root = tmp_path_factory.mktemp("notes")
    note = FileNotebookStore(root, durable=False).create(title, content, tags=tags)
    fresh = FileNotebookStore(root, durable=False)
    assert fresh.read(note.id) == note
    assert fresh.list() == [note]
    assert fresh.unreadable() == []


@pytest.mark.parametrize("field", ["title", "content", "tags"])
@pytest.mark.parametrize("backend", ["files", "langgraph store"])
def test_a_nul_character_is_refused_as_it_is_written(
    tmp_path: Path, field: str, backend: str
) -> None:
    """A NUL in a note's title, content or tag is refused naming it; nothing is written."""
    store: Any = (
        FileNotebookStore(tmp_path, durable=False)
        if backend == "files"
        else LangGraphNotebookStore(InMemoryStore(), namespace=("notes",))
    )
    args: dict[str, Any] = {"title": "t", "content": "c", "tags": ["x"]}
    args[field] = ["a\x00b"] if field == "tags" else "a\x00b"
    name = "tag" if field == "tags" else field
    with pytest.raises(NotebookError, match=rf"{name} contains a NUL character"):
        store.create(args["title"], args["content"], tags=args["tags"])
    assert store.list() == []
    note = store.create("t", "c")
    with pytest.raises(NotebookError, match="content contains a NUL character"):
        store.update(note.id, content="\x00")
    assert store.read(note.id).content == "c"


# -- the LangGraph-store backend ---------------------------------------------------------
BAD_VALUES: dict[str, Any] = {
    "title a mapping": {"title": {"a": 1}, "content": "x"},
    "tags an int": {"title": "x", "tags": 5},
    "tags of dicts": {"title": "x", "tags": [{"a": 1}]},
    "content bytes": {"title": "x", "content": b"\xff"},
    "title surrogate": {"title": "\ud800", "content": "x"},
    "tag surrogate": {"title": "x", "tags": ["\udcff"]},
    "impossible date": {"title": "x", "created_at": "2024-13-45"},
    "date a dict": {"title": "x", "updated_at": {"a": 1}},
    "content over the cap": {"title": "x", "content": "y" * (DEFAULT_MAX_NOTE_BYTES + 1)},
    "huge nested title": {"title": [[[[1] * 1000] * 100]], "content": "x"},
}


@pytest.mark.parametrize("name", sorted(BAD_VALUES))
def test_corrupt_store_item_is_skipped_and_reported(name: str) -> None:
    """A corrupt item value never takes down list/search/summary, and is never rewritten."""
    raw = InMemoryStore()
    notes = LangGraphNotebookStore(raw, namespace=("notes",))
    good = notes.create("Good", "searchable text", tags=["ops"])
    raw.put(("notes",), "bad", BAD_VALUES[name], index=False)
    with pytest.warns(UnreadableNoteWarning, match="notes/bad: "):
        assert [n.id for n in notes.list()] == [good.id]
    assert [n.id for n, _ in notes.search("searchable")] == [good.id]
    assert notes.summary()["unreadable_notes"][0]["location"] == "notes/bad"
    assert notes.unreadable() == [UnreadableNote("notes/bad", notes.unreadable()[0].reason)]
    for attempt in (
        lambda: notes.read("bad"),
        lambda: notes.update("bad", title="overwrite"),
        lambda: notes.delete("bad"),
    ):
        with pytest.raises(NotebookError, match="The stored note bad cannot be read: "):
            attempt()
    item = raw.get(("notes",), "bad")
    assert item is not None
    assert item.value == BAD_VALUES[name]


def test_store_item_with_a_bad_key_or_value_type_is_skipped() -> None:
    """Keys that are not note ids and values that are not mappings are reported, not served."""
    raw = InMemoryStore()
    notes = LangGraphNotebookStore(raw, namespace=("notes",))
    good = notes.create("Good", "text")
    raw.put(("notes",), "../escape", {"title": "x"}, index=False)
    item = raw.get(("notes",), good.id)
    assert item is not None
    raw._data[("notes",)]["listy"] = Item(
        value=[1, 2],  # type: ignore[arg-type]
        key="listy",
        namespace=("notes",),
        created_at=item.created_at,
        updated_at=item.updated_at,
    )
    with pytest.warns(UnreadableNoteWarning):
        assert [n.id for n in notes.list()] == [good.id]
    reasons = dict(notes.unreadable())
    assert "Invalid note id '../escape'" in reasons["notes/../escape"]
    assert "not a mapping of note fields" in reasons["notes/listy"]
    raw.delete(("notes",), "../escape")
    notes.list()
    assert [u.location for u in notes.unreadable()] == ["notes/listy"]


# -- through the real tools in a compiled graph -------------------------------------------
def test_model_gets_usable_answers_from_a_folder_full_of_hostile_files(tmp_path: Path) -> None:
    """A scripted model lists, searches, reads and writes notes next to every hostile file."""
    from langchain_core.messages import AIMessage, ToolMessage

    from langgraph_context.notebook import create_notebook_tools
    from tests.conftest import ai_calls, call
    from tests.test_notebook_tool import _app

    root = tmp_path / "notes"
    _, good = _seeded(root)
    for index, name in enumerate(sorted(CORPUS)):
        if "lock" in name or ("index" in name and name != "directory at index"):
            continue  # one thing at a time can sit where the index goes
        planted = CORPUS[name](root)
        if planted.name == f"{BAD_ID}.md":
            planted.rename(root / f"note_hostile_{index}.md")
    app = _app(
        create_notebook_tools(root),
        [
            ai_calls(call("notebook_list", {"limit": 50}, "l")),
            ai_calls(call("notebook_search", {"query": "searchable"}, "s")),
            ai_calls(call("notebook_read", {"note_id": good[0]}, "r")),
            ai_calls(call("notebook_read", {"note_id": "note_hostile_1"}, "bad")),
            ai_calls(call("notebook_create", {"title": "After", "content": "still works"}, "c")),
            ai_calls(call("notebook_summary", {}, "sum")),
            AIMessage("done"),
        ],
    )
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnreadableNoteWarning)
        out = app.invoke({"messages": [("user", "go")]}, {"configurable": {"thread_id": "1"}})
    assert time.perf_counter() - start < 10
    results = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert out["messages"][-1].content == "done"
    assert all(results[k].status == "success" for k in ("l", "s", "r", "c", "sum"))
    for note_id in good:
        assert note_id in results["l"].content
        assert note_id in results["s"].content
    assert "stored note(s) could not be read and were skipped" in results["l"].content
    assert "unreadable_notes" in results["sum"].content
    assert results["bad"].status == "error"
    assert "note_hostile_1.md cannot be read" in results["bad"].content
    assert "Deploy plan" in results["r"].content


def test_model_gets_usable_answers_from_a_store_with_corrupt_items() -> None:
    """Store-backed tools skip corrupt items and say so; the good notes are served."""
    from langchain_core.messages import AIMessage, ToolMessage

    from langgraph_context.notebook import create_notebook_tools
    from tests.conftest import ai_calls, call
    from tests.test_notebook_tool import _app

    raw = InMemoryStore()
    good = LangGraphNotebookStore(raw, namespace=("notes",)).create("Good", "searchable text")
    for name, value in BAD_VALUES.items():
        raw.put(("notes",), name.replace(" ", "-"), value, index=False)
    model = _app(
        create_notebook_tools(raw, namespace=("notes",)),
        [
            ai_calls(call("notebook_list", {}, "l")),
            ai_calls(call("notebook_search", {"query": "searchable"}, "s")),
            AIMessage("done"),
        ],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnreadableNoteWarning)
        out = model.invoke({"messages": [("user", "go")]}, {"configurable": {"thread_id": "1"}})
    results = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert results["l"].status == results["s"].status == "success"
    assert good.id in results["l"].content
    assert good.id in results["s"].content
    assert f"{len(BAD_VALUES)} stored note(s) could not be read" in results["l"].content
