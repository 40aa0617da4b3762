"""An outsider's attacks on the watch handing events on from its own thread (`inotify_watch.FolderWatch`), on the
barrier's cookie folder kept open between barriers (`FolderFeed._cookie_folder`), on `.seq` rewritten in place
(`folder._put_floor`) and on `gitobjects.common_dir` memoized. Real files, real git, real watchdog; the reference
for every warm search is a full scan."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from memtui.core.recall.search import Searcher, search
from memtui.core.writing import changes
from support.search_text import comparable, write
from support.watches import Heard, watches

COOKIES = ".memtui/index.sqlite-cookies"
AGENT = "agent:attack12"


def scan(mem, query: str) -> dict:
    return comparable(search(mem, query, use_index=False))


def fds() -> int:
    return len(os.listdir("/proc/self/fd"))


# the cookie folder kept open ------------------------------------------------------------------------------------


def test_a_state_folder_moved_into_the_memory_behind_a_link_gets_no_cookie(root, mem):
    """`.memtui` renamed to a memory folder (`notes`) and replaced by a symlink to it: an lstat of
    `.memtui/index.sqlite-cookies` follows the link and finds the very folder kept open, so a barrier made its
    cookie in `notes/index.sqlite-cookies/` (a file in the memory, heard as a memory file, never as a cookie) and
    waited its whole BARRIER_WAIT. The folder is reached without following links: no file made in the memory."""
    write(root, "a.md", "- [stated] the otter swims\n")
    heard = Heard()
    hub = changes.for_folder(root)
    off = hub.subscribe(heard, raw=True)
    try:
        assert hub.feed.barrier()
        (root / ".memtui").rename(root / "notes")
        (root / ".memtui").symlink_to("notes", target_is_directory=True)
        time.sleep(0.1)
        heard.paths.clear()
        started = time.monotonic()
        hub.feed.barrier()
        took = time.monotonic() - started
        time.sleep(0.1)
        assert not [p for p in heard.paths if p.startswith("notes/")], heard.paths
        assert took < changes.BARRIER_WAIT / 2, took
    finally:
        off()
    assert list((root / "notes/index.sqlite-cookies").iterdir()) == []


def test_a_warm_search_equals_the_scan_after_the_state_folder_is_swapped_for_a_link(root, mem):
    write(root, "a.md", "- [stated] the otter swims\n")
    with Searcher(mem, watch=True) as s:
        assert s.search("otter").sources == 1
        (root / ".memtui").rename(root / "moved")
        (root / ".memtui").symlink_to("moved", target_is_directory=True)
        write(root, "a.md", "- [stated] the otter sleeps\n")
        assert comparable(s.search("otter sleeps")) == scan(mem, "otter sleeps")
        write(root, "b.md", "- [stated] the otter dreams\n")
        assert comparable(s.search("otter")) == scan(mem, "otter")


@pytest.mark.parametrize("kind", ["fifo", "file", "dir-link", "emptied"])
def test_the_cookie_folder_replaced_by_something_else_between_barriers(root, mem, kind):
    """A FIFO, a file, a link to another folder of the memory, or the folder emptied and made again: no hang, no
    file made elsewhere, and warm answers equal the scan."""
    write(root, "a.md", "- [stated] the otter swims\n")
    write(root, "other/b.md", "- [stated] the heron waits\n")
    with Searcher(mem, watch=True) as s:
        assert s.search("otter").sources == 1
        cookies = root / COOKIES
        os.rmdir(cookies)
        if kind == "fifo":
            os.mkfifo(cookies)
        elif kind == "file":
            cookies.write_text("x")
        elif kind == "dir-link":
            cookies.symlink_to(root / "other", target_is_directory=True)
        else:
            cookies.mkdir()
        for i in range(3):
            write(root, "a.md", f"- [stated] the otter swims {i} times\n")
            started = time.monotonic()
            assert comparable(s.search("otter")) == scan(mem, "otter")
            assert time.monotonic() - started < changes.BARRIER_WAIT
    assert sorted(p.name for p in (root / "other").iterdir()) == ["b.md"]


def test_a_directory_and_a_fifo_named_like_cookies_are_left_alone(root, mem):
    write(root, "a.md", "- [stated] the otter swims\n")
    with Searcher(mem, watch=True) as s:
        assert s.search("otter").sources == 1
        (root / COOKIES / (changes.OWN_COOKIE + "00")).mkdir()
        write(root, COOKIES + "/" + changes.OWN_COOKIE + "00/x.md", "- [stated] the otter hides\n")
        os.mkfifo(root / COOKIES / (changes.OWN_COOKIE + "01"))
        for i in range(3):
            write(root, "a.md", f"- [stated] the otter swims {i} times\n")
            assert comparable(s.search("otter")) == scan(mem, "otter")
    assert (root / COOKIES / (changes.OWN_COOKIE + "00/x.md")).exists()
    assert (root / COOKIES / (changes.OWN_COOKIE + "01")).exists()


def _stall(hub, seconds: float):
    """A raw subscriber that takes `seconds` on a memory file named stall.md (the emitter's thread runs it): what a
    slow index or journal write costs the watch."""

    def slow(change) -> None:
        if "stall.md" in change.paths:
            time.sleep(seconds)

    return hub.subscribe(slow, raw=True)


def test_concurrent_barriers_while_the_cookie_folder_is_swapped_leave_no_cookie_behind(root, mem):
    """One barrier waits for its cookie (the watch busy), the folder is moved into the memory and made again, and a
    second barrier lets the old descriptor go and opens the new folder, which the kernel may give the same
    descriptor number: the first barrier must not take it for the one its cookie was made through (its cookie
    would stay for good in the moved folder, a file in the memory)."""
    write(root, "a.md", "- [stated] the otter swims\n")
    hub = changes.for_folder(root)
    off = _stall(hub, 0.6)
    try:
        assert hub.feed.barrier()
        write(root, "stall.md", "stall\n")
        time.sleep(0.05)
        results: list[bool] = []
        first = threading.Thread(target=lambda: results.append(hub.feed.barrier()))
        first.start()
        time.sleep(0.1)  # its cookie is made
        (root / COOKIES).rename(root / "moved")
        (root / COOKIES).mkdir()
        second = threading.Thread(target=lambda: results.append(hub.feed.barrier()))
        second.start()
        first.join(5)
        second.join(5)
        assert len(results) == 2
    finally:
        off()
    assert list((root / "moved").iterdir()) == []
    assert list((root / COOKIES).iterdir()) == []


def test_many_threads_raising_barriers_at_once_all_hear_theirs(root, mem):
    write(root, "a.md", "- [stated] the otter swims\n")
    hub = changes.for_folder(root)
    off = hub.subscribe(lambda c: None)
    before = fds()
    try:
        out: list[bool] = []
        lock = threading.Lock()

        def run() -> None:
            for _ in range(20):
                heard = hub.feed.barrier()
                with lock:
                    out.append(heard)

        threads = [threading.Thread(target=run) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert out == [True] * 160
        assert list((root / COOKIES).iterdir()) == []
        assert fds() <= before + 1
    finally:
        off()


def test_stopping_the_watch_while_a_barrier_waits(root, mem):
    """The watch stopped (its descriptor closed) while a barrier waits for its cookie: the barrier ends (False),
    its cookie is removed, and no descriptor is left open."""
    write(root, "a.md", "- [stated] the otter swims\n")
    hub = changes.for_folder(root)
    before = fds()
    off = hub.subscribe(lambda c: None)
    stall = _stall(hub, 0.5)
    feed = hub.feed
    assert feed.barrier()
    write(root, "stall.md", "stall\n")
    time.sleep(0.05)
    out: list[bool] = []
    t = threading.Thread(target=lambda: out.append(feed.barrier()))
    t.start()
    time.sleep(0.05)
    stall()
    off()
    t.join(5)
    assert out and not t.is_alive()
    assert list((root / COOKIES).iterdir()) == []
    assert fds() <= before
    assert not feed.barrier()


def test_many_searchers_opened_and_closed_leak_no_descriptor_and_no_thread(root, mem):
    write(root, "a.md", "- [stated] the otter swims\n")
    with Searcher(mem, watch=True) as s:
        s.search("otter")
    time.sleep(0.2)
    before_fds, before_threads = fds(), len(threading.enumerate())
    for i in range(15):
        with Searcher(mem, watch=True) as s:
            write(root, "a.md", f"- [stated] the otter swims {i}\n")
            assert comparable(s.search("otter")) == scan(mem, "otter")
    time.sleep(0.3)
    assert fds() <= before_fds
    assert len(threading.enumerate()) <= before_threads
    assert watches() == []


# events handled on the emitter's thread ---------------------------------------------------------------------------


def test_a_raw_subscriber_that_raises_loses_no_later_event(root, mem):
    write(root, "a.md", "- [stated] the otter swims\n")
    hub = changes.for_folder(root)

    def bad(change) -> None:
        raise RuntimeError("a subscriber's bug")

    off = hub.subscribe(bad, raw=True)
    try:
        with Searcher(mem, watch=True) as s:
            assert s.search("otter").sources == 1
            for i in range(3):
                write(root, "a.md", f"- [stated] the otter swims {i} times\n")
                assert comparable(s.search("otter")) == scan(mem, "otter")
            assert hub.feed.barrier()
    finally:
        off()


def test_a_hard_link_under_a_cookie_s_name_written_through_and_removed_before_it_is_heard(root, mem):
    """The hard link's creation is handled on the emitter's thread some time after it happened: by then the agent
    may have written through it and removed it, so `_linked` finds nothing and the creation passes for a cookie.
    The write through it changed a memory file under no memory name."""
    _link_write_unlink_unheard(root, mem, root / COOKIES / (changes.OWN_COOKIE + "0123456789abcdef"))


def _link_write_unlink_unheard(root, mem, alias: Path) -> None:
    """While the watch is stalled: `alias` made a hard link of a memory file, written through and removed; then a
    warm search must answer as the scan does."""
    write(root, "notes/a.md", "- [stated] the otter swims\n")
    with Searcher(mem, watch=True) as s:
        assert s.search("otter").sources == 1
        off = _stall(s._watcher.hub, 0.3)
        try:
            write(root, "stall.md", "stall\n")
            time.sleep(0.05)
            os.link(root / "notes/a.md", alias)
            with open(alias, "r+", encoding="utf-8") as f:
                f.write("- [stated] the beaver swims")
            os.unlink(alias)
            assert comparable(s.search("beaver")) == scan(mem, "beaver")
        finally:
            off()


@pytest.mark.parametrize("folder", [".hidden", ".memtui", ".git"])
def test_a_hard_link_in_a_hidden_folder_written_through_and_removed_before_it_is_heard(root, mem, folder):
    """Broke (fixed): the link's creation was handled after it was gone (`_linked` found nothing) and the write
    was heard under a hidden name only, so the index never re-checked the memory file (a stale warm answer). A
    write to a file found gone when handled, then removed, now says every file may have changed."""
    (root / folder).mkdir(exist_ok=True)
    _link_write_unlink_unheard(root, mem, root / folder / "x")


def test_an_atomic_write_through_a_hidden_temporary_file_tells_its_file_only(root, mem):
    """The other side: a temporary file under a hidden name written, then renamed onto a memory file while the
    watch runs late, is that file's change, not "everything changed" (its bytes have a name of their own)."""
    write(root, "notes/a.md", "- [stated] the otter swims\n")
    told: list = []
    hub = changes.for_folder(root)
    off_told = hub.subscribe(told.append, raw=True)
    off = _stall(hub, 0.3)
    try:
        assert hub.feed.barrier()
        time.sleep(0.1)
        told.clear()  # the subscription's first word: whatever changed before was not seen
        write(root, "stall.md", "stall\n")
        time.sleep(0.05)
        tmp = root / "notes/.a.md.12345678.tmp"
        tmp.write_text("- [stated] the beaver swims\n")
        os.replace(tmp, root / "notes/a.md")
        assert hub.feed.barrier()
    finally:
        off()
        off_told()
    assert any("notes/a.md" in c.paths for c in told)
    assert not any(c.everything for c in told), told


def test_warm_searches_stay_warm_while_the_index_writes_its_own_files(root, mem):
    """The other side: the index's own files in `.memtui/` (its clock probe) are written and removed by every
    refresh, often before the watch handles the write. Told as "everything" (a file written and gone), each refresh
    would make the next one a walk of every file."""
    write(root, "notes/a.md", "- [stated] the otter swims\n")
    with Searcher(mem, watch=True) as s:
        s.search("otter")
        full = []
        for k in range(8):
            write(root, f"notes/b{k}.md", f"- [stated] the otter {k} naps\n")
            assert s.search("otter").sources == k + 2
            full.append(s.index.last_refresh.full)
    assert not any(full), full


def test_a_burst_of_agent_writes_before_a_query_is_all_heard(root, mem):
    """Thousands of events queued before the barrier's cookie: the handler on the emitter's thread handles them
    all, in order, before the cookie; the warm answer is the scan's."""
    write(root, "a.md", "- [stated] the otter swims\n")
    with Searcher(mem, watch=True) as s:
        assert s.search("otter").sources == 1
        for i in range(1500):
            write(root, f"burst/{i % 30}/n{i}.md", f"- [stated] the otter number {i}\n")
        assert comparable(s.search("otter")) == scan(mem, "otter")
        assert comparable(s.search("number 1499")) == scan(mem, "number 1499")


def _remove_tree(top: Path) -> None:
    """Without recursion (shutil.rmtree, and pytest's clean-up of old temporary folders, recurse per level and would
    fail on the chain with RecursionError)."""
    stack, order = [str(top)], []
    while stack:
        folder = stack.pop()
        order.append(folder)
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    else:
                        os.unlink(entry.path)
        except FileNotFoundError:
            pass
    for folder in reversed(order):
        try:
            os.rmdir(folder)
        except FileNotFoundError:
            pass


@pytest.fixture
def deep_root(root):
    yield root
    for name in ("d", "e"):
        _remove_tree(root / name)


def _deep_chain(root: Path, depth: int = 1100) -> None:
    deep = root / "d"
    deep.mkdir()
    fd = os.open(deep, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)


def _bottom(root: Path, name: str) -> int:
    """A descriptor of the deepest folder of the chain under `root/name` (its path is too long to write comfortably)."""
    fd = os.open(root / name, os.O_RDONLY | os.O_DIRECTORY)
    while True:
        try:
            inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        except FileNotFoundError:
            return fd
        os.close(fd)
        fd = inner


def _write_at(fd: int, name: str, text: str) -> None:
    made = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, dir_fd=fd)
    try:
        os.write(made, text.encode())
    finally:
        os.close(made)


