"""Big diffs stay cheap: the core bounds a diff and counts what it left out; the app draws only its first rows."""

from __future__ import annotations

import difflib
import random
import re
from pathlib import Path

import pytest

from app_support import SIZE, demo_root, demo_template, settled, wait_for  # noqa: F401 (fixture)
from memtui.core.basics import patches
from memtui.core.basics.patches import diff_left_out, unified_diff
from memtui.core.writing.memory import Memory
from memtui.tui.app import MemtuiApp
from memtui.tui.diff import SHOWN_ROWS, DiffView
from memtui.tui.viewer import MemoryViewer
from support.redis_server import redis_server, redis_url  # noqa: F401  (fixtures)

LOG = "log/2026-08-21.md"
LINE = "- 14:05 [observed] Deploy step {k} finished (2026-08-21, ci)\n"


def whole(rel: str, before: str | None, after: str | None, n: int = 2) -> str:
    """The unbounded diff as difflib writes it, for comparison."""
    a = (before or "").splitlines(keepends=True)
    b = (after or "").splitlines(keepends=True)
    lines = difflib.unified_diff(a, b, f"a/{rel}" if before is not None else "/dev/null",
                                 f"b/{rel}" if after is not None else "/dev/null", n=n)
    return "".join(ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n" for ln in lines)


def apply(before: str, diff: str) -> str:
    """Apply a whole unified diff to `before` (enough of `patch` for these tests)."""
    a, out, i = before.splitlines(keepends=True), [], 0
    lines = diff.splitlines(keepends=True)
    k = 2
    while k < len(lines):
        m = re.match(r"@@ -(\d+)(?:,(\d+))? \+", lines[k])
        assert m, lines[k]
        start = int(m[1]) - (1 if m[2] != "0" else 0)
        out += a[i:start]
        i, k = start, k + 1
        while k < len(lines) and not lines[k].startswith("@@"):
            line, body = lines[k], lines[k][1:]
            if k + 1 < len(lines) and lines[k + 1].startswith("\\ No newline"):
                body, k = body[:-1], k + 1
            if line[0] == " ":
                out.append(body)
                i += 1
            elif line[0] == "-":
                i += 1
            else:
                out.append(body)
            k += 1
    return "".join(out + a[i:])


def test_small_diffs_are_what_difflib_writes_and_bounded_ones_count_what_they_leave_out():
    rng = random.Random(17)
    pieces = ["- [stated] a\n", "- b\n", "\n", "## H\n", "tail", "- [observed] d (2026-01-01)\n"]
    for _ in range(1500):
        before = "".join(rng.choice(pieces) for _ in range(rng.choice([0, 1, 4, 12, 30]))) or rng.choice(["", None])
        lines = (before or "").splitlines(keepends=True)
        for _ in range(rng.randint(0, 4)):
            k = rng.randint(0, len(lines))
            if rng.random() < 0.5:
                lines.insert(k, rng.choice(pieces))
            elif lines:
                del lines[min(k, len(lines) - 1)]
        after = None if rng.random() < 0.05 else "".join(lines)
        want = whole("f.md", before, after)
        assert unified_diff("f.md", before, after) == want
        assert unified_diff("f.md", before, after, None, None) == want
        for cap in (3, 6, 10):
            bounded = unified_diff("f.md", before, after, cap, None)
            left = diff_left_out(bounded)
            if not left:
                assert bounded == want
                continue
            shown = bounded.splitlines(keepends=True)[:-1]
            assert len(shown) <= cap and want.startswith("".join(shown))
            assert len(shown) + left == len(want.splitlines())
            assert bounded.endswith(f"\\ {left} more line{'' if left == 1 else 's'} of this diff left out\n")


def test_a_big_file_diff_is_bounded_and_its_count_is_exact():
    text = "".join(LINE.format(k=k) for k in range(60_000))
    new = unified_diff(LOG, None, text)
    assert len(new.splitlines()) == patches.DIFF_MAX_LINES + 1
    assert diff_left_out(new) == 60_000 + 3 - patches.DIFF_MAX_LINES  # headers, one hunk, every line
    cut = unified_diff(LOG, None, text, max_lines=None, max_chars=10_000)
    assert len(cut) < 10_000 + 200 and diff_left_out(cut) == 60_003 - (len(cut.splitlines()) - 1)
    one_line = unified_diff("min.js", "x" * 2_000_000, "y" * 2_000_000)
    assert len(one_line) < patches.DIFF_MAX_CHARS + 200 and diff_left_out(one_line) >= 1


def test_a_big_file_diff_finds_the_change_in_one_pass_and_applies():
    rng = random.Random(3)
    before = "".join(f"- [observed] line {k % 97}\n" for k in range(40_000))
    for _ in range(20):
        lines = before.splitlines(keepends=True)
        for _ in range(rng.randint(1, 20)):
            k = rng.randrange(len(lines))
            lines[k:k + 1] = rng.choice([[], [f"- new {k}\n"], [lines[k], f"- inserted {k}\n"]])
        if rng.random() < 0.3:
            lines += [f"- appended {k}\n" for k in range(rng.randint(1, 30_000))]
        after = "".join(lines)
        diff = unified_diff("big.md", before, after, None, None)
        assert apply(before, diff) == after
    appended = unified_diff("big.md", before, before + "- one more\n")
    assert appended.count("\n") == 6 and appended.splitlines()[2] == "@@ -39999,2 +39999,3 @@"


def test_the_history_a_redis_store_records_keeps_the_whole_patch(redis_url: str):
    from memtui.core.access.stores import init_store
    from memtui.core.storage.redis_store import RedisStore

    store = RedisStore(redis_url)
    init_store(store, author="wes")
    text = "".join(LINE.format(k=k) for k in range(patches.DIFF_MAX_LINES * 2))
    sid = store.record({LOG: text.encode()}, "write: a big log", "wes")
    assert sid is not None
    recorded = store.change(sid)["diff"]
    assert recorded == whole(LOG, None, text) and not diff_left_out(recorded)


def test_an_external_change_to_a_big_file_is_listed_with_a_bounded_diff(root: Path):
    (root / LOG).write_text("".join(LINE.format(k=k) for k in range(50_000)))
    [p] = [p for p in Memory(root).external_proposals() if p.file == LOG]
    assert len(p.diff) <= patches.DIFF_MAX_CHARS and diff_left_out(p.diff) == 50_003 - patches.DIFF_MAX_LINES


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> Path:
    return demo_root(tmp_path, monkeypatch, demo_template)


async def test_the_review_diff_of_a_huge_file_is_bounded_and_says_how_many_lines_are_left_out(demo: Path):
    lines = 30_000
    (demo / LOG).write_text("".join(LINE.format(k=k) for k in range(lines)))
    app = MemtuiApp(demo, watch=False)
    app.diff_wrap = False  # one row per line: this test reads the unwrapped rows (W wraps them; on by default)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        [p] = [p for p in app.review.proposals if p.file == LOG]
        assert app.review.select(p.id)
        view = app.review.query_one(DiffView)
        await wait_for(pilot, lambda: view.drawn and view.diff == p.diff, what="the big diff drawn")
        assert len(view.rows.rows) <= SHOWN_ROWS
        left = lines + 3 - len(view.rows.rows)  # the file's lines, two file headers and one hunk header
        text = view.render_text().plain.splitlines()
        note = f"… {left:,} more lines of this diff — open {LOG} in the viewer (o)"
        assert text[0] == note and text[-1] == note and len(text) == len(view.rows.rows) + 2
        assert "Deploy step 0 finished" in text[4] and f"Deploy step {lines - 1} " not in "\n".join(text)

        view.focus()
        await pilot.press("o")
        await wait_for(pilot, lambda: (v := app.current_viewer()) is not None and v.rel == LOG and v.state,
                       what="the viewer on the log")
        assert len(app.current_viewer().state.lines) == lines

        app.review.option_list.focus()
        app.review.select(p.id)
        await pilot.press("w")  # close the viewer tab; enter on the proposal opens it again
        await wait_for(pilot, lambda: app.viewer_for(LOG) is None, what="the tab closed")
        app.review.option_list.focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.viewer_for(LOG) is not None, what="enter to open the log")


async def test_the_diff_tab_of_a_huge_file_is_computed_in_a_worker_and_bounded(demo: Path):
    lines = 30_000
    (demo / LOG).write_text("".join(LINE.format(k=k) for k in range(lines)))
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        app.open_file(LOG)
        await wait_for(pilot, lambda: app.current_viewer() is not None and app.current_viewer().rel == LOG,
                       what="the log's tab")
        await pilot.press("d")
        await wait_for(pilot, lambda: any(d.rel == LOG and d.drawn for d in app.main.query(DiffView)),
                       what="the diff tab")
        view = next(d for d in app.main.query(DiffView) if d.rel == LOG)
        assert len(view.diff) <= patches.DIFF_MAX_CHARS
        assert len(view.rows.rows) <= SHOWN_ROWS
        assert f"{lines + 3 - len(view.rows.rows):,} more lines of this diff" in view.render_text().plain
        assert isinstance(app.viewer_for(LOG), MemoryViewer)
