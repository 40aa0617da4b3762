"""Pilot tests for focus: every way into the Chat and Search tabs focuses its input, and the review keys never act
on a key the person meant for a text box (issue 17: "are you there" approved a proposal and opened a dialog)."""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest
from textual.widgets import Input

from app_support import SIZE, click_tab, demo_root, demo_template, palette_choose, settled, wait_for  # noqa: F401 (fixture)
from memtui.tui.app import MemtuiApp, tab_id

INPUTS = {"chat": "chat-input", "search": "search-input"}
KEYS = {"chat": "c", "search": "slash"}
PALETTE = {"chat": "Chat with the agent", "search": "Search memory"}


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> Path:
    return demo_root(tmp_path, monkeypatch, demo_template)


def statuses(root: Path) -> dict[str, str]:
    return {f.stem: json.loads(f.read_text())["status"] for f in sorted((root / ".memtui/queue").glob("p-*.json"))}


def approving(app: MemtuiApp) -> list[str]:
    """The feed's lines that name an approval the keys started."""
    return [a.text for a in app.feed.records if a.text.startswith("approving")]


async def start(app: MemtuiApp, pilot) -> None:
    await wait_for(pilot, lambda: settled(app), what="the app to settle")


async def focused_input(app: MemtuiApp, pilot, kind: str) -> Input:
    await wait_for(pilot, lambda: isinstance(app.focused, Input) and app.focused.id == INPUTS[kind],
                   what=f"the {kind} input to have focus (focus is on {app.focused!r})")
    return app.focused  # type: ignore[return-value]


async def typing_lands_in(app: MemtuiApp, pilot, demo: Path, kind: str) -> None:
    """Type a sentence full of review keys: it all goes to the tab's input, and nothing is decided or asked."""
    box = await focused_input(app, pilot, kind)
    before, queued = git.Repo(demo).head.commit.hexsha, statuses(demo)
    await pilot.press(*"are you there")
    await pilot.pause(0.2)
    assert box.value == "are you there"
    assert len(app.screen_stack) == 1, f"a dialog opened: {app.screen!r}"
    assert git.Repo(demo).head.commit.hexsha == before
    assert statuses(demo) == queued and queued["p-0001"] == "pending"
    assert not approving(app)
    assert app.main.active == f"pane-{kind}"


async def away_to_the_file_tab(app: MemtuiApp, pilot) -> None:
    await click_tab(pilot, app, tab_id("file", "MEMORY.md"))
    await wait_for(pilot, lambda: app.main.active.startswith("file-"), what="the MEMORY.md tab")


@pytest.mark.parametrize("kind", ["chat", "search"])
async def test_its_key_focuses_the_input(demo: Path, kind: str) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press(KEYS[kind])
        await typing_lands_in(app, pilot, demo, kind)


@pytest.mark.parametrize("kind", ["chat", "search"])
async def test_its_key_again_after_tab_moved_focus_away(demo: Path, kind: str) -> None:
    """The report: c, tab (focus to the review list), c, "are you there" approved p-0001 and opened a dialog."""
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press(KEYS[kind])
        await focused_input(app, pilot, kind)
        await pilot.press("tab")
        await pilot.pause()
        assert not isinstance(app.focused, Input)
        await pilot.press(KEYS[kind])
        await typing_lands_in(app, pilot, demo, kind)


@pytest.mark.parametrize("kind", ["chat", "search"])
async def test_clicking_its_tab_focuses_the_input(demo: Path, kind: str) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press(KEYS[kind])
        await focused_input(app, pilot, kind)
        await away_to_the_file_tab(app, pilot)
        assert not isinstance(app.focused, Input)
        await click_tab(pilot, app, f"pane-{kind}")
        await typing_lands_in(app, pilot, demo, kind)


@pytest.mark.parametrize("opened", [False, True])
@pytest.mark.parametrize("kind", ["chat", "search"])
async def test_the_palette_focuses_the_input(demo: Path, kind: str, opened: bool) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        if opened:  # the tab is open already, behind the file tab
            await pilot.press(KEYS[kind])
            await focused_input(app, pilot, kind)
            await away_to_the_file_tab(app, pilot)
        await pilot.press("ctrl+p")
        await palette_choose(pilot, PALETTE[kind])
        await wait_for(pilot, lambda: len(app.screen_stack) == 1, what="the palette to close")
        await typing_lands_in(app, pilot, demo, kind)


@pytest.mark.parametrize("kind", ["chat", "search"])
async def test_ctrl_pgup_pgdn_switch_tabs_from_the_input_and_back_into_it(demo: Path, kind: str) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press(KEYS[kind])
        await focused_input(app, pilot, kind)
        await pilot.press("ctrl+pageup")  # from inside the input: the key is not text
        await wait_for(pilot, lambda: app.main.active.startswith("file-"), what="the MEMORY.md tab")
        await pilot.pause()
        assert not isinstance(app.focused, Input)
        await pilot.press("ctrl+pagedown")
        await typing_lands_in(app, pilot, demo, kind)


