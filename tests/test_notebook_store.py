"""File-backed note store: format round-trips, safety of ids and paths, index healing."""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langgraph_context.notebook import FileNotebookStore, Note, NotebookError, UnreadableNoteWarning
from langgraph_context.notebook.base import NOTE_TYPES, new_note_id, validate_note_id
from langgraph_context.notebook.files import INDEX_FILE_NAME
from langgraph_context.notebook.format import parse_note, render_note
from langgraph_context.notebook.search import bm25_scores

TRICKY = [
    "---",
    "a: b",
    "---\ntitle: injected\n---",
    'it\'s "quoted"',
    "line one\nline two",
    "中文标题: 上下文工程",
    "   padded   ",
    "# heading",
    "...",
    "- [x] list",
    "tab\tand\rcarriage",
    "emoji 🚀 and \u2028 separator",
]


@pytest.fixture
def store(tmp_path: Path) -> FileNotebookStore:
    return FileNotebookStore(tmp_path / "notes", durable=False)


def test_create_read_round_trip_keeps_every_field(store: FileNotebookStore) -> None:
    """A created note reads back identical, and its file has YAML front matter."""
    note = store.create("Phase 1", "## Done\n- models", note_type="task_state", tags=["a", "b"])
    assert store.read(note.id) == note
    text = store.note_path(note.id).read_text(encoding="utf-8")
    assert text.startswith("---\nid: " + note.id + "\ntitle: Phase 1\ntype: task_state\n")
    assert text.endswith("---\n\n## Done\n- models")


@pytest.mark.parametrize("value", TRICKY)
def test_tricky_titles_tags_and_content_round_trip(store: FileNotebookStore, value: str) -> None:
    """Titles, tags and bodies containing `---`, colons, quotes, newlines or CJK survive."""
    title = value if value.strip() else "x"
    note = store.create(title, value, tags=[value] if value.strip() else None)
    fresh = FileNotebookStore(store.root, durable=False)
    assert fresh.read(note.id) == note


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    title=st.text(min_size=1).filter(lambda t: t.strip() and "\x00" not in t),
    content=st.text(),
    tags=st.lists(st.text(min_size=1).filter(lambda t: t.strip()), max_size=4),
)
def test_render_parse_is_lossless(title: str, content: str, tags: list[str]) -> None:
    """Any title, content and tags render to a file that parses back to the same note."""
    note = Note(
        id="n1",
        title=title.strip(),
        content=content,
        type="conclusion",
        tags=tuple(dict.fromkeys(unicodedata.normalize("NFC", t.strip()) for t in tags)),
        created_at="2025-01-19T15:30:00.000000+00:00",
        updated_at="2025-01-19T15:31:00.000000+00:00",
    )
    assert parse_note(render_note(note), note_id="n1", modified=0.0) == note


@pytest.mark.parametrize(
    "bad", ["../x", "a/b", "x.md", "", ".hidden", "/etc/passwd", "a" * 200, "..", "a b", None]
)
def test_unsafe_ids_are_refused_everywhere(store: FileNotebookStore, bad: object) -> None:
    """Ids that could name a path outside the workspace are refused by every operation."""
    with pytest.raises(NotebookError, match="Invalid note id"):
        validate_note_id(bad)
    with pytest.raises(NotebookError, match="Invalid note id"):
        store.read(bad)  # type: ignore[arg-type]
    with pytest.raises(NotebookError, match="Invalid note id"):
        store.update(bad, title="t")  # type: ignore[arg-type]
    with pytest.raises(NotebookError, match="Invalid note id"):
        store.delete(bad)  # type: ignore[arg-type]
    assert sorted(p.name for p in store.root.parent.iterdir()) == ["notes"]


def test_ids_are_never_reused_after_deletes_within_one_second(store: FileNotebookStore) -> None:
    """Create/delete churn in the same second never yields an id twice nor overwrites a note."""
    seen: set[str] = set()
    keep = store.create("keeper", "must survive")
    for i in range(60):
        note = store.create(f"n{i}", "x")
        assert note.id not in seen
        seen.add(note.id)
        if i % 2:
            store.delete(note.id)
    assert store.read(keep.id).content == "must survive"
    assert len(store.list(limit=None)) == 31
    assert new_note_id() != new_note_id()


def test_update_changes_only_given_fields_and_bumps_time(store: FileNotebookStore) -> None:
    """Update keeps unspecified fields, replaces tags, and moves `updated_at` forward."""
    note = store.create("T", "body", note_type="action", tags=["x"])
    updated = store.update(note.id, content="new body", tags=[])
    assert (updated.title, updated.content, updated.type, updated.tags) == (
        "T",
        "new body",
        "action",
        (),
    )
    assert updated.created_at == note.created_at
    assert updated.updated_at > note.updated_at
    assert store.read(note.id) == updated


