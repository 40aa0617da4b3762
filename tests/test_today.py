"""`memtui today`: a scripted day of approvals, revisions, rejections, external edits, a person's edit and a sweep."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memtui.cli import main
from memtui.core.storage.init import init_root
from memtui.core.timeline.today import parse_since, today
from memtui.core.writing.memory import Memory


def scripted_day(tmp_path: Path, now) -> tuple[Path, dict[str, str]]:
    """The day of the issue; returns the root and the ids it made."""
    now("2026-08-19T18:00")
    root = tmp_path / "memory"
    init_root(root)
    mem = Memory(root)
    ids: dict[str, str] = {}
    now("2026-08-20T09:00")
    ids["approved"] = mem.update("Preferences", "add", "[stated] Prefers dark mode", actor="agent").id or ""
    now("2026-08-20T09:05")
    assert mem.approve(ids["approved"], by="wes").status == "applied"
    now("2026-08-20T09:10")
    ids["revised"] = mem.update("Facts", "add", "[inferred] Lives in Lisbon", actor="agent").id or ""
    now("2026-08-20T09:15")
    assert mem.approve(ids["revised"], by="wes", entry="[stated] Lives in Porto").status == "applied"
    now("2026-08-20T09:20")
    ids["rejected"] = mem.update("Facts", "add", "[suggested] Likes jazz", actor="agent").id or ""
    now("2026-08-20T09:25")
    assert mem.reject(ids["rejected"], reason="never said so", by="wes").status == "rejected"
    now("2026-08-20T09:30")
    (root / "people").mkdir()
    (root / "people" / "ana.md").write_text("# Ana\n\n- [stated] Ana runs the API team (2026-08-20)\n")
    [ext] = mem.external_proposals()
    ids["external"] = ext.id
    now("2026-08-20T09:35")
    assert mem.approve(ext.id, by="wes").status == "applied"
    now("2026-08-20T10:00")
    assert mem.update("Decisions", "add", "[stated] Public API uses tRPC", actor="wes").status == "applied"
    now("2026-08-20T10:05")
    scratch = mem.scratch("deploy-plan", "try the migration on staging first", ttl_minutes=30, actor="agent")
    assert scratch.status == "applied"
    ids["scratch"] = scratch.file or ""
    now("2026-08-20T11:00")
    assert mem.sweep().status == "applied"
    now("2026-08-20T11:10")
    assert mem.update("Preferences", "add", "[stated] prefers DARK mode!", actor="agent").status == "refused"
    now("2026-08-20T11:20")
    ids["pending"] = mem.update("Projects", "add", "[observed] memtui ships Friday", actor="agent").id or ""
    now("2026-08-20T11:30")
    (root / "people" / "ana.md").write_text("# Ana\n\n- [stated] Ana runs the platform team (2026-08-20)\n")
    now("2026-08-20T12:00")
    return root, ids


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code = main(list(argv))
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def test_scripted_day_lists_every_change_in_order_with_actor_action_status(tmp_path, now, capsys):
    root, ids = scripted_day(tmp_path, now)
    data = run_json(capsys, "today", "--json", "--root", str(root))
    flat = sorted((c for f in data["files"] for c in f["changes"]), key=lambda c: c["time"])
    got = [(c["time"][11:16], c["actor"], c["action"], c["status"], c["file"]) for c in flat]
    assert got == [
        ("09:05", "agent", "add", "approved", "MEMORY.md"),
        ("09:15", "agent", "add", "revised", "MEMORY.md"),
        ("09:25", "agent", "add", "rejected", "MEMORY.md"),
        ("09:35", "external", "create", "approved", "people/ana.md"),
        ("10:00", "wes", "add", "applied", "MEMORY.md"),
        ("10:05", "agent", "create", "applied", ids["scratch"]),
        ("11:00", "memtui-sweep", "delete", "applied", ids["scratch"]),
        ("11:10", "agent", "add", "refused", "MEMORY.md"),
        ("11:20", "agent", "add", "pending", "MEMORY.md"),
        ("12:00", "external", "edit", "uncommitted", "people/ana.md"),
    ]
    assert data["since"] == "2026-08-20T00:00:00"
    # grouped by file, in the order each file was first touched
    assert [f["file"] for f in data["files"]] == ["MEMORY.md", "people/ana.md", ids["scratch"]]
    by_status = {}
    for c in flat:
        by_status.setdefault(c["status"], c)
    approved, revised = by_status["approved"], by_status["revised"]
    assert approved["proposal"] == ids["approved"] and approved["decided_by"] == "wes"
    assert "Prefers dark mode" in approved["after"] and approved["commit"]
    assert revised["after"].startswith("[stated] Lives in Porto")
    assert revised["proposed"].startswith("[inferred] Lives in Lisbon")
    assert by_status["rejected"]["reason"] == "never said so" and by_status["rejected"]["commit"] is None
    assert by_status["pending"]["proposal"] == ids["pending"]
    assert "already says this" in by_status["refused"]["reason"]
    # each committed change carries its diff and the line it lands on in the file
    text = (root / "MEMORY.md").read_text().splitlines()
    assert "\n+- [" in approved["diff"] and "Prefers dark mode" in approved["diff"]
    assert "Prefers dark mode" in text[approved["line"] - 1]
    assert "-- [stated] Ana runs the API team" in by_status["uncommitted"]["diff"]
    assert data["counts"] == {"approved": 2, "revised": 1, "rejected": 1, "applied": 3, "refused": 1,
                              "pending": 1, "uncommitted": 1}


def test_revise_of_an_entry_shows_before_and_after(tmp_path, now):
    now("2026-08-20T08:00")
    init_root(tmp_path / "m")
    mem = Memory(tmp_path / "m")
    now("2026-08-20T09:00")
    mem.update("Decisions", "add", "[stated] Public API uses REST", actor="wes")
    mem.update("Decisions", "revise", "[stated] Public API uses tRPC", replaces="REST", actor="wes")
    [group] = [g for g in today(mem).files if g.file == "MEMORY.md"]
    last = group.changes[-1]
    assert (last.action, last.before[:29], last.after[:29]) == (
        "revise", "[stated] Public API uses REST", "[stated] Public API uses tRPC")


def test_since_seven_days_reaches_last_week_and_the_default_does_not(tmp_path, now, capsys):
    now("2026-08-14T08:00")
    root = tmp_path / "memory"
    init_root(root)
    mem = Memory(root)
    now("2026-08-15T10:00")
    mem.update("Facts", "add", "[stated] Has a cat called Miso", actor="wes")
    now("2026-08-20T09:00")
    mem.log("Shipped the today view", actor="agent")
    now("2026-08-20T12:00")
    today_only = run_json(capsys, "today", "--json", "--root", str(root))
    week = run_json(capsys, "today", "--json", "--since", "7d", "--root", str(root))
    assert [f["file"] for f in today_only["files"]] == ["log/2026-08-20.md"]
    files = [f["file"] for f in week["files"]]
    assert "MEMORY.md" in files and "log/2026-08-20.md" in files
    week_memory = next(f for f in week["files"] if f["file"] == "MEMORY.md")["changes"]
    # the person's add; the init commit is the start of history, not a change (tests/test_today_start_of_history.py)
    assert [c["action"] for c in week_memory] == ["add"]
    assert week["since"] == "2026-08-13T12:00:00"
    dated = run_json(capsys, "today", "--json", "--since", "2026-08-15", "--root", str(root))
    assert "MEMORY.md" in [f["file"] for f in dated["files"]]


def test_since_is_parsed_or_refused_clearly(capsys, root):
    from datetime import datetime

    at = datetime(2026, 8, 20, 14, 5)
    assert parse_since(None, at) == datetime(2026, 8, 20)
    assert parse_since("yesterday", at) == datetime(2026, 8, 19)
    assert parse_since("12h", at) == datetime(2026, 8, 20, 2, 5)
    assert parse_since("2026-08-01", at) == datetime(2026, 8, 1)
    with pytest.raises(ValueError, match="7d"):
        parse_since("last tuesday", at)
    assert main(["today", "--since", "last tuesday", "--root", str(root)]) == 2
    assert "cannot read --since" in capsys.readouterr().err


def test_human_rendering_names_actor_status_and_entry(tmp_path, now, capsys):
    root, ids = scripted_day(tmp_path, now)
    assert main(["today", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    for needle in ("MEMORY.md", "people/ana.md", "revised", "rejected", "uncommitted", "never said so",
                   "Lives in Porto", ids["pending"], "memtui-sweep"):
        assert needle in out, needle


def test_core_stays_free_of_the_ui():
    import subprocess
    import sys

    code = ("import sys, memtui.core.timeline.today, memtui.core.timeline.history; "
            "assert 'textual' not in sys.modules and 'rich' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_counts_each_proposal_and_commit_once(tmp_path: Path, now) -> None:
    """A proposal that conflicted at two attempts and still waits is one conflict; a commit of three files is
    one change (it is listed under each file)."""
    import git

    now("2026-08-20T09:00")
    root = tmp_path / "memory"
    init_root(root)
    mem = Memory(root)
    mem.update("Facts", "add", "[stated] Staging runs Postgres 16")
    pid = mem.update("Facts", "revise", "[stated] Staging runs Postgres 17", "Postgres 16", actor="agent").id
    mem.update("Facts", "remove", replaces="Postgres 16")
    assert mem.approve(pid, by="wes").status == "conflict"
    assert mem.approve(pid, by="wes").status in ("conflict", "refused")
    for name in ("a", "b", "c"):
        (root / f"{name}.md").write_text(f"# {name}\n")
    repo = git.Repo(root)
    repo.index.add(["a.md", "b.md", "c.md"])
    stamp = "2026-08-20T09:30:00"
    repo.index.commit("three notes by hand", author_date=stamp, commit_date=stamp)
    now("2026-08-20T10:00")
    rep = today(mem, "2026-08-20")
    assert rep.counts.get("conflict") == 1
    listed = [c for c in rep.changes if c.after == "three notes by hand"]
    assert len(listed) == 3 and len({c.commit for c in listed}) == 1
    applied_commits = {c.commit for c in rep.changes if c.status == "applied"}
    assert rep.counts["applied"] == len(applied_commits)
