"""memtui doctor and crash recovery: each thing a crash can leave is found, repaired, and nothing is lost."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core.hygiene.doctor import diagnose
from memtui.core.storage.folder import FolderStore
from memtui.core.storage.store import content_hash
from memtui.core.writing.memory import Memory
from memtui.core.writing.proposals import Proposal


def kinds(report) -> set[str]:
    return {f.kind for f in report.findings}


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def test_clean_root_has_no_findings(mem: Memory) -> None:
    mem.update("Facts", "add", "[stated] The sky is blue")
    report = diagnose(mem)
    assert report.ok and report.findings == [], report.render()


def test_stale_git_lock_left_by_a_killed_commit_is_cleared_by_the_next_write(mem: Memory, root: Path) -> None:
    # A writer SIGKILLed inside gitpython's ref update leaves this file; before the fix every later write crashed.
    (root / ".git" / "refs" / "heads" / "main.lock").write_text("deadbeef\n")
    (root / ".git" / "logs" / "refs" / "heads" / "main.lock").write_text("")
    res = mem.update("Facts", "add", "[stated] Survives a stale git lock")
    assert res.status == "applied" and res.commit, res
    assert not (root / ".git" / "refs" / "heads" / "main.lock").exists()


def test_doctor_reports_and_removes_a_stale_git_lock(mem: Memory, root: Path) -> None:
    (root / ".git" / "index.lock").write_text("")
    assert "stale-git-lock" in kinds(diagnose(mem))
    assert (root / ".git" / "index.lock").exists()  # without --fix nothing changes
    report = diagnose(mem, fix=True)
    assert report.ok and not (root / ".git" / "index.lock").exists()


def test_stale_memtui_lock_pid_is_found_and_cleared(mem: Memory, root: Path) -> None:
    mem.update("Facts", "add", "[stated] One write takes the lock")
    assert (root / ".memtui" / "lock").read_text() == ""  # released locks leave no pid
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    (root / ".memtui" / "lock").write_text(dead + "\n")
    report = diagnose(mem)
    assert "stale-lock" in kinds(report) and not report.ok
    assert diagnose(mem, fix=True).ok
    assert (root / ".memtui" / "lock").read_text() == ""


def _intent(mem: Memory, root: Path, entry: str) -> tuple[bytes, bytes]:
    """Plan a write, save its intent as memtui did before the one transaction (a format recovery still reads),
    and return (before, after) bytes, writing nothing."""
    before = (root / "MEMORY.md").read_bytes()
    after = before.replace(b"## Facts\n", f"## Facts\n- [stated] {entry} (2026-08-20)\n".encode(), 1)
    p = {"id": "", "created": "2026-08-20T14:05:00", "actor": "wes", "file": "MEMORY.md", "action": "add",
         "section": "Facts", "entry": f"[stated] {entry} (2026-08-20)", "base_hash": content_hash(before)}
    from memtui.core.basics.seal import seal  # as memtui writes it: sealed with the person's key

    mem.store.intent_save(seal(json.dumps({
        "proposal": p, "decided_by": "wes", "extra": {}, "before": {"MEMORY.md": content_hash(before)},
        "after": {"MEMORY.md": base64.b64encode(after).decode()},
    }).encode()))
    return before, after


def test_crash_after_writing_the_file_is_finished_with_commit_and_audit(mem: Memory, root: Path) -> None:
    _, after = _intent(mem, root, "Written before the crash")
    (root / "MEMORY.md").write_bytes(after)  # the crash came after the file write, before commit and audit
    report = diagnose(mem)
    assert "interrupted-write" in kinds(report)
    assert diagnose(mem, fix=True).ok
    assert git(root, "show", "HEAD:MEMORY.md").encode() == after
    last = list(mem.store.audit_records())[-1]
    assert last["status"] == "applied" and last["recovered"] is True
    assert last["commit"] == git(root, "rev-parse", "HEAD").strip()
    assert mem.store.intent_load() is None


def test_crash_before_writing_anything_is_undone(mem: Memory, root: Path) -> None:
    before, _ = _intent(mem, root, "Never written")
    head = git(root, "rev-parse", "HEAD")
    assert "undid" in (mem.recover() or "")
    assert (root / "MEMORY.md").read_bytes() == before and git(root, "rev-parse", "HEAD") == head
    assert not list(mem.store.audit_records())


def test_the_next_write_finishes_an_interrupted_one_first(mem: Memory, root: Path) -> None:
    _, after = _intent(mem, root, "First writer crashed")
    (root / "MEMORY.md").write_bytes(after)
    res = mem.update("Facts", "add", "[stated] Second writer arrives")
    assert res.status == "applied"
    records = [r for r in mem.store.audit_records() if r["status"] == "applied"]
    assert [r["entry"].split(" (")[0] for r in records] == ["[stated] First writer crashed",
                                                             "[stated] Second writer arrives"]
    assert len({r["commit"] for r in records}) == 2  # each write its own commit, as the audit log says


def test_commit_without_audit_line_gets_one(mem: Memory, root: Path) -> None:
    res = mem.update("Facts", "add", "[stated] Audited later", actor="agent-x")
    assert res.status == "queued"
    approved = mem.approve(res.id, by="wes")
    # Simulate the crash between commit and audit: drop the last audit line and mark the proposal pending.
    audit = root / "memory-log.jsonl"
    audit.write_bytes(b"".join(audit.read_bytes().splitlines(keepends=True)[:-1]))
    q = root / ".memtui" / "queue" / f"{res.id}.json"
    q.write_bytes(Proposal.from_json(q.read_bytes()).replace(status="pending").sealed_json())  # as memtui saved it
    report = diagnose(mem)
    assert "unaudited-commit" in kinds(report)
    assert diagnose(mem, fix=True).ok
    rec = [r for r in mem.store.audit_records() if r.get("commit") == approved.commit]
    assert rec and rec[0]["proposal"] == res.id and rec[0]["recovered"] == "doctor"
    assert mem.get(res.id).status == "applied"


def test_applied_write_with_no_commit_is_committed(mem: Memory, root: Path) -> None:
    res = mem.update("Facts", "add", "[stated] Committed by the doctor")
    # A crash between file write and commit in an older memtui: HEAD goes back one, the file keeps the write.
    git(root, "reset", "--soft", "HEAD~1")
    git(root, "reset", "-q")
    assert "uncommitted-write" in kinds(diagnose(mem))
    assert diagnose(mem, fix=True).ok
    assert "Committed by the doctor" in git(root, "show", "HEAD:MEMORY.md")
    assert res.commit  # the original sha is gone from history; the new commit has its own audit line
    assert git(root, "status", "--porcelain", "MEMORY.md") == ""


def test_corrupt_queue_file_is_moved_aside(mem: Memory, root: Path) -> None:
    mem.update("Facts", "add", "[stated] Waiting for review", actor="agent-x")
    qdir = root / ".memtui" / "queue"
    (qdir / "p-0099.json").write_bytes(b'{"id": "p-0099", "crea')
    assert "corrupt-queue" in kinds(diagnose(mem))
    assert diagnose(mem, fix=True).ok
    assert (qdir / "corrupt" / "p-0099.json").read_bytes() == b'{"id": "p-0099", "crea'
    assert [p.id for p in mem.proposals(external=False)] == ["p-0001"]


def test_torn_audit_tail_is_set_aside_and_later_lines_survive(mem: Memory, root: Path) -> None:
    mem.update("Facts", "add", "[stated] Before the tear")
    audit = root / "memory-log.jsonl"
    with open(audit, "ab") as f:
        f.write(b'{"ts": "2026-08-20T14:05:00", "actor": "wes", "act')  # killed mid-append
    mem.update("Facts", "add", "[stated] After the tear")
    # The fix in audit_append: the next record starts on a fresh line instead of being glued to the torn one.
    assert [r["entry"].split(" (")[0] for r in mem.store.audit_records()] == [
        "[stated] Before the tear", "[stated] After the tear"]
    assert "torn-audit" in kinds(diagnose(mem))
    assert diagnose(mem, fix=True).ok
    assert all(json.loads(line) for line in audit.read_bytes().splitlines())
    aside = list((root / ".memtui" / "corrupt").iterdir())
    assert aside and b'"act' in aside[0].read_bytes()


def test_leftover_temp_files_are_removed_and_real_files_kept(mem: Memory, root: Path) -> None:
    before = (root / "MEMORY.md").read_bytes()
    (root / ".MEMORY.md.abcd1234.tmp").write_bytes(before[:10])
    assert "temp-file" in kinds(diagnose(mem))
    assert diagnose(mem, fix=True).ok
    assert not (root / ".MEMORY.md.abcd1234.tmp").exists() and (root / "MEMORY.md").read_bytes() == before


def test_queue_pending_but_audited_is_brought_in_line(mem: Memory, root: Path) -> None:
    res = mem.update("Facts", "add", "[stated] Approved then crashed", actor="agent-x")
    mem.approve(res.id, by="wes")
    q = root / ".memtui" / "queue" / f"{res.id}.json"
    data = json.loads(q.read_text())
    data["status"] = "pending"
    q.write_text(json.dumps(data))
    assert "queue-out-of-date" in kinds(diagnose(mem))
    assert diagnose(mem, fix=True).ok and mem.get(res.id).status == "applied"


def test_garbage_head_is_pointed_back_at_the_branch(mem: Memory, root: Path) -> None:
    mem.update("Facts", "add", "[stated] Before HEAD broke")
    (root / ".git" / "HEAD").write_text("garbage\n")
    res = Memory(root).update("Facts", "add", "[stated] While HEAD is broken")
    assert res.status == "refused" and "git" in res.message
    assert "While HEAD is broken" not in (root / "MEMORY.md").read_text()
    report = diagnose(Memory(root))
    assert "git-corrupt" in kinds(report)
    assert diagnose(Memory(root), fix=True).ok
    assert Memory(root).update("Facts", "add", "[stated] After HEAD is fixed").status == "applied"


def test_doctor_cli_json_and_exit_status(root: Path) -> None:
    (root / ".git" / "index.lock").write_text("")
    cmd = [sys.executable, "-m", "memtui", "doctor", "--root", str(root), "--json"]
    found = subprocess.run(cmd, capture_output=True, text=True)
    assert found.returncode == 1
    assert json.loads(found.stdout)["findings"][0]["kind"] == "stale-git-lock"
    fixed = subprocess.run([*cmd, "--fix"], capture_output=True, text=True)
    assert fixed.returncode == 0 and json.loads(fixed.stdout)["ok"] is True
    again = subprocess.run(cmd[:-1], capture_output=True, text=True)
    assert again.returncode == 0 and "no problems found" in again.stdout


def test_store_without_git_is_reported_not_broken(tmp_path: Path) -> None:
    from memtui.core.storage.init import init_root

    r = tmp_path / "m"
    init_root(r)
    import shutil

    shutil.rmtree(r / ".git")
    mem = Memory(r)
    res = mem.update("Facts", "add", "[stated] No history here")
    assert res.status == "applied" and "no git repository" in res.message
    report = diagnose(mem)
    assert kinds(report) == {"no-git"} and not report.findings[0].fixable
    assert isinstance(mem.store, FolderStore) and not os.path.exists(r / ".git")


def test_search_index_out_of_date_is_found_and_refreshed(mem: Memory, root: Path) -> None:
    index_mod = __import__("pytest").importorskip("memtui.core.recall.index")
    idx = index_mod.Index(root)
    idx.refresh()
    idx.close()
    (root / "notes").mkdir()
    (root / "notes" / "new.md").write_text("# new\n\nwritten while nobody searched\n")
    assert "index-out-of-date" in kinds(diagnose(mem))
    assert diagnose(mem, fix=True).ok and diagnose(mem).findings == []
    (root / ".memtui" / index_mod.INDEX_FILE).write_bytes(b"not a database at all" * 100)
    assert "index-out-of-date" in kinds(diagnose(mem))
    assert diagnose(mem, fix=True).ok
    again = index_mod.Index(root)
    assert "notes/new.md" in again.files()
    again.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the hardened walk is memtui's inotify watch")
def test_a_missing_inotify_binding_is_reported(mem: Memory, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Without `inotify_simple` the folder watch falls back to watchdog's own walk (it follows a folder an agent
    swaps for a link): doctor says so and what to install; with it, whatever watchdog is installed, nothing."""
    assert not [f for f in diagnose(mem).findings if f.kind == "watch-unhardened"]
    monkeypatch.setitem(sys.modules, "inotify_simple", None)  # its import raises ImportError
    found = [f for f in diagnose(mem).findings if f.kind == "watch-unhardened"]
    assert len(found) == 1 and "pip install 'inotify_simple" in found[0].message and not found[0].fixable


