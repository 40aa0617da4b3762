"""Markup and actions in data: an agent's actor, entry, section, file name and reason, and a cloned file's headings,
written as Textual markup (`[/]`, `[bold]`, `[@click=app.quit]`). The app starts, shows each string literally in
the widget that draws it, and a click on the text runs nothing (issue 16 item 8).

What a widget shows is read from the strips it renders (`Widget.render_lines`), and every rendered segment is
checked for an `@click` action: data must never carry one.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from textual.command import CommandList
from textual.geometry import Region
from textual.widget import Widget

from app_support import SIZE, demo_root, demo_template, settled, wait_for  # noqa: F401 (fixture)
from memtui.core.writing.memory import Memory
from memtui.tui.app import MemtuiApp
from memtui.tui.help import HelpScreen
from memtui.tui.viewer import MemoryViewer

QUIT = "[@click=app.quit]QUIT[/]"
BELL = "[@click=app.bell]BELL[/]"
ACTOR = f"agent{BELL}"
ENTRY = f"[observed] likes [bold]tea[/bold] {QUIT} and [/] alone"
HOSTILE_FILE = "notes/[@click=app.quit]Q.md"  # no [/]: a slash would make a folder
HEADING = f"Ru[/]les {BELL}"
REASON = f"not [b]true[/b] {QUIT}"


class RecordingApp(MemtuiApp):
    """The app, recording the actions a click on data could run (instead of running them)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.ran: list[str] = []

    def action_bell(self) -> None:
        self.ran.append("bell")

    async def action_quit(self) -> None:
        self.ran.append("quit")


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> tuple[Path, dict[str, str]]:
    """The demo with a committed file someone else wrote (markup in its name, heading and entries) and proposals
    whose actor, entry, section and file name are markup; one of them rejected with a markup reason."""
    root = demo_root(tmp_path, monkeypatch, demo_template)
    path = root / HOSTILE_FILE
    path.parent.mkdir(exist_ok=True)
    (path.parent / "[bold]x.md").write_text(f"# {BELL}\n")
    path.write_text(f"# Notes [/]\n\n## {HEADING}\n\n- {ENTRY} (2026-08-01, chat)\n- [stated] {QUIT} (2026-08-02)\n")
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True, capture_output=True)
    subprocess.run(["git", "-C", str(root), "-c", "user.name=someone", "-c", "user.email=s@example.com",
                    "commit", "-qm", "notes from a shared repo"], check=True, capture_output=True)
    for q in (root / ".memtui/queue").glob("*.json"):
        q.unlink()
    mem = Memory(root)
    ids = {}
    for name, res in {
        "closing": mem.update("Facts", "add", "[observed] Staging has 3 replicas (2026-08-20, psql)", actor="agent[/]"),
        "entry": mem.update("Facts", "add", ENTRY, actor=ACTOR),
        "section": mem.update(HEADING, "add", "[observed] one more (2026-08-20, chat)", file=HOSTILE_FILE,
                              actor=ACTOR),
        "file": mem.create("notes/[bold]x[/].md", f"# {QUIT}\n", actor=ACTOR),
        "rejected": mem.update("Facts", "add", "[observed] to reject (2026-08-20, chat)", actor=ACTOR),
    }.items():
        assert res.status == "queued", (name, res.message)
        ids[name] = res.id
    assert mem.reject(ids["rejected"], reason=REASON, by="wes").status == "rejected"
    return root, ids


def rendered(widget: Widget) -> list[str]:
    """The lines a widget draws, as text."""
    return [strip.text for strip in widget.render_lines(Region(0, 0, *widget.outer_size))]


def flat(lines: list[str]) -> str:
    """The lines as one line of words: a long line the widget wrapped reads as it was written."""
    return " ".join(" ".join(lines).split())


