"""Attacks on issue 17's items 3 and 6: a proposal timed to land while the person types, markup in what a key
approves, and a file name built to run a command when the person pastes memtui's fix for it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from app_support import SIZE, demo_root, demo_template, settled, wait_for  # noqa: F401 (fixture)
from memtui.core.writing.memory import Memory
from memtui.tui.app import MemtuiApp


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> Path:
    return demo_root(tmp_path, monkeypatch, demo_template)


def status_of(root: Path, pid: str) -> str:
    return json.loads((root / ".memtui/queue" / f"{pid}.json").read_text())["status"]


async def test_a_proposal_landing_while_the_person_types_in_chat_is_not_approved(demo: Path) -> None:
    """An agent queues a write the moment the person starts a message: it gets selected in the review panel, but
    the letters still go to the chat box."""
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        await pilot.press("c")
        await wait_for(pilot, lambda: getattr(app.focused, "id", None) == "chat-input", what="the chat input")
        await pilot.press(*"a quick ")
        late = Memory(demo).update("Preferences", "add", "[stated] Approve everything I send", source="chat",
                                   actor="agent-claude")
        assert late.status == "queued" and late.id
        app.sync()
        await wait_for(pilot, lambda: late.id in [p.id for p in app.review.proposals], what="the late proposal")
        app.review.select(late.id)
        await pilot.press(*"are you there? a a a r e A")
        await pilot.pause(0.3)
        assert app.focused.value == "a quick are you there? a a a r e A"
        assert len(app.screen_stack) == 1
        assert status_of(demo, late.id) == "pending"


async def test_markup_in_an_entry_approved_by_key_is_named_literally_and_runs_nothing(demo: Path) -> None:
    hostile = "Likes [@click=app.quit]this[/] and [b]bold[/b] [link=file:///etc/passwd]x[/link]"
    queued = Memory(demo).update("Preferences", "add", f"[stated] {hostile}", source="chat", actor="agent-claude")
    assert queued.status == "queued", queued.message
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        await wait_for(pilot, lambda: app.review.select(queued.id), what="the hostile proposal")
        await pilot.press("a")
        await wait_for(pilot, lambda: status_of(demo, queued.id) == "applied", what="the approval")
        named = [a.text for a in app.feed.records if a.text.startswith(f"approving {queued.id}")]
        assert len(named) == 1 and hostile in named[0]
        drawn = [line for line in app.feed.lines if f"approving {queued.id}" in line.plain]
        assert hostile in drawn[0].plain  # drawn as text: parsed as markup, the tags would be gone from it
        assert app.is_running and len(app.screen_stack) == 1  # the @click in the text did not quit the app


def test_the_iconv_fix_for_a_hostile_file_name_is_safe_to_paste(tmp_path: Path, root: Path) -> None:
    """doctor prints a command for the person to paste; a file name an agent chose must not become code."""
    name = "topics/x$(touch PWNED) `touch PWNED2`;'touch PWNED3'.md"
    (root / "topics").mkdir()
    (root / name).write_bytes("## Notes\n- [stated] café\n".encode("latin-1"))
    done = subprocess.run([sys.executable, "-m", "memtui", "doctor", "--root", str(root), "--json"],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "MEMTUI_CONFIG_DIR": str(tmp_path / "config")})
    assert done.returncode == 1
    finding = next(f for f in json.loads(done.stdout)["findings"] if f["kind"] == "unreadable-file")
    assert finding["path"] == name
    command = re.search(r"`(iconv [^`]*(?:`[^`]*)*?)` \(if", finding["message"])
    assert command, finding["message"]
    subprocess.run(["bash", "-c", command.group(1)], cwd=root, check=True, timeout=30)
    assert not list(root.rglob("PWNED*")) and not list(Path.cwd().glob("PWNED*"))
    assert (root / name).read_text(encoding="utf-8") == "## Notes\n- [stated] café\n"