def test_a_deep_folder_renamed_does_not_end_the_watch(deep_root, mem):
    """A folder chain deeper than Python's recursion limit made and renamed inside the memory. Was: watchdog's
    threads walk it with os.walk (recursive in Python 3.11) as its watches are moved and as the files it holds are
    named, die of RecursionError, and the watch is over for good: no event for the app, every warm query re-checks
    every file. The watch's walks are iterative now (`inotify_watch.FolderWatch`), and whatever it still raises
    names the change as "everything": the watch lives, hears a write at the bottom of the renamed chain, and
    answers."""
    root = deep_root
    write(root, "a.md", "- [stated] the otter swims\n")
    with Searcher(mem, watch=True) as s:
        assert s.search("otter").sources == 1
        heard = Heard()
        off = s._watcher.hub.subscribe(heard, raw=True)
        try:
            _deep_chain(root)
            (root / "d").rename(root / "e")
            watch = s._watcher.hub.feed._observer
            deadline = time.monotonic() + 20
            while not s._watcher.hub.feed.barrier() and time.monotonic() < deadline:
                pass  # the watch's thread is still watching the chain's 1,100 folders
            assert watch.alive()
            fd = _bottom(root, "e")
            try:
                heard.paths.clear()
                _write_at(fd, "heron.md", "- [stated] the heron waits\n")
            finally:
                os.close(fd)
            assert s._watcher.hub.feed.barrier()
            assert [p for p in heard.paths if p.endswith("/d/heron.md") and p.startswith("e/d/")], heard.paths[:20]
            for i in range(3):
                write(root, "a.md", f"- [stated] the otter sleeps {i}\n")
                started = time.monotonic()
                assert comparable(s.search("otter sleeps")) == scan(mem, "otter sleeps")
                assert time.monotonic() - started < changes.BARRIER_WAIT / 2
            assert comparable(s.search("heron")) == scan(mem, "heron")
        finally:
            off()


