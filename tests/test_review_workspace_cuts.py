"""No text is cut without a sign (#43): at 80 columns the activity feed's lines and the chat's tool line ran past
the edge and stopped there, the feed's writer name was cut to 14 characters, and a tool's result to 80, all without
a mark. Now a cut is drawn with …, and the whole text is reachable: the feed's line on hover (and wrapped with W),
the tool line wraps within the pane, its result whole in its details."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Collapsible
from textual.widgets._collapsible import CollapsibleTitle

from app_support import wait_for
from memtui.core.writing.memory import Memory
from memtui.tui.app import MemtuiApp
from memtui.tui.chat import ChatPane
from memtui.tui.messages import Activity
from support.anthropic_server import FakeAnthropic, reply, tool_use
from support.ten_proposals import ten_in_own_home
from test_agent_chat import Host, say, until, use

LONG = ("approved p-0005 add MEMORY.md § Projects: [observed] Kestrel's settlement batch runs at 02:30 UTC and "
        "retries twice on a bank timeout before paging the on-call engineer")
WRITER = "agent-claude-code-on-the-build-box"


@pytest.fixture
def ten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return ten_in_own_home(tmp_path, monkeypatch)


def feed_rows(feed) -> list[str]:
    return [feed.render_line(y).text for y in range(feed.size.height)]


async def test_at_80_columns_a_feed_line_past_the_edge_ends_in_an_ellipsis_and_a_hover_shows_it_whole(
        ten: Path) -> None:
    app = MemtuiApp(ten, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.synced and app.review.loaded, what="the app")
        feed = app.feed
        feed.set_wrap(False)  # W: long lines scroll sideways (wrapped is the default)
        feed.add(Activity("14:06", "wes", "reject", "rejected p-0007"))
        await pilot.pause(0.1)
        assert "…" not in feed_rows(feed)[0] and "p-0007" in feed_rows(feed)[0]  # a line that fits: as it is
        feed.add(Activity("14:07", WRITER, "approve", LONG))
        await pilot.pause(0.1)
        feed.scroll_end(animate=False)  # stacked, the feed has one row beside its sideways scrollbar
        await pilot.pause(0.1)
        long_row = next(r for r in feed_rows(feed) if "p-0005" in r)
        assert long_row.rstrip().endswith("…") and len(long_row) <= feed.size.width, long_row  # cut, and says so
        assert "agent-claude-…" in long_row and WRITER not in long_row  # the writer's name too
        # The whole line, on hover.
        y = feed_rows(feed).index(long_row)
        await pilot.hover(feed, offset=(10, y))
        await pilot.pause(0.1)
        tip = feed.tooltip
        assert tip is not None and LONG in tip.plain and WRITER in tip.plain, tip
        # Scrolled sideways, what is hidden on the left is marked too; wrapped (W), nothing is cut.
        feed.scroll_to(x=20, animate=False)
        await pilot.pause(0.1)
        assert any(r.startswith("…") for r in feed_rows(feed) if r.strip()), feed_rows(feed)
        feed.set_wrap(True)
        await pilot.pause(0.1)
        drawn = ""
        for y in range(feed.max_scroll_y + 1):  # every row, a row at a time (the stacked feed is short)
            feed.scroll_to(y=y, animate=False)
            await pilot.pause(0.02)
            drawn += " " + feed_rows(feed)[0].strip()
        drawn += " " + " ".join(r.strip() for r in feed_rows(feed)[1:])
        assert "engineer" in drawn and "…" not in drawn.replace("agent-claude-…", ""), drawn


async def test_a_tool_line_wraps_within_the_chat_at_80_columns_and_a_long_result_says_it_is_cut(
        mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    section = "Projects"
    mem.update(section, "add", "[stated] memtui stores its index in Redis")
    long_query = "settlement batch retries pager on-call engineer bank timeout Kestrel payments"
    with FakeAnthropic(reply("Let me look.", tool_use("memory_search", {"query": long_query})),
                       reply("Nothing about that yet.")) as server:
        use(server, monkeypatch)
        app = Host(mem)
        async with app.run_test(size=(80, 30)) as pilot:
            pane = app.query_one(ChatPane)
            await say(pilot, "What do we know about the settlement batch?")
            await until(pilot, lambda: not pane.running and "→" in pane.query_one(".chat-tool", Collapsible).title)
            await pilot.pause(0.1)
            tool = pane.query_one(".chat-tool", Collapsible)
            title = tool.query_one(CollapsibleTitle)
            # Within the pane: as many rows as it needs, none past the edge.
            assert title.region.right <= pane.region.right and title.size.height >= 2, (title.region, pane.region)
            drawn = " ".join(title.render_line(y).text.strip() for y in range(title.size.height))
            plain = title.label.plain  # the arguments in a few words (cut with …; whole in the details)
            assert "memory_search" in plain and "→" in plain
            assert " ".join(plain.split()) in " ".join(drawn.split()), (plain, drawn)  # every word of it drawn
            # The result's first line: whole, or ending in … where there is more (whole in the details).
            result = str(tool.title).split("→", 1)[1].strip()
            details = [str(s.render()) for s in tool.query(".chat-note")]
            whole = details[-1] if details else ""
            assert whole.startswith(result.rstrip("…")), (result, whole)
            assert result.endswith("…") == (result.rstrip("…") != whole), (result, whole)
