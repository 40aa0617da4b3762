"""An outsider's attacks on memtui's own inotify watch (`memtui.core.storage.inotify_watch.FolderWatch`) where it
differs from watchdog's: a folder moved out of the memory (its watches must go with it), many renames' first halves with
no second (each waits for its pair: they must not wait one after another), and names that are not UTF-8. Real files,
real inotify; the reference for every warm search is a full scan."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from memtui.core.recall.search import Searcher, search
from memtui.core.writing import changes
from support.search_text import comparable, write
from support.watches import hearing

pytestmark = pytest.mark.skipif(not changes.hardened_walk(), reason="memtui's own inotify watch (Linux)")


def scan(mem, query: str) -> dict:
    return comparable(search(mem, query, use_index=False))


def test_a_folder_moved_out_of_the_memory_takes_its_watches_with_it(root, mem, tmp_path):
    """The agent moves `notes/` (three folders deep) out of the memory, then writes in it out there. watchdog kept
    the moved folders' watches under their old names: a write outside was told as `notes/deep/er/x.md`, a memory
    file, and every such folder kept a kernel watch for good. Now they go, and nothing out there is heard."""
    write(root, "notes/deep/er/a.md", "- [stated] the otter swims\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    with Searcher(mem, watch=True) as s:
        assert s.search("otter").sources == 1
        hub = s._watcher.hub
        watch = hub.feed._observer
        before = watch.watched
        with hearing(hub) as heard:
            os.rename(root / "notes", outside / "notes")
            assert hub.feed.barrier()
            assert watch.watched == before - 3
            assert not [p for p in watch._wds if p.startswith(str(root / "notes"))]
            heard.paths.clear()
            (outside / "notes/deep/er/x.md").write_text("- [stated] the heron waits outside\n")
            (outside / "notes/deep/y.md").write_text("- [stated] the heron waits outside\n")
            write(root, "b.md", "- [stated] the heron waits inside\n")
            assert hub.feed.barrier()
            assert "b.md" in heard.paths and not [p for p in heard.paths if p.startswith("notes/")], heard.paths
        assert comparable(s.search("heron")) == scan(mem, "heron")
        assert comparable(s.search("otter")) == scan(mem, "otter")
        assert watch.alive()


def test_many_files_moved_out_at_once_do_not_wait_for_their_pairs_one_by_one(root, mem, tmp_path):
    """2,000 files moved out of the memory: 2,000 renames' first halves, none with a second. Each waits up to
    PAIRING for its pair, and every event behind it waits too; were each to wait after the one before, the watch
    would be deaf for 2,000 × 0.5 s. They wait together: the watch answers within a few seconds."""
    many = root / "many"
    many.mkdir()
    for i in range(2000):
        (many / f"m{i}.md").write_text(f"- [stated] filler {i}\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    with Searcher(mem, watch=True) as s:
        s.search("filler")
        hub = s._watcher.hub
        assert hub.feed.barrier()
        started = time.monotonic()
        for i in range(2000):
            os.rename(many / f"m{i}.md", outside / f"m{i}.md")
        write(root, "b.md", "- [stated] the heron waits\n")
        deadline = time.monotonic() + 20
        while not hub.feed.barrier(1.0) and time.monotonic() < deadline:
            pass
        assert time.monotonic() - started < 10
        assert comparable(s.search("heron")) == scan(mem, "heron")
        assert comparable(s.search("filler")) == scan(mem, "filler")
        assert hub.feed._observer.alive()


def test_names_that_are_not_utf8_do_not_stop_the_watch(root, mem):
    """File and folder names the agent makes of bytes that are no UTF-8 (the kernel takes any but '/' and NUL): the
    watch tells them (as Python's surrogate escapes) without failing, renames them, and hears what comes next."""
    write(root, "a.md", "- [stated] the otter swims\n")
    with Searcher(mem, watch=True) as s:
        assert s.search("otter").sources == 1
        hub = s._watcher.hub
        watch = hub.feed._observer
        base = os.fsencode(root)
        os.mkdir(base + b"/\xff\xfe")
        with open(base + b"/\xff\xfe/\x80.md", "wb") as f:
            f.write(b"- [stated] the otter hides\n")
        os.rename(base + b"/\xff\xfe", base + b"/\xc3(")
        with hearing(hub) as heard:
            write(root, "b.md", "- [stated] the otter dreams\n")
            assert hub.feed.barrier()
            assert "b.md" in heard.paths
        assert watch.alive() and watch.failures == 0
        assert os.fsdecode(base + b"/\xc3(") in watch._wds
        assert comparable(s.search("otter")) == scan(mem, "otter")


def test_a_flood_behind_a_held_rename_waits_in_the_kernel_and_is_all_heard(root, mem, tmp_path, monkeypatch):
    """A file moved out (its rename's first half held for PAIRING), then a flood of writes: what is held in this
    process is bounded (HELD_MAX, lowered here to 50), the rest waits in the kernel's queue, and every file is
    heard by name once the first half is let go."""
    from memtui.core.storage import inotify_watch

    monkeypatch.setattr(inotify_watch, "HELD_MAX", 50)
    write(root, "gone.md", "- [stated] the otter leaves\n")
    (root / "flood").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    with Searcher(mem, watch=True) as s:
        s.search("otter")
        hub = s._watcher.hub
        assert hub.feed.barrier()
        with hearing(hub) as heard:
            os.rename(root / "gone.md", outside / "gone.md")
            for i in range(500):
                (root / "flood" / f"f{i}.md").write_text(f"- [stated] the heron {i}\n")
            assert hub.feed.barrier()
            assert "gone.md" in heard.paths
            assert {f"flood/f{i}.md" for i in range(500)} <= set(heard.paths)
        assert comparable(s.search("heron")) == scan(mem, "heron")
        assert hub.feed._observer.alive()