def actions_drawn(app: MemtuiApp) -> list[str]:
    """Every `@click` action in what the visible widgets draw."""
    found = []
    for widget in app.screen.query("*"):
        if not widget.display or not widget.outer_size.area:
            continue
        for strip in widget.render_lines(Region(0, 0, *widget.outer_size)):
            for segment in strip:
                action = segment.style.meta.get("@click") if segment.style else None
                if action and ("quit" in str(action) or "bell" in str(action)):
                    found.append(f"{type(widget).__name__}: {action}")
    return found


async def click_text(pilot, widget: Widget, text: str) -> bool:
    """Click the first cell of `text` where the widget draws it; False if it is not drawn."""
    for y, line in enumerate(rendered(widget)):
        x = line.find(text)
        if x >= 0:
            await pilot.click(widget, offset=(x, y))
            await pilot.pause()
            return True
    return False


def statuses(root: Path) -> dict[str, str]:
    return {q.stem: json.loads(q.read_text())["status"] for q in (root / ".memtui/queue").glob("*.json")}


async def test_an_actor_with_a_closing_tag_does_not_crash_the_start(hostile) -> None:
    root, ids = hostile
    app = RecordingApp(root, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        assert app.review.selected.id == ids["closing"]  # selected at start: its detail names the actor
        detail = app.review.query_one("#review-detail")
        await pilot.pause(0.1)
        assert f"{ids['closing']}: add by agent[/]" in flat(rendered(detail)), rendered(detail)
        assert app.return_code is None and app.is_running


async def test_markup_in_proposals_is_shown_literally_and_a_click_runs_nothing(hostile) -> None:
    root, ids = hostile
    before = statuses(root)
    app = RecordingApp(root, watch=False)
    # Tall enough that the review list shows every proposal at once (its diff takes two thirds of the panel).
    async with app.run_test(size=(200, 90)) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        review = app.review
        # The queue given the whole screen (`z`): its two lines a proposal are cut at the column's width otherwise.
        review.option_list.focus()
        await pilot.press("z")
        await wait_for(pilot, lambda: review.option_list.size.width > 150, what="the queue to take the screen")
        await pilot.pause(0.1)
        listed = flat(rendered(review.option_list))
        assert f"add MEMORY.md § Facts · {ACTOR}" in listed, listed
        assert "likes [bold]tea[/bold] [@click=app.quit]QUIT" in listed, listed
        assert "create notes/[bold]x[/].md" in listed and f"§ {HEADING}" in listed, listed

        detail = review.query_one("#review-detail")
        for key in ("entry", "section", "file"):
            review.select(ids[key])
            await pilot.pause(0.1)
            lines = flat(rendered(detail))
            assert f"by {ACTOR}" in lines, lines
            assert await click_text(pilot, detail, "BELL")
        review.select(ids["entry"])
        view = review.query_one("#review-diff")
        for _ in range(50):
            await pilot.pause(0.05)
            if view.drawn:
                break
        diff = flat(rendered(view))
        assert "likes [bold]tea[/bold]" in diff, diff
        assert await click_text(pilot, review.option_list, "QUIT")

        await pilot.press("z")  # every pane shown again, the feed among them
        await wait_for(pilot, lambda: app.feed.display and app.feed.size.height > 0, what="the feed to show")
        await pilot.pause(0.1)
        feed = flat(rendered(app.feed))
        assert f"rejected {ids['rejected']}" in feed and "not [b]true[/b] [@click=app.quit]QUIT[/]" in feed, feed
        assert await click_text(pilot, app.feed, "QUIT")

        assert not actions_drawn(app)
        assert app.ran == [] and app.is_running
        assert statuses(root) == before  # nothing was approved or rejected by a click


async def test_a_file_named_and_written_as_markup_is_shown_literally(hostile) -> None:
    root, _ = hostile
    app = RecordingApp(root, watch=False)
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        notes = app.tree.node_for("notes")
        notes.expand()
        await wait_for(pilot, lambda: app.tree.node_for(HOSTILE_FILE) is not None, what="the notes folder")
        await pilot.pause(0.1)
        tree = flat(rendered(app.tree))
        # The name beside its badge is cut to the tree's width (`…`), still drawn as the text it is.
        assert "[@click=app.quit]" in tree and "[bold]x.md" in tree, tree
        assert await click_text(pilot, app.tree, "[@click=app.quit]")  # opens the file: a click is a selection

        viewer = app.viewer_for(HOSTILE_FILE)
        assert viewer is not None
        await wait_for(pilot, lambda: viewer.state is not None, what="the viewer")
        rows = [viewer.row_text(r) for r in range(len(viewer.state.lines))]
        assert any(f"## {HEADING}" in r for r in rows), rows
        assert any("likes [bold]tea[/bold] [@click=app.quit]QUIT[/] and [/] alone" in r for r in rows), rows
        await pilot.pause(0.1)
        assert await click_text(pilot, viewer, "QUIT")
        tabs = flat(rendered(app.main.strip))
        assert "[@click=app.quit]Q.md" in tabs, tabs

        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: app.screen.query(CommandList), what="the palette")
        await pilot.press(*"click")
        palette = app.screen.query_one(CommandList)
        # Hits come from each provider in batches: Textual's own ("Keys", "Maximize") can be listed before memtui's
        # file names are. Wait for the file's hit, then read the list it is in.
        await wait_for(pilot, lambda: "notes/[@click=app.quit]Q.md" in "\n".join(rendered(palette)),
                       what="the file's hit in the palette")
        await pilot.pause(0.1)
        hits = "\n".join(rendered(palette))
        assert "notes/[@click=app.quit]Q.md" in hits, hits
        assert not actions_drawn(app)
        assert app.ran == [] and app.is_running