def test_a_big_index_gets_advice_to_split_it(mem: Memory, root: Path, monkeypatch) -> None:
    """Past BIG_INDEX bytes of git index, doctor advises a split index until it is split; advice is no problem
    (exit 0), and memtui makes no setting itself. core.looseCompression is not advised (the trees are compressed in
    segments: storing them gained ~3%)."""
    from memtui.core.hygiene import doctor

    mem.update("Facts", "add", "[stated] One write makes the index")
    assert "commits-slow" not in kinds(diagnose(mem))  # a small index: nothing to say
    monkeypatch.setattr(doctor, "BIG_INDEX", 1)
    report = diagnose(mem)
    advice = [f for f in report.findings if f.kind == "commits-slow"]
    assert report.ok and len(advice) == 1 and advice[0].advice and not advice[0].fixable
    assert "--split-index" in advice[0].message and "looseCompression" not in advice[0].message
    assert report.render().splitlines()[-1] == "no problems found"
    assert diagnose(mem, fix=True).findings == report.findings  # --fix makes no setting
    assert "splitindex" not in git(root, "config", "--list")
    assert (root / ".git" / "index").read_bytes().find(b"link") < 0
    git(root, "update-index", "--split-index")
    assert "commits-slow" not in kinds(diagnose(mem))
    mem.update("Facts", "add", "[stated] A commit into the split index")  # memtui edits it in process
    assert git(root, "status", "--porcelain", "--untracked-files=no") == ""
    assert "commits-slow" not in kinds(diagnose(mem))


