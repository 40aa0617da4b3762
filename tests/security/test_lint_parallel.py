"""A first lint's workers cannot lose a finding or read what one process would not (issue 41).

lint forks a worker per core for a first lint of 2,000 files or more (`memtui/core/hygiene/lint.py`, `_Workers`).
An attacker who can kill a process (or a machine that runs out of memory) must not turn a lint with a key in it
into a clean one: a worker killed halfway leaves its files to the parent, which checks them and says so. Workers
read through the same checked reader: a symlink out of the folder is never followed, and a folder memtui did not
write (a Claude Code one) is linted by one process and left as it was.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from memtui.core.hygiene.lint import CACHE_FILE, lint
from memtui.core.writing.memory import Memory
from tests.support.foreign import listing
from tests.test_lint_flood import claude_code
from tests.test_lint_parallel import fresh_lint, many


def _python_children(pid: int) -> list[int]:
    """The python processes `pid` started (its workers; not the git it runs, which may end while looked at)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if (stat.read_text().rsplit(")", 1)[1].split()[1] == str(pid)
                    and "python" in (stat.parent / "comm").read_text(errors="replace")):
                out.append(int(stat.parent.name))
        except (OSError, IndexError):
            continue  # gone meanwhile
    return out


def _workers(proc: subprocess.Popen[bytes], sightings: int = 5) -> list[int]:
    """lint's two workers: python children of `proc` seen `sightings` times in a row, 10 ms apart. A child the
    parent forks to run git is python too until it execs: caught in that moment (a loaded machine widens it), it
    was taken for a worker, stopped and killed, and the real worker went on unharmed."""
    deadline = time.monotonic() + 60
    seen: dict[int, int] = {}
    while time.monotonic() < deadline and proc.poll() is None:
        seen = {pid: seen.get(pid, 0) + 1 for pid in _python_children(proc.pid)}
        steady = sorted(pid for pid, n in seen.items() if n >= sightings)
        if len(steady) == 2:
            return steady
        time.sleep(0.01)
    raise AssertionError(f"the workers were not seen (python children seen: {seen})")


def test_a_worker_killed_halfway_loses_no_finding_and_lint_says_so(tmp_path: Path) -> None:
    root = many(tmp_path / "m", 3000)
    cache = Memory(root).store.state_folder / CACHE_FILE
    whole = subprocess.run([sys.executable, "-m", "memtui", "lint", "--root", str(root), "--json", "--jobs", "1"],
                           capture_output=True, cwd=tmp_path, timeout=600)
    assert whole.returncode == 1 and b'"check": "secret"' in whole.stdout
    cache.unlink()
    proc = subprocess.Popen([sys.executable, "-m", "memtui", "lint", "--root", str(root), "--json", "--jobs", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    workers = _workers(proc)
    for pid in workers:
        os.kill(pid, signal.SIGSTOP)  # held where they are: neither has checked its 1,500 files yet
    os.kill(max(workers), signal.SIGKILL)  # most likely the second share (pids grow): its files come last
    os.kill(min(workers), signal.SIGCONT)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 1
    assert out == whole.stdout  # the same bytes: every finding, the keys masked, in the same order
    assert f"(pid {max(workers)}, ended by signal 9)".encode() in err, err
    assert b"lint checked them itself, so no finding is missing" in err, err
    assert json.loads(out)["findings"][-1]["file"] == "notes/note-02999.md"  # the last file of the killed share


def test_workers_follow_no_symlink_out_of_the_folder(tmp_path: Path) -> None:
    """`many` links notes/link-out.md to a file outside holding a key; a folder link is added here."""
    root = many(tmp_path / "m", 40)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "planted.md").write_text("# Planted\n\n- outside untagged line\n- outside untagged line\n")
    (root / "notes" / "dir-out").symlink_to(outside, target_is_directory=True)
    before = listing(tmp_path)
    one = lint(Memory(root), processes=1)
    (Memory(root).store.state_folder / CACHE_FILE).unlink()
    two, workers, _ = fresh_lint(root, 2)
    assert two == one and workers == 2
    assert not [f for f in two if "outside" in f.message or "planted" in f.file or "dir-out" in f.file], two
    assert [f.check for f in two if f.file == "notes/link-out.md"] in ([], ["unreadable"])
    changed = {k for k, v in listing(tmp_path).items() if before.get(k) != v}
    assert changed <= {"m/.memtui/lint-cache", "m/.git/info/exclude"}  # lint's cache, kept out of git status


def test_a_folder_memtui_did_not_write_is_linted_by_one_process_and_left_as_it_was(tmp_path: Path) -> None:
    folder = claude_code(tmp_path / ".claude" / "projects" / "-home-wes-app" / "memory")
    before = listing(folder)
    import memtui.core.hygiene.lint as lint_module

    lint_module.last_worker_peaks = [1]
    found = lint(Memory(folder), processes=2)
    assert lint_module.last_worker_peaks == [1]  # no worker: a Claude Code memory's checks read across files
    assert {f.check for f in found} >= {"past-load-cut", "unlinked", "front-matter"}
    assert listing(folder) == before


def test_workers_on_an_openclaw_workspace_in_the_persons_git_change_nothing_in_it(tmp_path: Path) -> None:
    """Forked workers read a foreign folder and the person's own repository as one process does: the same
    findings (a deleted line of the person's history among them), and not a byte of the folder or of `git status`
    changed; lint's cache lives in memtui's state beside the folder."""
    from tests.support.fixtures_openclaw import openclaw_writes, person_git, workspace
    from tests.support.foreign import git_status

    ws = workspace(tmp_path / "ws", git=True, files={
        f"memory/topic-{k}.md": f"# Topic {k}\n\n- [stated] Fact {k} one (2026-12-01)\n- [stated] Fact {k} two\n"
        for k in range(30)})
    for k in range(0, 30, 3):
        openclaw_writes(ws, f"memory/topic-{k}.md", f"# Topic {k}\n\n- [stated] Fact {k} two\n")
    person_git(ws, "commit", "-q", "-am", "agent edits")
    before, status = listing(ws), git_status(ws)
    memory = Memory(ws)
    one = lint(memory, processes=1)
    state = memory.store.state_folder
    if state is not None:
        (state / CACHE_FILE).unlink(missing_ok=True)
    two, workers, _ = fresh_lint(ws, 2)
    assert two == one and workers == 2
    deleted = sorted(f.file for f in two if f.check == "deleted-history")
    assert deleted == sorted(f"memory/topic-{k}.md" for k in range(0, 30, 3))  # the agent's edits the person committed
    assert listing(ws) == before and git_status(ws) == status