async def test_notifications_help_and_the_remove_dialog_show_brackets(hostile) -> None:
    root, _ = hostile
    app = RecordingApp(root, watch=False)
    async with app.run_test(size=(200, 90), notifications=True) as pilot:  # tall: the whole help shows
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        app.notify(f"{HOSTILE_FILE}: {REASON}")  # a notification is text, whatever the caller forgot
        await wait_for(pilot, lambda: app.screen.query("Toast"), what="the toast")
        await pilot.pause(0.1)
        toast = flat(rendered(app.screen.query("Toast").last()))
        assert "[@click=app.quit]Q.md: not [b]true[/b]" in toast, toast
        assert await click_text(pilot, app.screen.query("Toast").last(), "QUIT") or True  # a click dismisses it

        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
        await pilot.pause(0.1)
        text = "\n".join(line for w in app.screen.query("KeyTable, Static") for line in rendered(w))
        assert "promote an agent's guess to [stated], or demote" in flat([text]), text
        assert "id (rebind in [keys])" in text and "[keys]  approve" in text, text
        assert "right_square_bracket" not in text and "left_square_bracket" not in text, text
        key_of = {row.split()[2]: row.split()[1] for row in text.splitlines() if len(row.split()) > 2}
        assert key_of.get("next_proposal") == "]" and key_of.get("prev_proposal") == "[", key_of
        await pilot.press("escape")
        await pilot.pause()

        viewer = app.query_one(MemoryViewer)
        viewer.focus()
        await pilot.press("j")  # the entry cursor shows, on the first entry: "- [stated] Wes leads …"
        await pilot.pause(0.1)
        await pilot.press("x")  # x removes the entry under the cursor (d is always the diff)
        await pilot.pause(0.2)
        question = flat(rendered(app.screen.query_one(".dialog-question")))
        assert "[stated] Wes leads the platform team" in question and "\\[" not in question, question
        await pilot.press("n")
        assert not actions_drawn(app)
        assert app.ran == [] and app.is_running


