"""An OpenClaw workspace in its own terms: plain bullets, revises in place, history shown and not written.

The workspaces are built by OpenClaw's documented rules (tests/support/fixtures_openclaw.py), most kept in the
person's own git repository as OpenClaw's docs recommend. Every test that opens one compares the folder's listing
and the person's `git status` before and after: what differs must be only what a person approved.

memtui's state and history are kept beside a workspace (or in the person's own repository), so each test checks that
only the approved files differ, then `nothing_else_changed` makes the whole comparison: the folder and the person's
`git status` hold nothing of memtui's bookkeeping.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core.grammar.layout import OPENCLAW
from memtui.core.timeline.lineage import from_history, lineages, superseded_lines
from memtui.core.writing.memory import Memory
from support.fixtures_openclaw import MEMORY, USER, openclaw_writes, person_git, workspace
from support.foreign import changed, git_status, listing

NOW = "2026-12-06T10:15"
AGENT = "agent:openclaw"
# memtui's own bookkeeping, kept beside the folder: none of it may appear in the folder.
BOOKKEEPING = (".memtui", "memory-log.jsonl", ".git")


def ours(path: str) -> bool:
    return path.split("/", 1)[0] in BOOKKEEPING


def only_approved(before: dict[str, str], ws: Path, approved: set[str]) -> dict[str, tuple[str | None, str | None]]:
    """What changed in `ws` since `before`, asserting that apart from memtui's bookkeeping only `approved` files
    did; returns the rest of the difference (the bookkeeping) for the strict comparison. In a workspace the person
    keeps in git, their repository receives the approved commits: its `.git/` is judged by `git status` and log."""
    diff = changed(before, ws)
    assert {p for p in diff if not ours(p)} == approved, diff
    theirs = before.get(".git") == "dir"
    return {p: d for p, d in diff.items() if p not in approved and not (theirs and p.startswith(".git/"))}


def nothing_else_changed(rest: dict[str, tuple[str | None, str | None]], status: str, ws: Path) -> None:
    """The whole comparison: nothing but what was approved differs, in the folder and in the person's `git status`
    (memtui's bookkeeping is kept beside the folder, none of it in it)."""
    assert rest == {}, f"memtui left bookkeeping in the workspace: {sorted(rest)}"
    if status is not None:
        assert git_status(ws) == status, git_status(ws)


@pytest.fixture
def ws(tmp_path: Path, now) -> Path:
    now(NOW)
    return workspace(tmp_path / ".openclaw" / "workspace", git=True)


def cli(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMTUI_NOW": NOW, "MEMTUI_USER": "wes"}
    return subprocess.run([sys.executable, "-m", "memtui", *args, "--root", str(ws)], capture_output=True,
                          text=True, env=env, timeout=120)


# the grammar: plain bullets, in place -------------------------------------------------------------------------
def test_an_agents_plain_bullet_revise_and_remove_through_the_cli_change_lines_in_place(ws: Path) -> None:
    before, status = listing(ws), git_status(ws)
    added = cli(ws, "update", "Projects", "add", "Invoices go out on the 1st of each month", "--by", AGENT)
    assert added.returncode == 4, added.stdout + added.stderr  # queued: a plain bullet is not refused for its tag
    assert "+- Invoices go out on the 1st of each month\n" in added.stdout
    assert (ws / "MEMORY.md").read_text() == MEMORY  # waiting is not writing
    assert cli(ws, "queue", "approve", "p-0001").returncode == 0
    revised = cli(ws, "update", "Projects", "revise", "Invoices go out on the 2nd of each month", "--replaces",
                  "Invoices go out on the 1st", "--by", AGENT)
    assert revised.returncode == 4, revised.stdout + revised.stderr
    assert cli(ws, "queue", "approve", "p-0002").returncode == 0
    removed = cli(ws, "update", "Decisions", "remove", "--replaces", "Deploys freeze on Fridays", "--by", AGENT)
    assert removed.returncode == 4, removed.stdout + removed.stderr
    assert cli(ws, "queue", "approve", "p-0003").returncode == 0

    expected = MEMORY.replace("every second Thursday.\n", "every second Thursday.\n- Invoices go out on the 2nd "
                              "of each month\n").replace("- Deploys freeze on Fridays after 15:00.\n", "")
    assert (ws / "MEMORY.md").read_text() == expected  # no ~~struck~~ line, no [tag], no (date) in OpenClaw's file
    # The approved changes are commits in the person's own repository, and its status shows nothing memtui did.
    log = person_git(ws, "log", "--format=%s", "--", "MEMORY.md").splitlines()
    assert log[:3] == ["remove MEMORY.md § Decisions", "revise MEMORY.md § Projects: Invoices go out on the 2nd of "
                       "each month", "add MEMORY.md § Projects: Invoices go out on the 1st of each month"]
    assert git_status(ws) == status
    nothing_else_changed(only_approved(before, ws, {"MEMORY.md"}), status, ws)


def test_a_revise_in_user_md_keeps_openclaws_observed_line_and_changes_the_directive_in_place(ws: Path) -> None:
    before, status = listing(ws), git_status(ws)
    mem = Memory(ws)
    assert mem.layout().kind == OPENCLAW and not mem.layout().strikes and not mem.layout().tags
    queued = mem.update("Directives", "revise", "Always write dates as DD.MM.YYYY.", replaces="Always write dates",
                        file="USER.md", actor=AGENT)
    assert queued.status == "queued", queued.message
    assert mem.approve(queued.id, by="wes").status == "applied"
    assert (ws / "USER.md").read_text() == USER.replace("- Always write dates as YYYY-MM-DD.",
                                                        "- Always write dates as DD.MM.YYYY.")
    assert "<!-- observed: 2026-11-20 | status: active -->" in (ws / "USER.md").read_text()
    nothing_else_changed(only_approved(before, ws, {"USER.md"}), status, ws)


def test_a_tag_sent_inline_stays_in_the_proposal_not_in_the_file(ws: Path) -> None:
    mem = Memory(ws)
    queued = mem.update("People", "add", "[observed] Dana is out 2026-12-08 to 2026-12-12", actor=AGENT)
    assert queued.status == "queued", queued.message
    assert "+- Dana is out 2026-12-08 to 2026-12-12\n" in queued.diff
    assert mem.approve(queued.id, by="wes").status == "applied"
    assert "- Dana is out 2026-12-08 to 2026-12-12\n" in (ws / "MEMORY.md").read_text()
    assert "[observed]" not in (ws / "MEMORY.md").read_text()
    assert any(r.get("provenance") == "observed" or "[observed]" in str(r.get("entry", ""))
               for r in mem.store.audit_records()) or "[observed]" in (ws / "memory-log.jsonl").read_text()


def test_a_move_carries_the_line_as_it_is_and_leaves_no_struck_line_behind(ws: Path) -> None:
    mem = Memory(ws)
    within = mem.move("People", "Dana owns the billing service", "Decisions", actor="wes")
    assert within.status == "applied", within.message
    text = (ws / "MEMORY.md").read_text()
    assert "~~" not in text and text.count("Dana owns the billing service") == 1
    assert "- Deploys freeze on Fridays after 15:00.\n- Dana owns the billing service; ask her before schema " \
           "changes.\n" in text
    across = mem.move("Decisions", "Use pnpm", "Directives", to="USER.md", actor="wes")
    assert across.status == "applied", across.message
    assert "pnpm" not in (ws / "MEMORY.md").read_text() and "~~" not in (ws / "MEMORY.md").read_text()
    assert "- Use pnpm for every JavaScript repository.\n" in (ws / "USER.md").read_text()


def test_lint_asks_no_tag_of_openclaws_bullets_and_says_how_a_fact_is_replaced_there(ws: Path) -> None:
    before, status = listing(ws), git_status(ws)
    assert cli(ws, "lint").stdout.strip() == "clean: no findings"
    assert changed(before, ws) == {} and git_status(ws) == status  # linting wrote nothing, not even bookkeeping
    openclaw_writes(ws, "MEMORY.md", MEMORY.replace("- Deploys freeze on Fridays after 15:00.\n",
                                                    "- Deploys freeze on Fridays after 15:00.\n"
                                                    "- Deploys freeze on Thursdays after 15:00.\n"))
    person_git(ws, "commit", "-qam", "two package managers")
    out = cli(ws, "lint").stdout
    assert "two current versions of one fact?" in out and "revise the old one so it is replaced (history keeps it)" \
        in out and "untagged" not in out


def test_a_plain_bullets_own_date_and_parentheses_are_kept_as_sent(ws: Path) -> None:
    mem = Memory(ws)
    out = mem.update("People", "add", "[observed] Dana is out next week (2026-12-08, per her calendar)", actor=AGENT)
    assert out.status == "queued", out.message
    assert "+- Dana is out next week (2026-12-08, per her calendar)\n" in out.diff
    web = mem.update("Projects", "add", "Postgres 17 is supported by RDS", actor=AGENT, origin="web")
    assert web.status == "queued" and "+- Postgres 17 is supported by RDS (untrusted:web)\n" in web.diff


def test_memtuis_own_format_still_strikes_and_tags(root: Path, now) -> None:
    now(NOW)
    mem = Memory(root)
    assert mem.update("Preferences", "add", "[stated] Prefers dark mode").status == "applied"
    assert mem.update("Preferences", "revise", "[stated] Prefers light mode", replaces="dark mode").status == "applied"
    text = (root / "MEMORY.md").read_text()
    assert "- ~~[stated] Prefers dark mode (2026-12-06)~~ superseded 2026-12-06\n" \
           "- [stated] Prefers light mode (2026-12-06)\n" in text
    assert mem.update("Preferences", "add", "Prefers tabs", actor=AGENT).status == "refused"


async def test_an_mcp_clients_plain_bullet_and_revise_wait_then_land_in_place(ws: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from support.mcp_client import mcp_client, text_of

    monkeypatch.setenv("XDG_STATE_HOME", str(ws.parent / "state"))
    before, status = listing(ws), git_status(ws)
    server = {"MEMTUI_NOW": NOW, "MEMTUI_USER": "wes", "XDG_STATE_HOME": str(ws.parent / "state")}
    async with mcp_client(sys.executable, ["-m", "memtui", "mcp", "--root", str(ws)], server) as s:
        added = await s.call_tool("memory_update", {"section": "People", "action": "add",
                                                    "entry": "Dana is out 2026-12-08 to 2026-12-12"})
        assert "queued" in text_of(added).lower(), text_of(added)
        revised = await s.call_tool("memory_update", {"file": "USER.md", "section": "Directives", "action": "revise",
                                                      "entry": "Prefer a one-line summary first.",
                                                      "replaces": "Prefer concise progress updates"})
        assert "queued" in text_of(revised).lower(), text_of(revised)
    assert (ws / "MEMORY.md").read_text() == MEMORY and (ws / "USER.md").read_text() == USER
    mem = Memory(ws)
    for p in mem.proposals():
        assert p.actor == "mcp:claude-code"
        assert mem.approve(p.id, by="wes").status == "applied"
    assert (ws / "MEMORY.md").read_text() == MEMORY.replace(
        "before schema changes.\n", "before schema changes.\n- Dana is out 2026-12-08 to 2026-12-12\n")
    assert (ws / "USER.md").read_text() == USER.replace("- Prefer concise progress updates during implementation "
                                                        "work.", "- Prefer a one-line summary first.")
    nothing_else_changed(only_approved(before, ws, {"MEMORY.md", "USER.md"}), status, ws)


async def test_the_chats_agent_revises_a_plain_bullet_through_the_real_sdk_and_it_lands_in_place(ws: Path) -> None:
    from memtui.agent.events import ProposalCard
    from memtui.agent.session import ChatSession
    from support.anthropic_server import FakeAnthropic, reply, tool_use

    before, status = listing(ws), git_status(ws)
    mem = Memory(ws)
    call = tool_use("memory_update", {"section": "Decisions", "action": "revise", "entry": "Use pnpm 9 for every "
                                      "JavaScript repository.", "replaces": "Use pnpm for every JavaScript"})
    with FakeAnthropic(reply("Updating memory.", call), reply("Queued for your review.")) as server:
        chat = ChatSession(mem, api_key="test", base_url=server.url, max_retries=0)
        try:
            events = [e async for e in chat.turn("We pinned pnpm 9 everywhere.")]
        finally:
            await chat.aclose()
    [card] = [e for e in events if isinstance(e, ProposalCard)]
    assert card.status == "pending"
    assert "-- Use pnpm for every JavaScript repository.\n+- Use pnpm 9 for every JavaScript repository.\n" in \
        card.diff
    assert (ws / "MEMORY.md").read_text() == MEMORY
    assert mem.approve(card.id, by="wes").status == "applied"
    assert (ws / "MEMORY.md").read_text() == MEMORY.replace("Use pnpm for", "Use pnpm 9 for")
    nothing_else_changed(only_approved(before, ws, {"MEMORY.md"}), status, ws)


# older versions, from history ---------------------------------------------------------------------------------
def test_older_versions_come_from_history_struck_and_are_never_written(ws: Path, now) -> None:
    mem = Memory(ws)
    for day, new, old in (("2026-12-06T10:15", "Billing service moved to Postgres 17 in December.", "Postgres 16"),
                          ("2026-12-07T09:00", "Billing service runs Postgres 17.2.", "Postgres 17 in")):
        now(day)
        p = mem.update("Projects", "revise", new, replaces=old, actor=AGENT)
        assert mem.approve(p.id, by="wes").status == "applied"
    now("2026-12-08T09:00")
    pending = mem.update("Projects", "revise", "Billing service runs Postgres 18.", replaces="Postgres 17.2",
                         actor=AGENT)
    assert pending.status == "queued"
    earlier = ["- ~~Billing service moved to Postgres 16 in November.~~ superseded 2026-12-06",
               "- ~~Billing service moved to Postgres 17 in December.~~ superseded 2026-12-07"]
    # The review of the pending revise shows what the entry was, as the viewer does for the entry itself.
    assert lineages(mem, mem.proposals()) == {pending.id: earlier}
    assert from_history(mem.store, "MEMORY.md", "Projects", "Postgres 17.2") == earlier
    assert superseded_lines(mem.store, "MEMORY.md") == {"- Billing service runs Postgres 17.2.": earlier}
    text = (ws / "MEMORY.md").read_text()
    assert "~~" not in text and "superseded" not in text
    assert "- Billing service runs Postgres 17.2.\n" in text


# OpenClaw's own writes, straight to disk ----------------------------------------------------------------------
def test_openclaws_own_edit_is_an_external_change_approve_records_it_in_the_persons_repository(ws: Path) -> None:
    before, status = listing(ws), git_status(ws)
    mem = Memory(ws)
    edited = MEMORY.replace("- Use pnpm for every JavaScript repository.", "- Use bun for every JavaScript "
                            "repository.")
    openclaw_writes(ws, "MEMORY.md", edited)
    openclaw_writes(ws, "memory/2026-12-06.md", "# 2026-12-06\n\n- 10:02 Dana confirmed the VAT export.\n")
    external = {p.file: p for p in mem.proposals() if p.external}
    assert set(external) == {"MEMORY.md", "memory/2026-12-06.md"}
    assert "-- Use pnpm for every JavaScript repository.\n+- Use bun for every JavaScript repository.\n" in \
        external["MEMORY.md"].diff
    # Reviewed entry by entry: what OpenClaw changed, as entries, beside the diff.
    assert lineages(mem, external.values()) == {
        external["MEMORY.md"].id: ["changed: - Use pnpm for every JavaScript repository. → - Use bun for every "
                                   "JavaScript repository."],
        external["memory/2026-12-06.md"].id: ["added: - 10:02 Dana confirmed the VAT export."]}
    shown = cli(ws, "queue", "show", external["MEMORY.md"].id).stdout  # the same, for a person at a shell
    assert "entries it changes (1):\n  changed: - Use pnpm for every JavaScript repository. → - Use bun" in shown
    for p in external.values():
        assert mem.approve(p.id, by="wes").status == "applied"
    assert (ws / "MEMORY.md").read_text() == edited  # approving records; it rewrites nothing
    assert person_git(ws, "show", "HEAD:MEMORY.md") == edited
    assert not [p for p in mem.proposals() if p.external]
    assert git_status(ws) == status
    nothing_else_changed(only_approved(before, ws, {"MEMORY.md", "memory/2026-12-06.md"}), status, ws)


def test_rejecting_openclaws_own_edit_restores_the_approved_bytes_exactly_and_keeps_the_rejected_ones(
        ws: Path) -> None:
    before, status = listing(ws), git_status(ws)
    mem = Memory(ws)
    approved = (ws / "SOUL.md").read_bytes()
    rewritten = approved.replace(b"- Private things stay private. Period.\n", b"- Share what you learn freely.\n")
    openclaw_writes(ws, "SOUL.md", rewritten.decode())
    (p,) = [p for p in mem.proposals() if p.external]
    assert mem.reject(p.id, reason="not my soul", by="wes").status == "rejected"
    assert (ws / "SOUL.md").read_bytes() == approved
    kept = [r for r in mem.store.audit_records() if r.get("status") == "rejected" and r.get("file") == "SOUL.md"]
    import base64

    assert kept and base64.b64decode(kept[-1]["content_b64"]) == rewritten  # nothing is lost
    # A daily note OpenClaw made on its own, rejected: the file goes, its bytes stay in the audit log.
    note = b"# 2026-12-06\n\n- 10:40 Saved the deploy key to notes.\n"
    (ws / "memory" / "2026-12-06.md").write_bytes(note)
    (p,) = [p for p in mem.proposals() if p.external]
    assert mem.reject(p.id, reason="not memory", by="wes").status == "rejected"
    assert not (ws / "memory" / "2026-12-06.md").exists()
    gone = [r for r in mem.store.audit_records() if r.get("file") == "memory/2026-12-06.md"]
    assert base64.b64decode(gone[-1]["content_b64"]) == note
    assert git_status(ws) == status
    nothing_else_changed(only_approved(before, ws, set()), status, ws)


# the app ---------------------------------------------------------------------------------------------------------
async def test_the_app_shows_history_struck_for_the_entry_and_in_review_and_openclaws_edit_entry_by_entry(
        ws: Path, now, monkeypatch: pytest.MonkeyPatch) -> None:
    from app_support import SIZE, settled, wait_for
    from memtui.tui.app import MemtuiApp
    from memtui.tui.viewer import MemoryViewer

    monkeypatch.setenv("HOME", str(ws.parent.parent))
    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(ws.parent.parent / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(ws.parent.parent / "state"))
    mem = Memory(ws)
    p = mem.update("Projects", "revise", "Billing service moved to Postgres 17 in December.", replaces="Postgres 16",
                   actor=AGENT)
    assert mem.approve(p.id, by="wes").status == "applied"
    now("2026-12-07T09:00")
    pending = mem.update("Projects", "revise", "Billing service runs Postgres 18.", replaces="Postgres 17",
                         actor=AGENT)
    openclaw_writes(ws, "MEMORY.md", (ws / "MEMORY.md").read_text().replace("Use pnpm", "Use bun"))
    before, status = listing(ws), git_status(ws)
    app = MemtuiApp(ws, watch=False, user="wes")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), what="the app to settle")
        viewer = app.query_one(MemoryViewer)
        viewer.focus()
        await pilot.pause()
        bar = viewer.entry_cursor

        def bar_text() -> str:
            return str(bar.bar.render()) if bar.bar is not None and bar.bar.display else ""

        lines = (ws / "MEMORY.md").read_text().splitlines()
        await pilot.press("j")  # the cursor shows; then down to the revised entry, as a person walks to it
        await wait_for(pilot, lambda: viewer.cursor is not None, what="the cursor")
        while "Postgres 17" not in lines[viewer.cursor]:
            await pilot.press("j")
            await pilot.pause()
        await wait_for(pilot, lambda: "earlier (1, from history)" in bar_text(), what="the entry's earlier version")
        assert "Billing service moved to Postgres 16 in November. (2026-12-06)" in bar_text()
        mark = viewer.state.extra["provenance"][viewer.cursor]  # who wrote it, from history, shown beside them
        assert mark.label() in bar_text() and mark.writer in ("person", "agent"), (mark, bar_text())
        keys = {b.binding.action for b in app.screen.active_bindings.values() if b.enabled}
        assert "revise_entry" in keys and "retag_entry" not in keys  # no Tag key where no tag is written
        assert (ws / "MEMORY.md").read_text().count("~~") == 0
        await wait_for(pilot, lambda: app.review.select(pending.id), what="the pending revise listed")
        await pilot.pause()
        detail = str(app.review.query_one("#review-detail").render())
        assert "history of the entry it changes (1 earlier):" in detail
        assert "~~Billing service moved to Postgres 16 in November.~~ superseded 2026-12-06" in detail
        outside = next(q for q in app.review.proposals if q.external)
        app.review.select(outside.id)
        await pilot.pause()
        detail = str(app.review.query_one("#review-detail").render())
        assert "entries it changes (1):" in detail
        assert "changed: - Use pnpm for every JavaScript repository. → - Use bun for every JavaScript" in detail
    nothing_else_changed(only_approved(before, ws, set()), status, ws)


# a real terminal ---------------------------------------------------------------------------------------------------
@pytest.mark.tmux
@pytest.mark.parametrize("size", [(120, 35), (80, 24)])
def test_a_newcomer_opens_the_workspace_with_open_openclaw_in_a_terminal(tmp_path: Path, now, size,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """`memtui open --openclaw` under a fake HOME finds ~/.openclaw/workspace; the queue shows the agent's revise
    with the entry's history struck and OpenClaw's own edit entry by entry; the entry bar shows the earlier
    version; the file holds no struck line and the person's `git status` nothing but memtui's bookkeeping."""
    import shutil

    from support.tmux import capture, start_app, wait_screen

    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("HOME", str(tmp_path))
    ws = workspace(tmp_path / ".openclaw" / "workspace", git=True)
    mem = Memory(ws)
    p = mem.update("Projects", "revise", "Billing service moved to Postgres 17 in December.", replaces="Postgres 16",
                   actor=AGENT)
    assert mem.approve(p.id, by="wes").status == "applied"
    mem.update("Projects", "revise", "Billing service runs Postgres 18.", replaces="Postgres 17", actor=AGENT)
    openclaw_writes(ws, "MEMORY.md", (ws / "MEMORY.md").read_text().replace("Use pnpm", "Use bun"))
    before, status = listing(ws), git_status(ws)
    tmux = start_app("openclaw", tmp_path, "open --openclaw", size, NOW)
    try:
        screen = wait_screen(tmux, lambda s: "~/.openclaw/workspace" in s and "1 pending" in s and "1 external" in s,
                             "the workspace found and its queue")
        def detail(s: str) -> str:
            """The text right of the stacked queue's divider, its wrapped lines read as one (at 80 columns the
            detail beside the list wraps)."""
            return " ".join(" ".join(line.rsplit("│", 1)[-1].split()) for line in s.splitlines())

        screen = wait_screen(tmux, lambda s: "history of the entry it changes (1 earlier)" in s + detail(s),
                             "the revise's history")
        assert "~~Billing service moved to Postgres 16 in" in screen + detail(screen)
        subprocess.run([*tmux, "send-keys", "-t", "app", "j"], check=True)
        screen = wait_screen(tmux, lambda s: "earlier (1, from history)" in s, "the entry bar's earlier version")
        subprocess.run([*tmux, "send-keys", "-t", "app", "Tab"], check=True)
        subprocess.run([*tmux, "send-keys", "-t", "app", "Down"], check=True)
        screen = wait_screen(tmux, lambda s: "entries it changes (1)" in s, "OpenClaw's edit entry by entry")
        assert "changed: - Use pnpm" in screen
    finally:
        print(capture(tmux))
        subprocess.run([*tmux, "kill-server"], capture_output=True)
    assert "~~" not in (ws / "MEMORY.md").read_text()
    nothing_else_changed(only_approved(before, ws, set()), status, ws)
