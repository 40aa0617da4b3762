"""The main area's tabs (memtui/tui/tabs.py): one widget draws the strip as Textual's TabbedContent draws its tabs
(Textual's own widget is the oracle: the same screen, cell for cell and style for style), and a person uses it as
Textual's: click a title or the bar under it, left/right on the focused strip, close the tab on show."""

from __future__ import annotations

import html
import re

import pytest
from rich.cells import cell_len
from textual.app import App
from textual.widgets import Label, TabbedContent
from textual.widgets import TabPane as TextualPane

from app_support import wait_for
from memtui.core.basics.visible import visible
from memtui.tui.tabs import Tabbed, TabPane

SIZE = (60, 8)
WIDE = ["MEMORY.md", "notes/日本語のメモ.md", "Search", "Chat", "people/alice.md", "Today", "log/2026-12-05.md"]


class Ours(App[None]):
    def __init__(self, titles: list[str]) -> None:
        super().__init__()
        self.titles = titles
        self.activated: list[str] = []

    def on_tabbed_tab_activated(self, message: Tabbed.TabActivated) -> None:
        self.activated.append(message.pane.id or "")

    def compose(self):
        with Tabbed(id="main"):
            for k, title in enumerate(self.titles):
                with TabPane(title, id=f"p{k}"):
                    yield Label(f"pane {k}")


class Theirs(App[None]):
    def __init__(self, titles: list[str]) -> None:
        super().__init__()
        self.titles = titles
        self.animation_level = "none"  # the underline moves at once, as ours does

    def compose(self):
        with TabbedContent(id="main"):
            for k, title in enumerate(self.titles):
                with TextualPane(title, id=f"p{k}"):
                    yield Label(f"pane {k}")


def screen(app: App) -> list[list[tuple[str, str, str]]]:
    """The screen as cells (character, text style, background), read from its SVG screenshot: how the screen
    looks, not how the compositor happened to cut it into runs (which depends on the widgets drawing it)."""
    svg = app.export_screenshot(title="tabs")
    styles = dict(re.findall(r"\.(terminal-\d+-r\d+) \{ ([^}]*) \}", svg))
    width, height = app.size
    grid = [[[" ", "", ""] for _ in range(width)] for _ in range(height)]
    for fill, x, y, w in re.findall(r'<rect fill="([^"]+)" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="24.65"',
                                    svg):
        row = round((float(y) - 1.5) / 24.4)
        for col in range(round(float(x) / 12.2), round((float(x) + float(w)) / 12.2)):
            grid[row][col][2] = fill
    for cls, x, y, text in re.findall(r'<text class="([^"]+)" x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>', svg):
        row, col = round((float(y) - 20) / 24.4), round(float(x) / 12.2)
        for char in html.unescape(text).replace("\xa0", " "):
            if row < height and col < width and char != "\n":
                grid[row][col][:2] = [char, styles.get(cls, "") if char != " " else ""]
            col += cell_len(char)
    return [[tuple(cell) for cell in row] for row in grid]


async def shot(cls, titles: list[str], active: str | None, focused: bool) -> list:
    app = cls(titles)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        main = app.query_one("#main")
        if active is not None:
            main.active = active
        strip = app.query_one("#main").strip if cls is Ours else app.query_one("ContentTabs")
        if focused:
            strip.focus()
        else:
            app.set_focus(None)
        await pilot.pause(0.1)
        await pilot.pause()
        return screen(app)


@pytest.mark.parametrize("titles, active", [
    (["MEMORY.md"], None),
    (["MEMORY.md", "Today", "Δ notes/a.md"], "p1"),
    (WIDE, "p1"),  # wide characters: a title's cells, not its length
    (WIDE, "p6"),  # wider than the strip: scrolled so the active one is in view
    (WIDE + WIDE, "p9"),  # in the middle: centred
])
@pytest.mark.parametrize("focused", [False, True])
async def test_drawn_as_textuals_tabs(titles: list[str], active: str | None, focused: bool) -> None:
    assert await shot(Ours, titles, active, focused) == await shot(Theirs, titles, active, focused)


async def test_a_hovered_title_is_drawn_as_textuals() -> None:
    titles = ["MEMORY.md", "Today", "Chat"]
    shots = []
    for cls in (Ours, Theirs):
        app = cls(titles)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            app.set_focus(None)
            await pilot.pause()
            still = screen(app)
            await pilot.hover("#main", offset=(len(" MEMORY.md  T"), 0))
            await pilot.pause(0.1)
            shots.append(screen(app))
            assert shots[-1] != still  # Today is lit
    assert shots[0] == shots[1]