def test_model_mistakes_raise_note_error_with_guidance(store: FileNotebookStore) -> None:
    """Missing notes and bad fields raise NotebookError messages that say what to do."""
    with pytest.raises(NotebookError, match=r"does not exist\. Use list or search"):
        store.read("note_missing")
    with pytest.raises(NotebookError, match="does not exist"):
        store.update("note_missing", title="x")
    with pytest.raises(NotebookError, match="does not exist"):
        store.delete("note_missing")
    note = store.create("t", "c")
    with pytest.raises(NotebookError, match="Nothing to update"):
        store.update(note.id)
    with pytest.raises(NotebookError, match="note_type must be one of task_state"):
        store.create("t", "c", note_type="todo")
    with pytest.raises(NotebookError, match="title must be a non-empty string"):
        store.create("  ", "c")
    with pytest.raises(NotebookError, match="content must be a string"):
        store.create("t", 5)  # type: ignore[arg-type]
    with pytest.raises(NotebookError, match="tags must be a list of strings"):
        store.create("t", "c", tags="a,b")
    with pytest.raises(NotebookError, match="each tag must be a non-empty string"):
        store.create("t", "c", tags=["ok", ""])
    with pytest.raises(NotebookError, match="limit must be a positive integer"):
        store.list(limit=0)
    with pytest.raises(NotebookError, match="query must be a string"):
        store.search(None)  # type: ignore[arg-type]
    assert [n.id for n in store.list()] == [note.id]


def test_workspace_that_is_a_file_is_rejected(tmp_path: Path) -> None:
    """Constructing a store on a regular file is a programmer error."""
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(ValueError, match="workspace must be a directory"):
        FileNotebookStore(target)


def test_search_ranks_by_relevance_and_filters(store: FileNotebookStore) -> None:
    """BM25 ranks the most relevant note first; type and tag filters narrow results."""
    pool = store.create("DB pool exhausted", "pool timeout under load", note_type="blocker")
    store.create("UI colours", "use blue", note_type="conclusion", tags=["ui"])
    other = store.create("Pool party", "unrelated pool mention", tags=["fun"])
    hits = store.search("pool timeout")
    assert [n.id for n, _ in hits][:2] == [pool.id, other.id]
    assert all(score > 0 for _, score in hits)
    assert [n.id for n, _ in store.search("pool", note_type="general")] == [other.id]
    assert [n.id for n, _ in store.search("pool", tags=["fun", "zzz"])] == [other.id]
    assert store.search("nonexistentword") == []
    assert len(store.search("", limit=None)) == 3


def test_search_uses_an_injected_scorer(tmp_path: Path) -> None:
    """A custom scorer replaces BM25 through the single scorer seam."""
    calls: list[str] = []

    def by_length(query: str, texts: list[str]) -> list[float]:
        calls.append(query)
        return [float(len(t)) for t in texts]

    store = FileNotebookStore(tmp_path, durable=False, scorer=by_length)
    short = store.create("a", "b")
    long = store.create("a", "much longer body text")
    assert [n.id for n, _ in store.search("anything")] == [long.id, short.id]
    assert calls == ["anything"]


def test_cjk_search_matches_partial_words(store: FileNotebookStore) -> None:
    """Chinese text without spaces is searchable by sub-words."""
    hit = store.create("上下文工程", "压缩与笔记")
    store.create("other", "english only")
    assert [n.id for n, _ in store.search("上下文")] == [hit.id]
    assert bm25_scores("x", []) == []


def test_list_and_summary_follow_recency_and_types(store: FileNotebookStore) -> None:
    """List is newest first; summary counts types and tags and shows recent notes."""
    first = store.create("one", "1", note_type="blocker", tags=["a"])
    second = store.create("two", "2", note_type="action", tags=["a", "b"])
    store.update(first.id, content="1b")
    assert [n.id for n in store.list()] == [first.id, second.id]
    assert [n.id for n in store.list(note_type="action")] == [second.id]
    summary = store.summary()
    assert summary["total_notes"] == 2
    assert summary["type_distribution"] == {"blocker": 1, "action": 1}
    assert summary["tag_counts"] == {"a": 2, "b": 1}
    assert [r["id"] for r in summary["recent_notes"]] == [first.id, second.id]


def _index(store: FileNotebookStore) -> dict[str, dict[str, object]]:
    return json.loads((store.root / INDEX_FILE_NAME).read_text(encoding="utf-8"))["notes"]


def test_index_is_rebuilt_when_missing_corrupt_or_stale(store: FileNotebookStore) -> None:
    """A deleted, garbled or out-of-date index is rebuilt from the note files."""
    a = store.create("a", "1")
    b = store.create("b", "2")
    (store.root / INDEX_FILE_NAME).unlink()
    assert {n.id for n in FileNotebookStore(store.root).list()} == {a.id, b.id}
    assert set(_index(store)) == {a.id, b.id}
    (store.root / INDEX_FILE_NAME).write_text("{not json", encoding="utf-8")
    assert len(FileNotebookStore(store.root).list()) == 2
    assert set(_index(store)) == {a.id, b.id}
    stale = FileNotebookStore(store.root)
    stale.list()
    store.delete(a.id)  # another instance changes the files behind `stale`'s back
    assert [n.id for n in stale.list()] == [b.id]
    assert set(_index(stale)) == {b.id}


