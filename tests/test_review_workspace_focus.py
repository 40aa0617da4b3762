"""Issue 43, item 2 "Focus you can predict" and item 6's "the chat keeps its place after a card decision".

Pilot tests, keys pressed as a person presses them: Tab walks the screen in its order and shift+tab back, the focused
pane is marked in the theme's accent, escape leaves every text box (then `q` quits, not typed), letters typed into a
text box stay text, `?` lights the keys that work in the focused pane, and deciding a chat card leaves the chat
where it was scrolled."""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest
from textual.color import Color
from textual.widgets import Input

from app_support import SIZE, demo_root, demo_template, settled, wait_for  # noqa: F401 (fixture)
from memtui.tui.app import MemtuiApp

KEY_LETTERS = "qa r?Aet/c"  # every one of them a key somewhere, typed into a text box as text


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> Path:
    return demo_root(tmp_path, monkeypatch, demo_template)


def statuses(root: Path) -> dict[str, str]:
    return {f.stem: json.loads(f.read_text())["status"] for f in sorted((root / ".memtui/queue").glob("p-*.json"))}


def where(app: MemtuiApp) -> str:
    """The focused widget, named by the pane it is: tree, tabs, viewer, review-list, review-diff, feed."""
    w = app.focused
    if w is None:
        return "nothing"
    if w is app.tree:
        return "tree"
    if w is app.main.strip:
        return "tabs"
    return w.id or type(w).__name__


async def start(app: MemtuiApp, pilot) -> None:
    await wait_for(pilot, lambda: settled(app), what="the app to settle")


async def quits_on_q(app: MemtuiApp, pilot) -> None:
    """`q` is the app's quit, not a letter in a box."""
    await pilot.press("q")
    await wait_for(pilot, lambda: app.return_code is not None, what=f"q to quit (focus on {app.focused!r})")


