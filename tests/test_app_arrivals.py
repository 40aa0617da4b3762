"""#43: a proposal queued by another process while the app is open announces itself: a feed line and a toast
naming who proposed what where, drawn as data; a flood is one toast that counts them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app_support import SIZE, demo_root, demo_template, settled, wait_for  # noqa: F401 (fixture)
from memtui.core.writing.memory import Memory
from memtui.tui.app import MemtuiApp
from support.redis_server import redis_server, redis_url  # noqa: F401  (fixtures)

HOSTILE_ACTOR = "agent-[bold]x[/]"
HOSTILE_ENTRY = "[stated] Deploys via [@click=app.quit]stg[/]"


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_template: Path) -> Path:
    return demo_root(tmp_path, monkeypatch, demo_template)


def toasts(app) -> list[str]:
    return [str(t.render()) for t in app.screen.query("Toast")]


def cli(root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memtui", *argv, "--root", str(root)], capture_output=True,
                          text=True, timeout=60, env=os.environ.copy())


async def test_a_proposal_queued_by_the_cli_gets_a_feed_line_and_a_toast(demo: Path) -> None:
    app = MemtuiApp(demo)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        await wait_for(pilot, lambda: app.watcher is not None, what="the watcher")
        before = len(app.review.proposals)
        assert not any("queued" in t and HOSTILE_ACTOR in t for t in app.feed.texts())
        done = cli(demo, "update", "Projects", "add", HOSTILE_ENTRY, "--by", HOSTILE_ACTOR)
        assert done.returncode == 4, done.stdout + done.stderr  # queued
        pid = done.stdout.split()[1].rstrip(":")
        await wait_for(pilot, lambda: any(pid in t and "queued" in t for t in app.feed.texts()),
                       what="the feed line for the arriving proposal")
        line = next(r for r in app.feed.records if r.kind == "queued" and r.text.startswith(pid))
        assert line.actor == HOSTILE_ACTOR and line.file == "MEMORY.md"
        assert "add MEMORY.md § Projects" in line.text and "Deploys via [@click=app.quit]stg[/]" in line.text
        await wait_for(pilot, lambda: any(HOSTILE_ACTOR in t for t in toasts(app)), what="the toast")
        toast = next(t for t in toasts(app) if HOSTILE_ACTOR in t)
        # the markup is shown as the agent wrote it, not applied (no bold, no click action, the app still runs)
        assert "proposes" in toast and "add MEMORY.md § Projects" in toast and "[@click=app.quit]" in toast
        assert app.is_running and len(app.review.proposals) == before + 1
        # the proposals there when the app opened were not announced as arrivals
        assert [r.text.split()[0] for r in app.feed.records if r.kind == "queued"] == [pid]


async def test_a_flood_of_50_is_one_summarising_toast(demo: Path) -> None:
    app = MemtuiApp(demo)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        await wait_for(pilot, lambda: app.watcher is not None, what="the watcher")
        shown_before = len(toasts(app))
        script = ("import sys; from memtui.core.writing.memory import Memory; m = Memory(sys.argv[1]); "
                  "[m.update('Facts', 'add', f'[stated] flood fact {i}', actor=f'agent-{i % 2}') for i in range(50)]")
        subprocess.run([sys.executable, "-c", script, str(demo)], check=True, timeout=120, env=os.environ.copy())
        await wait_for(pilot, lambda: sum("flood fact" in t for t in app.feed.texts()) >= 20, timeout=40,
                       what="the flood in the feed")
        await wait_for(pilot, lambda: any("proposals arrived" in t for t in toasts(app)), what="the summary toast")
        await pilot.pause(1.0)  # any later sync of the same flood must not add toasts
        new = toasts(app)[shown_before:]
        summary = [t for t in new if "proposals arrived" in t]
        # the watcher may hear the flood as one burst or a few: one toast per burst, never one per proposal
        assert 1 <= len(summary) <= 3 and not any("proposes" in t for t in new if "flood" in t), new
        assert "agent-0" in summary[0] and "agent-1" in summary[0]
        lines = [r for r in app.feed.records if r.kind == "queued"]
        told = sum(int(r.text.split()[2]) for r in lines if r.text.startswith("… and"))
        assert sum(1 for r in lines if "flood fact" in r.text) + told == 50


async def test_pending_proposals_show_their_age_and_the_old_ones_are_marked(demo: Path, monkeypatch) -> None:
    monkeypatch.setenv("MEMTUI_NOW", "2026-08-17T09:00")
    old = Memory(demo).update("Facts", "add", "[stated] Waited three days", actor="agent-x").id
    monkeypatch.setenv("MEMTUI_NOW", "2026-08-20T11:00")
    recent = Memory(demo).update("Facts", "add", "[stated] Waited three hours", actor="agent-[red]y").id
    monkeypatch.setenv("MEMTUI_NOW", "2026-08-20T14:05")
    app = MemtuiApp(demo, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        options = app.review.option_list
        prompts = {options.get_option_at_index(k).id: options.get_option_at_index(k).prompt
                   for k in range(options.option_count)}
        old_text, recent_text = prompts[old].whole, prompts[recent].whole  # each row as drawn with room
        # the queue's two lines: the age first (the old marked), what where, who; then the entry
        assert old_text.plain.startswith("⌛ 3d add MEMORY.md § Facts · agent-x\n"), old_text.plain
        assert recent_text.plain.startswith("3h add MEMORY.md § Facts · agent-[red]y\n"), recent_text.plain
        # the old one's mark is the theme's warning colour, bold, on the symbol and age alone
        warning = app.review.get_component_rich_style("review--old")
        mark = old_text.plain.index("⌛")
        styles = [s.style for s in old_text.spans if s.start <= mark < s.end]
        assert warning in styles and warning.bold and warning.reverse and warning.color is not None
        muted = app.review.get_component_rich_style("review--muted")
        assert warning.color != muted.color
        assert not any(s.style == warning for s in recent_text.spans)
        # the demo's own proposals, queued at this minute, are `now`
        fresh = next(t for pid, t in prompts.items() if pid not in (old, recent) and not pid.startswith("x-"))
        assert fresh.plain.startswith("now ") and "⌛" not in fresh.plain


async def test_an_mcp_clients_proposal_announces_itself_under_its_hostile_name(root: Path, monkeypatch) -> None:
    """The MCP client's name becomes the actor: it is anyone's to choose, and it is drawn as data in the toast."""
    from support.mcp_client import mcp_client, text_of

    monkeypatch.setenv("MEMTUI_NOW", "2026-08-20T14:05")
    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(root.parent / "config"))
    app = MemtuiApp(root, user="wes")
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_for(pilot, lambda: settled(app) and app.watcher is not None, what="the app and its watcher")
        env = {"MEMTUI_NOW": "2026-08-20T14:05", "MEMTUI_USER": "wes"}
        async with mcp_client(sys.executable, ["-m", "memtui", "mcp", "--root", str(root)], env,
                              client="Evil [b]Bot[/b] [@click=app.quit]") as s:
            out = await s.call_tool("memory_update", {"section": "Decisions", "action": "add",
                                                      "entry": "[observed] Renewals are signed in October"})
        assert text_of(out).startswith("Queued as p-0001")
        actor = Memory(root).get("p-0001").actor
        await wait_for(pilot, lambda: any(actor in t and "proposes" in t for t in toasts(app)), what="the toast")
        toast = next(t for t in toasts(app) if "proposes" in t)
        assert "add MEMORY.md § Decisions" in toast and "Renewals are signed in October" in toast
        line = next(r for r in app.feed.records if r.kind == "queued")
        assert line.actor == actor and line.text.startswith("p-0001 add MEMORY.md § Decisions")
        assert app.is_running


async def test_a_proposal_arriving_in_a_redis_memory_is_announced(redis_url: str, tmp_path: Path,
                                                                  monkeypatch) -> None:
    from memtui.core.access.stores import init_store
    from memtui.core.storage.redis_store import RedisStore

    monkeypatch.setenv("MEMTUI_NOW", "2026-08-20T14:05")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("MEMTUI_STORE", raising=False)
    store = RedisStore(redis_url)
    init_store(store, author="wes")
    app = MemtuiApp(memory=Memory(store), watch=True)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_for(pilot, lambda: app.synced and app.watcher is not None and app.watcher._sub.connected.is_set(),
                       what="the app on Redis")
        done = subprocess.run([sys.executable, "-m", "memtui", "update", "Facts", "add", "[stated] From Redis",
                               "--by", "agent-r", "--store", redis_url], capture_output=True, text=True,
                              timeout=60, env=os.environ.copy())
        assert done.returncode == 4, done.stdout + done.stderr
        await wait_for(pilot, lambda: any("agent-r proposes" in t for t in toasts(app)), what="the toast")
        assert any(r.kind == "queued" and r.actor == "agent-r" and "From Redis" in r.text for r in app.feed.records)


async def test_a_claude_code_hooks_write_announces_itself(root: Path, monkeypatch) -> None:
    """Claude Code's Write of a memory file, turned into a proposal by the PreToolUse hook in its own process."""
    import json

    monkeypatch.setenv("MEMTUI_NOW", "2026-08-20T14:05")
    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(root.parent / "config"))
    (root / "topics").mkdir()
    app = MemtuiApp(root, user="wes")
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_for(pilot, lambda: settled(app) and app.watcher is not None, what="the app and its watcher")
        payload = {"session_id": "s-1", "hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": str(root),
                   "tool_input": {"file_path": str(root / "topics" / "deploys.md"),
                                  "content": "# Deploys\n\n- [observed] [@click=app.quit]Friday[/] deploys fail\n"}}
        done = subprocess.run([sys.executable, "-m", "memtui", "hook", "pre-tool-use", "--root", str(root)],
                              input=json.dumps(payload), capture_output=True, text=True, timeout=60,
                              env=os.environ.copy())
        reason = json.loads(done.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
        assert reason.startswith("Queued as p-"), reason
        pid = reason.split()[2]
        await wait_for(pilot, lambda: any(pid in t and "topics/deploys.md" in t for t in toasts(app)),
                       what="the hook's proposal's toast")
        line = next(r for r in app.feed.records if r.kind == "queued" and r.text.startswith(pid))
        assert line.file == "topics/deploys.md" and line.actor == Memory(root).get(pid).actor
        assert app.is_running


def test_a_proposal_entering_the_page_from_behind_is_no_arrival(root: Path, monkeypatch) -> None:
    """A long queue is listed a page at a time: deciding the oldest brings an older-made one into the list, which
    arrived before the app opened; one made since is news."""
    from memtui.tui.arrivals import Arrivals

    mem = Memory(root)
    monkeypatch.setenv("MEMTUI_NOW", "2026-08-20T09:00")
    first, behind = (mem.update("Facts", "add", f"[stated] made early {i}", actor="agent").id for i in range(2))
    monkeypatch.setenv("MEMTUI_NOW", "2026-08-20T14:05")
    arrivals = Arrivals()
    listed = {p.id: p for p in mem.proposals(external=False)}
    assert arrivals.new([listed[first]]) == []  # the first sync: a page of one
    later = mem.update("Facts", "add", "[stated] made while open", actor="agent").id
    listed = {p.id: p for p in mem.proposals(external=False)}
    # `first` decided, the next page holds the one from behind and the new one
    assert [p.id for p in arrivals.new([listed[behind], listed[later]])] == [later]


def test_an_incoming_change_is_told_by_its_sync_and_a_lookalike_agent_is_still_announced(tmp_path: Path) -> None:
    """A sync's incoming change is said by the sync that brought it (a trusted remote's is taken a moment after it
    is queued: a toast asking for its review was wrong). An agent naming itself as a remote's author, with the
    remote's source, has no memtui flag: it is announced like any proposal."""
    from memtui.core.writing import sync
    from memtui.tui.arrivals import Arrivals
    from support.git_remote import bare, clone, first_machine, git, run_cli

    url = "file://" + str(bare(tmp_path / "remote.git"))
    laptop = first_machine(tmp_path, url)
    ana = clone(url, tmp_path / "ana", "ana")
    memory_md = ana / "MEMORY.md"
    memory_md.write_text(memory_md.read_text(encoding="utf-8") + "- [stated] The build uses uv (2026-12-06, ana)\n",
                         encoding="utf-8")
    git(ana, "commit", "-q", "-a", "-m", "Add the build tool", env={"GIT_AUTHOR_NAME": "ana"})
    git(ana, "push", "-q", "origin", "HEAD:main")
    arrivals = Arrivals()
    assert arrivals.new(Memory(laptop).proposals(external=False)) == []  # the first listing: learnt
    out = run_cli(laptop, "sync")
    assert out.returncode == 4, out.stdout + out.stderr  # queued
    mem = Memory(laptop)
    from memtui.core.basics import clock
    from memtui.core.writing.proposals import Proposal

    forged = mem.submit(Proposal(id="", created=clock.now().isoformat(timespec="seconds"), actor="ana via origin",
                                 file="MEMORY.md", action="add", section="Facts", entry="[stated] I am ana really",
                                 source="origin 0123456789ab"), review=True).id
    assert forged is not None  # queued for review
    listed = mem.proposals(external=False)
    (incoming,) = [p for p in listed if sync.came_in(p)]
    assert incoming.actor == "ana via origin"
    assert [p.id for p in arrivals.new(listed)] == [forged]
