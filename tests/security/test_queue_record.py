"""memtui's record of the queue files it wrote (memtui/core/storage/queue_record.py), kept beside the memory: what it
trusts, what it does not, and what an older memory finds on its first look."""

from __future__ import annotations

from pathlib import Path

from memtui.core.storage.places import memories_home, state_key
from memtui.core.storage.queue_record import RECORD_FILE, QueueRecord
from memtui.core.writing.memory import Memory

AGENT = "agent:claude"


def record_of(root: Path) -> Path:
    import os

    return memories_home() / state_key(os.path.realpath(root)) / RECORD_FILE


def test_the_record_is_kept_beside_the_memory_and_only_grows(root: Path) -> None:
    mem = Memory(root)
    r = mem.update("Preferences", "add", "[stated] Prefers dark mode", actor=AGENT)
    path = record_of(root)
    assert path.is_file() and not str(path).startswith(str(root))
    lines = path.read_text().splitlines()
    assert [ln.split()[0] for ln in lines] == [r.id]
    assert mem.reject(r.id or "", reason="no", by="wes").status == "rejected"
    assert [ln.split()[0] for ln in path.read_text().splitlines()] == [r.id, r.id]  # the decision appended
    assert (path.stat().st_mode & 0o077) == 0


def test_a_line_being_appended_is_read_whole_later(tmp_path: Path) -> None:
    rec = QueueRecord(tmp_path)
    rec.wrote([("p-0001", b"one")])
    with open(rec.path, "ab") as f:
        f.write(b"p-0002 abc")  # half a line: a writer in the middle of its append
    assert set(rec.last()) == {"p-0001"}
    with open(rec.path, "ab") as f:
        f.write(b"def\n")
    assert rec.last()["p-0002"] == "abcdef"


def test_a_memory_from_before_the_record_trusts_the_queue_it_has_on_first_look(root: Path) -> None:
    mem = Memory(root)
    r = mem.update("Preferences", "add", "[stated] Prefers dark mode", actor=AGENT)
    record_of(root).unlink()  # as a memtui older than the record left it
    again = Memory(root)
    assert [p.id for p in again.proposals(external=False)] == [r.id]
    assert record_of(root).is_file()  # started on that look, with what was there
    assert again.approve(r.id or "", by="wes").status == "applied"


def test_a_queue_file_that_memtui_wrote_twice_is_its_latest_only(root: Path) -> None:
    mem = Memory(root)
    r = mem.update("Preferences", "add", "[stated] Prefers dark mode", actor=AGENT)
    qfile = root / ".memtui" / "queue" / f"{r.id}.json"
    first = qfile.read_bytes()
    assert mem.approve(r.id or "", entry="[stated] Prefers light mode", by="wes").status == "applied"
    qfile.write_bytes(first)  # the pending version put back
    again = Memory(root)
    assert r.id not in {p.id for p in again.proposals(external=False)}
    assert "Prefers dark mode" not in (root / "MEMORY.md").read_text()