@pytest.mark.parametrize("damage", ["a byte flipped", "cut short", "not an index", "an unknown version",
                                    "entries only git reads"])
def test_a_damaged_git_index_is_a_problem_with_a_recipe_that_works(mem: Memory, root: Path, damage: str) -> None:
    """git's index damaged as a power cut or a tool writing in place leaves it: doctor says so (a problem, not
    fixed by --fix: what was staged is the person's), memtui refuses to commit over it, and the recipe the message
    gives (`mv .git/index .git/index.damaged && git reset`) brings back an index git and memtui work with."""
    mem.update("Facts", "add", "[stated] Before the damage")
    index = root / ".git" / "index"
    data = bytearray(index.read_bytes())
    if damage == "a byte flipped":  # git reads this one (it checks the checksum in fsck only)
        data[40] ^= 1
    elif damage == "cut short":
        data = data[:20]
    elif damage == "not an index":
        data[:4] = b"XXXX"
    elif damage == "an unknown version":
        data[4:8] = (9).to_bytes(4, "big")
    else:  # a sound header and checksum over entries git cannot read: git's own read says so
        import hashlib

        body = b"DIRC" + (2).to_bytes(4, "big") + (1000).to_bytes(4, "big") + bytes(100)
        data = bytearray(body + hashlib.sha1(body).digest())
    index.write_bytes(bytes(data))
    report = diagnose(mem, fix=True)
    found = [f for f in report.findings if f.kind == "git-index-damaged"]
    assert len(found) == 1 and not found[0].fixable and not found[0].fixed and not report.ok
    assert "mv .git/index .git/index.damaged && git reset" in found[0].message
    assert index.read_bytes() == bytes(data)  # left as it is
    before = (root / "MEMORY.md").read_bytes()
    refused = mem.update("Facts", "add", "[stated] Over the damage")
    assert refused.status == "refused" and "index" in refused.message
    assert (root / "MEMORY.md").read_bytes() == before and index.read_bytes() == bytes(data)
    subprocess.run("mv .git/index .git/index.damaged && git reset -q", shell=True, cwd=root, check=True)
    assert "git-index-damaged" not in kinds(diagnose(mem))
    assert (root / ".git" / "index.damaged").read_bytes() == bytes(data)
    mem.update("Facts", "add", "[stated] After the rebuild")
    assert git(root, "status", "--porcelain", "--untracked-files=no") == ""
    assert "After the rebuild" in git(root, "show", "HEAD:MEMORY.md")