async def test_tab_walks_the_screen_in_its_order_and_shift_tab_walks_back(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        assert where(app) == "viewer" or type(app.focused).__name__ == "MemoryViewer"
        app.tree.focus()
        await pilot.pause()
        order = ["tree"]
        for _ in range(6):
            await pilot.press("tab")
            await pilot.pause()
            order.append(where(app))
        # Left to right, top to bottom: the tree, the main area (its tab bar, then MEMORY.md), the review list, the
        # selected proposal's diff, the feed; and round to the tree again.
        assert order == ["tree", "tabs", "MemoryViewer", "review-list", "review-diff", "feed", "tree"]
        back = ["tree"]
        for _ in range(6):
            await pilot.press("shift+tab")
            await pilot.pause()
            back.append(where(app))
        assert back == list(reversed(order))


async def test_tab_in_a_search_tab_goes_input_results_then_review(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press("slash")
        await wait_for(pilot, lambda: where(app) == "search-input", what="the search input")
        order = []
        for _ in range(3):
            await pilot.press("tab")
            await pilot.pause()
            order.append(where(app))
        assert order == ["search-results", "review-list", "review-diff"]


@pytest.mark.parametrize("theme", ["memtui-dark", "memtui-contrast"])
async def test_the_focused_pane_is_marked_in_the_themes_accent(demo: Path, theme: str) -> None:
    """Each pane's edge is the accent while focus is in it, and only then; in the contrast theme too."""
    app = MemtuiApp(demo, theme=theme, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        assert app.theme == theme
        accent = Color.parse(app.get_css_variables()["accent"])  # as the stylesheet has it
        edges = {"tree": lambda: app.tree.styles.border_right[1],
                 "review-list": lambda: app.review.styles.border_left[1],
                 "review-diff": lambda: app.review.query_one("#review-diff").styles.border_top[1],
                 "feed": lambda: app.feed.styles.border_top[1]}
        for target in ("tree", "review-list", "review-diff", "feed"):
            widget = app.tree if target == "tree" else app.feed if target == "feed" else app.review.query_one(
                f"#{target}")
            widget.focus()
            await pilot.pause()
            for name, edge in edges.items():
                lit = name == target or (name == "review-list" and target == "review-diff")
                assert (edge() == accent) == lit, (target, name, edge(), accent)
        # The main area: its active tab's title in the accent while focus is in it.
        app.query_one("MemoryViewer").focus()
        await pilot.pause()
        strip = app.main.strip
        assert strip.get_component_rich_style("tab-strip--active").color.triplet == accent.rich_color.triplet
        app.tree.focus()
        await pilot.pause()
        assert strip.get_component_rich_style("tab-strip--active").color.triplet != accent.rich_color.triplet


async def test_escape_leaves_the_search_box_then_q_quits(demo: Path) -> None:
    """The report: `/`, `xyz`, escape, `q` searched for `xyzq`."""
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press("slash")
        await wait_for(pilot, lambda: where(app) == "search-input", what="the search input")
        box = app.focused
        await pilot.press(*"xyz", "escape")
        await pilot.pause()
        assert not isinstance(app.focused, Input) and where(app) == "search-results"
        await quits_on_q(app, pilot)
        assert box.value == "xyz"


async def test_escape_leaves_the_chat_input_then_q_and_question_mark_are_keys(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press("c")
        await wait_for(pilot, lambda: where(app) == "chat-input", what="the chat input")
        box = app.focused
        await pilot.press(*"hi", "escape")
        await pilot.pause()
        assert not isinstance(app.focused, Input), app.focused
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: app.screen is not app.base, what="? to open the help")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.base, what="the help to close")
        await quits_on_q(app, pilot)
        assert box.value == "hi"


@pytest.mark.parametrize("key, box_id", [("r", "reason"), ("e", "entry")])
async def test_escape_leaves_the_reject_and_revise_dialogs_then_q_quits(demo: Path, key: str, box_id: str) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        app.review.option_list.focus()
        await pilot.pause()
        await pilot.press(key)
        await wait_for(pilot, lambda: len(app.screen_stack) == 2 and where(app) == box_id, what=f"the {box_id} box")
        box = app.focused
        await pilot.press(*KEY_LETTERS)
        await pilot.pause(0.1)
        # The revise box opens with the entry selected: the letters replace it, as text.
        assert box.value.endswith(KEY_LETTERS) and len(app.screen_stack) == 2
        await pilot.press("escape")
        await wait_for(pilot, lambda: len(app.screen_stack) == 1, what="the dialog to close")
        assert statuses(demo)["p-0001"] == "pending"  # cancelled: nothing decided
        await quits_on_q(app, pilot)


@pytest.mark.parametrize("kind, key, box_id", [("search", "slash", "search-input"), ("chat", "c", "chat-input")])
async def test_letters_typed_into_a_box_are_text_not_keys(demo: Path, kind: str, key: str, box_id: str) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press(key)
        await wait_for(pilot, lambda: where(app) == box_id, what=f"the {kind} input")
        box = app.focused
        before, queued = git.Repo(demo).head.commit.hexsha, statuses(demo)
        await pilot.press(*KEY_LETTERS)
        await pilot.pause(0.2)
        assert box.value == KEY_LETTERS and app.focused is box
        assert app.return_code is None and len(app.screen_stack) == 1
        assert git.Repo(demo).head.commit.hexsha == before and statuses(demo) == queued
        assert app.main.active == f"pane-{kind}"


async def test_escape_from_search_results_goes_back_to_the_tab_before(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        memory_tab = app.main.active
        await pilot.press("slash")
        await wait_for(pilot, lambda: where(app) == "search-input", what="the search input")
        await pilot.press("escape")
        await wait_for(pilot, lambda: where(app) == "search-results", what="the results")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.main.active == memory_tab and where(app) == "MemoryViewer",
                       what=f"MEMORY.md's viewer again (focus on {app.focused!r}, tab {app.main.active})")


@pytest.mark.parametrize("kind, key", [("search", "slash"), ("chat", "c")])
async def test_ctrl_c_quits_from_inside_a_box(demo: Path, kind: str, key: str) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press(key)
        await wait_for(pilot, lambda: isinstance(app.focused, Input), what=f"the {kind} input")
        await pilot.press(*"abc", "ctrl+c")
        await wait_for(pilot, lambda: app.return_code is not None, what="ctrl+c to quit")


async def help_rows(app: MemtuiApp, pilot) -> dict[str, list[tuple[str, str, bool]]]:
    """Open `?`; its rows by pane as (binding id, keys, lit), as the help table holds them."""
    from memtui.tui.help import HelpScreen, KeyTable

    await pilot.press("question_mark")
    await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
    await pilot.pause()
    table = app.screen.query_one(KeyTable)
    out: dict[str, list[tuple[str, str, bool]]] = {}
    for n, (scope, keys, bid, _what) in enumerate(table.rows):
        out.setdefault(scope, []).append((bid, keys, n in table.lit))
    return out


async def close_help(app: MemtuiApp, pilot) -> None:
    await pilot.press("escape")
    await wait_for(pilot, lambda: app.screen is app.base, what="the help to close")


async def test_help_lists_every_pane_and_lights_the_focused_panes_keys(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        app.tree.focus()
        await pilot.pause()
        rows = await help_rows(app, pilot)
        assert list(rows)[:6] == ["tree", "viewer", "review", "Today", "search", "chat"]
        tree = {keys: lit for _, keys, lit in rows["tree"]}
        assert tree["enter"] and tree["space"] and all(tree.values()), tree  # the tree's own keys, all at work
        assert not any(lit for *_, lit in rows["viewer"])  # the viewer's keys do nothing from the tree
        assert not any(lit for *_, lit in rows["chat"])
        review = {bid: lit for bid, _, lit in rows["review"]}
        assert review["approve"] and review["reject"]  # the review keys act from the tree (no plugin tab shown)
        assert "memtui keys" in str(app.screen.query_one("KeyTable")._lines(100))  # drawn
        await close_help(app, pilot)

        app.query_one("MemoryViewer").focus()
        await pilot.press("j")  # the entry cursor shows: its keys work now
        await pilot.pause()
        rows = await help_rows(app, pilot)
        viewer = {bid: lit for bid, _, lit in rows["viewer"]}
        assert viewer["viewer.next_entry"] and viewer["viewer.acknowledge"]
        assert not any(lit for *_, lit in rows["tree"])
        # `e` in the viewer revises the entry under the cursor: the review's `e` is shadowed there, and dim.
        assert viewer["viewer.revise_entry"] and not {bid: lit for bid, _, lit in rows["review"]}["revise"]
        await close_help(app, pilot)

        await pilot.press("c")
        await wait_for(pilot, lambda: where(app) == "chat-input", what="the chat input")
        await pilot.press("escape")
        await pilot.pause()
        rows = await help_rows(app, pilot)
        assert not any(lit for *_, lit in rows["review"][:4])  # a, e, r, A belong to the chat here
        assert {bid: lit for bid, _, lit in rows["app"]}["quit"]
        await close_help(app, pilot)


async def test_help_rows_come_from_the_bindings(demo: Path) -> None:
    """Every binding of every pane is in `?` under its pane, with its rebound key: nothing kept by hand."""
    from memtui.tui.chat import ChatPane, ProposalCardView
    from memtui.tui.search import SearchPane
    from memtui.tui.today import TodayPane
    from memtui.tui.viewer import MemoryViewer

    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        rows = await help_rows(app, pilot)
        for scope, classes in (("viewer", [MemoryViewer]), ("Today", [TodayPane]), ("search", [SearchPane]),
                               ("chat", [ChatPane, ProposalCardView])):
            ids = {b.id for cls in classes for b in cls.BINDINGS if b.id and b.id != "help"}
            assert ids <= {bid for bid, *_ in rows[scope]}, (scope, ids)
        assert {bid for bid, *_ in rows["review"]} >= {"approve", "revise", "reject", "approve_all"}
        assert {bid for bid, *_ in rows["app"]} >= {"quit", "help", "back", "search", "chat", "today"}


SECTIONS = ("User", "Preferences", "Projects", "Decisions")


def chat_turn_with_cards() -> list:
    """One turn: a long answer, then four adds (one card each), then a closing line."""
    from support.anthropic_server import reply, tool_use

    long = "\n\n".join(f"Paragraph {n}: what I know about your projects, at some length." for n in range(12))
    adds = [tool_use("memory_update", {"section": s, "action": "add", "entry": f"[stated] note {n} for {s}"})
            for n, s in enumerate(SECTIONS)]
    return [reply(long, *adds), reply("Four notes proposed for your review.")]


async def test_the_chat_keeps_its_place_after_a_card_decision(mem, monkeypatch: pytest.MonkeyPatch) -> None:
    """The report: after a decision on a chat card the chat jumped to the top."""
    from support.anthropic_server import FakeAnthropic
    from memtui.tui.chat import ChatPane

    with FakeAnthropic(*chat_turn_with_cards()) as server:
        for key, value in server.env.items():
            monkeypatch.setenv(key, value)
        app = MemtuiApp(Path(mem.location), watch=False)
        async with app.run_test(size=(120, 35)) as pilot:
            await pilot.press("c")
            await wait_for(pilot, lambda: app.query(ChatPane) and where(app) == "chat-input", what="the chat")
            pane = app.query_one(ChatPane)
            await pilot.press(*"note these", "enter")
            await wait_for(pilot, lambda: len(pane.cards) == 4 and not pane.running, what="four cards")
            await wait_for(pilot, lambda: len(app.review.proposals) == 4, what="the four in review")
            log = pane.log_view
            await wait_for(pilot, lambda: log.max_scroll_y > 20, what="a chat taller than its pane")
            cards = pane.cards
            # Scrolled so the second card's end and the third's title show (ten rows down the log).
            log.scroll_to(y=cards[2].virtual_region.y - 10, animate=False, immediate=True)
            cards[1].focus(scroll_visible=False)
            await pilot.pause(0.1)
            place = log.scroll_y
            assert 0 < place < log.max_scroll_y
            await pilot.press("a")
            await wait_for(pilot, lambda: cards[1].status == "applied", what="the card approved")
            await wait_for(pilot, lambda: len(app.review.proposals) == 3, what="the sync")
            await pilot.pause(0.3)
            assert log.scroll_y == place, (log.scroll_y, place)
            # The keys go to the next open card whose title is on screen, and the chat stays where it is.
            assert app.focused is cards[2]
            await pilot.press("a")
            await wait_for(pilot, lambda: cards[2].status == "applied", what="the next card approved")
            await pilot.pause(0.3)
            assert log.scroll_y == place, (log.scroll_y, place)
            # No open card's title on screen now (the first is above, the fourth below): the keys go to the input,
            # never to a card the person cannot see; `a` is a letter there.
            assert app.focused is pane.query_one(Input)
            await pilot.press("a")
            await pilot.pause(0.3)
            assert [c.status for c in cards] == ["pending", "applied", "applied", "pending"]
            assert pane.query_one(Input).value == "a" and log.scroll_y == place

            log.scroll_to_widget(cards[3], animate=False, immediate=True, top=True)
            await pilot.pause(0.1)
            place = log.scroll_y
            cards[3].focus(scroll_visible=False)
            await pilot.press("r")
            await wait_for(pilot, lambda: len(app.screen_stack) == 2, what="the reject dialog")
            await pilot.press(*"not now", "enter")
            await wait_for(pilot, lambda: cards[3].status == "rejected", what="the card rejected")
            await pilot.pause(0.3)
            # At the log's end, which the shorter status line pulls up by its row; the card stays in view.
            assert log.scroll_y == min(place, log.max_scroll_y) > 0, (log.scroll_y, place, log.max_scroll_y)
            assert log.region.contains(cards[3].region.x, cards[3].region.y)


async def test_escape_from_today_goes_back_and_from_the_review_list_to_the_main_area(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        memory_tab = app.main.active
        await pilot.press("t")
        await wait_for(pilot, lambda: "today" in app.panes and app.focused is not None
                       and app.panes["today"] in app.focused.ancestors_with_self, what="focus in Today")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.main.active == memory_tab and where(app) == "MemoryViewer",
                       what=f"MEMORY.md again (focus on {app.focused!r})")
        app.review.option_list.focus()
        await pilot.pause()
        await pilot.press("escape")
        await wait_for(pilot, lambda: where(app) == "MemoryViewer", what="the main area's viewer")
        assert statuses(demo)["p-0001"] == "pending"


async def test_ctrl_c_copies_selected_text_in_a_box_instead_of_quitting(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press("slash")
        await wait_for(pilot, lambda: where(app) == "search-input", what="the search input")
        await pilot.press(*"billing", "ctrl+shift+a")  # Textual's select-all in an input
        await pilot.pause()
        assert app.focused.selected_text == "billing"
        await pilot.press("ctrl+c")
        await pilot.pause(0.2)
        assert app.return_code is None and app.clipboard == "billing"
        await pilot.press("end", "ctrl+c")  # nothing selected now: it quits
        await wait_for(pilot, lambda: app.return_code is not None, what="ctrl+c to quit")
