"""The memory's one change event (memtui.core.writing.changes): one watcher per root, own writes as exactly one event,
external writes as one event per burst, raw subscribers told at once, and no UI module faking any of it."""

from __future__ import annotations

import ast
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memtui.core.recall.index_watch import IndexWatcher
from memtui.core.writing import changes
from memtui.core.writing.changes import Change, classify
from memtui.core.writing.memory import Memory
from tests.support.watches import watches

TUI = Path(__file__).resolve().parent.parent / "memtui" / "tui"
QUIET_AFTER = 0.6  # seconds with no further event that count as "that was all of it"


class Events:
    """A subscriber that keeps what it was told."""

    def __init__(self) -> None:
        self.got: list[Change] = []
        self._lock = threading.Lock()

    def __call__(self, change: Change) -> None:
        with self._lock:
            self.got.append(change)

    def after(self, n: int) -> list[Change]:
        with self._lock:
            return self.got[n:]

    def wait(self, n: int, timeout: float = 10.0) -> list[Change]:
        """The events after the first `n` once at least one came and then QUIET_AFTER passed without another."""
        deadline = time.monotonic() + timeout
        while not self.after(n) and time.monotonic() < deadline:
            time.sleep(0.01)
        count = -1
        while count != len(self.after(n)):
            count = len(self.after(n))
            time.sleep(QUIET_AFTER)
        return self.after(n)




@pytest.fixture
def watched(mem: Memory):
    events = Events()
    unsubscribe = mem.subscribe(events)
    events.wait(0)  # the first event: "watching now"
    yield mem, events
    unsubscribe()


def test_the_first_event_says_watching_started(mem: Memory) -> None:
    events = Events()
    unsubscribe = mem.subscribe(events)
    try:
        assert events.after(0)[0] == Change(queue=True, audit=True, everything=True)
    finally:
        unsubscribe()


def test_an_own_write_is_exactly_one_event_after_its_commit(watched) -> None:
    mem, events = watched
    n = len(events.got)
    result = mem.update("Facts", "add", "[stated] One write, one event (2026-05-01)", actor="wes")
    assert result.status == "applied"
    got = events.wait(n)
    assert len(got) == 1, got
    assert got[0].own and "MEMORY.md" in got[0].paths and got[0].audit
    # It came after the commit: the subscriber can read the new history at once.
    assert result.commit and mem.store.head().sha == result.commit


def test_a_queued_a_refused_and_a_rejected_write_are_one_event_each(watched) -> None:
    mem, events = watched
    for write in (
        lambda: mem.update("Facts", "add", "[inferred] An agent's guess (2026-05-01)", actor="agent-x"),
        lambda: mem.update("No such section", "revise", "[stated] x", replaces="nothing here", actor="wes"),
        lambda: mem.reject("p-0001", reason="not true", by="wes"),
    ):
        n = len(events.got)
        status = write().status
        got = events.wait(n)
        assert len(got) == 1 and got[0].own and got[0].queue, (status, got)
        assert "MEMORY.md" not in got[0].paths  # the file itself did not change


def test_an_external_write_is_one_event_not_own(watched) -> None:
    mem, events = watched
    n = len(events.got)
    path = Path(mem.location) / "MEMORY.md"
    subprocess.run([sys.executable, "-c", f"open({str(path)!r}, 'a').write('- [observed] from outside\\n')"],
                   check=True)
    got = events.wait(n)
    assert len(got) == 1 and got[0].paths == frozenset({"MEMORY.md"}) and not got[0].own


def test_another_process_writing_through_memtui_is_one_event(watched) -> None:
    mem, events = watched
    n = len(events.got)
    subprocess.run([sys.executable, "-m", "memtui", "update", "--root", mem.location, "--by", "wes", "Facts", "add",
                    "[stated] Written by the CLI (2026-05-01)"], check=True, capture_output=True, timeout=60)
    got = events.wait(n)
    # The file, the audit line and the commit land within one burst.
    assert len(got) == 1 and "MEMORY.md" in got[0].paths and got[0].audit and not got[0].own, got


def test_a_write_without_a_watcher_still_tells_its_subscribers(mem: Memory) -> None:
    events = Events()
    unsubscribe = mem.subscribe(events, watch=False)
    try:
        assert not watches() and events.got == []  # nothing watches, so nothing says "watching now"
        mem.update("Facts", "add", "[stated] Heard without watching (2026-05-01)", actor="wes")
        got = events.wait(0)
        assert len(got) == 1 and got[0].own and "MEMORY.md" in got[0].paths
    finally:
        unsubscribe()