def test_a_watch_whose_threads_ended_fails_its_barriers_at_once(root, mem):
    """A watch whose thread is gone hears no cookie: each warm query would wait the whole BARRIER_WAIT for nothing.
    The barrier sees it and answers False at once, and the index re-checks every file (the scan's answer)."""
    write(root, "a.md", "- [stated] the otter swims\n")
    with Searcher(mem, watch=True) as s:
        assert s.search("otter").sources == 1
        watch = s._watcher.hub.feed._observer
        watch.stop()  # its thread ends as a thread that died would: no event after it
        watch.join(5)
        assert not watch.alive()
        for i in range(3):
            write(root, "a.md", f"- [stated] the otter sleeps {i}\n")
            started = time.monotonic()
            assert comparable(s.search("otter sleeps")) == scan(mem, "otter sleeps")
            assert time.monotonic() - started < changes.BARRIER_WAIT / 2


def test_an_event_this_code_fails_to_handle_is_told_as_everything_and_the_watch_goes_on(root, mem, monkeypatch):
    """Was: an exception out of the handler ended the emitter's thread (it runs the handler), and the watch with it."""
    write(root, "a.md", "- [stated] the otter swims\n")
    hub = changes.for_folder(root)
    heard = Heard()
    off = hub.subscribe(heard, raw=True)
    try:
        classify = changes.classify

        def failing(base, path):
            if path.endswith("boom.md"):
                raise ValueError("a bug met on the watch's thread")
            return classify(base, path)

        monkeypatch.setattr(changes, "classify", failing)
        write(root, "boom.md", "x\n")
        assert hub.feed.barrier()
        assert heard.everything >= 1
        assert hub.feed._observer.alive()
        write(root, "b.md", "x\n")
        assert hub.feed.barrier()
        assert "b.md" in heard.paths
    finally:
        off()


