"""SVG snapshot at 120x35: the review queue with changes incoming from a git remote grouped by remote and author
under their headings, an agent's own proposal apart, the header's ahead/behind and incoming count.

Deterministic: HOME makes the header show ~/server, the clock and git's dates are pinned (so every commit's sha,
named in the incoming change's flag, is the same each run), the watcher is off. Update with
`pytest --snapshot-update`."""

from __future__ import annotations

from pathlib import Path

import pytest

from app_support import wait_for
from memtui.core.writing import sync
from memtui.core.writing.memory import Memory
from memtui.core.writing.proposals import Proposal
from memtui.tui.app import MemtuiApp
from memtui.tui.header import MemtuiHeader
from memtui.tui.sync_view import SyncView
from support.git_remote import bare, clone, first_machine, git

WHEN = "2026-12-06T11:00:00+00:00"


def commit_as(repo: Path, files: dict[str, str], message: str, author: str) -> None:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
        git(repo, "add", rel)
    git(repo, "commit", "-q", "-m", message, env={"GIT_AUTHOR_NAME": author, "GIT_COMMITTER_NAME": author})


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MEMTUI_NOW", "2026-12-06T11:00")
    for key in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
        monkeypatch.setenv(key, WHEN)
    url = "file://" + str(bare(tmp_path / "remote.git"))
    first_machine(tmp_path, url)
    server = clone(url, tmp_path / "server", "wes")
    ana = clone(url, tmp_path / "ana", "ana")
    commit_as(ana, {"notes/deploy.md": "# Deploy\n\n- [observed] Deploys go out from the release branch\n"},
              "deploy notes", "Ana Lima")
    commit_as(ana, {"notes/oncall.md": "# On call\n\n- [stated] Pages go to the #ops channel first\n"},
              "on-call notes", "Ana Lima")
    git(ana, "push", "-q", "origin", "HEAD:main")
    bo = clone(url, tmp_path / "bo", "bo")
    commit_as(bo, {"notes/style.md": "# Style\n\n- [stated] Tests use real git, never mocks\n"}, "style", "Bo Chen")
    git(bo, "pull", "-q", "--no-rebase", "origin", "main")
    git(bo, "push", "-q", "origin", "HEAD:main")
    memory = Memory(server)
    agents = Proposal(id="", created="2026-12-06T10:55:00", actor="claude-code", action="add", file="MEMORY.md",
                      section="Facts", entry="[observed] CI runs on every push (2026-12-06)")
    assert memory.submit(agents, review=True).status == "queued"
    assert len(sync.sync(memory).queued) == 3
    return server


def test_incoming_changes_grouped_by_remote_and_author(snap_compare, server: Path) -> None:
    async def settle(pilot) -> None:
        app = pilot.app
        header = app.query_one(MemtuiHeader)
        await wait_for(pilot, lambda: app.folder_synced and len(app.review.proposals) == 4, what="the queue")
        await wait_for(pilot, lambda: app.query_one(SyncView).has_remote and header.incoming == 3,
                       what="the header's sync status")
        app.review.select(app.review.proposals[1].id)
        app.review.option_list.focus()
        await wait_for(pilot, lambda: any(app.review.line_origins.values()), what="who wrote each incoming line")
        await pilot.pause(0.3)
        app.review.option_list.scroll_to_highlight(top=True)
        await pilot.pause(0.2)

    assert snap_compare(MemtuiApp(server, watch=False, user="wes"), terminal_size=(120, 35), run_before=settle)
