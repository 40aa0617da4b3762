"""A pending proposal whose entry changed since is shown as a conflict before the person presses a key on it."""

from __future__ import annotations

import json
from pathlib import Path

import git

from app_support import settled, wait_for
from memtui.core.writing.memory import Memory
from memtui.tui.app import MemtuiApp

AGENT = "agent:claude"


def two_revises(mem: Memory) -> tuple[str, str]:
    assert mem.update("Preferences", "add", "[stated] Prefers tabs", actor="wes").status == "applied"
    first = mem.update("Preferences", "revise", "[stated] Prefers spaces", replaces="Prefers tabs", actor=AGENT,
                       user_words="I prefer spaces")
    second = mem.update("Preferences", "revise", "[stated] Prefers two spaces", replaces="Prefers tabs",
                        actor=AGENT, user_words="two spaces please")
    assert first.status == second.status == "queued"
    return first.id, second.id


def test_the_recheck_plans_what_an_approval_would_and_writes_nothing(mem: Memory, root: Path) -> None:
    first, second = two_revises(mem)
    pending = {p.id: p for p in mem.proposals(external=False)}
    assert mem.would_conflict(pending[first]) is None and mem.would_conflict(pending[second]) is None
    assert mem.approve(first, by="wes").status == "applied"
    queue_file = root / ".memtui/queue" / f"{second}.json"
    saved, sha = queue_file.read_bytes(), git.Repo(root).head.commit.hexsha
    p = next(p for p in mem.proposals(external=False) if p.id == second)
    why = mem.would_conflict(p)
    assert why is not None and "matches no current entry" in why
    # Nothing was written: the queue file, git and the proposal's status are as they were.
    assert queue_file.read_bytes() == saved and git.Repo(root).head.commit.hexsha == sha
    assert json.loads(saved)["status"] == "pending"
    # The approval checks again and agrees.
    assert mem.approve(second, by="wes").status == "conflict"


def test_the_rechecks_of_a_sync_read_every_base_at_once_and_agree_one_by_one(mem: Memory, root: Path) -> None:
    """The review panel's sync rechecks every pending proposal with one read of their files' bases; its answers
    are those of `would_conflict` asked one at a time, a hostile path among them included."""
    first, second = two_revises(mem)
    assert mem.approve(first, by="wes").status == "applied"
    elsewhere = mem.update("Facts", "add", "[observed] Builds are green", actor=AGENT)
    assert elsewhere.status == "queued", elsewhere
    pending = mem.proposals(external=False)
    hostile = pending[0].replace(id="p-9999", file="../outside.md")
    asked = [*pending, hostile]
    batch = mem.conflicts(asked)
    assert batch == [mem.would_conflict(p) for p in asked]
    by_id = dict(zip([p.id for p in asked], batch))
    assert by_id[second] is not None and "matches no current entry" in by_id[second]
    assert by_id[elsewhere.id] is None and by_id["p-9999"] is not None


async def test_the_review_panel_shows_the_conflict_before_any_key(mem: Memory, root: Path) -> None:
    first, second = two_revises(mem)
    assert mem.approve(first, by="wes").status == "applied"
    app = MemtuiApp(root, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        await wait_for(pilot, lambda: any(p.id == second for p in app.review.proposals), what="the proposal")
        shown = next(p for p in app.review.proposals if p.id == second)
        assert shown.status == "conflict" and "no current entry" in shown.reason
        title = app.review.query_one("#review-title")
        assert "0 pending · 1 conflict" in str(title.render()), title.render()
    # The person saw it; nothing in the queue changed until they decide.
    assert json.loads((root / ".memtui/queue" / f"{second}.json").read_text())["status"] == "pending"