def test_an_error_in_the_watch_s_own_handling_rebuilds_the_watches(root, mem, monkeypatch):
    """An exception in the watch's own handling on its thread (here: its walk of a new folder, as a RecursionError
    in watchdog's was) left its watches half made and ended the thread. It is answered as the kernel's queue
    overflowing is: every watch made again, everything told changed, and a file written in the new folder then
    heard by its name."""
    write(root, "a.md", "- [stated] the otter swims\n")
    hub = changes.for_folder(root)
    heard = Heard()
    off = hub.subscribe(heard, raw=True)
    try:
        from memtui.core.storage import inotify_watch

        listing, failed = inotify_watch._list_folder, []

        def failing_once(fd):
            if os.readlink(f"/proc/self/fd/{fd}").endswith("/newdir") and not failed:
                failed.append(fd)
                raise RuntimeError("maximum recursion depth exceeded")
            return listing(fd)

        monkeypatch.setattr(inotify_watch, "_list_folder", failing_once)
        (root / "newdir").mkdir()
        assert hub.feed.barrier()
        watch = hub.feed._observer
        assert failed and watch.failures == 1 and watch.alive()
        assert heard.everything >= 1
        write(root, "newdir/c.md", "x\n")
        assert hub.feed.barrier()
        assert "newdir/c.md" in heard.paths
    finally:
        off()


