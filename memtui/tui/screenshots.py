"""Render the docs' SVG screenshots from the real app: `python -m memtui.tui.screenshots [OUT_DIR]`.

Each scene runs the app headless on a fresh demo memory (clock pinned, so dates and times are the same on
every run) at a fixed size, drives it like a person would, and saves what is on screen.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Awaitable, Callable

SIZE = (150, 42)
NOW = "2026-08-20T14:05"


async def _wait(pilot, condition: Callable[[], object], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the app did not settle")
        await pilot.pause(0.05)


async def _settle(pilot) -> None:
    from memtui.tui.viewer import MemoryViewer

    app = pilot.app
    await _wait(pilot, lambda: app.folder_synced and app.tree.root.children and app.review.loaded
                and all(v.state is not None for v in app.query(MemoryViewer)))
    await pilot.pause(0.2)


async def _review(pilot) -> None:
    await _settle(pilot)
    pilot.app.review.select("p-0002")
    pilot.app.review.option_list.focus()
    await pilot.pause(0.2)


async def _live_diff(pilot) -> None:
    from memtui.tui.viewer import MemoryViewer

    await _settle(pilot)
    memory = pilot.app.root / "MEMORY.md"
    memory.write_text(memory.read_text().replace(
        "- Orion dashboard is paused until Q4\n",
        "- [stated] Orion dashboard restarts in Q4 (2026-08-20, chat)\n"
        "- [observed] Orion has 3 open incidents (2026-08-20, pagerduty)\n"))
    viewer = pilot.app.query_one(MemoryViewer)
    # This scene's app watches the folder, as the app does: the write reaches the viewer and the review panel.
    await _wait(pilot, lambda: viewer.state.ghosts and any(
        p.external and p.file == "MEMORY.md" for p in pilot.app.review.proposals))
    await pilot.pause(0.3)


SCENES: dict[str, tuple[str | None, Callable[..., Awaitable[None]]]] = {
    "main": (None, _settle),
    "review": (None, _review),
    "live-diff": (None, _live_diff),
    "theme-dark": ("memtui-dark", _settle),
    "theme-light": ("memtui-light", _settle),
    "theme-contrast": ("memtui-contrast", _settle),
}
WATCHING = {"live-diff"}  # scenes whose app watches the folder (the others are still, so every run is the same)


async def render(out: Path) -> list[Path]:
    from memtui.demo import make_demo
    from memtui.tui.app import MemtuiApp

    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (theme, drive) in SCENES.items():
        home = Path(tempfile.mkdtemp(prefix="memtui-shot-"))
        os.environ["HOME"] = str(home)  # the header shows ~/memory, not a temporary path
        root = make_demo(home / "memory")
        app = MemtuiApp(root, theme=theme, watch=name in WATCHING)
        async with app.run_test(size=SIZE) as pilot:
            await drive(pilot)
            path = out / f"{name}.svg"
            path.write_text(app.export_screenshot(title=f"memtui — {name}"), encoding="utf-8")
            written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    out = Path(argv[0]) if argv else Path("screenshots")
    os.environ.setdefault("MEMTUI_NOW", NOW)
    os.environ.setdefault("MEMTUI_USER", "wes")
    for path in asyncio.run(render(out)):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