async def test_click_a_title_or_the_bar_under_it() -> None:
    app = Ours(["MEMORY.md", "Today", "Chat"])
    async with app.run_test(size=SIZE) as pilot:
        main: Tabbed = app.query_one(Tabbed)
        assert main.active == "p0"
        await pilot.click(main.strip, offset=main.strip.offset_of("p2"))
        await wait_for(pilot, lambda: main.active == "p2", what="Chat")
        assert app.focused is main.strip  # as Textual's tabs: a click focuses the strip
        x, _ = main.strip.offset_of("p1")
        await pilot.click(main.strip, offset=(x, 1))  # the bar
        await wait_for(pilot, lambda: main.active == "p1", what="Today")
        assert main.get_pane("p1").display and not main.get_pane("p2").display and not main.get_pane("p0").display
        await pilot.click(main.strip, offset=(55, 0))  # past the last title: nothing changes
        await pilot.pause()
        assert main.active == "p1"
        assert app.activated == ["p0", "p2", "p1"]


async def test_left_and_right_move_between_tabs_and_wrap() -> None:
    app = Ours(["MEMORY.md", "Today", "Chat"])
    async with app.run_test(size=SIZE) as pilot:
        main: Tabbed = app.query_one(Tabbed)
        main.strip.focus()
        await pilot.press("left")
        assert main.active == "p2"
        await pilot.press("right", "right")
        assert main.active == "p1"


async def test_closing_the_tab_on_show_brings_up_the_next_else_the_one_before() -> None:
    app = Ours(["MEMORY.md", "Today", "Chat"])
    async with app.run_test(size=SIZE) as pilot:
        main: Tabbed = app.query_one(Tabbed)
        main.active = "p1"
        main.remove_pane("p1")
        await pilot.pause()
        assert main.active == "p2" and main.pane_ids == ["p0", "p2"] and not app.query("#p1")
        main.remove_pane("p2")
        await pilot.pause()
        assert main.active == "p0" and main.get_pane("p0").display
        main.remove_pane("p0")
        await pilot.pause()
        assert main.active == "" and main.active_pane is None and main.tab_count == 0
        main.remove_pane("p0")  # gone already: nothing to do
        main.add_pane(TabPane("Again", Label("again"), id="p9"))
        await pilot.pause()
        assert main.active == "p9" and main.get_pane("p9").display


async def test_focus_moving_into_a_hidden_pane_brings_it_up() -> None:
    from textual.widgets import Input

    app = Ours(["MEMORY.md"])
    async with app.run_test(size=SIZE) as pilot:
        main: Tabbed = app.query_one(Tabbed)
        await main.add_pane(TabPane("Chat", Input(id="box"), id="chat"))
        assert main.active == "p0"
        app.query_one("#box").focus()
        await wait_for(pilot, lambda: main.active == "chat", what="the Chat tab")


async def test_a_pane_needs_an_id_of_its_own() -> None:
    app = Ours(["MEMORY.md"])
    async with app.run_test(size=SIZE):
        main: Tabbed = app.query_one(Tabbed)
        with pytest.raises(ValueError):
            main.add_pane(TabPane("again", id="p0"))
        with pytest.raises(ValueError):
            main.add_pane(TabPane("none"))
        with pytest.raises(ValueError):
            main.active = "missing"


@pytest.mark.parametrize("title", [
    "[@click=app.quit]Q.md", "[/]", "[bold]x[/bold].md", "a\x1b[31mred.md", "new\nline.md", "tab\there.md",
])
async def test_a_hostile_title_is_drawn_as_text(title: str) -> None:
    """A file's name is the agent's: never markup, never an escape sequence, one line; the tab after it is
    clicked where it is drawn."""
    app = Ours([title, "Today"])
    async with app.run_test(size=SIZE) as pilot:
        main: Tabbed = app.query_one(Tabbed)
        await pilot.pause()
        row = main.strip.render_line(0)
        assert "\x1b" not in row.text and "\n" not in row.text
        assert visible(title, newlines=False) in row.text  # as written, controls shown
        assert not any(seg.style and seg.style.meta for seg in row)  # no @click
        await pilot.click(main.strip, offset=main.strip.offset_of("p1"))
        await wait_for(pilot, lambda: main.active == "p1", what="the tab after it")
        assert app.is_running


