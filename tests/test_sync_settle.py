"""`memtui sync`, where the decisions land: the last decision of a fetched range closes it at once (a fast-forward
to the remote's commit where nothing diverged, a merge by the person who decided otherwise), the person's pre-push
hook runs and is bounded in time, a fresh clone is even with its remote, and each incoming blob is read once. Real
git remotes (bare repositories over file://), real hooks, no mocked git."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memtui.core.hygiene.doctor import diagnose
from memtui.core.writing import sync
from memtui.core.writing.memory import Memory
from support.git_remote import bare, clone, first_machine, git, push_files

FACT = "[stated] The build uses uv (2026-12-06, laptop)"
DEPLOY = "# Deploy\n\n- [stated] Tag before release (2026-12-06, wes)\n"


def run_cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memtui", *args, "--root", str(root)], capture_output=True,
                          text=True, timeout=120)


def machines(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(laptop, server, bare remote): the laptop pushed two new files' worth of changes the server has not seen."""
    remote = bare(tmp_path / "remote.git")
    laptop = first_machine(tmp_path, "file://" + str(remote))
    server = clone("file://" + str(remote), tmp_path / "server", "wes")
    assert Memory(laptop).update("Facts", "add", FACT, actor="wes").status == "applied"
    assert Memory(laptop).create("notes/deploy.md", DEPLOY, actor="wes").status == "applied"
    assert run_cli(laptop, "sync").returncode == 0
    return laptop, server, remote


def sync_records(root: Path) -> list[dict]:
    return [r for r in Memory(root).store.audit_records() if r.get("action") == "sync" and r["status"] == "applied"]


def test_approving_what_only_the_remote_changed_fast_forwards_on_the_last_decision(tmp_path: Path) -> None:
    laptop, server, remote = machines(tmp_path)
    theirs = git(laptop, "rev-parse", "HEAD")
    assert run_cli(server, "sync").returncode == 4
    first, second = sorted(Memory(server).proposals(external=False), key=lambda p: p.id)
    out = run_cli(server, "queue", "approve", first.id, "--by", "wes")
    assert out.returncode == 0 and "fast-forwarded" not in out.stdout, out.stdout  # one still waits
    assert git(server, "rev-parse", "HEAD") != theirs and sync.status(Memory(server)).incoming == 1
    out = run_cli(server, "queue", "approve", second.id, "--by", "wes")
    assert out.returncode == 0 and f"fast-forwarded to origin ({theirs[:12]})" in out.stdout, out.stdout
    # The branch is the remote's: no approval commit, no merge commit, files as the laptop has them.
    assert git(server, "rev-parse", "HEAD") == theirs and git(server, "status", "--porcelain") == ""
    assert (server / "notes" / "deploy.md").read_text() == DEPLOY and FACT in (server / "MEMORY.md").read_text()
    # Who approved it here: the audit log, and a note on the remote's commit (the commit itself unchanged).
    (rec,) = sync_records(server)
    assert rec["fast_forward"] and rec["decided_by"] == "wes" and sorted(rec["items"]) == [first.id, second.id]
    note = git(server, "notes", f"--ref={sync.NOTES}", "show", theirs)
    assert "Memtui-Approved-By: wes" in note and first.id in note and second.id in note
    # The approvals' own commits, named by their audit lines, are kept (off the branch) and doctor finds nothing.
    approvals = [r["commit"] for r in Memory(server).store.audit_records() if r.get("proposal") in (first.id,
                                                                                                   second.id)]
    assert len(approvals) == 2
    for sha in approvals:
        git(server, "merge-base", "--is-ancestor", sha, f"refs/memtui/approved/origin/{theirs[:12]}")
    found = {f.kind for f in diagnose(Memory(server)).findings}
    assert not found & {"unaudited-commit", "uncommitted-write"}, found
    # Nothing to push; the remote is untouched, and the next sync brings nothing.
    out = run_cli(server, "sync")
    assert out.returncode == 0 and "nothing to push" in out.stdout, out.stdout
    assert git(remote, "rev-parse", "main") == theirs and not Memory(server).proposals(external=False)