@pytest.mark.parametrize("kind", ["chat", "search"])
async def test_the_tab_bar_arrows_focus_the_input(demo: Path, kind: str) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press(KEYS[kind])
        await focused_input(app, pilot, kind)
        tabs = app.main.strip
        tabs.focus()
        await pilot.press("left")
        await wait_for(pilot, lambda: app.main.active.startswith("file-"), what="the MEMORY.md tab")
        await pilot.pause()
        assert app.focused is tabs
        await pilot.press("right")
        await typing_lands_in(app, pilot, demo, kind)


async def test_switching_between_chat_and_search_focuses_each_input(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press("c")
        await focused_input(app, pilot, "chat")
        await pilot.press("ctrl+pageup")  # to MEMORY.md
        await pilot.press("slash")
        await focused_input(app, pilot, "search")
        await pilot.press("ctrl+pageup")  # search → chat
        await typing_lands_in(app, pilot, demo, "chat")


@pytest.mark.parametrize("kind", ["chat", "search", "today"])
async def test_review_keys_do_nothing_inside_a_plugin_tab(demo: Path, kind: str) -> None:
    """Focus on the chat log, the search results or Today's tree: a, r, e, A belong to what that tab shows."""
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press({"chat": "c", "search": "slash", "today": "t"}[kind])
        await wait_for(pilot, lambda: kind in app.panes, what=f"the {kind} pane")
        inner = {"chat": "#chat-log", "search": "#search-results", "today": "#today-tree"}[kind]
        await wait_for(pilot, lambda: app.panes[kind].query(inner), what=f"{inner}")
        app.panes[kind].query_one(inner).focus()
        await pilot.pause()
        before = git.Repo(demo).head.commit.hexsha
        for key in ("a", "r", "e", "A"):
            await pilot.press(key)
            await pilot.pause(0.1)
            assert len(app.screen_stack) == 1, f"{key} opened {app.screen!r}"
        assert git.Repo(demo).head.commit.hexsha == before and statuses(demo)["p-0001"] == "pending"


async def test_review_keys_act_on_the_review_list_in_a_chat_tab_and_name_what_they_approve(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press("c")
        await focused_input(app, pilot, "chat")
        app.review.option_list.focus()  # the person moved to the review panel: its keys are theirs again
        await pilot.pause()
        p = app.review.selected
        assert p is not None and p.id == "p-0001" and p.entry
        await pilot.press("a")
        await wait_for(pilot, lambda: statuses(demo)["p-0001"] == "applied", what="p-0001 applied")
        named = approving(app)
        assert named == [" ".join(f"approving p-0001: {p.action} {p.file} § {p.section}: {p.entry}".split())]


async def test_approve_all_names_every_proposal_it_approves(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        ids = [p.id for p in app.review.proposals if p.status == "pending" and not p.external]
        assert len(ids) > 1
        await pilot.press("A")
        await pilot.pause()
        await pilot.press("y")
        await wait_for(pilot, lambda: all(statuses(demo)[i] != "pending" for i in ids), timeout=20,
                       what="every proposal decided")
        named = [t.split(":")[0] for t in approving(app)]
        assert named == [f"approving {i}" for i in ids]


async def test_the_palette_from_inside_the_chat_input_goes_to_search_and_stays(demo: Path) -> None:
    """Textual hands a hidden input's focus to a sibling in its hidden pane, which would pull Chat back up."""
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press("c")
        await focused_input(app, pilot, "chat")
        await pilot.press("ctrl+p")
        await palette_choose(pilot, PALETTE["search"])
        await wait_for(pilot, lambda: len(app.screen_stack) == 1, what="the palette to close")
        await typing_lands_in(app, pilot, demo, "search")
        await pilot.press("ctrl+pageup")  # back to Chat, whose input had focus when it was left
        await typing_lands_in(app, pilot, demo, "chat")


async def test_ctrl_pgup_over_a_dialog_leaves_the_tabs_alone(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press("c")
        await focused_input(app, pilot, "chat")
        app.review.option_list.focus()
        await pilot.pause()
        await pilot.press("r")
        await wait_for(pilot, lambda: len(app.screen_stack) == 2, what="the reject dialog")
        await pilot.press("ctrl+pageup", "ctrl+pagedown", "ctrl+pageup")
        await pilot.pause()
        assert app.main.active == "pane-chat" and len(app.screen_stack) == 2
        await pilot.press("escape")
        await wait_for(pilot, lambda: len(app.screen_stack) == 1, what="the dialog to close")
        assert statuses(demo)["p-0001"] == "pending"
