"""Any text renders, and nothing in it reaches the terminal as a control character (issue 16 item 8, 17 item 1).

Hypothesis writes lines of brackets, markup, `@click` actions, provenance tags in the wrong place, odd bullets,
invalid dates, CRLF, ESC sequences and other control characters, bidi overrides, wide characters and bytes that
are not UTF-8. Each example goes through the viewer (rendered and raw, with the entry cursor and its entry bar, and
as a live diff against the example before), the review panel (list, detail and diff), the activity feed (from
audit records of any JSON type) and the Today tab. One app per test function; each example is drawn with
`Widget.render_lines` on the app's own thread, and the app must still be running afterwards.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from textual.geometry import Region
from textual.widget import Widget

from app_support import demo_root, demo_template, settled, wait_for  # noqa: F401 (fixture)
from memtui.core.timeline.today import Change, FileChanges, TodayReport
from memtui.core.writing.proposals import Proposal
from memtui.tui.app import MemtuiApp
from memtui.tui.diff import unified
from memtui.tui.feed import activity_from_audit
from memtui.tui.viewer import MemoryViewer, scan

FUZZ = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                       HealthCheck.function_scoped_fixture])
PIECES = [
    "[", "]", "[/]", "[bold]", "[/bold]", "[@click=app.quit]", "[@click=app.bell]x[/]", "[$accent]", "\\[",
    "[stated]", "[observed]", "[inferred]", "[suggested]", "[STATED]", "[bogus]", "~~", "- ", "* ", "+ ", "1. ",
    "1) ", "## ", "# ", "(2026-01-02, chat)", "(2024-13-45)", "(0000-00-00, x)", "12:30 ", "superseded 2026-08-20",
    "<!-- memtui:format", "-->", "\r\n", "\r", "\n", "\t", "\x1b[2J", "\x1b]0;pwned\x07", "\x1b[31m", "\x00",
    "\x07", "\x08", "\x7f", "\x85", "\x9b", "\u202e", "\u2066", "\u200e", "\u200b", "\ufeff", "\u00ad", "界",
    "😀", "👩\u200d👩\u200d👧", "e\u0301", "\U0010ffff", "\ud7ff", " ",
]
text = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=6)), max_size=24).map("".join)
line = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=6)), max_size=12).map("".join)
file_bytes = st.one_of(
    st.lists(line, max_size=20).map("\n".join).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.lists(line, max_size=20).map("\r\n".join).map(lambda t: t.encode("utf-8", "surrogatepass") + b"\xff\xc3("),
    st.binary(max_size=300),
)
# The characters that must never be written to the terminal as they are: C0 and C1 controls, DEL, and the bidi
# controls that reorder what a line appears to say.
FORBIDDEN = {*map(chr, range(0x20)), *map(chr, range(0x7F, 0xA0)), "\u061c", "\u200e", "\u200f",
             *map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A))}


def drawn(widget: Widget) -> list[str]:
    """What `widget` draws, as text; fails if a control character would reach the terminal."""
    lines = []
    for strip in widget.render_lines(Region(0, 0, *widget.outer_size)):
        for segment in strip:
            bad = FORBIDDEN.intersection(segment.text)
            assert not bad, f"{type(widget).__name__} writes {sorted(map(hex, map(ord, bad)))}: {segment.text!r}"
        lines.append(strip.text)
    return lines


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> Path:
    return demo_root(tmp_path, monkeypatch, demo_template)


async def started(pilot) -> MemtuiApp:
    await wait_for(pilot, lambda: settled(pilot.app), what="the app to settle")
    await pilot.pause(0.05)
    return pilot.app


async def test_the_viewer_and_its_entry_bar_render_any_bytes(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        viewer = app.query_one(MemoryViewer)
        previous: list[list[str]] = [[]]

        @FUZZ
        @given(data=file_bytes)
        def render(data: bytes) -> None:
            state = scan("MEMORY.md", data.decode("utf-8", errors="replace"), previous[0] or None)
            previous[0] = list(state.lines)
            # The viewer's own handler of its worker's message, called as the message loop would.
            viewer.on_memory_viewer_loaded(MemoryViewer.Loaded(viewer, state))
            for raw in (False, True):
                viewer.raw = raw
                viewer.watch_raw()
                rows = [viewer.row_text(r) for r in range(viewer.virtual_size.height)]
                assert len(rows) >= len(state.lines)
                drawn(viewer)
            viewer.raw = False
            viewer.entry_cursor.set_cursor(None)
            for _ in range(3):
                viewer.entry_cursor.step(1)
                if viewer.entry_cursor.bar is not None and viewer.entry_cursor.bar.display:
                    drawn(viewer.entry_cursor.bar)
            viewer.action_acknowledge()

        render()
        await pilot.pause()
        assert app.is_running and app.return_code is None

        # Once more through the real read: a file on disk, read in the viewer's worker.
        (demo / "notes").mkdir(exist_ok=True)
        (demo / "notes/odd.md").write_bytes(b"## F[/]cts \x1b[2J\r\n- Name is Wes [stated] (2024-01-02)\r\n"
                                            b"- [stated] \xff\xfe bad bytes (2024-13-45)\r\n\t- [bogus] \x9b x\r\n")
        app.open_file("notes/odd.md")
        await wait_for(pilot, lambda: (v := app.viewer_for("notes/odd.md")) is not None and v.state is not None,
                       what="the odd file")
        odd = app.viewer_for("notes/odd.md")
        await pilot.pause(0.1)
        drawn(odd)
        text = "\n".join(odd.row_text(r) for r in range(len(odd.state.lines)))
        assert "## F[/]cts ␛[2J" in text and "tag not first" in text and "invalid date 2024-13-45" in text, text
        assert "\ufffd\ufffd bad bytes (2024-13-45)  invalid date 2024-13-45  not UTF-8" in text, text
        assert "[bogus] � x" in text, text
        assert app.is_running and app.return_code is None


def proposal(n: int, s: list[str]) -> Proposal:
    return Proposal(id=f"p-{n:04d}{s[0][:4]}", created="2026-08-20T14:05" + s[1], actor=s[2], file=s[3] or "x.md",
                    action=["add", "revise", "remove", "create", "edit"][n % 5], section=s[4] or None,
                    entry=s[5] or None, replaces=s[6] or None, provenance=(s[7] or None) if n % 2 else "stated",
                    status="conflict" if n % 3 == 0 else "pending", reason=s[8] or None, flags=[s[9], s[10]],
                    warnings=[s[11]], diff=unified(s[3] or "x.md", s[12], s[13]))


async def test_the_review_panel_renders_any_proposal(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=(150, 50)) as pilot:
        await started(pilot)
        review = app.review

        @FUZZ
        @given(strings=st.lists(st.lists(text, min_size=14, max_size=14), min_size=1, max_size=4))
        def render(strings: list[list[str]]) -> None:
            proposals = [proposal(n, s) for n, s in enumerate(strings)]
            review.set_proposals(proposals)
            for p in proposals:
                review.select(p.id)
                review._show_selected()
                drawn(review.option_list)
                drawn(review.query_one("#review-detail"))
                text = review.query_one("#review-diff").render_text().plain  # the rows it draws, laid out now
                bad = (FORBIDDEN - {"\n"}).intersection(text)  # rows are joined by newlines; nothing else
                assert not bad, f"the diff writes {sorted(map(hex, map(ord, bad)))}"

        render()
        await pilot.pause()
        assert app.is_running and app.return_code is None


JSON = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), text),
                    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(text, inner, max_size=3)),
                    max_leaves=6)
FIELDS = ["status", "action", "file", "section", "entry", "to", "actor", "decided_by", "proposal", "reason", "ts"]


async def test_the_feed_renders_any_audit_record(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=(150, 42)) as pilot:
        await started(pilot)

        @FUZZ
        @given(records=st.lists(st.fixed_dictionaries({}, optional={k: st.one_of(text, JSON) for k in FIELDS}),
                                min_size=1, max_size=5),
               status=st.sampled_from(["applied", "rejected", "conflict", "refused", "queued"]))
        def render(records: list[dict], status: str) -> None:
            for record in records:
                record.setdefault("status", status)
                app.feed.add(activity_from_audit(record))
            app.feed.scroll_end(animate=False, immediate=True)
            drawn(app.feed)

        render()
        await pilot.pause()
        assert app.is_running and app.return_code is None


async def test_today_renders_any_change(demo: Path) -> None:
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=(150, 60)) as pilot:
        await started(pilot)
        app.action_open_pane("today")
        pane = app.panes["today"]
        await wait_for(pilot, lambda: pane.report is not None, what="Today's first load")
        await pilot.pause(0.1)

        @FUZZ
        @given(strings=st.lists(st.lists(text, min_size=9, max_size=9), min_size=1, max_size=4))
        def render(strings: list[list[str]]) -> None:
            changes = [Change(time="2026-08-20T14:05" + s[0], actor=s[1], action=s[2], file=s[3], status=s[4],
                              section=s[5] or None, after=s[6] or None, reason=s[7] or None,
                              proposal=s[8][:8] or None, diff=unified(s[3], s[6], s[7]))
                       for s in strings]
            report = TodayReport(str(demo), "2026-08-20T00:00", "2026-08-20T23:59",
                                 [FileChanges(c.file, [c]) for c in changes])
            pane._show(pane.Loaded(report))
            pane.tree.root.expand_all()
            drawn(pane.query_one("#today-summary"))
            drawn(pane.tree)

        render()
        await pilot.pause()
        assert app.is_running and app.return_code is None


@FUZZ
@given(value=text)
def test_markup_literal_reads_back_as_the_text(value: str) -> None:
    """For the few places that take only markup (a Collapsible's title, the palette's help): any text, cut
    anywhere, parses back to itself, controls made visible."""
    from textual.content import Content

    from memtui.tui.plain import markup_literal, visible

    for cut in {len(value), len(value) // 2, max(0, len(value) - 1)}:
        assert Content.from_markup(markup_literal(value[:cut])).plain == visible(value[:cut])
