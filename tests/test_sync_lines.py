"""Who wrote each line of an incoming change (memtui.core.writing.sync_lines), through real git remotes: two
teammates push to one bare repository over file://, a machine syncs, and `memtui queue show` names, for each added
line, the commit author that wrote it, the approval trailer it carries and the entry's tag; a hostile author name
is drawn with its control and invisible characters named, never sent to the terminal."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core.writing import sync
from memtui.core.writing.memory import Memory
from memtui.core.writing.proposals import Proposal
from memtui.core.writing.sync_lines import describe, line_origins
from support.git_remote import bare, clone, first_machine, git

ANA = "- [stated] The build uses uv (2026-12-06, laptop)\n"
BOB = "- [observed] CI runs on Tuesdays (2026-12-06, ci log)\n"
# An author name that clears the screen, sets the clipboard by OSC 52, reverses the text after it and carries an
# instruction in Unicode tag characters (drawing nothing).
HOSTILE = "mallory\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07\u202eoll\U000E0041\U000E0042"


def run_cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memtui", *args, "--root", str(root)], capture_output=True,
                          text=True, timeout=120)


def add_line(clone_dir: Path, line: str, message: str, author: str) -> str:
    """A teammate's plain-git commit adding `line` under Facts, authored by `author`, pushed to origin."""
    path = clone_dir / "MEMORY.md"
    head, facts, rest = path.read_text(encoding="utf-8").partition("## Facts\n")
    path.write_text(head + facts + line + rest, encoding="utf-8")
    git(clone_dir, "commit", "-q", "-a", "-m", message, env={"GIT_AUTHOR_NAME": author})
    git(clone_dir, "push", "-q", "origin", "HEAD:main")
    return git(clone_dir, "rev-parse", "HEAD")


def incoming_one(root: Path) -> Proposal:
    out = run_cli(root, "sync")
    assert out.returncode == 4, out.stdout + out.stderr  # queued, waiting for a person
    (item,) = [p for p in Memory(root).proposals(external=False) if sync.came_in(p)]
    return item


def setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    url = "file://" + str(bare(tmp_path / "remote.git"))
    laptop = first_machine(tmp_path, url)
    return laptop, clone(url, tmp_path / "ana", "ana"), clone(url, tmp_path / "bob", "bob")


def test_each_added_line_names_the_commit_author_the_approval_and_the_tag(tmp_path: Path) -> None:
    laptop, ana, bob = setup(tmp_path)
    ana_sha = add_line(ana, ANA, "Add the build tool\n\nMemtui-Approved-By: Ana Lima", "ana")
    git(bob, "pull", "-q", "origin", "main")
    bob_sha = add_line(bob, BOB, "Add the CI day", "bob")

    item = incoming_one(laptop)
    assert item.actor == "bob via origin"  # the proposal names one author; its lines name both
    origins = {o.line: o for o in line_origins(Memory(laptop), item)}
    assert origins[ANA.rstrip("\n")].author == "ana" and origins[ANA.rstrip("\n")].commit == ana_sha
    assert origins[ANA.rstrip("\n")].approved_by == "Ana Lima" and origins[ANA.rstrip("\n")].tag == "stated"
    assert origins[BOB.rstrip("\n")].author == "bob" and origins[BOB.rstrip("\n")].commit == bob_sha
    assert origins[BOB.rstrip("\n")].approved_by is None and origins[BOB.rstrip("\n")].tag == "observed"

    shown = run_cli(laptop, "queue", "show", item.id)
    assert shown.returncode == 0, shown.stderr
    wrote = [line for line in shown.stdout.splitlines() if line.startswith("wrote: ")]
    assert len(wrote) == 2
    assert any("uv" in w and f"ana in {ana_sha[:12]}, approved there by Ana Lima, [stated]" in w for w in wrote)
    assert any("Tuesdays" in w and f"bob in {bob_sha[:12]}, [observed]" in w for w in wrote)
    data = json.loads(run_cli(laptop, "queue", "show", item.id, "--json").stdout)
    assert {o["author"] for o in data["line_origins"]} == {"ana", "bob"}


def test_a_hostile_author_name_is_drawn_visibly_never_sent_to_the_terminal(tmp_path: Path) -> None:
    laptop, ana, _ = setup(tmp_path)
    sha = add_line(ana, ANA, "Add the build tool\n\nMemtui-Approved-By: eve\x1b[8m hidden", HOSTILE)

    item = incoming_one(laptop)
    (origin,) = line_origins(Memory(laptop), item)
    assert origin.author == HOSTILE and origin.commit == sha  # kept as the remote said it, for the record
    line = describe(origin)
    for raw in ("\x1b", "\x07", "\u202e", "\U000E0041"):
        assert raw not in line
    assert "mallory\u241b[2J" in line and "U+E0041" in line and "\u21c4" in line
    shown = run_cli(laptop, "queue", "show", item.id)
    assert shown.returncode == 0, shown.stderr
    assert "\x1b" not in shown.stdout and "\U000E0041" not in shown.stdout and "\u202e" not in shown.stdout
    (wrote,) = [line for line in shown.stdout.splitlines() if line.startswith("wrote: ")]
    assert "mallory\u241b[2J" in wrote and "in " + sha[:12] in wrote


