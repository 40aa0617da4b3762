"""The review experience in the app (issue 21): keys that mean one thing, word diffs in the panel, side by side."""

from __future__ import annotations

from pathlib import Path

import pytest

from app_support import SIZE, demo_root, demo_template, settled, wait_for  # noqa: F401 (fixture)
from memtui.tui.app import MemtuiApp
from memtui.tui.diff import DiffView
from memtui.tui.viewer import MemoryViewer
from support.by_hand import write_committed

PERSON = "ana"


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> Path:
    return demo_root(tmp_path, monkeypatch, demo_template)


async def started(pilot) -> MemoryViewer:
    await wait_for(pilot, lambda: settled(pilot.app), what="the app to settle")
    return pilot.app.query_one(MemoryViewer)


def footer(app) -> dict[str, tuple[str, str]]:
    """key → (action, description) of what the key does now (what the footer shows for it). An action's
    arguments are left out: `f` as cycle_filter(True) before the cursor shows is the same filter."""
    return {key: (b.binding.action.split("(")[0], b.binding.description)
            for key, b in app.screen.active_bindings.items() if b.enabled}


async def test_no_key_changes_meaning_without_the_footer_saying_so(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        viewer = await started(pilot)
        viewer.focus()
        await pilot.pause()
        reading = footer(app)
        await pilot.press("j")
        await wait_for(pilot, lambda: viewer.cursor is not None, what="the cursor")
        await pilot.pause()
        cursor = footer(app)
        for key in reading.keys() & cursor.keys():
            if reading[key][0] != cursor[key][0]:
                assert reading[key][1] != cursor[key][1], f"{key} changes meaning silently"
        assert reading["e"][0] == "revise" and cursor["e"] == ("revise_entry", "Revise entry")
        assert reading["d"] == cursor["d"] == ("diff_commit", "Diff")
        assert cursor["x"][0] == "remove_entry" and "x" not in reading
        # d with the cursor showing is the diff, and removes nothing.
        before = (demo / "MEMORY.md").read_text()
        await pilot.press("d")
        await wait_for(pilot, lambda: app.main.active.startswith("diff-"), what="the diff tab")
        assert (demo / "MEMORY.md").read_text() == before


async def test_help_names_keys_as_the_keys(demo: Path) -> None:
    from memtui.tui.help import key_names

    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        shown = {key_names(keys) for _, keys, _, _ in app.key_rows()}
        assert "]" in shown and "[" in shown and "?" in shown
        assert not any("square_bracket" in k or "question_mark" in k for k in shown)


async def test_the_help_key_leads_a_footer_too_long_for_the_screen(demo: Path) -> None:
    """With the entry cursor's keys the footer is wider than 120 columns and is cut at its end; `? Keys` leads it,
    whole, so the way to every key is always on screen. Help lists the key once."""
    from memtui.tui.keys import KeyFooter

    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        footer = app.screen.query_one(KeyFooter)
        app.query_one(MemoryViewer).focus()
        await pilot.press("j")  # the entry cursor shows, and its keys join the footer
        await wait_for(pilot, lambda: any(k.key == "x" for k in footer.keys), what="the cursor's keys in the footer")
        keys = footer.keys
        assert len(footer.visible()) < len(keys)  # too long: something is cut
        assert keys[0].key == "question_mark" and keys[0] in footer.visible() and keys[0].end <= 120
        assert footer.key_at(keys[0].x) == keys[0]
        assert [row[2] for row in app.key_rows()].count("help") == 1
        app.review.query_one(DiffView).focus()  # the diff's own key (o) makes the footer too long as well
        await wait_for(pilot, lambda: any(k.key == "o" for k in footer.keys), what="the diff's keys in the footer")
        keys = footer.keys
        assert keys[0].key == "question_mark" and keys[0] in footer.visible() and keys[0].end <= 120


async def test_the_footer_is_rebuilt_only_when_its_keys_change(demo: Path) -> None:
    """Moving through the review list or back from help leaves the same keys: the footer is not drawn again (Textual's
    rebuilt its key widgets and laid out the whole screen on every such key). A change of keys (the entry cursor's)
    draws it again, and lays nothing out."""
    from memtui.tui.keys import KeyFooter

    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        app.review.select("p-0001")
        app.review.option_list.focus()
        await pilot.pause()
        footer = app.screen.query_one(KeyFooter)
        await wait_for(pilot, lambda: any(k.key == "a" for k in footer.keys), what="review keys")
        before, drawn = list(footer.keys), footer.drawn
        await pilot.press("right_square_bracket", "right_square_bracket", "left_square_bracket")
        await pilot.pause()
        assert footer.drawn == drawn  # the same keys: not drawn again
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: app.screen is not app.base, what="help")
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: app.screen is app.base, what="help closed")
        await pilot.pause()
        assert app.review.selected is not None and app.review.selected.id == "p-0002"
        assert footer.keys == before
        assert len(footer.children) == 0  # one widget, whatever the keys
        app.query_one(MemoryViewer).focus()
        await pilot.press("j")  # the entry cursor's keys
        await wait_for(pilot, lambda: any(k.key == "x" for k in footer.keys), what="the cursor's keys")
        assert footer.keys != before and len(footer.children) == 0


