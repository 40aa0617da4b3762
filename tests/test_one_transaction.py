"""Every write surface goes through the one transaction (memtui/core/writing/journal.py): one journal entry, one commit
and one audit line each, on a folder memory and on a Redis memory; and a revert killed between its write and its
commit is finished the next time the memory is opened."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Callable

import pytest

import memtui
from memtui.core.access.stores import init_store
from memtui.core.storage.folder import FolderStore
from memtui.core.storage.redis_store import RedisStore
from memtui.core.timeline import history
from memtui.core.writing.memory import Memory
from memtui.core.basics.seal import unseal
from support.redis_server import redis_server, redis_url  # noqa: F401  (fixtures)

AGENT = "agent-claude"


class Journalled:
    """A real store that also keeps every intent it is asked to save (unsealed), to count the journal entries."""

    journal: list[dict[str, Any]]

    def intent_save(self, data: bytes | None) -> None:
        if data is not None:
            self.journal.append(json.loads(unseal(data) or b"null"))
        super().intent_save(data)  # type: ignore[misc]


class JournalledFolder(Journalled, FolderStore):
    pass


class JournalledRedis(Journalled, RedisStore):
    pass


@pytest.fixture(params=["folder", "redis"])
def memory(request: pytest.FixtureRequest, root: Path) -> Memory:
    if request.param == "folder":
        store: Any = JournalledFolder(root)
    else:
        store = JournalledRedis(request.getfixturevalue("redis_url"))
        init_store(store, author="wes")
    store.journal = []
    return Memory(store)


def commits(mem: Memory) -> int:
    store = mem.store
    if isinstance(store, RedisStore):
        return int(store.client.xlen(store.k_changes))
    out = subprocess.run(["git", "-C", str(store.root), "rev-list", "--count", "HEAD"], capture_output=True,
                         text=True, check=True)
    return int(out.stdout)


def counts(mem: Memory) -> tuple[int, int, int]:
    return len(mem.store.journal), commits(mem), len(list(mem.store.audit_records()))  # type: ignore[attr-defined]


def external_edit(mem: Memory, rel: str, data: bytes) -> None:
    """A change made past memtui: a file written on disk, a raw SET on Redis."""
    store = mem.store
    if isinstance(store, RedisStore):
        store.client.set(store.key(rel), data)
    else:
        (store.root / rel).write_bytes(data)  # type: ignore[attr-defined]


def add(mem: Memory, entry: str, section: str = "Facts") -> str:
    r = mem.update(section, "add", entry)
    assert r.status == "applied", r
    return r.commit or ""


# Each surface: (set-up returning the write to measure, what it writes, commits expected)
def s_add(mem: Memory, now: Any) -> Callable[[], Any]:
    return lambda: mem.update("Facts", "add", "[stated] The sky is blue")


def s_revise(mem: Memory, now: Any) -> Callable[[], Any]:
    add(mem, "[stated] Prefers dark mode", "Preferences")
    return lambda: mem.update("Preferences", "revise", "[stated] Prefers light mode", replaces="dark mode")


def s_remove(mem: Memory, now: Any) -> Callable[[], Any]:
    add(mem, "[stated] Uses Postgres 15")
    return lambda: mem.update("Facts", "remove", replaces="Postgres 15")


def s_approve(mem: Memory, now: Any) -> Callable[[], Any]:
    q = mem.update("Facts", "add", "[observed] Deploys on Fridays", actor=AGENT)
    assert q.status == "queued", q
    return lambda: mem.approve(q.id, by="wes")


def s_approve_revised(mem: Memory, now: Any) -> Callable[[], Any]:
    q = mem.update("Facts", "add", "[observed] Deploys on Fridays", actor=AGENT)
    return lambda: mem.approve(q.id, by="wes", entry="[observed] Deploys on Thursdays")


def s_reject_external(mem: Memory, now: Any) -> Callable[[], Any]:
    before = mem.store.read("MEMORY.md") or b""
    external_edit(mem, "MEMORY.md", before + b"- [stated] planted past memtui\n")
    [x] = mem.external_proposals()
    return lambda: mem.reject(x.id, reason="not mine", by="wes")


def s_approve_external(mem: Memory, now: Any) -> Callable[[], Any]:
    before = mem.store.read("MEMORY.md") or b""
    external_edit(mem, "MEMORY.md", before + b"- [stated] written in an editor\n")
    [x] = mem.external_proposals()
    return lambda: mem.approve(x.id, by="wes")


def s_revert(mem: Memory, now: Any) -> Callable[[], Any]:
    sha = add(mem, "[stated] A mistake")
    return lambda: history.revert(mem, sha, by="wes")


def s_restore(mem: Memory, now: Any) -> Callable[[], Any]:
    first = add(mem, "[stated] First version")
    add(mem, "[stated] Second thought")
    return lambda: history.restore(mem, "MEMORY.md", first, by="wes")


def s_undo(mem: Memory, now: Any) -> Callable[[], Any]:
    add(mem, "[stated] Undo me")
    return lambda: history.undo_last(mem, by="wes")


def s_sweep(mem: Memory, now: Any) -> Callable[[], Any]:
    now("2026-08-20T14:05")
    assert mem.scratch("pr-review", "3 of 7 files", ttl_minutes=30).status == "applied"
    now("2026-08-20T14:40")
    return mem.sweep


def s_consolidate(mem: Memory, now: Any) -> Callable[[], Any]:
    assert mem.edit("MEMORY.md", "Decisions=30", "Decisions=4").status == "applied"
    now("2026-01-15T10:00")
    add(mem, "[stated] Auth uses passkeys", "Decisions")
    add(mem, "[stated] Public API uses REST", "Decisions")
    now("2026-08-20T10:00")
    assert mem.update("Decisions", "revise", "[stated] Public API uses tRPC", replaces="REST").status == "applied"
    add(mem, "[stated] Auth uses passkeys for every user", "Decisions")
    [r] = mem.consolidate("Decisions", use_model=False)
    assert r.status == "queued", r
    return lambda: mem.approve(r.id, by="wes")


def s_move(mem: Memory, now: Any) -> Callable[[], Any]:
    add(mem, "[stated] Ships on Tuesdays")
    return lambda: mem.move("Facts", "Ships on Tuesdays", "Decisions")


def s_move_to_file(mem: Memory, now: Any) -> Callable[[], Any]:
    assert mem.create("notes.md", "# notes\n\n## Log\n").status == "applied"
    add(mem, "[stated] Ships on Tuesdays")
    return lambda: mem.move("Facts", "Ships on Tuesdays", "Log", to="notes.md")


def s_log(mem: Memory, now: Any) -> Callable[[], Any]:
    now("2026-08-20T14:05")
    return lambda: mem.log("Deploy of v2.3 failed", tag="observed", actor=AGENT)  # the fast lane


def s_rename(mem: Memory, now: Any) -> Callable[[], Any]:
    assert mem.create("old.md", "# old\n").status == "applied"
    q = mem.rename("old.md", "new.md")  # a whole-file change waits for a person, even a person's own
    assert q.status == "queued", q
    return lambda: mem.approve(q.id, by="wes")


SURFACES = {
    "add": (s_add, ["MEMORY.md"], 1), "revise": (s_revise, ["MEMORY.md"], 1),
    "remove": (s_remove, ["MEMORY.md"], 1), "approve": (s_approve, ["MEMORY.md"], 1),
    "approve-revised": (s_approve_revised, ["MEMORY.md"], 1),
    # The file goes back to its committed version: nothing new to record, so no commit.
    "reject-external": (s_reject_external, ["MEMORY.md"], 0),
    "approve-external": (s_approve_external, [], 1),  # commits the bytes on disk, writes nothing
    "revert": (s_revert, ["MEMORY.md"], 1), "restore": (s_restore, ["MEMORY.md"], 1),
    "undo": (s_undo, ["MEMORY.md"], 1), "sweep": (s_sweep, None, 1),
    "consolidate": (s_consolidate, ["MEMORY.md", "archive/MEMORY-decisions-2026-08-20.md"], 1),
    "move": (s_move, ["MEMORY.md"], 1), "move-to-file": (s_move_to_file, ["notes.md", "MEMORY.md"], 1),
    "log": (s_log, ["log/2026-08-20.md"], 1), "rename": (s_rename, ["new.md", "old.md"], 1),
}


@pytest.mark.parametrize("surface", list(SURFACES))
def test_every_write_surface_is_one_journal_entry_one_commit_and_one_audit_line(
    memory: Memory, now: Any, surface: str,
) -> None:
    setup, written, expected_commits = SURFACES[surface]
    write = setup(memory, now)
    journal0, commits0, audit0 = counts(memory)
    result = write()
    assert result.status in ("applied", "rejected"), result
    journal1, commits1, audit1 = counts(memory)
    assert (journal1 - journal0, commits1 - commits0, audit1 - audit0) == (1, expected_commits, 1), surface
    intent = memory.store.journal[-1]  # type: ignore[attr-defined]
    assert intent["v"] == 2 and len(intent["audit"]) == 1
    if written is None:  # sweep: the one expired note
        [written] = [list(intent["after"])]
        assert len(written) == 1 and written[0].startswith("scratch/") and intent["after"][written[0]] is None
    assert sorted(intent["after"]) == sorted(written)
    # The result names the files it touched (the UI reads these, not the diff).
    assert sorted(result.files) == sorted(written or [result.file])
    line = list(memory.store.audit_records())[-1]
    assert line["status"] == result.status and line["commit"] == result.commit
    assert memory.store.intent_load() is None  # cleared once all was saved
    if expected_commits:
        assert result.commit


def test_history_writers_keep_the_one_audit_format(mem: Memory) -> None:
    sha = mem.update("Facts", "add", "[stated] Keys every writer shares").commit
    assert history.revert(mem, sha, by="wes").status == "applied"
    update_line, revert_line = [r for r in mem.store.audit_records() if r["status"] == "applied"][-2:]
    assert list(revert_line)[:13] == list(update_line)[:13] == [
        "ts", "actor", "action", "file", "section", "entry", "replaces", "provenance", "source", "commit", "status",
        "proposal", "decided_by"]
    assert revert_line["reverts"] == sha and revert_line["decided_by"] == "wes"


CRASH = """
    import os, signal, sys
    from memtui.core.timeline import history
    from memtui.core.storage.folder import FolderStore
    from memtui.core.writing.memory import Memory

    class KilledAtCommit(FolderStore):
        def commit(self, *args, **kwargs):
            os.kill(os.getpid(), signal.SIGKILL)  # the files are written; the commit never starts

    print(history.revert(Memory(KilledAtCommit(sys.argv[1])), sys.argv[2], by="wes"))
