"""Git from one place: many threads reading and committing on one store never deadlock on GitPython's shared
cat-file pipes, a git that stops answering is stopped within the time limit (the memory lock freed, the write
refused, nothing changed), and `memtui doctor` reports a lock a stuck process holds instead of hanging."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memtui.core.hygiene.doctor import diagnose
from memtui.core.storage.folder import FolderStore
from memtui.core.storage.store import StoreError
from memtui.core.writing.memory import Memory


_VOCAB = ("amber basil cedar delta ember fjord garnet harbor iris juniper kelp lantern meadow nectar onyx pepper "
          "quartz raven saffron tundra umber violet willow xenon yarrow zephyr acorn birch cobalt dune falcon "
          "glacier hazel indigo jasper kestrel lichen marble nutmeg orchid pebble quill russet sorrel thistle "
          "walnut").split()
# 24 entries that share no word, so none reads as a near-duplicate of another
WORDS = [tuple(_VOCAB[(n * 2 + j) % len(_VOCAB)] for j in range(2)) for n in range(24)]


def test_threads_reading_and_committing_on_one_store_do_not_deadlock(mem: Memory, root: Path) -> None:
    store = mem.store
    assert isinstance(store, FolderStore)
    errors: list[str] = []
    writes_done = []
    stop = threading.Event()

    def reader(k: int) -> None:
        try:
            while not stop.is_set():
                assert store.committed("MEMORY.md") is not None
                store.blame_chunks("MEMORY.md")
                store.history("MEMORY.md")
                head = store.head()
                if head is not None:
                    store.resolve_change(head.sha)
                    store.change_patches([head.sha])
                store.external_changes()
        except Exception as exc:  # noqa: BLE001 - any error in a thread is the failure this test looks for
            errors.append(f"reader {k}: {type(exc).__name__}: {exc}")

    def writer(k: int) -> None:
        try:
            for i in range(8):
                res = mem.update("Facts", "add", f"[stated] Thread {k} wrote {' '.join(WORDS[k * 8 + i])}")
                if res.status != "applied":
                    errors.append(f"writer {k}: {res.status}: {res.message}")
                writes_done.append((k, i))
        except Exception as exc:  # noqa: BLE001
            errors.append(f"writer {k}: {type(exc).__name__}: {exc}")

    readers = [threading.Thread(target=reader, args=(k,), daemon=True) for k in range(6)]
    writers = [threading.Thread(target=writer, args=(k,), daemon=True) for k in range(3)]
    for t in readers + writers:
        t.start()
    deadline = time.monotonic() + 240
    for t in writers:
        t.join(max(0.0, deadline - time.monotonic()))
    stop.set()
    for t in readers:
        t.join(max(0.0, deadline - time.monotonic()))
    stuck = [t for t in readers + writers if t.is_alive()]
    assert not stuck, f"{len(stuck)} thread(s) deadlocked on git"
    assert not errors, "\n".join(errors[:10])
    assert len(writes_done) == 24
    log = subprocess.run(["git", "-C", str(root), "log", "--format=%s"], capture_output=True, text=True).stdout
    assert log.count("Thread ") == 24
    assert subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                          capture_output=True, text=True).stdout == ""


@pytest.fixture
def hung_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `git` first on PATH that hangs on `cat-file` and `status` (behind a shell, so a child holds the pipes),
    and runs the real git otherwise. Returns the file where each hung call writes its pid."""
    real = subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True).stdout.strip()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    pids = tmp_path / "hung-pids"
    (bin_dir / "git").write_text(
        "#!/bin/sh\n"
        "for a in \"$@\"; do case \"$a\" in cat-file|status)\n"
        f"  sleep 600 & echo $! >> {pids}; wait; exit 1;;\n"
        "esac; done\n"
        f"exec {real} \"$@\"\n")
    (bin_dir / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("MEMTUI_GIT_TIMEOUT", "2")
    return pids


def _alive(pid: int, wait: float = 3.0) -> bool:
    """Is the process still running `wait` seconds on (a zombie no reaper collected counts as gone)?"""
    deadline = time.monotonic() + wait
    while True:
        try:
            os.kill(pid, 0)
            stat = Path(f"/proc/{pid}/stat").read_text()
            running = stat.rsplit(")", 1)[-1].split()[0] != "Z"
        except (ProcessLookupError, FileNotFoundError):
            running = False
        if not running or time.monotonic() > deadline:
            return running
        time.sleep(0.05)


def test_a_hung_git_is_stopped_and_the_write_refused_with_the_lock_free(root: Path, hung_git: Path) -> None:
    # Objects packed into an alternate object folder: the write's reads of what is committed need `git cat-file`
    # (loose objects and the repository's own packs are read in process).
    real_git = subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True,
                              env={**os.environ, "PATH": os.defpath}).stdout.strip() or "/usr/bin/git"
    subprocess.run([real_git, "-C", str(root), "gc", "-q", "--prune=now"], check=True)
    elsewhere = root.parent / "alternate-objects"
    elsewhere.mkdir()
    (root / ".git/objects/pack").rename(elsewhere / "pack")
    (root / ".git/objects/pack").mkdir()
    (root / ".git/objects/info/alternates").write_text(f"{elsewhere}\n")
    before = (root / "MEMORY.md").read_bytes()
    mem = Memory(root)
    started = time.monotonic()
    res = mem.update("Facts", "add", "[stated] Written while git hangs")
    took = time.monotonic() - started
    assert res.status == "refused" and "did not answer within 2s" in res.message, res
    assert took < 15, f"the hung git held the write for {took:.1f}s"
    assert (root / "MEMORY.md").read_bytes() == before
    store = mem.store
    assert isinstance(store, FolderStore)
    free: list[bool] = []

    def take() -> None:
        free.append(store._thread_lock.acquire(timeout=1))
        if free[-1]:
            store._thread_lock.release()

    t = threading.Thread(target=take)
    t.start()
    t.join(5)
    assert free == [True], "the memory lock stayed held after the git call was stopped"
    with store.lock(timeout=1):
        pass
    for pid in map(int, hung_git.read_text().split()):
        assert not _alive(pid), f"the hung git's child {pid} was left running"


def test_a_hung_git_status_is_stopped_too(root: Path, hung_git: Path) -> None:
    store = FolderStore(root)
    started = time.monotonic()
    with pytest.raises(StoreError, match="did not answer"):
        store.external_changes()
    assert time.monotonic() - started < 15
    for pid in map(int, hung_git.read_text().split()):
        assert not _alive(pid)


def test_doctor_reports_a_lock_held_by_a_stuck_process_instead_of_hanging(root: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from memtui.core.storage.folder import FolderStore\n"
         f"s = FolderStore({str(root)!r})\nwith s.lock():\n    print('held', flush=True); time.sleep(120)\n"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        report = diagnose(Memory(root), lock_wait=1.0)
        assert time.monotonic() - started < 10
        stuck = [f for f in report.findings if f.kind == "lock-stuck"]
        assert stuck and f"pid {holder.pid}" in stuck[0].message and not report.ok, report.render()
    finally:
        holder.kill()
        holder.wait()
    assert "lock-stuck" not in {f.kind for f in diagnose(Memory(root)).findings}  # the holder is gone


def test_doctor_reports_a_hung_git_instead_of_hanging(root: Path, hung_git: Path) -> None:
    started = time.monotonic()
    report = diagnose(Memory(root))
    assert time.monotonic() - started < 20
    assert "git-stuck" in {f.kind for f in report.findings} and not report.ok, report.render()
    assert "did not answer within 2s" in report.render()
