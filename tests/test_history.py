"""History, blame and undo: per-line provenance through git, and reverts that never rewrite history."""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest

from memtui.cli import main
from memtui.core.storage.init import init_root
from memtui.core.timeline.history import blame, history, restore, revert, undo_last
from memtui.core.writing.memory import Memory


@pytest.fixture
def day(tmp_path: Path, now) -> Memory:
    now("2026-08-20T08:00")
    init_root(tmp_path / "memory")
    now("2026-08-20T09:00")
    return Memory(tmp_path / "memory")


def commits(mem: Memory) -> list[str]:
    return [c.hexsha for c in git.Repo(mem.location).iter_commits()]


def clean(mem: Memory) -> bool:
    return git.Repo(mem.location).git.status("--porcelain") == "" and not mem.external_proposals()


def test_undo_restores_the_previous_bytes_with_a_new_commit(day: Memory, now):
    day.update("Decisions", "add", "[stated] Public API uses REST", actor="wes")
    earlier = (Path(day.location) / "MEMORY.md").read_bytes()
    log_before = commits(day)
    now("2026-08-20T10:00")
    day.update("Decisions", "revise", "[stated] Public API uses tRPC", replaces="REST", actor="wes")
    assert (Path(day.location) / "MEMORY.md").read_bytes() != earlier
    res = undo_last(day, "wes")
    assert res.status == "applied", res.message
    assert (Path(day.location) / "MEMORY.md").read_bytes() == earlier
    after = commits(day)
    assert len(after) == len(log_before) + 2 and after[2:] == log_before  # history grew, nothing rewritten
    assert res.commit == after[0]
    last = list(day.store.audit_records())[-1]
    assert (last["action"], last["status"], last["actor"], last["commit"]) == ("revert", "applied", "wes", after[0])
    assert last["reverts"] == after[1]
    assert clean(day)


def test_undo_again_undoes_the_change_before_and_can_pick_an_actor(day: Memory, now):
    blank = (Path(day.location) / "MEMORY.md").read_bytes()
    day.update("Facts", "add", "[stated] Has a cat called Miso", actor="wes")
    mine = (Path(day.location) / "MEMORY.md").read_bytes()
    day.log("Looked at the cat photos", actor="agent")
    day.update("User", "add", "[stated] Name is Wes", actor="wes")
    # the person's own last edit, not the agent's log line after it... nor before it
    assert undo_last(day, "wes", actor="wes").status == "applied"
    assert (Path(day.location) / "MEMORY.md").read_bytes() == mine
    assert undo_last(day, "wes", actor="wes").status == "applied"
    assert (Path(day.location) / "MEMORY.md").read_bytes() == blank
    assert (Path(day.location) / "log" / "2026-08-20.md").exists()  # the agent's log line was left alone
    nothing = undo_last(day, "wes", actor="wes")
    assert nothing.status == "refused" and "no applied change by wes" in nothing.message


def test_revert_of_an_old_change_merges_past_later_unrelated_ones(day: Memory):
    first = day.update("Preferences", "add", "[stated] Prefers dark mode", actor="wes")
    day.update("Decisions", "add", "[stated] Public API uses REST", actor="wes")
    res = revert(day, first.commit or "", "wes")
    assert res.status == "applied", res.message
    text = day.read_text("MEMORY.md") or ""
    assert "Prefers dark mode" not in text and "Public API uses REST" in text


def test_revert_that_conflicts_with_later_changes_is_refused_and_the_tree_stays_clean(day: Memory):
    first = day.update("Decisions", "add", "[stated] Public API uses REST", actor="wes")
    day.update("Decisions", "revise", "[stated] Public API uses GraphQL", replaces="REST", actor="wes")
    before = (Path(day.location) / "MEMORY.md").read_bytes()
    log_before = commits(day)
    res = revert(day, first.commit or "", "wes")
    assert res.status == "conflict" and "changed since in the same lines" in res.message
    assert (Path(day.location) / "MEMORY.md").read_bytes() == before
    assert commits(day) == log_before and clean(day)
    last = list(day.store.audit_records())[-1]
    assert (last["action"], last["status"], last["reverts"]) == ("revert", "conflict", first.commit)


