"""Pilot tests for the app: deciding proposals with the keys, live changes from other processes, the viewer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import git
import pytest

from app_support import SIZE, demo_root, demo_template, palette_choose, settled, wait_for  # noqa: F401 (fixture)
from memtui.tui.app import MemtuiApp
from memtui.tui.messages import FilesChanged, MemoryChanged
from memtui.tui.today import TodayPane
from memtui.tui.viewer import MemoryViewer
from support.by_hand import write_committed


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> Path:
    return demo_root(tmp_path, monkeypatch, demo_template)


def queue_status(root: Path, pid: str) -> dict:
    return json.loads((root / ".memtui/queue" / f"{pid}.json").read_text())


def head(root: Path) -> git.Commit:
    return git.Repo(root).head.commit


async def start(app: MemtuiApp, pilot) -> None:
    await wait_for(pilot, lambda: settled(app), what="the app to settle")


async def test_approve_key_writes_file_commits_and_moves_on(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        assert app.review.selected.id == "p-0001"
        before = head(demo).hexsha
        await pilot.press("a")
        await wait_for(pilot, lambda: "p-0001" not in [p.id for p in app.review.proposals], what="p-0001 to go")
        assert "[observed] Asks for tables when comparing options (2026-08-20, chat)" in (demo / "MEMORY.md").read_text()
        commit = head(demo)
        assert commit.hexsha != before
        assert "Memtui-Proposal: p-0001" in commit.message and "Memtui-Approved-By: wes" in commit.message
        assert queue_status(demo, "p-0001")["status"] == "applied"
        assert app.review.selected.id == "p-0002"  # the cursor moved to the next pending proposal
        await wait_for(pilot, lambda: any("approved p-0001" in t for t in app.feed.texts()), what="feed line")


async def test_a_decided_proposal_leaves_the_list_at_once_and_an_older_sync_does_not_bring_it_back(
        demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Between a decision and the sync its write brings, the list must not offer the decided proposal: a second
    key press on it (`r` after `a`) would act on a proposal already applied. Nor may a sync that read the queue
    before the decision was written list it again."""
    from dataclasses import replace as copy_with

    from memtui.tui.messages import StateSynced

    monkeypatch.setattr("memtui.tui.syncing.SYNC_AFTER", 30.0)  # the sync the write brings: not within this test

    class Keeping(MemtuiApp):
        last: StateSynced | None = None

        def on_state_synced(self, message: StateSynced) -> None:
            self.last = message

    app = Keeping(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        assert app.review.selected.id == "p-0001"
        synced, before = app.synced, app.last
        in_flight = next(app.state_sync.seq)  # a sync that read the queue before the decision, and is shown after it
        await pilot.press("a")
        await wait_for(pilot, lambda: "p-0001" not in [p.id for p in app.review.proposals], what="p-0001 to go")
        assert app.synced == synced  # no sync came: the decision itself took it off
        assert app.review.selected.id == "p-0002"
        assert json.loads((demo / ".memtui/queue/p-0001.json").read_text())["status"] == "applied"
        app.post_message(copy_with(before, seq=in_flight))
        await wait_for(pilot, lambda: app.synced == synced + 1, what="the older sync to be shown")
        assert "p-0001" not in [p.id for p in app.review.proposals]
        assert app.review.selected.id == "p-0002"
        app.sync()  # a sync that reads the queue now: p-0001 is decided there too
        await wait_for(pilot, lambda: app.synced == synced + 2, what="a fresh sync")
        assert "p-0001" not in [p.id for p in app.review.proposals] and not app.deciding.settled


async def test_a_key_pressed_again_while_a_decision_is_under_way_does_not_act_on_that_proposal_again(
        demo: Path) -> None:
    """`a a` pressed fast (in tmux the second went out before the first approval came back): the second acted on
    p-0001 again and was told "p-0001 was not applied: already applied". While a decision is under way on the
    selected proposal, a decision key on it says so and does nothing; the list then moves on as ever."""
    import fcntl
    import os

    from memtui.tui.dialogs import RejectScreen

    class Noting(MemtuiApp):
        notices: list[str] = []

        def notify(self, message: str, **kwargs) -> None:
            self.notices.append(str(message))
            super().notify(message, **kwargs)

    app = Noting(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        fd = os.open(demo / ".memtui" / "lock", os.O_RDWR)
        fcntl.flock(fd, fcntl.LOCK_EX)  # another process holds the memory: the approval waits for it
        try:
            await pilot.press("a")
            await wait_for(pilot, lambda: "p-0001" in app.deciding.under_way, what="the approval to start")
            await pilot.press("a", "r")
            await pilot.pause(0.2)
            assert app.review.selected.id == "p-0001" and not isinstance(app.screen, RejectScreen)
            assert app.notices.count("p-0001 is being decided; the list moves on once it is") == 2, app.notices
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        await wait_for(pilot, lambda: "p-0001" not in [p.id for p in app.review.proposals], what="p-0001 to go")
        assert queue_status(demo, "p-0001")["status"] == "applied"
        assert queue_status(demo, "p-0002")["status"] == "pending"
        assert app.review.selected.id == "p-0002" and not app.deciding.under_way
        assert not [n for n in app.notices if "not applied" in n]
        await pilot.press("a")  # and the next press decides the next one, as it did
        await wait_for(pilot, lambda: queue_status(demo, "p-0002")["status"] == "applied", what="p-0002 applied")


async def test_a_decision_a_chat_card_has_under_way_is_not_started_again_from_the_review_keys(demo: Path) -> None:
    """A chat card claims its proposal through `claim_decision` (as the review keys do): while it is claimed, `a`
    in review says it is being decided and does nothing; once released, `a` decides it."""
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        assert app.review.selected.id == "p-0001"
        assert app.claim_decision("p-0001") and not app.claim_decision("p-0001")
        await pilot.press("a")
        await pilot.pause(0.3)
        assert queue_status(demo, "p-0001")["status"] == "pending"
        app.release_decision("p-0001")
        await pilot.press("a")
        await wait_for(pilot, lambda: queue_status(demo, "p-0001")["status"] == "applied", what="p-0001 applied")
        # the queue file says applied before the write's answer reaches the app, which then lets the id go
        await wait_for(pilot, lambda: not app.deciding.under_way, what="the decision to end")


async def test_reject_key_asks_for_a_reason_and_keeps_the_file(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        app.review.select("p-0004")
        text_before = (demo / "projects/atlas.md").read_text()
        await pilot.press("r")
        await pilot.pause()
        await pilot.press("enter")  # no reason yet: refused inline, dialog stays
        await pilot.pause()
        assert "needs a reason" in str(app.screen.query_one("#reject-error").render())
        await pilot.press(*"not what happened")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "p-0004" not in [p.id for p in app.review.proposals], what="p-0004 to go")
        saved = queue_status(demo, "p-0004")
        assert saved["status"] == "rejected" and saved["reason"] == "not what happened"
        assert (demo / "projects/atlas.md").read_text() == text_before
        assert "p-0004" not in head(demo).message
        audit = [json.loads(x) for x in (demo / "memory-log.jsonl").read_text().splitlines()]
        assert audit[-1]["status"] == "rejected" and audit[-1]["proposal"] == "p-0004"
        assert app.review.selected.id == "p-0005"
        await wait_for(pilot, lambda: any("rejected p-0004" in t for t in app.feed.texts()), what="feed line")


async def test_revise_key_shows_validation_errors_inline_then_applies(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press("e")
        await pilot.pause()
        entry = app.screen.query_one("#entry")
        entry.value = "[observed] Asks for tables " + "and more tables " * 15
        await pilot.press("enter")
        await wait_for(pilot, lambda: "entry-max" in str(app.screen.query_one("#revise-error").render()),
                       what="the inline validation error")
        assert queue_status(demo, "p-0001")["status"] == "pending"
        entry.value = "[observed] Asks for side-by-side tables when comparing options"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "p-0001" not in [p.id for p in app.review.proposals], what="p-0001 to go")
        text = (demo / "MEMORY.md").read_text()
        assert "[observed] Asks for side-by-side tables when comparing options" in text
        assert "Asks for tables when comparing" not in text
        assert "Memtui-Proposal: p-0001" in head(demo).message
        assert queue_status(demo, "p-0001")["status"] == "applied"


async def test_revise_errors_show_provenance_tags_literally(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#entry").value = "[stated] Uses uv, never pip, for Python projects"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "already says this" in str(app.screen.query_one("#revise-error").render()),
                       what="the duplicate refusal")
        assert "[stated] Uses uv" in str(app.screen.query_one("#revise-error").render())


async def test_approve_all_confirms_first(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press("A")
        await pilot.pause()
        await pilot.press("n")
        await pilot.pause(0.2)
        assert queue_status(demo, "p-0001")["status"] == "pending"
        await pilot.press("A")
        await pilot.pause()
        await pilot.press("y")
        await wait_for(pilot, lambda: all(queue_status(demo, f"p-000{i}")["status"] == "applied"
                                          for i in (1, 2, 3, 4)), what="every pending proposal applied")
        assert queue_status(demo, "p-0005")["status"] == "conflict"  # a conflict is never approved in bulk


async def test_file_written_by_another_process_shows_in_viewer_tree_and_feed(demo: Path) -> None:
    app = MemtuiApp(demo)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await wait_for(pilot, lambda: app.watcher is not None, what="the watcher")
        viewer = app.query_one(MemoryViewer)
        n = len(viewer.state.lines)
        line = "- [observed] Appended by another process (2026-08-20, test)"
        subprocess.run([sys.executable, "-c", f"open({str(demo / 'MEMORY.md')!r}, 'a').write({line + chr(10)!r})"],
                       check=True)
        await wait_for(pilot, lambda: viewer.state.added == {n}, what="the viewer to mark the new line")
        row = viewer._row_of(n)  # the rows are fewer than the lines: the format comment is folded to one
        assert viewer.row_text(row).startswith("+●") and "Appended by another process" in viewer.row_text(row)
        await wait_for(pilot, lambda: any("MEMORY.md changed on disk" in t for t in app.feed.texts()),
                       what="the feed to log the external change")
        assert "MEMORY.md" in app.tree.changed and "MEMORY.md" in app.tree.external
        assert any(p.external and p.file == "MEMORY.md" for p in app.review.proposals)


async def test_a_log_appended_to_again_and_again_is_one_feed_line(demo: Path) -> None:
    """An agent's hook appends to a log every few seconds: the feed says once that it changed on disk, not once
    per append (the review panel shows its diff as it grows)."""
    app = MemtuiApp(demo)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await wait_for(pilot, lambda: app.watcher is not None, what="the watcher")
        log = demo / "log" / "2026-08-21.md"
        told = lambda: [t for t in app.feed.texts() if "log/2026-08-21.md changed on disk" in t]  # noqa: E731
        for k in range(3):
            synced = app.synced
            with log.open("a") as f:
                f.write(f"- 14:0{k} [observed] step {k} (2026-08-21, ci)\n")
            await wait_for(pilot, lambda: app.synced > synced and told(), what="the sync after the append")
        assert len(told()) == 1, app.feed.texts()


async def test_proposal_written_by_another_process_appears_in_the_panel(demo: Path) -> None:
    app = MemtuiApp(demo)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await wait_for(pilot, lambda: app.watcher is not None, what="the watcher")
        proc = subprocess.run(
            [sys.executable, "-m", "memtui", "update", "--root", str(demo), "--by", "agent-x", "Decisions", "add",
             "[inferred] Feature flags gate every billing change", "--source", "session-20"],
            capture_output=True, text=True)
        assert proc.returncode == 4, proc.stdout + proc.stderr  # queued for review
        await wait_for(pilot, lambda: any("Feature flags" in (p.entry or "") for p in app.review.proposals),
                       what="the new proposal in the panel")
        assert app.tree.pending.get("MEMORY.md", 0) >= 5


def test_the_watcher_treats_a_new_queue_folder_as_a_queue_change(tmp_path: Path) -> None:
    """The first proposal creates .memtui/queue/; its file can land before watchdog watches the new folder
    (tests/test_serve.py saw the proposal never appear), so the folder's own creation must trigger a queue sync."""
    from memtui.tui.watch import classify

    assert classify(tmp_path, str(tmp_path / ".memtui" / "queue")) == ("queue", ".memtui/queue")
    assert classify(tmp_path, str(tmp_path / ".memtui" / "queue" / "p-0001.json"))[0] == "queue"
    assert classify(tmp_path, str(tmp_path / ".memtui" / "lock")) is None


async def test_viewer_marks_provenance_struck_history_untagged_and_caps(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    app.diff_wrap = False  # one row per line: this test reads the unwrapped rows (W wraps them; on by default)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        viewer = app.query_one(MemoryViewer)
        rows = [viewer.row_text(i) for i in range(len(viewer.state.lines))]
        assert any(r.startswith(" ◆") and "[stated] Prefers short answers" in r for r in rows)
        assert any(r.startswith(" ▲") and "[inferred] Reads diffs" in r for r in rows)
        assert any(r.startswith(" ⚑") and "Orion dashboard" in r and r.endswith("untagged") for r in rows)
        struck = next(r for r in rows if "Deploys go through Jenkins" in r)
        assert "~~" not in struck and struck.endswith("superseded 2026-06-30")
        assert any("## Facts  4/3  ⚠ over cap by 1" in r for r in rows)
        assert any("## Preferences  3/30" in r for r in rows)
        # The struck text carries strikethrough; the current entry does not.
        i = rows.index(struck)
        assert any(seg.style and seg.style.strike for seg in viewer.render_line(i - viewer.scroll_offset.y)
                   if "Jenkins" in seg.text)
        line = viewer._line_of(i)  # raw shows every line: the row is the line (the format comment unfolded)
        await pilot.press("v")
        assert viewer.raw
        raw = viewer.row_text(line)
        assert "~~[observed] Deploys go through Jenkins" in raw and raw.lstrip().startswith(str(line + 1))


async def test_live_diff_shows_removed_lines_as_ghosts_until_escape(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        viewer = app.query_one(MemoryViewer)
        text = (demo / "MEMORY.md").read_text()
        (demo / "MEMORY.md").write_text(text.replace("- Orion dashboard is paused until Q4\n",
                                                     "- [stated] Orion dashboard restarts in Q4 (2026-08-20)\n"))
        app.post_message(FilesChanged(frozenset({"MEMORY.md"})))
        await wait_for(pilot, lambda: viewer.state.ghosts, what="ghost lines")
        rows = [viewer.row_text(r) for r in range(viewer.virtual_size.height)]
        ghost = next(k for k, r in enumerate(rows) if "Orion dashboard is paused" in r)
        assert rows[ghost].startswith("-") and "Orion dashboard restarts" in rows[ghost + 1]
        assert rows[ghost + 1].startswith("+")
        viewer.focus()
        await pilot.press("escape")
        rows = [viewer.row_text(r) for r in range(viewer.virtual_size.height)]
        assert not any("Orion dashboard is paused" in r for r in rows)
        assert not any(r.startswith("+") for r in rows)


async def test_big_log_opens_on_the_light_path_and_scrolls_to_its_end(tmp_path: Path, demo: Path) -> None:
    lines = [f"- {i // 60 % 24:02d}:{i % 60:02d} [observed] event {i} " + "x" * 40 for i in range(40_000)]
    (demo / "log/2026-01-01.md").write_text("# 2026-01-01\n\n" + "\n".join(lines) + "\n")
    app = MemtuiApp(demo, watch=False)
    app.diff_wrap = False  # one row per line: this test reads the unwrapped rows (W wraps them; on by default)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        app.open_file("log/2026-01-01.md")
        await wait_for(pilot, lambda: app.viewer_for("log/2026-01-01.md") is not None
                       and app.viewer_for("log/2026-01-01.md").state is not None, what="the big log")
        viewer = app.viewer_for("log/2026-01-01.md")
        assert viewer.state.entries is None  # no markdown parse of a 2 MB file
        assert viewer.virtual_size.height == 40_002
        viewer.scroll_end(animate=False)
        await wait_for(pilot, lambda: viewer.scroll_offset.y > 39_000, what="the end of the log")
        bottom = viewer.render_line(viewer.scrollable_content_region.height - 1).text
        assert "event 39999" in bottom and "●" in bottom


async def test_tree_loads_folders_lazily(demo: Path) -> None:
    for d in range(20):
        folder = demo / "topics" / f"t{d:02d}"
        folder.mkdir(parents=True)
        for f in range(50):
            (folder / f"n{f}.md").write_text("- [stated] x\n")
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        topics = next(c for c in app.tree.root.children if c.data.path.name == "topics")
        assert not topics.is_expanded and not topics.children  # nothing under topics/ was read
        names = [c.data.path.name for c in app.tree.root.children]
        assert "MEMORY.md" in names and ".memtui" not in names and ".git" not in names


async def test_today_key_opens_the_today_plugin_pane(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press("t")
        await wait_for(pilot, lambda: "today" in app.panes, what="the Today pane")
        pane = app.panes["today"]
        assert isinstance(pane, TodayPane)
        assert app.main.active == "pane-today"
        await pilot.press("t")  # a second press goes back to the same tab, not a second one
        await pilot.pause()
        assert len(app.main.query("#pane-today")) == 1


async def test_open_panes_receive_memory_changed(demo: Path) -> None:
    from textual.widgets import Static

    class Probe(Static):
        def __init__(self) -> None:
            super().__init__("probe")
            self.seen: list[frozenset[str]] = []

        def on_memory_changed(self, message: MemoryChanged) -> None:
            self.seen.append(message.paths)

    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        probe = Probe()
        await app.mount(probe)
        app.panes["probe"] = probe
        app.post_message(FilesChanged(frozenset({"people/alex.md"})))
        await wait_for(pilot, lambda: probe.seen, what="the pane to hear of the change")
        assert probe.seen == [frozenset({"people/alex.md"})]


async def test_missing_plugin_says_not_available(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await start(app, pilot)
        app.action_open_pane("no_such_pane_kind")
        await pilot.pause()
        toasts = [str(t.render()) for t in app.screen.query("Toast")]
        assert any("not available yet" in t for t in toasts)
        assert "no_such_pane_kind" not in app.panes


async def test_keys_rebind_from_config_and_help_lists_every_binding(demo: Path) -> None:
    config = demo / ".memtui/config.toml"
    write_committed(demo, ".memtui/config.toml", config.read_text() + '\n[keys]\napprove = "space"\n')
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press("a")  # no longer approve
        await pilot.pause(0.2)
        assert queue_status(demo, "p-0001")["status"] == "pending"
        await pilot.press("space")
        await wait_for(pilot, lambda: queue_status(demo, "p-0001")["status"] == "applied", what="space approves")
        await pilot.press("question_mark")
        await pilot.pause()
        rows = app.screen.rows
        ids = {r[2] for r in rows}
        assert {b.id for b in app.BINDINGS} <= ids
        # Listed under the pane it acts on (the review panel), with its rebound key.
        assert ("review", "space", "approve") == rows[[r[2] for r in rows].index("approve")][:3]
        assert all(b.id and b.tooltip for b in app.all_bindings())


async def test_command_palette_switches_theme(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        assert app.theme == "memtui-dark"
        await pilot.press("ctrl+p")
        await palette_choose(pilot, "contrast")
        await wait_for(pilot, lambda: app.theme == "memtui-contrast", what="the theme to switch")


async def test_the_theme_colours_the_first_frame_and_each_switch(demo: Path) -> None:
    # The theme set at start is parsed once, with its own variables (memtui skips Textual's early re-parse);
    # a switch afterwards re-parses as Textual does.
    from textual.color import Color

    app = MemtuiApp(demo, theme="light", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        for name in ("memtui-light", "memtui-contrast", "memtui-dark"):
            if app.theme != name:
                app.theme = name
            want = Color.parse(app.get_theme(name).background)
            await wait_for(pilot, lambda: app.screen.styles.background == want, what=f"{name}'s background")


async def test_diff_tab_shows_file_against_last_commit(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        app.open_file("people/alex.md")  # the demo's external change: edited without a commit
        await pilot.pause()
        await pilot.press("d")
        from memtui.tui.diff import DiffView

        await wait_for(pilot, lambda: any(d.diff for d in app.main.query(DiffView)), what="the diff tab")
        diff = next(d for d in app.main.query(DiffView) if d.diff)
        assert "+- [stated] Alex is on leave 1-12 September" in diff.diff
        assert "Alex is on leave" in diff.render_text().plain


def test_app_start_path_imports_neither_git_nor_the_sdk(demo: Path) -> None:
    code = (
        "import sys; from memtui.tui.app import MemtuiApp; "
        f"app = MemtuiApp({str(demo)!r}, watch=False); "
        "print(sorted(m for m in ('git', 'anthropic', 'watchdog', 'inotify_simple') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


async def test_letters_typed_into_a_text_area_never_decide_a_proposal(demo: Path) -> None:
    # The review keys stand aside for any text box. TextArea is not imported at start (the guard asks by class
    # name), so a text area made later, and one made from it, must still have its letters.
    from textual.widgets import TextArea

    class Notes(TextArea):
        pass

    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        for box in (TextArea(id="plain-box"), Notes(id="made-box")):
            await app.base.mount(box)
            box.focus()
            await pilot.pause()
            await pilot.press("a", "r", "A")
            await pilot.pause()
            assert box.text == "arA"
            assert queue_status(demo, "p-0001")["status"] == "pending"
            await box.remove()
