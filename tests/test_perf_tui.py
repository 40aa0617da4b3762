"""The app's speed-ups keep its behaviour: the watcher's settled bursts, the deferred sync, the big-file index."""

from __future__ import annotations

import os
import threading
import time

from memtui.core.storage.init import init_root
from memtui.core.writing import changes


def test_an_atomic_write_is_settled_by_its_rename(tmp_path):
    """The rename that puts a whole file in place ends the burst soon (SETTLED), not after the full QUIET."""
    init_root(tmp_path)
    posted = []
    hub = changes.for_folder(tmp_path)
    unsubscribe = hub.subscribe(posted.append)
    notes: list[tuple[frozenset[str], bool]] = []
    seen = threading.Event()
    burst = hub.feed.burst
    add = burst.add

    def recording(paths=(), *, queue=False, audit=False, settled=False, everything=False):  # type: ignore[no-untyped-def]
        notes.append((frozenset(paths), settled))
        if settled:
            seen.set()
        add(paths, queue=queue, audit=audit, settled=settled, everything=everything)

    burst.add = recording  # records each note the watcher makes, and still coalesces as the app's does
    try:
        tmp = tmp_path / ".MEMORY.md.tmp"
        tmp.write_text((tmp_path / "MEMORY.md").read_text() + "- [observed] a new entry (2026-01-02)\n")
        os.replace(tmp, tmp_path / "MEMORY.md")
        assert seen.wait(10), f"no settled note: {notes}"
        deadline = time.monotonic() + 10
        while len(posted) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        unsubscribe()
    assert (frozenset({"MEMORY.md"}), True) in notes
    assert posted[0].everything  # "watching now": what changed before was not seen
    assert len(posted) == 2 and "MEMORY.md" in posted[1].paths and not posted[1].own


def test_big_lines_match_the_text_split_and_its_headings(tmp_path):
    """The line-offset index reads the same lines, headings and counts as splitting the decoded text."""
    from memtui.tui.lines import CHUNK, BigLines, scan_big
    from memtui.tui.viewer import _light_headings, scan

    body = [f"- 09:{i % 60:02d} [observed] événement {i}" + (" ~~gone~~" if i % 7 == 0 else "")
            for i in range(120_000)]
    text = "# 2026-01-01\r\n\n" + "\n".join(body[:70_000]) + "\n## Later\n" + "\n".join(body[70_000:]) + "\n~~x~~"
    data = text.encode()
    assert len(data) > 2 * CHUNK  # indexed in several chunks
    posted, repainted = [], []
    scan_big("log.md", data, None, posted.append, lambda: repainted.append(True))
    state, ref = posted[0], scan("log.md", text, None)
    assert repainted and len(state.lines) == len(ref.lines)
    assert list(state.lines) == ref.lines
    assert state.lines[-1] == "~~x~~" and state.lines[0] == "# 2026-01-01"
    assert state.headings == ref.headings == _light_headings(text)
    assert state.width >= ref.width
    assert BigLines(b"a\nb\n") == ["a", "b"] and BigLines(b"") == []


def test_a_big_file_that_grew_marks_only_the_appended_lines():
    from memtui.tui.lines import scan_big

    before = ("# log\n" + "".join(f"- [observed] line {i}\n" for i in range(80_000))).encode()
    first: list = []
    scan_big("log.md", before, None, first.append, lambda: None)
    after: list = []
    scan_big("log.md", before + b"- [observed] new\n", first[0].lines, after.append, lambda: None)
    assert after[0].added == {80_001} and after[0].first_change == 80_001
    changed: list = []
    scan_big("log.md", b"# other\n" + before, first[0].lines, changed.append, lambda: None)
    assert not changed[0].added  # not an append: no marks rather than a diff of 80,000 lines


async def test_big_log_heading_count_arrives_after_the_first_frame(tmp_path):
    from app_support import SIZE, settled, wait_for

    from memtui.tui.app import MemtuiApp

    demo = tmp_path / "m"
    init_root(demo)
    lines = [f"- 10:{i % 60:02d} [observed] event {i} " + "x" * 40 for i in range(30_000)]
    (demo / "log").mkdir(exist_ok=True)
    (demo / "log/2026-01-01.md").write_text("# 2026-01-01\n\n" + "\n".join(lines) + "\n- ~~old~~ struck\n")
    app = MemtuiApp(demo, watch=False)
    app.diff_wrap = False  # one row per line: this test reads the unwrapped rows (W wraps them; on by default)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app settled")
        app.open_file("log/2026-01-01.md")
        await wait_for(pilot, lambda: app.viewer_for("log/2026-01-01.md") is not None
                       and app.viewer_for("log/2026-01-01.md").state is not None, what="the big log")
        viewer = app.viewer_for("log/2026-01-01.md")
        assert viewer.virtual_size.height == 30_003
        await wait_for(pilot, lambda: "30000" in viewer.row_text(0), timeout=20, what="the heading's count")
        assert viewer.row_text(0).rstrip().endswith("# 2026-01-01  30000")