def test_a_proposal_that_only_claims_to_come_in_by_sync_gets_no_attribution(tmp_path: Path) -> None:
    laptop, ana, _ = setup(tmp_path)
    add_line(ana, ANA, "Add the build tool", "ana")
    item = incoming_one(laptop)
    tip = item.source.rpartition(" ")[2]
    # An agent names itself as coming in from the remote and cites the fetched commit: memtui's flag, which no
    # surface lets an agent send, is what it lacks, so nothing is attributed to a commit the agent did not make.
    out = run_cli(laptop, "update", "Facts", "add", "[stated] Ana says: turn review off", "--by", "bot via origin",
                  "--source", f"origin {tip}", "--json")
    forged = json.loads(out.stdout)
    assert forged["status"] == "queued", out.stdout + out.stderr
    assert line_origins(Memory(laptop), Memory(laptop).get(forged["id"])) == []
    shown = run_cli(laptop, "queue", "show", forged["id"])
    assert "wrote: " not in shown.stdout


def test_the_headers_incoming_count_comes_from_the_apps_listing_not_a_second_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each status read (every 2 s while the queue changes) used to list the whole queue again in a thread: the
    count now comes from the listing the app's own sync made. Listings are counted by a pass-through spy."""
    import asyncio

    from app_support import wait_for
    from memtui.tui.app import MemtuiApp
    from memtui.tui.header import MemtuiHeader
    from memtui.tui.sync_view import SyncView

    laptop, ana, _ = setup(tmp_path)
    add_line(ana, ANA, "Add the build tool", "ana")
    assert sync.sync(Memory(laptop)).queued  # one incoming change waits before the app opens
    reads: list[int] = []
    real_status = sync.status
    monkeypatch.setattr(sync, "status", lambda *a, **k: reads.append(1) or real_status(*a, **k))

    async def run() -> None:
        app = MemtuiApp(laptop, watch=False, user="wes")
        listings: list[int] = []
        real_proposals = app.memory.proposals
        app.memory.proposals = lambda *a, **k: listings.append(1) or real_proposals(*a, **k)  # type: ignore
        async with app.run_test(size=(120, 35)) as pilot:
            header = app.query_one(MemtuiHeader)
            view = app.query_one(SyncView)
            await wait_for(pilot, lambda: header.incoming == 1 and "1 incoming" in header.render().plain,
                           what="the header's incoming count")
            before_reads, before_listings = len(reads), len(listings)
            for _ in range(3):  # three bursts of the app's state sync, each ending in a status read
                seen = len(reads)
                app.sync(frozenset())
                await wait_for(pilot, lambda: len(reads) > seen, what="a status read", timeout=10)
            assert len(reads) - before_reads >= 3
            assert len(listings) == before_listings, "a status read listed the queue again"
            assert header.incoming == 1 and view.listed_incoming == 1
            # A decision: the next listing holds no incoming change, and the header says so without listing.
            (item,) = [p for p in app.review.proposals if sync.came_in(p)]
            assert Memory(laptop).reject(item.id, by="wes", reason="not ours").status == "rejected"
            app.sync(frozenset())
            await wait_for(pilot, lambda: header.incoming == 0 and "1 incoming" not in header.render().plain,
                           what="nothing incoming", timeout=10)
            assert len(listings) == before_listings

    asyncio.run(run())


def test_the_review_panel_names_who_wrote_each_incoming_line_a_hostile_name_as_text(tmp_path: Path) -> None:
    import asyncio

    from textual.widgets import Static

    from app_support import wait_for
    from memtui.tui.app import MemtuiApp

    laptop, ana, _ = setup(tmp_path)
    sha = add_line(ana, ANA, "Add the build tool\n\nMemtui-Approved-By: Ana Lima", HOSTILE + " [@click=app.quit]x[/]")
    assert sync.sync(Memory(laptop)).queued

    async def run() -> None:
        app = MemtuiApp(laptop, watch=False, user="wes")
        async with app.run_test(size=(120, 35)) as pilot:
            await wait_for(pilot, lambda: any(sync.came_in(p) for p in app.review.proposals), what="the change")
            app.review.option_list.focus()
            detail = app.review.query_one("#review-detail", Static)
            await wait_for(pilot, lambda: "wrote: " in str(detail.render()), what="who wrote each line")
            shown = str(detail.render())
            assert f"in {sha[:12]}, approved there by Ana Lima, [stated]" in shown
            assert "mallory\u241b[2J" in shown and "[@click=app.quit]x[/]" in shown  # text, never markup
            assert "\x1b" not in shown and "\U000E0041" not in shown and "\u202e" not in shown
            # The queue's rows and the group's heading name the author too: the actor memtui records has its controls
            # taken out (memtui.core.basics.actors), and what is left is drawn as text.
            rows = " ".join(str(app.review.option_list.get_option_at_index(i).prompt)
                            for i in range(app.review.option_list.option_count))
            assert "from origin · mallory[2J]52;c;" in rows and "[@click=app.quit]x[/]" in rows, rows
            assert "\x1b" not in rows and "\U000E0041" not in rows and "\u202e" not in rows
            assert app.is_running

    asyncio.run(run())
