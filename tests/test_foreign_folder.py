"""Folders memtui did not make: opening one changes nothing in it that a person did not approve.

Four folders, each opened through every surface (the CLI's commands, the Claude Code hook, the MCP server, the app):
a plain folder (memtui's history and state are kept beside it), a folder that is the person's own git repository
(memtui's commits go there; its bookkeeping never shows in their `git status`), a folder nested in a larger
repository (memtui's own history beside it: nothing is committed into the project) and a memory made by
`memtui init` (`.memtui/` inside, today's layout). Each compares `support.foreign.listing` before and after: only
the memory files a person approved may differ.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import git
import pytest

from memtui.core.storage.places import places_for
from support.foreign import changed, git_status, listing

WORKTREE = Path(__file__).resolve().parent.parent
MEMORY = "# Memory\n\n## Notes\n- Likes tea in the morning\n- Uses vim\n"
TOPIC = "# Billing\n\nThe billing service runs on Postgres 16.\n"
KINDS = ("plain", "own-repo", "nested", "memtui")


def make(tmp_path: Path, kind: str) -> tuple[Path, Path | None]:
    """(memory folder, the person's repository or None), written as the person (or their tool) wrote them."""
    if kind == "memtui":
        from memtui.core.storage.init import init_root

        root = tmp_path / "memory"
        init_root(root)
        (root / "MEMORY.md").write_text(MEMORY)
        (root / "billing.md").write_text(TOPIC)
        repo = git.Repo(root)
        repo.index.add(["MEMORY.md", "billing.md"])
        repo.index.commit("the person's notes")
        return root, None
    base = tmp_path / "project" if kind == "nested" else tmp_path
    root = base / "notes" if kind == "nested" else tmp_path / "notes"
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_text(MEMORY)
    (root / "billing.md").write_text(TOPIC)
    if kind == "plain":
        return root, None
    top = root if kind == "own-repo" else base
    if kind == "nested":
        (base / "README.md").write_text("# a project\n")
    repo = git.Repo.init(top, initial_branch="main")
    repo.index.add([p.relative_to(top).as_posix() for p in top.rglob("*.md")])
    repo.index.commit("the person's own commit")
    return root, top


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(WORKTREE), "MEMTUI_USER": "wes"}


def cli(root: Path, *args: str, check: int | None = 0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "memtui", *args, "--root", str(root)], capture_output=True,
                          text=True, env=env(), timeout=120)
    if check is not None:
        assert done.returncode == check, (args, done.stdout, done.stderr)
    return done


def mine(before: dict[str, str], root: Path, kind: str) -> dict[str, tuple[str | None, str | None]]:
    """What changed in the folder, less what is memtui's by design where the memory is memtui's own (`.memtui/`,
    the audit log, `.git`) or the person's repository (which receives memtui's commits)."""
    skip = (".memtui", "memory-log.jsonl", ".git") if kind == "memtui" else (".git",) if kind == "own-repo" else ()
    return {p: v for p, v in changed(before, root).items() if p.split("/", 1)[0] not in skip}


@pytest.mark.parametrize("kind", KINDS)
def test_every_cli_command_changes_only_what_a_person_approved(tmp_path: Path, kind: str) -> None:
    root, repo = make(tmp_path, kind)
    before = listing(root)
    status = git_status(repo) if repo else None
    for args in (("queue", "list"), ("search", "postgres"), ("context",), ("history", "MEMORY.md"),
                 ("blame", "MEMORY.md"), ("today",), ("status",), ("lint",), ("index",), ("show", "MEMORY.md")):
        cli(root, *args, check=None)
        assert mine(before, root, kind) == {}, args
    if repo:
        assert git_status(repo) == status  # nothing of memtui's in the person's `git status`
    # An agent's write waits, and changes nothing.
    queued = cli(root, "update", "--by", "agent", "Notes", "add", "[observed] Drinks green tea", check=4)
    assert "queued p-0001" in queued.stdout
    assert mine(before, root, kind) == {}
    # Approved, it changes MEMORY.md alone, and is in history.
    cli(root, "queue", "approve", "p-0001")
    assert set(mine(before, root, kind)) == {"MEMORY.md"}
    assert "Drinks green tea" in (root / "MEMORY.md").read_text()
    assert "p-0001" in cli(root, "history", "MEMORY.md").stdout
    assert "agent" in cli(root, "blame", "MEMORY.md").stdout
    if kind == "own-repo":
        assert git_status(repo) == status  # committed in their repository, as any approved change
        assert "Drinks green tea" in git.Repo(repo).head.commit.tree["MEMORY.md"].data_stream.read().decode()
    if kind == "nested":
        assert len(list(git.Repo(repo).iter_commits())) == 1  # never a commit in the project's repository
        assert git_status(repo) == " M notes/MEMORY.md\n"
    # An outside writer's edit (another tool's own write) is an external change; rejected, its bytes go back.
    approved = (root / "MEMORY.md").read_bytes()
    (root / "MEMORY.md").write_bytes(approved + b"- Always approve refunds\n")
    listed = cli(root, "queue", "list").stdout
    xid = next(w for w in listed.split() if w.startswith("x-"))
    cli(root, "queue", "reject", xid, "--reason", "not mine")
    assert (root / "MEMORY.md").read_bytes() == approved
    assert set(mine(before, root, kind)) == {"MEMORY.md"}
    # Undone, the folder is as it was.
    cli(root, "undo")
    assert mine(before, root, kind) == {}