def test_a_rejection_merges_on_the_last_decision_and_the_change_does_not_come_back(tmp_path: Path) -> None:
    laptop, server, remote = machines(tmp_path)
    theirs = git(laptop, "rev-parse", "HEAD")
    assert run_cli(server, "sync").returncode == 4
    items = {p.file: p for p in Memory(server).proposals(external=False)}
    assert run_cli(server, "queue", "approve", items["notes/deploy.md"].id, "--by", "wes").returncode == 0
    ours = git(server, "rev-parse", "HEAD")
    out = run_cli(server, "queue", "reject", items["MEMORY.md"].id, "--reason", "pip here", "--by", "ana")
    assert out.returncode == 0 and "merged origin as" in out.stdout, out.stdout
    # Diverged (a rejection): a merge commit by the one who decided last, holding what was approved only.
    assert git(server, "log", "-1", "--format=%an|%P").split("|") == ["ana", f"{ours} {theirs}"]
    assert "uv" not in (server / "MEMORY.md").read_text() and (server / "notes" / "deploy.md").exists()
    assert git(server, "status", "--porcelain") == ""
    out = run_cli(server, "sync")
    assert out.returncode == 0 and "pushed" in out.stdout, out.stdout
    assert run_cli(server, "sync").returncode == 0 and not Memory(server).proposals(external=False)
    assert git(remote, "rev-parse", "main") == git(server, "rev-parse", "HEAD")


def test_a_write_of_this_memorys_own_between_decisions_is_merged_not_fast_forwarded_away(tmp_path: Path) -> None:
    laptop, server, _ = machines(tmp_path)
    theirs = git(laptop, "rev-parse", "HEAD")
    assert run_cli(server, "sync").returncode == 4
    first, second = sorted(Memory(server).proposals(external=False), key=lambda p: p.id)
    assert Memory(server).approve(first.id, by="wes").status == "applied"
    mine = "[stated] The server runs Debian (2026-12-06, server)"
    assert Memory(server).update("Projects", "add", mine, actor="wes").status == "applied"
    done = Memory(server).approve(second.id, by="wes")
    assert done.status == "applied" and "merged origin" in done.message, done.message
    assert git(server, "rev-parse", "HEAD^2") == theirs and mine in (server / "MEMORY.md").read_text()


def test_a_decision_that_cannot_merge_now_stands_and_the_next_sync_merges(tmp_path: Path) -> None:
    laptop, server, _ = machines(tmp_path)
    assert run_cli(server, "sync").returncode == 4
    first, second = Memory(server).proposals(external=False)
    assert Memory(server).approve(first.id, by="wes").status == "applied"
    # git refuses the ref the fast-forward writes first (a ref in its way): the merge waits, the decision does not.
    git(server, "update-ref", "refs/memtui/approved/origin", "HEAD")
    done = Memory(server).approve(second.id, by="wes")
    assert done.status == "applied" and "could not be merged now" in done.message, done.message
    assert "`memtui sync` merges them" in done.message
    assert git(server, "rev-parse", "HEAD") != git(laptop, "rev-parse", "HEAD")
    git(server, "update-ref", "-d", "refs/memtui/approved/origin")
    out = run_cli(server, "sync")
    assert out.returncode == 0 and "fast-forwarded to origin" in out.stdout, out.stdout
    assert git(server, "rev-parse", "HEAD") == git(laptop, "rev-parse", "HEAD")


def _pre_push_then_a_write(laptop: Path, script: str) -> Path:
    """The person's pre-push hook (a shell script's body), then a write of theirs for the next sync to push."""
    hook = laptop / ".git" / "hooks" / "pre-push"
    hook.write_text(f"#!/bin/sh\n{script}\n")
    hook.chmod(0o755)
    assert Memory(laptop).update("Facts", "add", FACT, actor="wes").status == "applied"
    return hook


def test_the_persons_pre_push_hook_runs_and_its_refusal_is_said(tmp_path: Path) -> None:
    remote = bare(tmp_path / "remote.git")
    laptop = first_machine(tmp_path, "file://" + str(remote))
    ran = tmp_path / "pre-push-ran"
    hook = _pre_push_then_a_write(laptop, f"echo \"$1\" >> {ran}\necho 'no pushes on Fridays: ask wes' >&2\nexit 1")
    before = git(remote, "rev-parse", "main")
    out = run_cli(laptop, "sync")
    assert out.returncode == 3, out.stdout + out.stderr
    assert "pre-push hook refused it: no pushes on Fridays: ask wes" in out.stdout and "Nothing here was lost" in \
        out.stdout
    assert ran.read_text().strip() == "origin" and git(remote, "rev-parse", "main") == before
    assert FACT in (laptop / "MEMORY.md").read_text() and sync.status(Memory(laptop)).ahead == 1
    # The hook lets it through next time: the next sync pushes.
    hook.write_text(f"#!/bin/sh\necho \"$1\" >> {ran}\nexit 0\n")
    out = run_cli(laptop, "sync")
    assert out.returncode == 0 and "pushed" in out.stdout, out.stdout + out.stderr
    assert git(remote, "rev-parse", "main") == git(laptop, "rev-parse", "HEAD")
    assert ran.read_text().split() == ["origin", "origin"]