@pytest.mark.parametrize("raw", [True, False])
def test_a_subscriber_that_unsubscribes_the_last_watch_from_its_callback(root, mem, raw):
    """Was: the handler runs on the emitter's thread (a burst's subscriber on the flusher's): a subscriber stopping
    the watch from its callback stopped it from that very thread, whose join of itself raised RuntimeError, so
    `FolderFeed.stop` ended early and the flusher thread (and the cookie folder's descriptor) were left for good.
    Nothing may be left running or open."""
    write(root, "a.md", "- [stated] the otter swims\n")
    time.sleep(0.1)
    before_fds, before_threads = fds(), len(threading.enumerate())
    hub = changes.for_folder(root)
    box: list = []

    def once(change) -> None:
        if "b.md" in change.paths and box:
            box.pop()()

    box.append(hub.subscribe(once, raw=raw))
    assert hub.feed.barrier()  # the cookie folder kept open
    write(root, "b.md", "x\n")
    deadline = time.monotonic() + 5
    while box and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    assert not box and hub.feed is None
    assert watches() == []
    assert fds() <= before_fds
    assert len(threading.enumerate()) <= before_threads


# .seq rewritten in place -------------------------------------------------------------------------------------------


def queue_files(mem) -> list[str]:
    return sorted(p.name for p in mem.store.queue_dir.glob("p-*.json"))