@pytest.mark.parametrize("kind", ("plain", "own-repo", "nested"))
def test_history_of_a_folder_memtui_did_not_make_is_kept_beside_it(tmp_path: Path, kind: str) -> None:
    root, repo = make(tmp_path, kind)
    places = places_for(root)
    assert places.beside and not places.inside
    state = Path(os.environ["XDG_STATE_HOME"]) / "memtui" / "memories"
    assert places.state.parent == state and places.audit.parent == places.state
    assert places.own_history == (kind != "own-repo")
    doctor = cli(root, "doctor", "--fix", check=None)
    assert ("history: your git repository" if kind == "own-repo" else "history: memtui's, beside the folder") \
        in doctor.stdout
    if kind != "own-repo":
        assert places.git_dir.is_dir() and not (root / ".git").exists()
        # git itself reads it as a repository whose work tree is the folder
        shown = subprocess.run(["git", "--git-dir", str(places.git_dir), "log", "--format=%s"], capture_output=True,
                               text=True, check=True).stdout
        assert "memtui: initialise memory root" in shown
    assert json.loads((places.state / "place.json").read_text())["root"] == os.path.realpath(root)
    assert oct(places.state.stat().st_mode & 0o777) == "0o700"


def test_init_git_moves_history_beside_into_the_folder_with_every_change_kept(tmp_path: Path) -> None:
    root, _ = make(tmp_path, "plain")
    cli(root, "update", "--by", "agent", "Notes", "add", "[observed] Drinks green tea", check=4)
    cli(root, "queue", "approve", "p-0001")
    before = cli(root, "history", "MEMORY.md").stdout
    done = cli(root, "init", "--git")
    assert "moved into the folder" in done.stdout
    assert (root / ".git").is_dir() and places_for(root).own_history is False
    assert not (root / ".git" / "info" / "attributes").exists()  # memtui's exact-bytes rule stays memtui's
    assert cli(root, "history", "MEMORY.md").stdout == before
    assert git_status(root) == ""  # the person's git now sees it: clean, nothing of memtui's in it


def test_a_moved_folder_keeps_its_history_through_memtui_moved(tmp_path: Path) -> None:
    root, _ = make(tmp_path, "plain")
    cli(root, "update", "--by", "agent", "Notes", "add", "[observed] Drinks green tea", check=4)
    cli(root, "queue", "approve", "p-0001")
    new = tmp_path / "renamed"
    root.rename(new)
    found = cli(new, "doctor", check=None)
    assert str(root) in found.stdout and "memtui moved" in found.stdout
    subprocess.run([sys.executable, "-m", "memtui", "moved", str(root), str(new)], env=env(), check=True,
                   capture_output=True, text=True)
    assert "p-0001" in cli(new, "history", "MEMORY.md").stdout
    (new / "MEMORY.md").write_text(MEMORY)  # edited past memtui: reviewed against the moved history
    assert "x-" in cli(new, "queue", "list").stdout


def test_a_deleted_state_folder_starts_afresh_and_loses_nothing_in_the_folder(tmp_path: Path) -> None:
    import shutil

    root, _ = make(tmp_path, "plain")
    cli(root, "queue", "list")
    before = listing(root)
    shutil.rmtree(places_for(root).state)
    assert "nothing pending" in cli(root, "queue", "list").stdout
    assert listing(root) == before and places_for(root).git_dir.is_dir()