# Found by a reviewer attacking the strip, with Textual's tabs as the oracle ----------------------------------------
async def strip_after(cls, titles: list[str], theme: str, active: str, hover_x: int, change=None) -> list:
    """The strip's two rows with the pointer at column `hover_x` of the titles, after `change` (if any)."""
    app = cls(titles)
    async with app.run_test(size=SIZE) as pilot:
        app.theme = theme
        await pilot.pause()
        app.set_focus(None)
        main = app.query_one("#main")
        main.active = active
        await pilot.pause(0.1)
        await pilot.hover("#main", offset=(hover_x, 0))
        await pilot.pause(0.1)
        if change is not None:
            change(main)
            await pilot.pause(0.2)
        await pilot.pause()
        return screen(app)[:2]


def scroll_to_last(main) -> None:
    main.active = "p6"  # a click, a key, ctrl+pgdn: the titles scroll under a pointer that stays put


def close_the_hovered(main) -> None:
    main.remove_pane("p1")  # `w` on another tab: Chat slides under the pointer


@pytest.mark.parametrize("titles, change", [(WIDE, scroll_to_last),
                                            (["MEMORY.md", "Today", "Chat", "Search"], close_the_hovered)])
async def test_the_lit_title_is_the_one_under_the_pointer_after_the_titles_move(titles: list[str], change) -> None:
    ours = await strip_after(Ours, titles, "textual-dark", "p0", 13, change)
    assert ours == await strip_after(Theirs, titles, "textual-dark", "p0", 13, change)


@pytest.mark.parametrize("theme", ["ansi-dark", "ansi-light"])
async def test_a_hovered_title_in_ansi_mode_stays_dim_as_textuals(theme: str) -> None:
    titles = ["MEMORY.md", "Today", "Chat"]
    assert await strip_after(Ours, titles, theme, "p0", 13) == await strip_after(Theirs, titles, theme, "p0", 13)


async def test_a_click_on_a_tab_closed_before_the_next_frame_does_not_crash() -> None:
    """The person clicks what is drawn; the click reaches the strip before the frame after `w` closed that tab
    (a key and a click in one burst of input, or a busy app): its cells are still in `strip.tabs`."""
    from textual import events

    app = Ours(["MEMORY.md", "Today", "Chat"])
    async with app.run_test(size=SIZE) as pilot:
        main: Tabbed = app.query_one(Tabbed)
        await pilot.pause()
        strip = main.strip
        x, y = strip.offset_of("p1")
        main.remove_pane("p1")
        strip.post_message(events.Click(strip, x, y, 0, 0, 1, False, False, False,
                                        screen_x=strip.region.x + x, screen_y=strip.region.y + y))
        await pilot.pause()
        await pilot.pause()
        assert app.is_running and app.return_code is None
        assert main.active in main.pane_ids


async def test_the_pointer_over_a_title_is_a_hand_as_over_textuals() -> None:
    for cls in (Ours, Theirs):
        app = cls(["MEMORY.md", "Today"])
        async with app.run_test(size=SIZE) as pilot:
            main = app.query_one("#main")
            await pilot.hover("#main", offset=(3, 0))
            await pilot.pause()
            under = app.screen.get_widget_at(main.region.x + 3, main.region.y)[0]
            assert under.styles.pointer == "pointer", (cls.__name__, under)


async def test_the_bar_alone_is_drawn_for_the_tab_on_show() -> None:
    """A paint may ask for the bar's row only: it is laid out for the tabs as they are, not as last drawn."""
    from textual.geometry import Region

    app = Ours(["MEMORY.md", "Today", "Chat"])
    async with app.run_test(size=SIZE) as pilot:
        main: Tabbed = app.query_one(Tabbed)
        await pilot.pause()
        strip = main.strip
        row = Region(0, 1, strip.size.width, 1)
        before = strip.render_lines(row)[0].text
        main.active = "p2"
        main.remove_pane("p0")
        alone = strip.render_lines(row)[0]  # the bar's row only, before any paint of the titles
        assert alone.text != before
        await pilot.pause()
        assert alone == strip.render_lines(Region(0, 0, strip.size.width, 2))[1]  # as a full paint draws it
        assert alone.text.index("━", alone.text.index("╸") + 1) == len(" Today  ")  # lit under Chat