async def test_side_by_side_toggles_every_diff_and_new_ones_follow(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        app.review.select("p-0002")
        app.review.option_list.focus()
        await pilot.press("S")
        panel = app.review.query_one(DiffView)
        assert panel.split and "│" in panel.render_text().plain
        app.open_file("people/alex.md")
        await pilot.pause()
        await pilot.press("d")
        await wait_for(pilot, lambda: any(d.diff for d in app.main.query(DiffView)), what="the diff tab")
        tab = next(d for d in app.main.query(DiffView) if d.diff)
        assert tab.split
        await pilot.press("S")
        assert not panel.split and not tab.split and "│" not in panel.render_text().plain


def audit(root: Path) -> list[dict]:
    import json

    return [json.loads(x) for x in (root / "memory-log.jsonl").read_text().splitlines()]


async def test_a_person_approves_a_held_lesson_with_a_and_the_feed_says_they_confirmed_it(demo: Path) -> None:
    from memtui.core.writing.memory import Memory

    held = Memory(demo).update("User", "add", "[inferred] Deploys on Fridays tend to fail", actor="agent-claude",
                               session="chat-1")
    assert held.status == "queued" and held.id
    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: app.review.select(held.id), what="the held lesson listed")
        app.review.option_list.focus()
        await pilot.pause()
        detail = str(app.review.query_one("#review-detail").render())
        assert "1 of 3 signals across 1 of 2 sessions" in detail
        assert "a approves it as your confirmation" in detail
        await pilot.press("a")
        await wait_for(pilot, lambda: any(r.get("proposal") == held.id and r.get("status") == "applied"
                                          for r in audit(demo)), what="the approval")
        record = next(r for r in audit(demo) if r.get("proposal") == held.id and r.get("status") == "applied")
        assert record["confirmed"] == {"by": PERSON, "signals": "1 of 3 signals across 1 of 2 sessions"}
        assert "Deploys on Fridays tend to fail" in (demo / "MEMORY.md").read_text()
        await wait_for(pilot, lambda: any(f"approved {held.id} and confirmed the lesson" in t
                                          for t in app.feed.texts()), what="the feed")


async def test_a_conflict_is_said_to_the_person_with_the_key_that_resolves_it(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        conflicted = next(p for p in app.review.proposals if p.status == "conflict")
        app.review.select(conflicted.id)
        await pilot.pause()
        detail = str(app.review.query_one("#review-detail").render())
        assert "e to revise it against the current text" in detail
        assert "send the exact text" not in detail
        assert any("e to revise it against the current text" in t for t in app.feed.texts())


async def test_a_search_hit_opens_with_the_cursor_on_the_hit(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("slash")
        await pilot.pause()
        await pilot.press(*"on-call rotation")
        pane = app.panes["search"]
        # Results come as the query is typed: wait for the whole query's, not a prefix's.
        await wait_for(pilot, lambda: getattr(pane, "results", None)
                       and "on-call rotation" in pane.results[0].text.lower(), what="search results")
        hit = pane.results[0]
        assert hit.current and hit.path == "MEMORY.md"
        await pilot.press("enter")
        viewer = app.viewer_for("MEMORY.md")
        await wait_for(pilot, lambda: viewer.cursor is not None, what="the cursor")
        assert viewer.cursor == hit.line - 1
        assert "On-call rotation" in viewer.entry_cursor.entry_at(viewer.cursor).raw
        await pilot.press("j")  # and it walks on from the hit, not from the top
        assert viewer.cursor > hit.line - 1


async def test_the_chosen_theme_survives_a_restart_and_the_config_stays_valid(demo: Path) -> None:
    import git

    from memtui.core.grammar.config import load_config

    before = (demo / ".memtui" / "config.toml").read_text()
    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        assert app.theme == "memtui-dark"
        app.action_switch_theme("memtui-light")
        await wait_for(pilot, lambda: "memtui-light" in (demo / ".memtui" / "config.toml").read_text()
                       and "theme" in git.Repo(demo).head.commit.message, what="the config saved and committed")
    after = (demo / ".memtui" / "config.toml").read_text()
    config = load_config(after)
    assert config.error is None and config.theme == "memtui-light"
    # Only the theme line changed: the person's comments and every other setting stay.
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines()) if a != b]
    assert changed == [('theme = "memtui-dark"', 'theme = "memtui-light"')]
    commit = git.Repo(demo).head.commit
    assert commit.author.name == PERSON and list(commit.stats.files) == [".memtui/config.toml"]
    again = MemtuiApp(demo, watch=False, user=PERSON)
    async with again.run_test(size=SIZE) as pilot:
        await started(pilot)
        assert again.theme == "memtui-light"