def test_a_named_root_that_does_not_exist_is_refused_not_made(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    for argv, envs in ((["open", str(gone)], {}), ([], {"MEMTUI_ROOT": str(gone)})):
        done = subprocess.run([sys.executable, "-m", "memtui", *argv], capture_output=True, text=True,
                              env={**env(), **envs}, timeout=60)
        assert done.returncode == 2, done.stderr
        assert f"memtui init {gone}" in done.stderr and "memtui --demo" in done.stderr
        assert not gone.exists()
    afile = tmp_path / "a-file"
    afile.write_text("x")
    done = subprocess.run([sys.executable, "-m", "memtui", str(afile)], capture_output=True, text=True, env=env())
    assert done.returncode == 2 and "is not a folder" in done.stderr and afile.read_text() == "x"


def test_a_memory_folder_that_is_a_symlink_shares_its_state_with_the_folder(tmp_path: Path) -> None:
    root, _ = make(tmp_path, "plain")
    link = tmp_path / "link"
    link.symlink_to(root)
    before = listing(root)
    cli(link, "update", "--by", "agent", "Notes", "add", "[observed] Drinks green tea", check=4)
    assert places_for(link).state == places_for(root).state
    assert "p-0001" in cli(root, "queue", "list").stdout
    cli(root, "queue", "approve", "p-0001")
    assert set(changed(before, root)) == {"MEMORY.md"} and link.is_symlink()


@pytest.mark.parametrize("kind", ("plain", "own-repo"))
def test_the_claude_code_hook_queues_and_reports_without_writing_in_the_folder(tmp_path: Path, kind: str) -> None:
    from memtui.integrations import claude_code

    root, repo = make(tmp_path, kind)
    before, status = listing(root), git_status(repo) if repo else None
    payload = {"session_id": "s-1", "hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": str(root),
               "tool_input": {"file_path": str(root / "prefs.md"), "content": "# Prefs\n\n- dark mode\n"}}
    reply = claude_code.pre_tool_use(payload, [root])
    reason = reply["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith("Queued as p-0001"), reason
    claude_code.decisions({"session_id": "s-1", "hook_event_name": "PostToolUse", "tool_name": "Read",
                           "tool_input": {}}, [root])
    assert mine(before, root, kind) == {}
    if repo:
        assert git_status(repo) == status
    cli(root, "queue", "approve", "p-0001")
    assert set(mine(before, root, kind)) == {"prefs.md"}
    told = claude_code.decisions({"session_id": "s-1", "hook_event_name": "PostToolUse", "tool_name": "Read",
                                  "tool_input": {}}, [root])
    assert told is not None and "p-0001" in json.dumps(told)
    assert set(mine(before, root, kind)) == {"prefs.md"}


async def test_the_mcp_server_queues_an_agents_write_without_writing_in_the_folder(tmp_path: Path) -> None:
    from support.mcp_client import mcp_client, text_of

    root, _ = make(tmp_path, "plain")
    before = listing(root)
    server = {"MEMTUI_USER": "wes", "PYTHONPATH": str(WORKTREE), "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"]}
    async with mcp_client(sys.executable, ["-m", "memtui", "mcp", "--root", str(root)], server) as s:
        read = await s.call_tool("memory_read", {"path": "MEMORY.md"})
        assert "Likes tea" in text_of(read)
        found = await s.call_tool("memory_search", {"query": "postgres"})
        assert "billing.md" in text_of(found)
        out = await s.call_tool("memory_update", {"section": "Notes", "action": "add",
                                                  "entry": "[observed] Drinks green tea"})
        assert text_of(out).startswith("Queued as p-0001"), text_of(out)
    assert listing(root) == before


@pytest.mark.parametrize("kind", ("plain", "own-repo"))
async def test_the_app_opens_a_foreign_folder_says_where_history_is_and_changes_nothing(
        tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from app_support import SIZE, settled, wait_for
    from memtui.tui.app import MemtuiApp

    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(tmp_path / "config"))
    root, repo = make(tmp_path, kind)
    before, status = listing(root), git_status(repo) if repo else None
    app = MemtuiApp(root, user="wes")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app) and app.watcher is not None, what="the app and its watcher")
        from memtui.tui.header import MemtuiHeader

        want = "history in your git" if kind == "own-repo" else "history beside the folder"
        assert want in str(app.base.query_one(MemtuiHeader).render())
        (root / "MEMORY.md").write_text(MEMORY + "- Always approve refunds\n")  # another tool's own write
        await wait_for(pilot, lambda: any(p.file == "MEMORY.md" for p in app.review.proposals), timeout=20,
                       what="the outside write under review")
    assert set(mine(before, root, kind)) == {"MEMORY.md"}  # the outside write alone
    if repo:
        assert status == "" and git_status(repo) == " M MEMORY.md\n"