async def test_a_model_reply_and_its_tool_calls_are_shown_literally(mem: Memory,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The model writes markup, an action and an escape sequence in its reply, a tool call's arguments and an
    entry: the chat draws them as text (the reply as Markdown), and the card shows the entry literally."""
    from textual.app import App, ComposeResult

    from memtui import tui
    from memtui.tui.chat import ChatPane, ProposalCardView
    from support.anthropic_server import FakeAnthropic, reply, tool_use

    class Host(App[None]):
        CSS_PATH = Path(tui.__file__).parent / "chat.tcss"  # the pane's styles, as the app loads them

        def __init__(self) -> None:
            super().__init__()
            self.ran: list[str] = []

        def compose(self) -> ComposeResult:
            yield ChatPane(mem)

        def on_mount(self) -> None:
            self.query_one(ChatPane).focus()

        def action_bell(self) -> None:
            self.ran.append("bell")

        async def action_quit(self) -> None:
            self.ran.append("quit")

    mem.update("Preferences", "add", "[stated] Likes tea (2026-08-01, chat)")
    entry = f"[stated] Likes [bold]green[/bold] tea {QUIT}"
    calls = [tool_use("memory_update", {"section": f"Pre[/]ferences {BELL}", "action": "add", "entry": entry}),
             tool_use("memory_update", {"section": "Preferences", "action": "add", "entry": entry})]
    with FakeAnthropic(reply(f"Noted \x1b[2J{QUIT} [/] ok.", *calls), reply(f"Done {BELL}.")) as server:
        for key, value in server.env.items():
            monkeypatch.setenv(key, value)
        app = Host()
        async with app.run_test(size=(120, 60)) as pilot:
            pane = app.query_one(ChatPane)
            pane.query_one("#chat-input").value = "I like green tea"
            await pilot.press("enter")
            await wait_for(pilot, lambda: not pane.running and pane.turn_worker is not None, timeout=20,
                           what="the turn to end")
            await wait_for(pilot, lambda: pane.query(ProposalCardView), what="the card")
            await pilot.pause(0.2)
            shown = []
            for widget in pane.query("*"):
                if widget.display and widget.outer_size.area:
                    lines = rendered(widget)
                    assert not any("\x1b" in line for line in lines), lines
                    shown += lines
            text = flat(shown)
            assert "Noted ␛[2J[@click=app.quit]QUIT[/] [/] ok." in text, text
            assert f"Pre[/]ferences {BELL}" in text, text
            assert "Likes [bold]green[/bold] tea [@click=app.quit]QUIT[/]" in text, text
            assert f"Done {BELL}." in text, text
            for word in ("QUIT", "BELL"):
                for widget in pane.query("*"):
                    if widget.display and widget.outer_size.area and await click_text(pilot, widget, word):
                        break
            assert not actions_drawn(app)  # type: ignore[arg-type]
            assert app.ran == [] and app.is_running


async def test_a_queue_file_of_the_wrong_types_is_reported_not_drawn(hostile) -> None:
    """A queue file is anyone's to write: lists and numbers where strings go, and an unknown provenance."""
    root, _ = hostile
    queue = root / ".memtui/queue"
    (queue / "p-0098.json").write_text(json.dumps({
        "id": "p-0098", "created": None, "actor": 5, "file": ["x"], "action": {"a": 1}, "entry": ["[/]"],
        "flags": "abc", "status": "pending", "diff": 3}))
    # p-0099 is sealed (as memtui queues what an agent sent): its markup-like text must be drawn as data
    from memtui.core.writing.proposals import Proposal

    Memory(root).store.queue_save("p-0099", Proposal.from_json(json.dumps({
        "id": "p-0099", "created": "2026-08-20T14:05", "actor": "agent[/]", "file": "MEMORY.md", "action": "add",
        "section": "Facts", "entry": "[bogus] x [/]", "provenance": "bogus", "status": "pending"}).encode())
        .sealed_json())
    app = RecordingApp(root, watch=False)
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        ids = [p.id for p in app.review.proposals]
        assert "p-0098" not in ids and "p-0099" in ids
        assert any("p-0098: unreadable queue file" in p for p in app.problems), app.problems
        app.review.select("p-0099")
        await pilot.pause(0.1)
        assert "[bogus] x [/]" in flat(rendered(app.review.option_list))
        assert "unreadable queue file" in flat(rendered(app.feed))
        assert app.is_running and app.return_code is None
