"""An outsider's attacks on the hardened watch (`memtui.core.storage.inotify_watch.FolderWatch`): a folder swapped
for a link while its creation waits to be handled, a folder unreadable when it is watched, the user's inotify watch
limit reached, the change journal made unwritable, a wide folder renamed back and forth, a real kernel queue
overflow, many rebuilds. Real files, real inotify; the reference for every warm search is a full scan. Found by a
helper as the attacker; each test failed on the code before its fix."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memtui.core.recall.search import Searcher, search
from memtui.core.writing import changes
from support.search_text import comparable, write
from support.watches import hearing

TESTS = Path(__file__).resolve().parents[1]


def scan(mem, query: str) -> dict:
    return comparable(search(mem, query, use_index=False))


def _busy_folder(tmp_path: Path, n: int = 1500) -> Path:
    """A folder of n folders made outside the memory: moved in, it keeps the watch's thread walking it while what
    the test does next happens before its events are handled."""
    big = tmp_path / "big"
    big.mkdir()
    for i in range(n):
        (big / f"s{i}").mkdir()
    return big


def _swap_for_link(root: Path, target: str | Path) -> None:
    os.mkdir(root / "x")
    os.rmdir(root / "x")
    os.symlink(target, root / "x", target_is_directory=True)


# a folder swapped for a link ---------------------------------------------------------------------------------------


def test_a_new_folder_swapped_for_a_link_to_a_memory_folder_is_not_followed(root, mem, tmp_path):
    """Was: the walk of the new folder (run when its creation is handled, later) followed the link, watched
    `notes/`'s folders as `x/…`, and a write in `notes/sub` was told as `x/sub/f.md`, a name the index refuses
    (it follows no linked folder): the real file was never read again, the warm search stale for good."""
    write(root, "notes/sub/f.md", "- [stated] the otter swims\n")
    big = _busy_folder(tmp_path)
    with Searcher(mem, watch=True) as s:
        assert comparable(s.search("otter")) == scan(mem, "otter")
        hub = s._watcher.hub
        with hearing(hub) as heard:
            big.rename(root / "big")  # the watch's thread busy for a while
            _swap_for_link(root, "notes")
            assert hub.feed.barrier(10)
            s.search("otter")  # the full walk the folder events ask for
            heard.paths.clear()
            write(root, "notes/sub/f.md", "- [stated] the otter sleeps\n")
            assert hub.feed.barrier()
            assert comparable(s.search("otter sleeps")) == scan(mem, "otter sleeps"), heard.paths
            assert "notes/sub/f.md" in heard.paths, heard.paths
            assert not [p for p in heard.paths if p.startswith("x/")], heard.paths


def test_a_new_folder_swapped_for_a_link_outside_puts_no_watch_outside(root, mem, tmp_path):
    """Was: 50 watches on the folders behind the link (a link to / would walk the whole file system, up to the
    user's watch limit), and a file written out there told as a memory file."""
    big = _busy_folder(tmp_path)
    outside = tmp_path / "outside"
    for i in range(50):
        (outside / f"o{i}").mkdir(parents=True)
    with Searcher(mem, watch=True) as s:
        s.search("otter")
        hub = s._watcher.hub
        with hearing(hub) as heard:
            big.rename(root / "big")
            _swap_for_link(root, outside)
            assert hub.feed.barrier(10)
            heard.paths.clear()
            (outside / "o7" / "secret.md").write_text("outside\n")
            assert hub.feed.barrier()
            watch = hub.feed._observer
            under_link = [p for p in watch._wds if p.startswith(str(root / "x") + "/")]
            assert not under_link, len(under_link)
            assert not [p for p in heard.paths if "secret" in p], heard.paths


def test_a_new_folder_swapped_for_a_link_to_the_state_folder_leaves_barriers_heard(root, mem, tmp_path):
    """Was: the cookie folder's watch moved to `x/index.sqlite-cookies`, so each barrier's cookie was told as a
    memory file there: every barrier waited its whole BARRIER_WAIT and failed, for good."""
    big = _busy_folder(tmp_path)
    with Searcher(mem, watch=True) as s:
        s.search("otter")
        hub = s._watcher.hub
        assert hub.feed.barrier()
        big.rename(root / "big")
        _swap_for_link(root, ".memtui")
        deadline = time.monotonic() + 10
        while not hub.feed.barrier(0.5) and time.monotonic() < deadline:
            pass
        started = time.monotonic()
        assert hub.feed.barrier()
        assert time.monotonic() - started < changes.BARRIER_WAIT / 2


# folders the kernel will not let it watch --------------------------------------------------------------------------

CHILD_SETUP = r'''
import os, sys, time
sys.path.insert(0, {tests!r}); sys.path.insert(0, {repo!r})
os.environ.update(MEMTUI_USER="wes", GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
                  GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
from pathlib import Path
from memtui.core.storage.init import init_root
from memtui.core.writing.memory import Memory
from memtui.core.recall.search import Searcher, search
from support.search_text import comparable, write
root = Path(sys.argv[1]) / "memory"
init_root(root)
mem = Memory(root)
write(root, "a.md", "- [stated] the otter swims\n")
'''

UNREADABLE = r'''
probe = Path(sys.argv[1]) / "probe"
probe.mkdir(mode=0o000)
try:
    os.listdir(probe)
    print("PRIVILEGED"); sys.exit(0)   # permission bits do not bind this process
except PermissionError:
    pass
with Searcher(mem, watch=True) as s:
    s.search("otter")
    hub = s._watcher.hub
    os.mkdir(root / "locked", 0o000)   # the agent: a folder nobody can read, for a moment
    assert hub.feed.barrier()
    os.chmod(root / "locked", 0o755)   # and readable again
    assert hub.feed.barrier()
    s.search("otter")                  # the full walk the folder's chmod asked for
    write(root, "locked/heron.md", "- [stated] the heron waits\n")
    warm = comparable(s.search("heron"))
    cold = comparable(search(mem, "heron", use_index=False))
    print("WARM", warm["sources"], "SCAN", cold["sources"])
'''

LIMIT = r'''
with open("/proc/sys/user/max_inotify_watches", "w") as f:
    f.write("400")
with Searcher(mem, watch=True) as s:
    s.search("otter")
    hub = s._watcher.hub
    assert hub.feed.barrier()
    for i in range(500):                 # the agent: more folders than the watches left
        os.mkdir(root / f"f{{i:03d}}")
    deadline = time.monotonic() + 20
    while hub.feed._observer.alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    started = time.monotonic()
    vouched = hub.feed.barrier()
    took = time.monotonic() - started
    write(root, "f499/heron.md", "- [stated] the heron waits\n")
    warm = comparable(s.search("heron"))
    cold = comparable(search(mem, "heron", use_index=False))
    print("WARM", warm["sources"], "SCAN", cold["sources"], "VOUCHED", vouched, "QUICK", took < 0.5)
'''


def _child(tmp_path: Path, body: str, prefix: list[str]) -> str:
    script = tmp_path / "child.py"
    script.write_text(CHILD_SETUP.format(tests=str(TESTS), repo=str(TESTS.parent)) + body.format())
    out = subprocess.run([*prefix, sys.executable, str(script), str(tmp_path)], capture_output=True, text=True,
                         timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


@pytest.mark.skipif(os.geteuid() == 0 and not shutil.which("setpriv"), reason="as root, needs setpriv to drop "
                    "CAP_DAC_OVERRIDE (permission bits never stop root)")
def test_a_folder_unreadable_when_watched_then_readable_is_heard(tmp_path):
    """Was: watchdog returned in silence from the refused inotify_add_watch (EACCES), recorded a watch with wd -1,
    and nothing watched the folder again once it was readable: every write in it went unheard, the warm search
    stale for good. Now the folder is walked when its mode changes."""
    drop = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--"] if os.geteuid() == 0 else []
    out = _child(tmp_path, UNREADABLE, drop)
    assert "PRIVILEGED" not in out
    assert "WARM 1 SCAN 1" in out, out


def _can_unshare() -> bool:
    if not shutil.which("unshare"):
        return False
    done = subprocess.run(["unshare", "--user", "--map-root-user", "sh", "-c",
                           "echo 400 > /proc/sys/user/max_inotify_watches"], capture_output=True, check=False)
    return done.returncode == 0


@pytest.mark.skipif(not _can_unshare(), reason="needs a user namespace of its own (unshare --user) to lower the "
                    "inotify watch limit without starving the machine")
def test_folders_past_the_watch_limit_are_not_vouched_for(tmp_path):
    """The user's max_user_watches (lowered to 400 in a user namespace of the test's own): the agent makes more
    folders than the watches left. Was: watchdog skipped each refused watch in silence, the watch stayed "alive" and
    its barriers vouched for folders nobody watched (a write in one never heard, the warm search stale for good).
    Now the watch says it no longer hears the whole memory: a barrier answers False at once, the query re-checks."""
    out = _child(tmp_path, LIMIT, ["unshare", "--user", "--map-root-user"])
    assert "WARM 1 SCAN 1 VOUCHED False QUICK True" in out, out


# the change journal -------------------------------------------------------------------------------------------------


def test_a_journal_rotation_that_fails_does_not_wedge_the_watch(root, mem):
    """`.memtui/index.sqlite-changes` made a non-empty folder, then 1 MiB of journal lines: the rotation's
    os.replace fails. Was: `Publisher._append` called `stop()` under its own (non-re-entrant) lock: the emitter's
    thread blocked for good, every barrier failed after its whole wait, and closing the searcher (quitting the app)
    hung. Now the journal stops (readers walk) and the watch goes on."""
    s = Searcher(mem, watch=True)
    publisher = s._watcher.publisher
    assert publisher is not None
    hub = s._watcher.hub
    try:
        assert hub.feed.barrier()
        journal = root / ".memtui" / "index.sqlite-changes"
        journal.unlink()
        journal.mkdir()
        (journal / "x").write_text("x")
        many = root / "many"
        many.mkdir()
        assert hub.feed.barrier()
        for i in range(2600):  # two journal lines of ~260 bytes each: past 1 MiB
            os.close(os.open(many / (f"{i:05d}" + "n" * 240 + ".md"), os.O_WRONLY | os.O_CREAT, 0o644))
        deadline = time.monotonic() + 20
        while not hub.feed.barrier(1.0) and time.monotonic() < deadline:
            pass
        assert hub.feed.barrier()
        assert not publisher._lock.locked() and publisher._fd is None
        assert not [p for p in os.listdir(root / ".memtui") if p.startswith("index.sqlite-changes.")]  # no tmp left
        write(root, "many/heron.md", "- [stated] the heron waits\n")
        assert comparable(s.search("heron")) == scan(mem, "heron")
    finally:
        if publisher._lock.locked():
            publisher._lock.release()  # unwedge the emitter's thread so that the test can end
        closer = threading.Thread(target=s.close, daemon=True)
        closer.start()
        closer.join(10)
        assert not closer.is_alive()


# cost an agent can make the watch pay -------------------------------------------------------------------------------


def test_renames_of_a_wide_folder_name_a_bounded_number_of_files_each(root, mem):
    """300 renames of a folder of 2,000 folders (~0.3 s of an agent's time). Was: each rename walked the whole
    folder again and named all it holds (watchdog's `generate_sub_moved_events`): the watch's threads were busy for
    39 s (600 renames: 86 s), every barrier failing meanwhile. Now a rename walks nothing, at most SUB_EVENTS of what
    it holds are named (then "everything"), and the watch is soon answering again."""
    wide = root / "wide"
    wide.mkdir()
    for i in range(2000):
        os.mkdir(wide / f"s{i:04d}")
    write(root, "a.md", "- [stated] the otter swims\n")
    with Searcher(mem, watch=True) as s:
        s.search("otter")
        hub = s._watcher.hub
        with hearing(hub) as heard:
            assert hub.feed.barrier()
            a, b = str(root / "wide"), str(root / "wide2")
            for _ in range(150):
                os.rename(a, b)
                os.rename(b, a)
            deadline = time.monotonic() + 60
            while not hub.feed.barrier(1.0) and time.monotonic() < deadline:
                pass
            assert hub.feed.barrier()
            assert len(heard.paths) <= 300 * (changes.SUB_EVENTS + 8) * 2, len(heard.paths)
            assert heard.everything >= 300
            write(root, "wide/s0007/heron.md", "- [stated] the heron waits\n")
            assert comparable(s.search("heron")) == scan(mem, "heron")
            assert hub.feed._observer.alive()


# what held -------------------------------------------------------------------------------------------------------


def test_a_real_overflow_then_warm_searches_equal_the_scan(root, mem):
    """More events than fs.inotify.max_queued_events while the watch's thread is busy: the kernel drops events.
    Warm searches right after equal the scan, and barriers are quick again."""
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    write(root, "a.md", "- [stated] the otter swims\n")
    with Searcher(mem, watch=True) as s:
        assert comparable(s.search("otter")) == scan(mem, "otter")
        hub = s._watcher.hub
        (root / "many").mkdir()
        assert hub.feed.barrier()
        for i in range(limit // 3 + 2000):  # create, modify, close: three events a file
            fd = os.open(root / "many" / f"m{i}.md", os.O_WRONLY | os.O_CREAT, 0o644)
            os.write(fd, b"- [stated] filler\n")
            os.close(fd)
        write(root, "many/m17.md", "- [stated] the heron waits\n")
        deadline = time.monotonic() + 60
        while not hub.feed.barrier(1.0) and time.monotonic() < deadline:
            pass
        assert comparable(s.search("heron")) == scan(mem, "heron")
        write(root, "many/m18.md", "- [stated] the heron sleeps\n")
        assert comparable(s.search("heron sleeps")) == scan(mem, "heron sleeps")
        assert hub.feed._observer.alive()
        started = time.monotonic()
        assert hub.feed.barrier()
        assert time.monotonic() - started < changes.BARRIER_WAIT / 2


def test_many_rebuilds_leak_nothing(root, mem):
    """300 rebuilds of every watch (what an error in watchdog's handling, or an overflow, costs): no descriptor,
    thread or watch left over, and the next write heard."""
    write(root, "a.md", "- [stated] the otter swims\n")
    (root / "notes" / "deep" / "er").mkdir(parents=True)
    with Searcher(mem, watch=True) as s:
        s.search("otter")
        hub = s._watcher.hub
        watch = hub.feed._observer
        assert hub.feed.barrier()
        fds, threads = len(os.listdir("/proc/self/fd")), threading.active_count()
        before = len(watch._paths), len(watch._wds), len(watch._ids), watch.watched
        for _ in range(300):
            watch.rebuild()
        assert hub.feed.barrier()
        write(root, "notes/deep/er/a.md", "- [stated] the otter sleeps\n")
        assert comparable(s.search("otter sleeps")) == scan(mem, "otter sleeps")
        assert (len(watch._paths), len(watch._wds), len(watch._ids), watch.watched) == before
        assert len(os.listdir("/proc/self/fd")) <= fds and threading.active_count() <= threads