def test_loose_objects_past_git_s_gc_auto_get_advice_to_run_git_gc(mem: Memory, root: Path) -> None:
    """git estimates its loose objects from objects/17 and runs `git gc --auto` after a commit past gc.auto; memtui
    commits in process and runs none, so doctor advises `git gc` past the same line (gc.auto 0: never)."""
    import hashlib

    mem.update("Facts", "add", "[stated] One write")
    fan = root / ".git" / "objects" / "17"
    there = len(list(fan.iterdir())) if fan.is_dir() else 0  # commits hold the time: any count may be there
    line = max(there, 1)
    limit = str(line * 256 - 255)  # git's line in objects/17: (gc.auto + 255) // 256 objects, then one more
    git(root, "config", "gc.auto", limit)
    assert "loose-objects" not in kinds(diagnose(mem))
    made, k = there, 0
    while made <= line:
        data = b"loose %d\n" % k
        k += 1
        if hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest().startswith("17"):
            subprocess.run(["git", "-C", str(root), "hash-object", "-w", "--stdin"], input=data, check=True,
                           capture_output=True)
            made += 1
    report = diagnose(mem)
    advice = [f for f in report.findings if f.kind == "loose-objects"]
    assert report.ok and len(advice) == 1 and advice[0].advice and "git gc" in advice[0].message
    git(root, "config", "gc.auto", "0")
    assert "loose-objects" not in kinds(diagnose(mem))
    git(root, "config", "gc.auto", limit)
    git(root, "gc", "-q", "--prune=now")  # (the objects made here are unreachable: git keeps them two weeks)
    assert "loose-objects" not in kinds(diagnose(mem))