def test_a_pre_push_hook_that_hangs_is_stopped_within_the_timeout(tmp_path: Path) -> None:
    remote = bare(tmp_path / "remote.git")
    laptop = first_machine(tmp_path, "file://" + str(remote))
    config = laptop / ".memtui" / "config.toml"
    config.write_text(config.read_text() + "\n[sync]\ntimeout = 0.05  # minutes: 3 s\n")
    git(laptop, "commit", "-q", "-m", "sync: a short timeout", "--", ".memtui/config.toml")
    git(laptop, "push", "-q", "origin", "main")
    pids = tmp_path / "hook-pids"
    hook = _pre_push_then_a_write(laptop, f"sleep 600 &\necho $$ $! > {pids}\nwait")
    before = git(remote, "rev-parse", "main")
    started = time.monotonic()
    out = run_cli(laptop, "sync")
    took = time.monotonic() - started
    assert out.returncode == 3 and "did not finish within 3 s" in out.stdout, out.stdout + out.stderr
    assert took < 30, took
    assert git(remote, "rev-parse", "main") == before and FACT in (laptop / "MEMORY.md").read_text()
    for pid in map(int, pids.read_text().split()):  # the hook and what it started were stopped with git
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.05)
        assert not _alive(pid), pid
    hook.unlink()
    assert run_cli(laptop, "sync").returncode == 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie awaiting its reaper is gone for our purpose
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return False


def test_a_fresh_clone_is_even_with_its_remote_before_its_first_fetch(tmp_path: Path) -> None:
    remote = bare(tmp_path / "remote.git")
    first_machine(tmp_path, "file://" + str(remote))
    server = clone("file://" + str(remote), tmp_path / "server", "wes")
    assert sync.status(Memory(server)) == sync.SyncStatus("origin", 0, 0, 0)
    out = run_cli(server, "sync", "--status")
    assert out.returncode == 0 and "origin: 0 ahead, 0 behind" in out.stdout, out.stdout
    # A memory whose remote never had it is ahead by all of its history, as before.
    lone = tmp_path / "lone"
    from memtui.core.storage.init import init_root

    init_root(lone)
    git(lone, "remote", "add", "origin", "file://" + str(bare(tmp_path / "empty.git")))
    assert sync.status(Memory(lone)).ahead == int(git(lone, "rev-list", "--count", "HEAD"))


def test_each_incoming_blob_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    laptop, server, _ = machines(tmp_path)
    tip = git(laptop, "rev-parse", "HEAD")
    mem = Memory(server)
    assert sync.fetch(mem) == tip
    trace = tmp_path / "git-trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    queued, refused = sync.incoming(mem)
    assert len(queued) == 2 and not refused
    calls = [line for line in trace.read_text().splitlines() if "cat-file" in line and f"{tip}:" in line]
    reads = [line for line in calls if " -s " not in line]  # the size check reads no content
    assert sorted(line.rsplit(":", 1)[1].strip("'") for line in reads) == ["MEMORY.md", "notes/deploy.md"], calls


def test_a_remote_commit_naming_a_local_proposal_does_not_decide_it_after_a_fast_forward(tmp_path: Path) -> None:
    """A teammate's plain commit carries `Memtui-Proposal: p-0003`; once fast-forwarded it is on this memory's
    branch, but it is still another machine's: `memtui doctor --fix` must not take it for this machine's p-0003."""
    remote = bare(tmp_path / "remote.git")
    victim = first_machine(tmp_path, "file://" + str(remote))
    attacker = clone("file://" + str(remote), tmp_path / "attacker", "mallory")
    text = (attacker / "MEMORY.md").read_text()
    (attacker / "MEMORY.md").write_text(text.replace("## Facts\n\n", "## Facts\n\n- [stated] Lyon (2026-12-06)\n"))
    git(attacker, "commit", "-q", "-am", "add MEMORY.md\n\nMemtui-Actor: agent-x\nMemtui-Proposal: p-0003")
    push_files(attacker, {"notes/lyon.md": b"# Lyon\n"}, "a note on top")  # the forged commit is not the tip
    assert run_cli(victim, "sync").returncode == 4
    incoming = sorted(Memory(victim).proposals(external=False), key=lambda p: p.id)
    assert [p.id for p in incoming] == ["p-0001", "p-0002"]
    local = Memory(victim).update("Projects", "add", "[inferred] Lyon has a bakery (2026-12-06, x)", actor="agent-x")
    assert local.status == "queued" and local.id == "p-0003"
    assert Memory(victim).approve("p-0001", by="wes").status == "applied"
    assert "fast-forwarded" in Memory(victim).approve("p-0002", by="wes").message
    diagnose(Memory(victim), fix=True)
    assert Memory(victim).get("p-0003").status == "pending"
    assert "bakery" not in (victim / "MEMORY.md").read_text()
    listed = json.loads(run_cli(victim, "queue", "list", "--json").stdout)
    listed = listed["proposals"] if isinstance(listed, dict) else listed
    assert [p["id"] for p in listed] == ["p-0003"]
