"""200 rapid edits made in the app while CLI writers run: no deadlock, nothing lost, the app still answers keys.

The hang this guards against: the app's worker threads and its sync thread shared GitPython's `git cat-file`
pipes, and two of them blocked each other with the memory lock held (`doctor` hung, `q` blanked the screen)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import git
import pytest

from app_support import SIZE, demo_root, demo_template, settled, wait_for  # noqa: F401 (fixture)
from memtui.tui.app import MemtuiApp

EDITS = 200
CLI_WRITES = 15
NAMES = ("alpha", "beta")  # words, not numbers: "writer 0 fact 1" and "writer 1 fact 0" are near-duplicates

WRITER = """
import sys
from memtui.core.writing.memory import Memory
m = Memory(sys.argv[1])
for i in range(int(sys.argv[3])):
    r = m.update("Facts", "add", f"[observed] cli {sys.argv[2]} wrote fact {i}")
    assert r.status == "applied", r.message
"""


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> Path:
    return demo_root(tmp_path, monkeypatch, demo_template)


async def test_two_hundred_rapid_edits_while_cli_writers_run(demo: Path) -> None:
    app = MemtuiApp(demo, watch=True, user="wes")
    results: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), timeout=20, what="the app to settle")
        writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(demo), name, str(CLI_WRITES)])
                   for name in NAMES]

        def edit(i: int) -> None:
            # The person's own writes, from app worker threads, as the entry cursor makes them.
            r = app.memory.update("Projects", "add", f"[stated] rapid edit number {i}")
            results.append(r.status if r.status == "applied" else r.message)

        for i in range(EDITS):
            app.run_worker(lambda i=i: edit(i), thread=True, group=f"edit-{i % 4}")
            if i % 20 == 0:
                await pilot.press("j")  # keys keep going through meanwhile
        await wait_for(pilot, lambda: len(results) == EDITS, timeout=240, what="every edit to finish")
        for w in writers:
            assert w.wait(timeout=120) == 0
        started = time.monotonic()
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ != "Screen", timeout=10, what="the help")
        assert time.monotonic() - started < 10  # answered, not hung
    assert results == ["applied"] * EDITS, [r for r in results if r != "applied"][:3]
    text = (demo / "MEMORY.md").read_text()
    assert all(f"rapid edit number {i} " in text for i in range(EDITS))
    assert sum(f"cli {n} wrote fact {i} " in text for n in NAMES for i in range(CLI_WRITES)) == 2 * CLI_WRITES
    repo = git.Repo(demo)
    assert repo.git.status("--porcelain", "MEMORY.md") == ""  # every edit committed
    messages = [c.message for c in repo.iter_commits(max_count=EDITS + 2 * CLI_WRITES + 5)]
    assert sum("rapid edit number" in m for m in messages) == EDITS
