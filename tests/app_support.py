"""Helpers for the app tests: a deterministic demo memory and a bounded wait on the pilot."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Callable

import pytest

from memtui.demo import make_demo

NOW = "2026-08-20T14:05"
SIZE = (150, 42)


def build_template(folder: Path) -> Path:
    """Build the demo once (git commits take time); tests copy it."""
    saved = {k: os.environ.get(k) for k in ("MEMTUI_NOW", "MEMTUI_USER", "XDG_STATE_HOME")}
    # The demo's queue files are sealed with this key (memtui/core/basics/seal.py): each copy takes it along
    # (`demo_root`).
    os.environ.update(MEMTUI_NOW=NOW, MEMTUI_USER="wes", XDG_STATE_HOME=str(folder / "state"))
    try:
        return make_demo(folder / "memory")
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def demo_root(tmp_path: Path, monkeypatch, template: Path) -> Path:
    """A copy of the demo memory at ~/memory, with HOME, the clock and the person pinned (header: ~/memory)."""
    monkeypatch.setenv("MEMTUI_NOW", NOW)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(tmp_path / "config"))
    root = tmp_path / "memory"
    shutil.copytree(template, root, symlinks=True)
    # The person's key the demo's queue files were sealed with: without it they are not memtui's proposals here.
    if (template.parent / "state").is_dir():
        shutil.copytree(template.parent / "state", tmp_path / "state", dirs_exist_ok=True)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return root


async def wait_for(pilot, condition: Callable[[], object], timeout: float = 20.0, what: str = "condition") -> None:
    """Poll `condition` until it holds (at once, when it does); fail past `timeout`, generous for a loaded machine:
    the demo app took 3.6 s to settle beside 8 CPU hogs and 7 s beside 16, against the 5 s this waited before."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await pilot.pause(0.02)


async def drawn_rows(pilot, app, rel: str) -> list[str]:
    """Open `rel` in the app once its first syncs are done, as a person does, and return its viewer's rows as drawn."""
    await wait_for(pilot, lambda: app.synced and app.folder_synced, what="the first syncs")
    app.open_file(rel)
    await wait_for(pilot, lambda: app.viewer_for(rel) is not None and app.viewer_for(rel).state is not None, what=rel)
    viewer = app.viewer_for(rel)
    await pilot.pause()
    return [viewer.row_text(r) for r in range(len(viewer.state.lines))]


async def click_tab(pilot, app, pane_id: str) -> None:
    """Click a tab's title in the main area's strip, as a person does."""
    strip = app.main.strip
    at = strip.offset_of(pane_id)
    assert at is not None, f"the tab {pane_id} is not in view: {strip.tabs}"
    assert await pilot.click(strip, offset=at)


async def palette_choose(pilot, name: str) -> None:
    """In the command palette just asked for (ctrl+p): type `name`, and press enter once the highlighted hit is
    that command. Hits come from async providers in batches, later under load: an enter before them ran whatever
    was listed then, or nothing."""
    from textual.command import CommandList, CommandPalette

    def top() -> str:
        if not isinstance(pilot.app.screen, CommandPalette):
            return ""
        found = pilot.app.screen.query(CommandList)
        hits = found.first() if found else None
        if hits is None or hits.highlighted is None or not hits.option_count:
            return ""
        prompt = hits.get_option_at_index(hits.highlighted).prompt
        return str(getattr(prompt, "plain", prompt))

    await wait_for(pilot, lambda: isinstance(pilot.app.screen, CommandPalette), what="the palette")
    await pilot.press(*name)
    await wait_for(pilot, lambda: name.lower() in top().lower(), what=f"the palette to offer {name!r}")
    await pilot.press("enter")


def settled(app) -> bool:
    """First syncs done (the queue, then the whole folder's external changes and count), tree's top level loaded,
    MEMORY.md's viewer loaded, review panel filled, diffs drawn."""
    from memtui.tui.diff import DiffView
    from memtui.tui.viewer import MemoryViewer

    viewers = list(app.query(MemoryViewer))
    return bool(app.synced and app.folder_synced and app.tree.root.children and viewers
                and all(v.state is not None for v in viewers)
                and app.review.loaded and all(d.drawn for d in app.query(DiffView)))


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory) -> Path:
    return build_template(tmp_path_factory.mktemp("demo-template"))