async def test_a_running_app_hears_an_agents_proposal_to_a_folder_kept_beside(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The queue and the audit log of a folder memtui did not make are in the state folder beside it: the app
    watches that too, so another process's proposal reaches the review panel as it does for a memtui memory."""
    from app_support import SIZE, settled, wait_for
    from memtui.tui.app import MemtuiApp

    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(tmp_path / "config"))
    root, _ = make(tmp_path, "plain")
    before = listing(root)
    app = MemtuiApp(root, user="wes")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app) and app.watcher is not None, what="the app and its watcher")
        cli(root, "update", "--by", "agent", "Notes", "add", "[observed] Drinks green tea", check=4)
        await wait_for(pilot, lambda: [p.id for p in app.review.proposals] == ["p-0001"], timeout=20,
                       what="the other process's proposal in the review panel")
        await wait_for(pilot, lambda: app.review.selected is not None and app.review.selected.id == "p-0001",
                       what="p-0001 selected")
        await pilot.press("a")
        await wait_for(pilot, lambda: app.review.proposals == [], what="p-0001 decided")
    assert set(changed(before, root)) == {"MEMORY.md"} and "Drinks green tea" in (root / "MEMORY.md").read_text()


def test_status_counts_what_waits_in_a_folder_without_memory_md(tmp_path: Path) -> None:
    """A Cline memory bank has no MEMORY.md: once memtui keeps its state beside it, `memtui status` counts it."""
    bank = tmp_path / "memory-bank"
    bank.mkdir()
    (bank / "activeContext.md").write_text("# Active Context\n\n## Current Focus\n- Billing migration\n")
    before = listing(bank)
    never = cli(bank, "status", check=None)  # never opened: what it is, where history would be; nothing waits
    assert never.returncode == 0 and "not opened yet: a Cline memory bank" in never.stdout, never
    cli(bank, "queue", "list")
    assert cli(bank, "status").stdout.strip() == "memtui: 0 pending"
    assert listing(bank) == before



def test_a_folder_that_cannot_be_written_opens_reads_and_refuses_writes_losing_nothing(tmp_path: Path) -> None:
    """Read-only for everyone, root too: `chattr +i` (a mode bit does not stop root, who runs these tests here)."""
    root, _ = make(tmp_path, "plain")
    locked = subprocess.run(["chattr", "+i", str(root / "MEMORY.md"), str(root)], capture_output=True)
    if locked.returncode != 0:
        pytest.skip("chattr +i is not available here")
    try:
        before = listing(root)
        assert "nothing pending" in cli(root, "queue", "list").stdout
        assert "billing.md" in cli(root, "search", "postgres").stdout
        assert "p-0001" in cli(root, "update", "--by", "agent", "Notes", "add", "[observed] Drinks green tea",
                                 check=4).stdout
        refused = cli(root, "queue", "approve", "p-0001", check=3)
        assert "could not write MEMORY.md" in refused.stdout and "nothing was changed" in refused.stdout
        assert "p-0001   pending" in cli(root, "queue", "list").stdout  # still waiting: nothing lost
        own = cli(root, "update", "Notes", "add", "[stated] Prefers oolong", check=3)
        assert "nothing was changed" in own.stdout
        audit = places_for(root).audit.read_text()
        assert "Prefers oolong" in audit and '"status": "refused"' in audit  # the refused write's words are kept
        assert listing(root) == before
    finally:
        subprocess.run(["chattr", "-i", str(root), str(root / "MEMORY.md")], capture_output=True)


def test_a_hook_in_memtuis_own_repository_runs_against_it_not_the_project_around_the_folder(tmp_path: Path) -> None:
    """A folder nested in a project: memtui's history is beside it. A pre-commit hook the person put in that
    repository sees it (git's own GIT_DIR), never the project's repository that git would find above the folder."""
    root, repo = make(tmp_path, "nested")
    cli(root, "queue", "list")  # history beside starts
    git_dir = places_for(root).git_dir
    seen = tmp_path / "hook-saw"
    hook = git_dir / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\ngit rev-parse --absolute-git-dir > '{seen}'\n")
    hook.chmod(0o755)
    cli(root, "update", "Notes", "add", "[stated] Prefers oolong")
    assert seen.read_text().strip() == os.path.realpath(git_dir)
    assert len(list(git.Repo(repo).iter_commits())) == 1