def test_a_folder_named_seq_does_not_stop_proposals(mem):
    """Was: `_put_floor` fell back to atomic_write, whose rename onto a folder fails (EISDIR): every proposal after
    a folder was planted as `.seq` was refused ("could not queue the proposal"). The floor is only a hint now that
    a proposal is numbered and saved under one hold of the lock: numbers stay apart by the probe alone."""
    first = mem.update("Projects", "add", "[observed] Before", actor=AGENT)
    marker = mem.store.queue_dir / ".seq"
    marker.unlink()
    marker.mkdir()
    (marker / "keep").write_text("x")
    after = mem.update("Projects", "add", "[observed] After", actor=AGENT)
    again = mem.update("Projects", "add", "[observed] Again", actor=AGENT)
    assert len({first.id, after.id, again.id}) == 3 and len(queue_files(mem)) == 3
    assert (marker / "keep").read_text() == "x"


def test_a_read_only_seq_and_a_fifo_with_a_reader_are_replaced(mem):
    first = mem.update("Projects", "add", "[observed] One", actor=AGENT)
    marker = mem.store.queue_dir / ".seq"
    marker.chmod(0o444)
    second = mem.update("Projects", "add", "[observed] Two", actor=AGENT)
    marker.unlink()
    os.mkfifo(marker)
    reader = os.open(marker, os.O_RDONLY | os.O_NONBLOCK)
    try:
        third = mem.update("Projects", "add", "[observed] Three", actor=AGENT)
        assert os.read(reader, 100) == b""  # nothing written into the agent's pipe
    finally:
        os.close(reader)
    assert len({first.id, second.id, third.id}) == 3 and len(queue_files(mem)) == 3
    assert marker.is_file() and marker.read_text() == f"{int(third.id[2:])}\n"


def test_a_huge_sparse_seq_is_cut_to_the_number(mem):
    mem.update("Projects", "add", "[observed] One", actor=AGENT)
    marker = mem.store.queue_dir / ".seq"
    with open(marker, "r+b") as f:
        f.truncate(1 << 40)
    second = mem.update("Projects", "add", "[observed] Two", actor=AGENT)
    assert marker.stat().st_size < 32 and marker.read_text() == f"{int(second.id[2:])}\n"