def test_adopting_another_writers_index_keeps_its_notes_in_later_writes(
    store: FileNotebookStore,
) -> None:
    """A reads the index B wrote, then writes: B's note stays in the index."""
    other = FileNotebookStore(store.root, durable=False)
    mine = store.create("from A", "1")
    theirs = other.create("from B", "2")
    assert {n.id for n in store.list()} == {mine.id, theirs.id}  # adopts B's index
    again = store.create("from A again", "3")
    assert set(_index(store)) == {mine.id, theirs.id, again.id}
    store.delete(mine.id)
    assert set(_index(store)) == {theirs.id, again.id}


def test_adopting_the_index_under_the_lock_refreshes_entries_too(
    store: FileNotebookStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The re-check under the lock (writer caught mid-write) also adopts B's entries."""
    other = FileNotebookStore(store.root, durable=False)
    mine = store.create("from A", "1")
    theirs = other.create("from B", "2")
    real_read_index = FileNotebookStore.read_index
    calls: list[int] = []

    def first_read_looks_mid_write(self: FileNotebookStore) -> dict[str, dict[str, object]] | None:
        calls.append(1)
        return None if len(calls) == 1 else real_read_index(self)

    monkeypatch.setattr(FileNotebookStore, "read_index", first_read_looks_mid_write)
    assert {n.id for n in store.list()} == {mine.id, theirs.id}
    monkeypatch.undo()
    again = store.create("from A again", "3")
    assert set(_index(store)) == {mine.id, theirs.id, again.id}


def test_hand_edited_and_hand_written_notes_are_picked_up(store: FileNotebookStore) -> None:
    """Editing a note file in an editor, or adding one, shows up in reads and the index."""
    note = store.create("orig", "old")
    path = store.note_path(note.id)
    path.write_text(path.read_text().replace("old", "edited by hand"), encoding="utf-8")
    os.utime(path, ns=(1, 1))  # make sure the signature changes even within one tick
    assert store.read(note.id).content == "edited by hand"
    (store.root / "my-idea.md").write_text("# Idea from the editor\nplain markdown\n")
    (store.root / "broken.md").write_text("---\ntitle: [unclosed\n---\nbody\n")
    with pytest.warns(UnreadableNoteWarning, match=r"broken\.md: the front matter is not valid"):
        titles = {n.id: n.title for n in store.list(limit=None)}
    assert titles == {note.id: "orig", "my-idea": "Idea from the editor"}
    assert [Path(u.location).name for u in store.unreadable()] == ["broken.md"]
    with pytest.raises(NotebookError, match=r"broken\.md cannot be read: the front matter is not"):
        store.read("broken")
    assert set(_index(store)) == {note.id, "my-idea"}


def test_symlinked_notes_and_odd_files_are_ignored(
    store: FileNotebookStore, tmp_path: Path
) -> None:
    """A symlink named like a note is never followed; non-note files are ignored."""
    secret = tmp_path / "secret.md"
    secret.write_text("---\ntitle: secret\n---\nTOP SECRET")
    os.symlink(secret, store.root / "evil.md")
    (store.root / "notes.txt").write_text("x")
    (store.root / "bad name.md").write_text("x")
    with pytest.warns(UnreadableNoteWarning):
        assert store.list() == []
    with pytest.raises(NotebookError, match=r"evil\.md cannot be read: a symbolic link"):
        store.read("evil")
    assert {Path(u.location).name for u in store.unreadable()} == {"evil.md", "bad name.md"}
    assert "TOP SECRET" not in json.dumps(store.summary())


def test_leftover_temp_files_are_cleaned_on_rebuild(store: FileNotebookStore) -> None:
    """Temp files left by a killed writer are removed when the index is rebuilt."""
    note = store.create("a", "1")
    leftover = store.root / f".{note.id}.md.tmp-deadbeef"
    leftover.write_text("half a no")
    (store.root / INDEX_FILE_NAME).unlink()
    assert [n.id for n in store.list()] == [note.id]
    assert not leftover.exists()


def test_note_types_are_the_books_six() -> None:
    """The six note types of the book are supported, in priority-neutral order."""
    assert NOTE_TYPES == ("task_state", "conclusion", "blocker", "action", "reference", "general")


def test_a_scorer_returning_the_wrong_number_of_scores_is_an_error(tmp_path: Path) -> None:
    """A broken scorer (programmer error) raises instead of mis-ranking silently."""
    store = FileNotebookStore(tmp_path, durable=False, scorer=lambda q, texts: [1.0])
    store.create("a", "b")
    store.create("c", "d")
    with pytest.raises(ValueError, match="scorer returned 1 scores for 2 notes"):
        store.search("x")
