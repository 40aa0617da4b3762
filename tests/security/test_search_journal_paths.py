"""A change journal names paths for the index to re-read: a forged line (absolute, climbing, through a symlinked
folder, hidden) must not bring a file from outside the memory, or memtui's own state, into search results."""

from __future__ import annotations

import time
from pathlib import Path

from memtui.core.recall.index_watch import IndexWatcher
from memtui.core.recall.search import Searcher, search
from memtui.core.storage import fsmonitor


def test_forged_journal_paths_stay_inside_the_memory(tmp_path: Path) -> None:
    root = tmp_path / "m"
    root.mkdir()
    (root / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("zqsecret outside the memory\n", encoding="utf-8")
    (root / "linked").symlink_to(outside, target_is_directory=True)
    (root / ".memtui").mkdir()
    (root / ".memtui" / "hidden.md").write_text("zqsecret in state\n", encoding="utf-8")
    search(root, "zqsecret")  # index built with the journal's token once the watcher runs
    watcher = IndexWatcher(root, publish=True)
    try:
        assert watcher.publisher is not None and fsmonitor.watcher_alive(root)
        search(root, "zqsecret")
        forged = [str(outside / "secret.md"), "../outside/secret.md", "linked/secret.md", ".memtui/hidden.md",
                  "MEMORY.md/../../outside/secret.md", "", "a\nb"]
        watcher.publisher.changed(forged)
        time.sleep(0.05)
        with Searcher(root, keep_texts=False) as s:
            got = s.search("zqsecret")
            assert s.index.last_refresh.full is False
        assert got.sources == 0 and got.results == [], got.render()
        assert set(s.index.files()) == {"MEMORY.md"}
    finally:
        watcher.stop()
    assert not fsmonitor.watcher_alive(root)


def test_a_journal_line_that_is_not_json_means_a_walk(tmp_path: Path) -> None:
    root = tmp_path / "m"
    (root / ".memtui").mkdir(parents=True)  # a memtui memory: the change journal is kept in its .memtui/
    (root / "a.md").write_text("zqwalk\n", encoding="utf-8")
    watcher = IndexWatcher(root, publish=True)
    try:
        search(root, "zqwalk")
        with open(root / ".memtui" / "index.sqlite-changes", "ab") as fh:
            fh.write(b"p not-json\n")
        with Searcher(root, keep_texts=False) as s:
            assert s.search("zqwalk").sources == 1
            assert s.index.last_refresh.full is True
    finally:
        watcher.stop()
