"""The secret gate in the app: a file written outside memtui holding a key is flagged in the review panel, and
neither the panel nor its diff shows the key (a Textual pilot, on the demo memory)."""

from __future__ import annotations

import hashlib
import random
import string
from pathlib import Path

import pytest

from app_support import SIZE, demo_root, demo_template, settled, wait_for  # noqa: F401 (fixture)
from memtui.tui.app import MemtuiApp
from memtui.tui.diff import DiffView


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> Path:
    return demo_root(tmp_path, monkeypatch, demo_template)


async def test_an_external_file_holding_a_key_is_flagged_and_masked_in_the_review_panel(demo: Path) -> None:
    rng = random.Random(3)
    key = "gh" + "p_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(35)) + "7"
    (demo / "deploy.md").write_text(f"# Deploy\n\nThe CI token is {key}\n")
    pid = "x-" + hashlib.sha1(b"deploy.md").hexdigest()[:6]
    app = MemtuiApp(demo, watch=False, user="ana")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(pilot.app), what="the app to settle")
        await wait_for(pilot, lambda: app.review.select(pid), what="the external change")
        await pilot.pause()
        detail = str(app.review.query_one("#review-detail").render())
        assert "holds a credential" in detail and "GitHub token (ghp_****) in deploy.md line 3" in detail
        diff = app.review.query_one(DiffView).diff
        assert "+The CI token is ghp_****" in diff
        assert key[4:] not in detail and key[4:] not in diff
