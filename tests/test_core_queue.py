"""The review queue: proposals that wait for a person, decided by approve, revise or reject, re-checked on approval."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import git
import pytest

from memtui.core.writing.memory import Memory
from support.by_hand import write_committed

AGENT = "agent:claude"


def audit(root: Path) -> list[dict]:
    return [json.loads(line) for line in (root / "memory-log.jsonl").read_text().splitlines()]


def head(root: Path) -> str:
    return git.Repo(root).head.commit.hexsha


def test_agent_write_to_memory_md_is_queued_with_its_diff(mem: Memory, root: Path) -> None:
    before = (root / "MEMORY.md").read_bytes()
    sha = head(root)
    r = mem.update("Preferences", "add", "[stated] Prefers dark mode", actor=AGENT, user_words="I prefer dark mode")
    assert r.status == "queued" and r.id == "p-0001" and r.exit_code == 4
    assert "+- [stated] Prefers dark mode" in r.diff
    assert "Queued as p-0001 for review; not in memory yet" in r.for_agent()
    assert (root / "MEMORY.md").read_bytes() == before and head(root) == sha
    saved = json.loads((root / ".memtui/queue/p-0001.json").read_text())
    assert saved["status"] == "pending" and saved["actor"] == AGENT and saved["base_hash"]


def test_policy_defaults(mem: Memory, root: Path) -> None:
    assert mem.log("[observed] CI is green", tag=None, actor=AGENT).status == "applied"
    assert mem.scratch("pr-review", "3 of 7 files reviewed", actor=AGENT).status == "applied"
    assert mem.update("User", "add", "[stated] Name is Wes").status == "applied"  # a person's own write
    write_committed(root, "people/priya.md", "# Priya\n\n## Role\n")
    assert mem.update("Role", "add", "[observed] Staff engineer", file="people/priya.md", actor=AGENT).status == "queued"
    assert mem.delete("people/priya.md").status == "queued"  # even a person's delete waits
    assert mem.rename("people/priya.md", "people/priya-shah.md").status == "queued"


def test_policy_rules_from_config(mem: Memory, root: Path) -> None:
    cfg = root / ".memtui/config.toml"
    write_committed(root, ".memtui/config.toml",
                    cfg.read_text() + '\n[[review.rule]]\nsection = "Projects"\nactor = "agent*"\ndecision = "apply"\n')
    assert mem.update("Projects", "add", "[observed] Uses Go", actor=AGENT).status == "applied"
    assert mem.update("Facts", "add", "[observed] Uses Go", actor=AGENT).status == "queued"


def test_approve_applies_commits_and_survives_a_restart(root: Path) -> None:
    r = Memory(root).update("Preferences", "add", "[stated] Prefers dark mode", actor=AGENT,
                            user_words="I prefer dark mode")
    fresh = Memory(root)  # a new process would see the same queue
    assert [p.id for p in fresh.proposals()] == [r.id]
    a = fresh.approve(r.id, by="wes")
    assert a.status == "applied" and a.commit == head(root)
    c = git.Repo(root).head.commit
    assert c.author.name == AGENT and c.committer.name == "wes"
    assert "Memtui-Proposal: p-0001" in c.message
    assert "- [stated] Prefers dark mode" in (root / "MEMORY.md").read_text()
    assert Memory(root).proposals() == []
    assert Memory(root).get(r.id).status == "applied"
    again = fresh.approve(r.id)
    assert again.status == "refused" and "already applied" in again.message
    line = audit(root)[-1]
    assert line["proposal"] == r.id and line["decided_by"] == "wes" and line["actor"] == AGENT


def test_reject_keeps_the_reason_and_content(mem: Memory, root: Path) -> None:
    r = mem.update("Preferences", "add", "[stated] Prefers light mode", actor=AGENT, user_words="I prefer light mode")
    before = (root / "MEMORY.md").read_bytes()
    assert mem.reject(r.id, reason="I never said that", by="wes").status == "rejected"
    assert (root / "MEMORY.md").read_bytes() == before
    line = audit(root)[-1]
    assert line["status"] == "rejected" and line["reason"] == "I never said that"
    assert line["snapshot"]["entry"].startswith("[stated] Prefers light mode")
    assert mem.reject(r.id, reason="again").status == "refused"
    assert mem.reject("p-9999", reason="x").status == "refused"
    assert mem.approve("p-9999").status == "refused"
    assert mem.reject(mem.update("User", "add", "[stated] x", actor=AGENT).id, reason=" ").status == "refused"


def test_revise_is_approve_with_an_edited_entry_validated_again(mem: Memory, root: Path) -> None:
    mem.update("User", "add", "[stated] Name is Wes")
    r = mem.update("User", "add", "[stated] Lives in Berln", actor=AGENT, user_words="I live in Berln")
    bad = mem.approve(r.id, entry="Name is Wes")  # a duplicate: refused, stays pending
    assert bad.status == "refused" and mem.get(r.id).status == "pending"
    ok = mem.approve(r.id, entry="Lives in Berlin", section="User", by="wes")
    assert ok.status == "applied", ok.message
    text = (root / "MEMORY.md").read_text()
    assert "- [stated] Lives in Berlin" in text and "Berln" not in text
    r2 = mem.update("User", "add", "[stated] Likes jazz", actor=AGENT)
    assert mem.approve(r2.id, tag="inferred").status == "applied"
    assert "- [inferred] Likes jazz" in (root / "MEMORY.md").read_text()


def test_approve_resolves_again_when_the_file_moved_on(mem: Memory, root: Path) -> None:
    mem.update("Projects", "add", "[stated] Uses Redis")
    r = mem.update("Projects", "revise", "[stated] Uses Postgres", replaces="Uses Redis", actor=AGENT)
    mem.update("Facts", "add", "[stated] Office in Berlin")  # the file moves on elsewhere
    a = mem.approve(r.id)
    assert a.status == "applied", a.message
    assert "- ~~[stated] Uses Redis" in (root / "MEMORY.md").read_text()


@pytest.mark.parametrize("case", ["target-gone", "ambiguous", "now-duplicate"])
def test_conflicts_write_nothing(mem: Memory, root: Path, case: str) -> None:
    mem.update("Projects", "add", "[stated] Uses Redis for cache")
    if case == "now-duplicate":
        r = mem.update("Projects", "add", "[stated] Frontend in React", actor=AGENT)
        mem.update("Projects", "add", "[stated] frontend in react!")
    else:
        r = mem.update("Projects", "remove", replaces="Redis", actor=AGENT)
        if case == "target-gone":
            mem.update("Projects", "remove", replaces="Uses Redis for cache")
        else:  # a hand edit duplicates the exact line, so the target is no longer unique
            text = (root / "MEMORY.md").read_text()
            line = next(ln for ln in text.splitlines() if "Uses Redis for cache" in ln)
            (root / "MEMORY.md").write_text(text.replace(line, line + "\n" + line))
            mem.approve(mem.proposals()[-1].id)
    before, sha = (root / "MEMORY.md").read_bytes(), head(root)
    res = mem.approve(r.id)
    assert res.status == "conflict" and res.exit_code == 5
    assert (root / "MEMORY.md").read_bytes() == before and head(root) == sha
    p = mem.get(r.id)
    assert p.status == "conflict" and p.reason
    assert r.id in [q.id for q in mem.proposals()]  # still open for the person to resolve
    assert audit(root)[-1]["status"] == "conflict"


def test_corrupt_queue_file_is_reported_and_skipped(mem: Memory, root: Path) -> None:
    r = mem.update("User", "add", "[stated] Name is Wes", actor=AGENT)
    (root / ".memtui/queue/p-0099.json").write_text('{"id": "p-0099", "crea')
    props = mem.proposals()
    assert [p.id for p in props] == [r.id]
    assert any("p-0099" in problem for problem in mem.queue_problems)
    assert mem.approve("p-0099").status == "refused"


def test_external_edit_approved_and_another_rejected_keeping_its_bytes(mem: Memory, root: Path) -> None:
    p = root / "MEMORY.md"
    p.write_text(p.read_text() + "- [stated] Written in vim (2026-01-01)\n")
    (root / "people").mkdir()
    (root / "people/new.md").write_bytes(b"# New\r\n\xe2\x9c\x93 bytes\r\n")
    props = {q.file: q for q in mem.proposals()}
    assert set(props) == {"MEMORY.md", "people/new.md"}
    assert props["MEMORY.md"].action == "edit" and "+- [stated] Written in vim" in props["MEMORY.md"].diff
    assert props["people/new.md"].action == "create"
    a = mem.approve(props["MEMORY.md"].id, by="wes")
    assert a.status == "applied" and git.Repo(root).head.commit.author.name == "wes"
    rej = mem.reject(props["people/new.md"].id, reason="stray file", by="wes")
    assert rej.status == "rejected"
    assert not (root / "people/new.md").exists()
    line = audit(root)[-1]
    assert base64.b64decode(line["content_b64"]) == b"# New\r\n\xe2\x9c\x93 bytes\r\n"
    assert (root / line["kept_at"]).read_bytes() == b"# New\r\n\xe2\x9c\x93 bytes\r\n"
    assert mem.proposals() == []


def test_rejecting_an_external_edit_restores_the_committed_file(mem: Memory, root: Path) -> None:
    p = root / "MEMORY.md"
    committed = p.read_bytes()
    p.write_bytes(committed.replace(b"## User", b"## Users"))
    ext = mem.proposals()[0]
    mem.reject(ext.id, reason="broke a heading")
    assert p.read_bytes() == committed


RACE = """
import sys
from memtui.core.writing.memory import Memory
r = Memory(sys.argv[1]).approve(sys.argv[2], by=sys.argv[3])
print(r.status)
"""


def test_two_processes_approving_the_same_proposal(mem: Memory, root: Path) -> None:
    r = mem.update("Preferences", "add", "[stated] Prefers dark mode", actor=AGENT)
    n = len(list(git.Repo(root).iter_commits()))
    procs = [subprocess.Popen([sys.executable, "-c", RACE, str(root), r.id, who], stdout=subprocess.PIPE, text=True)
             for who in ("ann", "bob", "cat")]
    outs = sorted(p.communicate(timeout=60)[0].strip() for p in procs)
    assert outs == ["applied", "refused", "refused"]
    assert len(list(git.Repo(root).iter_commits())) == n + 1
    assert (root / "MEMORY.md").read_text().count("Prefers dark mode") == 1


WRITER = """
import sys
from memtui.core.writing.memory import Memory
m = Memory(sys.argv[1])
for i in range(int(sys.argv[3])):
    r = m.update("Facts", "add", f"[observed] fact {sys.argv[2]} number {i}")
    assert r.status == "applied", r.message
