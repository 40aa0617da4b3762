"""Attacks on the barrier as it is now: its cookie folder kept open between queries (one lstat per barrier instead
of reaching it again), its cookie's events handled at once on the emitter's thread, and the watch itself (watchdog's
inotify emitter handing events on without an Observer's thread). The reference is a full scan."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from memtui.core.recall.search import Searcher, search
from memtui.core.writing import changes
from support.search_text import comparable, write

COOKIES = ".memtui/index.sqlite-cookies"


def scan(mem, query: str) -> dict:
    return comparable(search(mem, query, use_index=False))


def _barrier_took(hub) -> tuple[bool, float]:
    started = time.monotonic()
    heard = hub.feed.barrier()
    return heard, time.monotonic() - started


def test_a_cookie_folder_moved_away_and_made_again_is_reached_again_at_once(root, mem):
    """The kept descriptor names the folder that was moved away (still inside the memory, under another name, so
    its cookies' events are heard under that name, not as cookies): each barrier would wait its whole time. The
    next barrier sees the path is another folder and opens it."""
    write(root, "a.md", "- [stated] the otter swims\n")
    hub = changes.for_folder(root)
    off = hub.subscribe(lambda c: None)
    try:
        assert hub.feed.barrier()
        (root / COOKIES).rename(root / ".memtui/moved-cookies")
        (root / COOKIES).mkdir()
        for _ in range(3):
            heard, took = _barrier_took(hub)
            assert heard and took < changes.BARRIER_WAIT / 2, (heard, took)
        assert list((root / ".memtui/moved-cookies").iterdir()) == []
        assert list((root / COOKIES).iterdir()) == []  # each barrier removed its cookie
    finally:
        off()


def test_a_cookie_folder_swapped_for_a_link_outside_is_never_written_through(root, mem, tmp_path: Path):
    """The folder replaced by a symlink to a folder outside after the descriptor was kept: the lstat sees a link,
    the folder is reached again without following it (refused), and no file is made outside."""
    write(root, "a.md", "- [stated] the otter swims\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    with Searcher(mem, watch=True) as s:
        assert s.search("otter").sources == 1
        shutil.rmtree(root / COOKIES)
        (root / COOKIES).symlink_to(outside, target_is_directory=True)
        write(root, "a.md", "- [stated] the otter sleeps\n")
        assert comparable(s.search("otter sleeps")) == scan(mem, "otter sleeps")
        assert comparable(s.search("otter")) == scan(mem, "otter")
    assert list(outside.iterdir()) == []


def test_a_hard_link_planted_under_a_cookie_s_name_still_makes_the_index_learn_it(root, mem):
    """A barrier's own cookie is handled without `event`'s rules; a file named like one that is another name of a
    memory file (a hard link) is not: a write through it changes the memory file, so the index must hear that
    the file has another name (and compare it at every refresh)."""
    write(root, "notes/a.md", "- [stated] the otter swims\n")
    with Searcher(mem, watch=True) as s:
        assert s.search("otter").sources == 1
        alias = root / COOKIES / (changes.OWN_COOKIE + "0123456789abcdef")
        os.link(root / "notes/a.md", alias)
        assert s.search("otter").sources == 0  # a file with another name is not read out
        with open(alias, "r+", encoding="utf-8") as f:  # in place, through the cookie's name
            f.write("- [stated] the beaver swims")
        assert comparable(s.search("beaver")) == scan(mem, "beaver")
        os.unlink(alias)
        assert s.search("beaver").sources == 1


def test_the_watch_falls_back_to_watchdog_s_observer_where_the_inotify_binding_is_missing(root, mem, monkeypatch):
    """No inotify binding (`inotify_simple` not installed; or not Linux): watchdog's Observer watches, through its
    public API, and barriers still answer."""
    import sys

    monkeypatch.setitem(sys.modules, "inotify_simple", None)  # its import raises ImportError
    assert not changes.hardened_walk()
    write(root, "a.md", "- [stated] the otter swims\n")
    with Searcher(mem, watch=True) as s:
        from watchdog.observers.api import BaseObserver

        assert isinstance(s._watcher.hub.feed._observer, BaseObserver)
        assert s.search("otter").sources == 1
        write(root, "a.md", "- [stated] the otter sleeps\n")
        assert comparable(s.search("otter sleeps")) == scan(mem, "otter sleeps")
        heard, took = _barrier_took(s._watcher.hub)
        assert heard and took < changes.BARRIER_WAIT / 2


def test_stopping_the_watch_leaves_no_cookie_and_no_descriptor(root, mem):
    write(root, "a.md", "- [stated] the otter swims\n")
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(3):
        with Searcher(mem, watch=True) as s:
            assert s.search("otter").sources == 1
    assert list((root / COOKIES).iterdir()) == []
    assert len(os.listdir("/proc/self/fd")) <= before