async def test_a_broken_config_is_not_rewritten_by_a_theme_choice(demo: Path) -> None:
    path = demo / ".memtui" / "config.toml"
    broken = path.read_text().replace('[app]', '[app]\ncolour = "red"')
    write_committed(demo, ".memtui/config.toml", broken)  # a person's typo, committed
    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        app.action_switch_theme("memtui-light")
        await pilot.pause(1.5)
        assert app.theme == "memtui-light"  # used now, not saved
    assert path.read_text() == broken
    from memtui.core.writing.memory import Memory

    result = Memory(demo).set_theme("memtui-light", by=PERSON)
    assert result.status == "refused" and "colour" in result.message
    assert Memory(demo).set_theme("memtui-light", by="agent-claude").status == "refused"
    assert path.read_text() == broken


async def test_a_persons_revise_keeps_the_source_unless_they_write_another(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE) as pilot:
        viewer = await started(pilot)
        viewer.focus()
        await pilot.press("j")
        for _ in range(40):
            entry = viewer.entry_cursor.entry_at(viewer.cursor)
            if entry is not None and "Staging database" in entry.raw:
                break
            await pilot.press("j")
        assert entry is not None and entry.source == "psql"
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("ctrl+u", *"[observed] Staging database is Postgres 17", "enter")
        await wait_for(pilot, lambda: "Postgres 17 (2026-08-20, psql)" in (demo / "MEMORY.md").read_text(),
                       what="the revise, source kept")
        await wait_for(pilot, lambda: viewer.entry_cursor.entry_at(viewer.cursor) is not None
                       and "Postgres 17" in viewer.entry_cursor.entry_at(viewer.cursor).raw, what="the cursor on the new line")
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("ctrl+u", *"[observed] Staging database is Postgres 18 (2026-08-20, pg_dump)", "enter")
        await wait_for(pilot, lambda: "Postgres 18 (2026-08-20, pg_dump)" in (demo / "MEMORY.md").read_text(),
                       what="the revise, the person's source")


async def test_the_panel_shows_the_users_words_and_the_entrys_history(demo: Path) -> None:
    from memtui.core.writing.memory import Memory

    mem = Memory(demo)
    said = mem.update("User", "revise", "[stated] Works from Porto only, UTC+0/+1", "Works from Lisbon and Porto",
                      actor="agent-claude", user_words="I work from Porto only now, UTC+0/+1.")
    bare = mem.update("Facts", "add", "[stated] Staging has 4 replicas", actor="agent-claude")
    assert said.status == bare.status == "queued"
    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: app.review.select(said.id) and said.id in app.review.lineage,
                       what="the revise and its lineage")
        await pilot.pause()
        detail = str(app.review.query_one("#review-detail").render())
        assert "your words: “I work from Porto only now, UTC+0/+1.”" in detail
        assert "history of the entry it changes (1 earlier):" in detail
        assert "~~[observed] Works from Lisbon, UTC+0/+1 (2026-03-02, calendar)~~ superseded" in detail
        app.review.select(bare.id)
        await pilot.pause()
        detail = str(app.review.query_one("#review-detail").render())
        assert "[suggested]" in detail and "history" not in detail  # downgraded: no words, and the flag says so


async def test_help_kept_between_openings_opens_at_its_top_and_once(demo: Path) -> None:
    """The help screen is made once and kept: each opening starts at the top, closes with ? or escape, and
    "Show keys" from the palette over an open help does not stack a second one."""
    from textual.containers import VerticalScroll

    from memtui.tui.help import HelpScreen

    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=(120, 30)) as pilot:
        await started(pilot)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="help")
        first = app.screen
        scroll = first.query_one(VerticalScroll)
        await wait_for(pilot, lambda: scroll.max_scroll_y > 0, what="help taller than the screen")
        scroll.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        assert scroll.scroll_y > 0
        app.action_help()  # as the palette's "Show keys" would, over the help
        await pilot.pause()
        assert sum(isinstance(s, HelpScreen) for s in app.screen_stack) == 1
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.base, what="help closed")
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="help again")
        assert app.screen is first
        await pilot.pause()
        assert scroll.scroll_y == 0
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: app.screen is app.base, what="help closed by ?")