"""


def test_approving_while_another_process_writes_the_same_file(mem: Memory, root: Path) -> None:
    ids = [mem.update("User", "add", f"[stated] user fact {i}", actor=AGENT).id for i in range(5)]
    w = subprocess.Popen([sys.executable, "-c", WRITER, str(root), "w", "8"])
    results = [mem.approve(i).status for i in ids]
    assert w.wait(timeout=120) == 0
    assert results == ["applied"] * 5
    text = (root / "MEMORY.md").read_text()
    assert all(f"user fact {i}" in text for i in range(5))
    assert all(f"fact w number {i} " in text for i in range(8))


@pytest.mark.parametrize("seq", [None, "", "2\n", "7\n", "garbage"])
def test_a_lost_or_stale_number_file_never_hands_out_a_saved_proposal_s_number(mem: Memory, root: Path,
                                                                              seq: str | None) -> None:
    """`.seq` is not synced: after a crash it may be gone, torn or old. The next number is still one no queue file
    has, and above every saved one while they run without a gap (a gap is a number handed out whose save failed)."""
    queued = [mem.update("Projects", "add", f"[observed] Finding {k}", actor=AGENT) for k in range(4)]
    assert [q.id for q in queued] == ["p-0001", "p-0002", "p-0003", "p-0004"]
    marker = mem.store.queue_dir / ".seq"
    if seq is None:
        marker.unlink()
    else:
        marker.write_text(seq)
    after = mem.update("Projects", "add", "[observed] Finding after the crash", actor=AGENT)
    assert after.id == ("p-0008" if seq == "7\n" else "p-0005")
    assert sorted(p.id for p in mem.proposals(external=False)) == [*(q.id for q in queued), after.id]


def test_listing_the_open_proposals_reads_only_queue_files_that_changed(mem: Memory, root: Path) -> None:
    """Queue files are never removed: the review list (read on every sync) must not read every proposal ever
    decided, yet must see any queue file rewritten since, by memtui or by hand, in place or by a rename."""
    decided = [mem.update("Projects", "add", f"[observed] Decided finding {k}", actor=AGENT) for k in range(6)]
    for q in decided[:3]:
        assert mem.approve(q.id).status == "applied"
    for q in decided[3:]:
        assert mem.reject(q.id, reason="not now").status == "rejected"
    pending = mem.update("Projects", "add", "[observed] Still waiting", actor=AGENT)
    read: list[str] = []
    load = mem.store.queue_load

    def counted(pid: str) -> bytes | None:
        read.append(pid)
        return load(pid)

    mem.store.queue_load = counted  # type: ignore[method-assign]
    assert [p.id for p in mem.proposals(external=False)] == [pending.id]
    read.clear()
    assert [p.id for p in mem.proposals(external=False)] == [pending.id]
    assert read == [pending.id]  # the six decided ones are known by their stamps
    # A person reopens a rejected one by hand, in place (same inode): its ctime moves, so it is read again.
    reopened = mem.store.queue_dir / f"{decided[4].id}.json"
    data = json.loads(reopened.read_text())
    data["status"] = "pending"
    with reopened.open("r+") as f:
        f.write(json.dumps(data))
        f.truncate()
    read.clear()
    # Read again, and seen as not memtui's (its seal no longer matches): not listed, a queue problem instead.
    assert [p.id for p in mem.proposals(external=False)] == [pending.id]
    assert read == [decided[4].id, pending.id]
    assert any(decided[4].id in problem for problem in mem.queue_problems)
    # include_decided reads them all, as before.
    assert len(mem.proposals(include_decided=True, external=False)) == 6  # all but the one not memtui's