def test_a_floor_at_the_id_bound_still_queues(mem):
    mem.update("Projects", "add", "[observed] One", actor=AGENT)
    (mem.store.queue_dir / ".seq").write_text("99999999999\n")
    second = mem.update("Projects", "add", "[observed] Two", actor=AGENT)
    third = mem.update("Projects", "add", "[observed] Three", actor=AGENT)
    assert second.id != third.id and len(queue_files(mem)) == 3
    assert {p.id for p in mem.proposals(external=False)} >= {second.id, third.id}


def test_a_queue_folder_swapped_for_a_link_outside_gets_no_number(mem, tmp_path: Path):
    """`.memtui/queue` replaced by a symlink to a folder outside the root: no `.seq` (nor queue file) is written
    there."""
    mem.update("Projects", "add", "[observed] One", actor=AGENT)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / ".seq").write_text("7\n")
    queue = mem.store.queue_dir
    queue.rename(queue.parent / "queue-old")
    queue.symlink_to(outside, target_is_directory=True)
    result = mem.update("Projects", "add", "[observed] Two", actor=AGENT)
    assert result.status == "refused" and not result.id
    assert sorted(p.name for p in outside.iterdir()) == [".seq"]
    assert (outside / ".seq").read_text() == "7\n"


# common_dir memoized -------------------------------------------------------------------------------------------------


def test_common_dir_is_memoized_per_folder_and_a_later_planted_commondir_changes_nothing(root, mem, tmp_path):
    """Memoized per git folder path: a `commondir` planted after the first read (an agent writing into `.git`)
    does not move memtui's reads of objects and refs elsewhere; another folder is its own key."""
    from memtui.core.storage.gitobjects import common_dir

    assert common_dir(root / ".git") == root / ".git"
    (root / ".git/commondir").write_text(str(tmp_path / "elsewhere") + "\n")
    assert common_dir(root / ".git") == root / ".git"
    assert common_dir(str(root / ".git")) == root / ".git"
    other = tmp_path / "wt.git"
    other.mkdir()
    (other / "commondir").write_text("../memory/.git\n")
    assert common_dir(other) == other / "../memory/.git"
    (root / ".git/commondir").unlink()
    assert mem.read_text("MEMORY.md") is not None


def test_proposals_at_once_while_an_agent_resets_the_floor_never_share_an_id(mem):
    """`.seq` is only a floor: the number handed out is kept apart from the next one by the floor until its queue
    file is saved. An agent resetting `.seq` to 0 over and over (a new file each time, renamed over it): two
    threads proposing at once must still get distinct ids, and no proposal may be saved over another."""
    first = mem.update("Projects", "add", "[observed] Zero", actor=AGENT)
    marker = mem.store.queue_dir / ".seq"
    stop = threading.Event()

    def agent() -> None:
        tmp = marker.with_name(".seq-agent")
        while not stop.is_set():
            tmp.write_text("0\n")
            os.replace(tmp, marker)

    ids: list[str] = []
    lock = threading.Lock()

    def propose(who: int) -> None:
        for i in range(25):
            got = mem.update("Projects", "add", f"[observed] Note {who} {i}", actor=AGENT)
            with lock:
                ids.append(got.id)

    resetter = threading.Thread(target=agent, daemon=True)
    resetter.start()
    workers = [threading.Thread(target=propose, args=(w,)) for w in range(3)]
    try:
        for t in workers:
            t.start()
        for t in workers:
            t.join(120)
    finally:
        stop.set()
        resetter.join(5)
    assert len(ids) == 75 and all(ids)
    assert len(set(ids)) == 75, sorted(i for i in ids if ids.count(i) > 1)
    assert len(queue_files(mem)) == 76
    assert first.id not in ids