async def test_an_edit_in_the_editor_is_announced_only_once_it_is_selected(demo: Path) -> None:
    """After $EDITOR the edit waits in review. Its notice names `a` (approve): said while another proposal is still
    selected, `a` would approve that one. So it comes with the selection, after the sync that lists the edit,
    however late; a 5 s poll used to give up on a slow sync, leaving the edit unselected and unannounced."""
    import asyncio
    import hashlib

    from memtui.tui.messages import FilesChanged

    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await started(pilot)
        app.review.select("p-0001")
        viewer = app.query_one(MemoryViewer)
        viewer.focus()
        memory = demo / "MEMORY.md"
        memory.write_text(memory.read_text() + "- [stated] Edited in the editor (2026-08-20, vim)\n")
        pid = "x-" + hashlib.sha1(b"MEMORY.md").hexdigest()[:6]
        viewer.entry_cursor.focus_external_change(pid)  # as after the editor exits
        await asyncio.sleep(5.5)  # past the 5 s the old poll waited
        await pilot.pause()
        toasts = lambda: [str(t.render()) for t in app.screen.query("Toast")]  # noqa: E731
        assert not any("waits in review" in t for t in toasts())  # not yet listed: nothing said, nothing moved
        assert app.review.selected.id == "p-0001" and app.focused is viewer
        app.post_message(FilesChanged(frozenset({"MEMORY.md"})))  # the watcher's news of it, late
        await wait_for(pilot, lambda: app.review.selected is not None and app.review.selected.id == pid,
                       what="the edit selected")
        await wait_for(pilot, lambda: any(f"waits in review as {pid}" in t for t in toasts()), what="the notice")
        assert app.focused is app.review.option_list


async def test_a_key_in_the_one_line_footer_is_clicked_hovered_and_dimmed(demo: Path) -> None:
    """The footer is one widget drawing every key: a click on a key presses it, hovering one shows its tooltip, a key
    that does nothing now is dimmed and its click only rings the bell; the palette's key sits at the right edge."""
    from memtui.tui.keys import KeyFooter

    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        footer = app.screen.query_one(KeyFooter)
        await wait_for(pilot, lambda: any(k.key == "t" for k in footer.keys), what="the keys")
        palette = footer.keys[-1]
        assert palette.action == "command_palette" and palette.end == 120
        today = next(k for k in footer.keys if k.key == "t")
        await pilot.hover(KeyFooter, offset=(today.x + 1, 0))
        await wait_for(pilot, lambda: str(footer.tooltip) == today.tooltip != "", what="the key's tooltip")
        await pilot.click(KeyFooter, offset=(today.x + 1, 0))
        await wait_for(pilot, lambda: app.active_plugin() is not None, what="Today opened by its key's click")
        # Inside Today the review keys do nothing: dimmed, and a click on one approves nothing.
        await wait_for(pilot, lambda: next(k for k in footer.keys if k.key == "a").disabled, what="a dimmed")
        approve = next(k for k in footer.keys if k.key == "a")
        pending = [p.id for p in app.review.proposals]
        await pilot.click(KeyFooter, offset=(approve.x + 1, 0))
        await pilot.pause()
        assert [p.id for p in app.review.proposals] == pending


async def test_a_hovered_key_is_let_go_when_the_keys_change_under_the_pointer(demo: Path) -> None:
    """Highlight and tooltip belong to the key under the pointer: when the keys change beneath a pointer that has
    not moved (the entry cursor's keys arrive), the old key's highlight and tooltip go."""
    from memtui.tui.keys import KeyFooter

    app = MemtuiApp(demo, watch=False, user=PERSON)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        footer = app.screen.query_one(KeyFooter)
        await wait_for(pilot, lambda: any(k.key == "t" for k in footer.keys), what="the keys")
        today = next(k for k in footer.keys if k.key == "t")
        await pilot.hover(KeyFooter, offset=(today.x + 1, 0))
        await wait_for(pilot, lambda: str(footer.tooltip) == today.tooltip, what="the key's tooltip")
        app.query_one(MemoryViewer).focus()
        await pilot.press("j")  # the entry cursor's keys replace the reader's
        await wait_for(pilot, lambda: any(k.key == "x" for k in footer.keys), what="the cursor's keys")
        assert footer.tooltip is None
