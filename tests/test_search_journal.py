"""Fresh without walking: a cold search trusts a live watcher's change journal, and is never stale.

A real `memtui index --watch` process watches a generated memory; after every kind of edit (in-place append, an
edit that keeps size and mtime, rename, delete, a new folder, edits while the watcher is down) a cold search
answers exactly as a full scan and as ripgrep do, and while the watcher lives it re-checks only what changed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memtui.core.recall.search import Searcher, search
from memtui.core.storage import fsmonitor

WORKTREE = Path(__file__).resolve().parent.parent
TERM = "zqfresh"


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = str(WORKTREE) + os.pathsep + e.get("PYTHONPATH", "")
    return e


class Watcher:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "memtui", "index", "--watch", "--root", str(self.root)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
        line = self.proc.stdout.readline()
        assert line.startswith("watching"), (line, self.proc.stderr.read() if self.proc.poll() is not None else "")
        assert fsmonitor.watcher_alive(self.root)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc.stdout.close()
            self.proc.stderr.close()
            self.proc = None


@pytest.fixture
def memory(tmp_path: Path):
    sys.path.insert(0, str(WORKTREE / "benches"))
    from generate import generate

    root = tmp_path / "m"
    generate(root, files=150, megabytes=0.8, seed=11)
    watcher = Watcher(root)
    watcher.start()
    search(root, TERM)  # the index is built once, and takes the journal's token
    yield root, watcher
    watcher.stop()


def rg(root: Path, term: str) -> set[tuple[str, int]]:
    done = subprocess.run(["rg", "-n", "-F", "-i", "--no-heading", "-g", "!.memtui", term, str(root)],
                          capture_output=True, text=True)
    out = set()
    for line in done.stdout.splitlines():
        path, n, _ = line.split(":", 2)
        out.add((os.path.relpath(path, root), int(n)))
    return out


def answer(root: Path, term: str = TERM) -> tuple[dict, object]:
    with Searcher(root, keep_texts=False) as s:
        got = s.search(term, limit=1000)
        stats = s.index.last_refresh
    d = got.to_dict()
    for key in ("method", "searched_files"):
        d.pop(key)
    return d, stats


def check(root: Path, *, walked: bool | None = False) -> dict:
    got, stats = answer(root)
    scan = search(root, TERM, limit=1000, use_index=False).to_dict()
    for key in ("method", "searched_files"):
        scan.pop(key)
    assert got == scan
    lines = {(r["path"], r["line"]) for r in got["results"] if r["matched"]}
    assert lines == rg(root, TERM)
    if walked is not None:
        assert stats.full is walked, stats
    return got


def test_append_in_place_is_seen_without_a_walk(memory) -> None:
    root, _ = memory
    with open(root / "MEMORY.md", "a", encoding="utf-8") as fh:
        fh.write(f"- [stated] {TERM} appended in place (2026-05-01)\n")
    got = check(root)
    assert got["matched_lines"] == 1


def test_an_edit_that_keeps_size_and_mtime_is_seen(memory) -> None:
    root, _ = memory
    target = next(p for p in sorted((root / "log").iterdir()) if p.stat().st_size > 200)
    before = target.stat()
    text = target.read_text(encoding="utf-8")
    target.write_text(TERM + text[len(TERM):], encoding="utf-8")
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert target.stat().st_size == before.st_size and target.stat().st_mtime_ns == before.st_mtime_ns
    got = check(root)
    assert got["matched_lines"] == 1


def test_rename_delete_and_new_folder(memory) -> None:
    root, _ = memory
    (root / "notes" / "a.md").write_text(f"# A\n\n- [stated] {TERM} one (2026-05-01)\n", encoding="utf-8")
    check(root)
    os.rename(root / "notes" / "a.md", root / "notes" / "b.md")
    assert {r["path"] for r in check(root)["results"]} == {"notes/b.md"}
    os.remove(root / "notes" / "b.md")
    assert check(root)["results"] == []
    (root / "fresh" / "deep").mkdir(parents=True)
    (root / "fresh" / "deep" / "c.md").write_text(f"{TERM} in a new folder\n", encoding="utf-8")
    # A new folder cannot be named file by file: the journal says so, and the search walks.
    assert check(root, walked=True)["matched_lines"] == 1
    shutil.move(str(root / "fresh"), str(root / "moved"))
    assert {r["path"] for r in check(root, walked=True)["results"]} == {"moved/deep/c.md"}
    shutil.rmtree(root / "moved")
    assert check(root, walked=True)["results"] == []


def test_edits_while_the_watcher_is_down_are_walked(memory) -> None:
    root, watcher = memory
    watcher.stop()
    assert not fsmonitor.watcher_alive(root)
    (root / "down.md").write_text(f"{TERM} written while nobody watched\n", encoding="utf-8")
    assert check(root, walked=True)["matched_lines"] == 1
    os.remove(root / "down.md")
    watcher.start()  # a new journal: the first search walks once, then trusts it again
    assert check(root, walked=True)["results"] == []
    (root / "up.md").write_text(f"{TERM} again\n", encoding="utf-8")
    assert check(root)["matched_lines"] == 1


def test_a_killed_watcher_vouches_for_nothing(memory) -> None:
    root, watcher = memory
    watcher.proc.kill()
    watcher.proc.wait(timeout=10)
    assert not fsmonitor.watcher_alive(root)
    (root / "MEMORY.md").write_text(f"{TERM} after the watcher died\n", encoding="utf-8")
    assert check(root, walked=True)["matched_lines"] == 1


def test_many_edits_in_a_burst(memory) -> None:
    root, _ = memory
    for n in range(60):
        (root / "scratch" / f"burst-{n}.md").write_text(f"{TERM} {n}\n", encoding="utf-8")
    for n in range(0, 60, 3):
        os.remove(root / "scratch" / f"burst-{n}.md")
    assert check(root)["matched_lines"] == 40