"""


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def test_a_revert_killed_between_its_write_and_its_commit_is_finished_on_the_next_open(mem: Memory,
                                                                                      root: Path) -> None:
    sha = mem.update("Facts", "add", "[stated] Reverted by a process that dies").commit
    assert sha
    before = (root / "MEMORY.md").read_bytes()
    head = git(root, "rev-parse", "HEAD").strip()
    # The processes run the memtui under test (this worktree's, or the installed one).
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(memtui.__file__).parent.parent),
                                                        os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(CRASH), str(root), sha], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stdout + proc.stderr
    # What the crash left: the file reverted on disk, no commit, no audit line, the intent saved.
    assert (root / "MEMORY.md").read_bytes() != before and b"Reverted by a process" not in (root / "MEMORY.md").read_bytes()
    assert git(root, "rev-parse", "HEAD").strip() == head
    assert not [r for r in mem.store.audit_records() if r["action"] == "revert"]
    assert (root / ".memtui" / "intent.json").exists()

    # The next process to open the memory finishes the revert: its commit, its audit line, the intent cleared.
    out = subprocess.run([sys.executable, "-m", "memtui", "history", "MEMORY.md", "--root", str(root)], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    new = git(root, "rev-parse", "HEAD").strip()
    assert new != head and git(root, "log", "-1", "--format=%B").startswith(f"revert {sha[:8]}")
    assert f"Memtui-Reverts: {sha}" in git(root, "log", "-1", "--format=%B")
    assert "Reverted by a process" not in git(root, "show", "HEAD:MEMORY.md")
    [line] = [r for r in mem.store.audit_records() if r["action"] == "revert"]
    assert line["status"] == "applied" and line["commit"] == new and line["recovered"] is True
    assert line["reverts"] == sha and line["decided_by"] == "wes"
    assert not (root / ".memtui" / "intent.json").exists()
    assert mem.store.external_changes() == []  # memtui's own revert is not left looking like an outside edit
    assert new[:8] in out.stdout  # and the history shown already lists it


REDIS_CRASH = """
    import os, signal, sys
    from memtui.core.timeline import history
    from memtui.core.writing.memory import Memory
    from memtui.core.storage.redis_store import RedisStore

    class KilledAtCommit(RedisStore):
        def commit(self, *args, **kwargs):
            os.kill(os.getpid(), signal.SIGKILL)

    # Its lock lapses a second after it dies (a dead holder's lock is never released, only outlived).
    print(history.revert(Memory(KilledAtCommit(sys.argv[1], lock_ttl_ms=1000)), sys.argv[2], by="wes"))
"""


def test_a_redis_revert_killed_before_its_change_is_recorded_is_finished_on_the_next_open(redis_url: str) -> None:
    from memtui.core.access.stores import open_memory

    store = RedisStore(redis_url)
    init_store(store, author="wes")
    mem = Memory(store)
    sha = mem.update("Facts", "add", "[stated] Reverted on Redis by a process that dies").commit
    assert sha
    changes = store.client.xlen(store.k_changes)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(memtui.__file__).parent.parent),
                                                        os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(REDIS_CRASH), redis_url, sha], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stdout + proc.stderr
    assert b"Reverted on Redis" not in (store.read("MEMORY.md") or b"")  # written, not recorded
    assert store.client.xlen(store.k_changes) == changes and store.intent_load() is not None

    reopened = open_memory(url=redis_url)
    assert store.client.xlen(store.k_changes) == changes + 1 and store.intent_load() is None
    head = reopened.store.head()
    assert head is not None and f"Memtui-Reverts: {sha}" in head.message
    [line] = [r for r in reopened.store.audit_records() if r["action"] == "revert"]
    assert line["commit"] == head.sha and line["recovered"] is True
    assert reopened.store.external_changes() == []