def test_one_watcher_per_root_however_many_subscribe(mem: Memory) -> None:
    before = len(watches())
    first, second = Events(), Events()
    off_first = mem.subscribe(first)
    off_second = Memory(mem.location).subscribe(second)  # another Memory on the same root shares it
    index = IndexWatcher(mem.location, publish=True)
    try:
        assert len(watches()) == before + 1
        n1, n2 = len(first.got), len(second.got)
        (Path(mem.location) / "notes.md").write_text("- [stated] seen by both\n")
        assert any("notes.md" in c.paths for c in first.wait(n1))
        assert any("notes.md" in c.paths for c in second.wait(n2))
        assert index.take() is None  # the first take: walk everything once
        (Path(mem.location) / "notes.md").write_text("- [stated] seen by the index too\n")
        deadline = time.monotonic() + 5
        seen: set[str] = set()
        while "notes.md" not in seen and time.monotonic() < deadline:
            seen |= index.take() or set()
            time.sleep(0.01)
        assert "notes.md" in seen
    finally:
        index.stop()
        off_first()
        assert len(watches()) == before + 1  # the second subscriber still watches
        off_second()
    assert len(watches()) == before  # the last one out stops the watcher


def test_raw_subscribers_hear_each_file_at_once_and_folders_as_everything(mem: Memory) -> None:
    raw = Events()
    unsubscribe = mem.subscribe(raw, raw=True)
    root = Path(mem.location)
    try:
        (root / "a.md").write_text("x\n")
        (root / "sub").mkdir()
        deadline = time.monotonic() + 5
        while not any(c.everything and "sub" in c.paths for c in raw.got) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert any(c.paths == frozenset({"a.md"}) for c in raw.got)
        assert any(c.everything and "sub" in c.paths for c in raw.got)
        assert not any(p.startswith((".git", ".memtui")) for c in raw.got for p in c.paths)
    finally:
        unsubscribe()


def test_a_failing_subscriber_breaks_neither_the_write_nor_the_others(watched) -> None:
    mem, events = watched

    def broken(change: Change) -> None:
        raise RuntimeError("a subscriber's bug")

    unsubscribe = mem.subscribe(broken)
    try:
        n = len(events.got)
        result = mem.update("Facts", "add", "[stated] Still written (2026-05-01)", actor="wes")
        assert result.status == "applied"
        assert len(events.wait(n)) == 1
    finally:
        unsubscribe()


@pytest.mark.parametrize("rel, kind", [
    ("MEMORY.md", "file"), ("people/ana.md", "file"), ("memory-log.jsonl", "audit"),
    (".memtui/queue", "queue"), (".memtui/queue/p-0001.json", "queue"), (".memtui/queue/.p-0001.tmp", None),
    (".memtui/lock", None), (".git/index", None), (".hidden/x.md", None), ("notes/.x.md.tmp", None),
    (".memtui/index.sqlite-cookies/abc", "cookie"), (".memtui/intent.json", "intent"),
])
def test_one_classifier_for_every_path(tmp_path: Path, rel: str, kind: str | None) -> None:
    found = classify(tmp_path, str(tmp_path / rel))
    assert (found[0] if found else None) == kind


def test_paths_outside_the_root_and_hostile_names_are_not_memory(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    assert classify(root, str(tmp_path / "elsewhere.md")) is None
    assert classify(root, str(root)) is None
    assert classify(root, str(root / "notes" / ".." / ".." / "elsewhere.md")) is None
    assert classify(root, str(root / ".." / "memory" / ".git" / "config")) is None
    # A name with a newline or an escape is still just a path: the app shows it as data.
    assert classify(root, str(root / "a\nb.md")) == ("file", "a\nb.md")


def test_no_ui_module_makes_a_change_message_or_syncs_by_hand() -> None:
    """FilesChanged is made only where the change event is turned into messages, and `sync()` is called only for
    the first screen (its queue as it is composed, then the whole folder once that screen is painted) and for a
    change event (its files, then the whole folder once changes stop coming): no writer posts a fake watcher
    message or syncs after itself."""
    made: list[str] = []
    syncs: list[str] = []
    for path in sorted(TUI.glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if not isinstance(node, ast.Call):
                    continue
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if isinstance(node.func, ast.Attribute) and getattr(node.func.value, "id", "") == "sync":
                    continue  # `sync.sync(...)`: the core's sync with a git remote (memtui/core/writing/sync.py)
                where = f"{path.name}:{fn.name}"
                if name == "FilesChanged":
                    made.append(where)
                if name == "sync" or any(isinstance(a, ast.Attribute) and a.attr == "sync" for a in node.args):
                    syncs.append(where)
    assert sorted(set(made)) == ["watch.py:message_for"]
    assert sorted(set(syncs)) == ["app.py:_after_first_screen", "app.py:compose", "syncing.py:_read_folder",
                                  "syncing.py:_sync_deferred"]


def test_the_search_pane_keeps_no_watcher_of_its_own() -> None:
    source = (TUI / "search.py").read_text()
    assert "Observer" not in source and "watchdog" not in source and "IndexWatcher" not in source


def test_redis_hub_and_folder_hub_are_distinct_per_location(tmp_path: Path) -> None:
    a, b = changes.for_folder(tmp_path / "a"), changes.for_folder(tmp_path / "a")
    assert a is b and changes.for_folder(tmp_path / "b") is not a