def test_revert_is_refused_over_uncommitted_changes_and_for_agents(day: Memory):
    first = day.update("Facts", "add", "[stated] Has a cat called Miso", actor="wes")
    path = Path(day.location) / "MEMORY.md"
    path.write_text(path.read_text() + "\nhand edit\n")
    res = revert(day, first.commit or "", "wes")
    assert res.status == "refused" and "uncommitted changes" in res.message
    assert path.read_text().endswith("hand edit\n")  # nothing lost
    assert revert(day, first.commit or "", "agent").status == "refused"
    assert revert(day, "deadbeef", "wes").status == "refused"


def test_restore_puts_a_past_version_back_as_a_new_commit(day: Memory):
    v1 = day.update("Facts", "add", "[stated] Has a cat called Miso", actor="wes")
    v1_bytes = (Path(day.location) / "MEMORY.md").read_bytes()
    day.update("Facts", "add", "[stated] Has a dog called Rex", actor="wes")
    day.update("User", "add", "[stated] Name is Wes", actor="wes")
    res = restore(day, "MEMORY.md", v1.commit or "", "wes")
    assert res.status == "applied", res.message
    assert (Path(day.location) / "MEMORY.md").read_bytes() == v1_bytes
    last = list(day.store.audit_records())[-1]
    assert (last["action"], last["restored_from"], last["commit"]) == ("restore", v1.commit, res.commit)
    assert restore(day, "people/nobody.md", v1.commit or "", "wes").status == "refused"


def test_history_and_blame_name_the_proposal_behind_a_line(day: Memory, now):
    queued = day.update("Preferences", "add", "[stated] Prefers dark mode", actor="agent")
    now("2026-08-20T09:30")
    day.approve(queued.id or "", by="wes")
    now("2026-08-20T10:00")
    day.update("Facts", "add", "[stated] Has a cat called Miso", actor="wes")
    lines = blame(day, "MEMORY.md")
    dark = next(b for b in lines if "Prefers dark mode" in b.text)
    cat = next(b for b in lines if "Miso" in b.text)
    assert (dark.proposal, dark.actor, dark.approved_by, dark.action) == (queued.id, "agent", "wes", "add")
    assert dark.time == "2026-08-20T09:30:00"
    assert (cat.proposal, cat.actor, cat.time) == (None, "wes", "2026-08-20T10:00:00")
    heading = next(b for b in lines if b.text == "## Facts")
    assert heading.actor == "memtui" and heading.proposal is None
    assert [b.line for b in lines] == list(range(1, len(lines) + 1))

    hist = history(day, "MEMORY.md")
    assert [(h.actor, h.proposal) for h in hist] == [("wes", None), ("agent", queued.id), ("memtui", None)]
    assert hist[1].approved_by == "wes" and hist[1].audit[0]["proposal"] == queued.id
    assert hist[1].audit[0]["decided_by"] == "wes"

    path = Path(day.location) / "MEMORY.md"
    path.write_text(path.read_text() + "- [stated] typed by hand\n")
    assert blame(day, "MEMORY.md")[-1].actor == "uncommitted"


def test_cli_history_blame_revert_restore_undo(day: Memory, capsys):
    root = day.location
    first = day.update("Preferences", "add", "[stated] Prefers dark mode", actor="wes")
    day.update("Decisions", "add", "[stated] Public API uses REST", actor="wes")

    def run(*argv: str) -> tuple[int, dict]:
        code = main([*argv, "--json", "--root", root])
        return code, json.loads(capsys.readouterr().out)

    code, data = run("history", "MEMORY.md")
    assert code == 0 and len(data["commits"]) == 3 and data["commits"][0]["audit"][0]["action"] == "add"
    code, data = run("blame", "MEMORY.md")
    assert code == 0 and any("Prefers dark mode" in b["text"] and b["commit"] == first.commit for b in data["lines"])
    code, data = run("revert", first.commit or "")
    assert code == 0 and data["status"] == "applied"
    code, data = run("undo")
    assert code == 0 and "Public API uses REST" in data["diff"]
    code, data = run("restore", "MEMORY.md", "--to", first.commit or "")
    assert code == 0 and "Prefers dark mode" in (day.read_text("MEMORY.md") or "")
    code, data = run("revert", "nope")
    assert code == 3 and "no commit" in data["message"]
    code, data = run("history", "../outside.md")
    assert code == 1
