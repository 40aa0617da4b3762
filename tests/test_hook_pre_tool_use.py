"""`memtui hook pre-tool-use`, `hook decisions` and `hook install --claude-code`, run as Claude Code runs them: a
real `memtui` process fed Claude Code's PreToolUse, PostToolUse and Stop payloads on stdin, against a Claude Code
memory folder (`~/.claude/projects/<project>/memory/`) adopted by memtui with git."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core.writing.memory import Memory
from memtui.integrations import claude_code
from support.by_hand import write_committed

PAYLOADS = json.loads((Path(__file__).parent / "support" / "claude_code_payloads.json").read_text())
SESSION = PAYLOADS["stop"]["session_id"]
INDEX = "- [User role](user_role.md) — senior Go developer\n"
ROLE = "---\nname: user role\ndescription: who the user is\ntype: user\n---\nSenior Go developer.\n"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    return h


@pytest.fixture
def project(home: Path) -> Path:
    p = home / "app"
    (p / "src").mkdir(parents=True)
    (p / "README.md").write_text("# app\n")
    return p


@pytest.fixture
def folder(home: Path, project: Path) -> Path:
    """Claude Code's memory folder for `project`, adopted by memtui (`memtui init --git`)."""
    f = home / ".claude" / "projects" / claude_code.project_slug(project) / "memory"
    f.mkdir(parents=True)
    (f / "MEMORY.md").write_text(INDEX)
    (f / "user_role.md").write_text(ROLE)
    r = memtui("init", "--git", str(f))
    assert r.returncode == 0, r.stderr
    return f


def memtui(*args: str, stdin: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memtui", *args], input=stdin, capture_output=True, text=True,
                          timeout=60, cwd=cwd)


def payload(name: str, memory: Path, project: Path, **changes: object) -> dict:
    text = json.dumps(PAYLOADS[name])
    text = text.replace("{MEMORY}", str(memory)).replace("{PROJECT}", str(project))
    text = text.replace("{HOME}", os.environ["HOME"])
    data = json.loads(text)
    data["tool_input"] = {**data.get("tool_input", {}), **changes} if changes else data.get("tool_input")
    if data["tool_input"] is None:
        del data["tool_input"]
    return data


def hook(data: dict, *extra: str) -> tuple[dict | None, subprocess.CompletedProcess[str]]:
    r = memtui("hook", "pre-tool-use", *extra, stdin=json.dumps(data))
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    return (json.loads(r.stdout) if r.stdout.strip() else None), r


def denied(reply: dict | None) -> str:
    assert reply is not None
    out = reply["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse" and out["permissionDecision"] == "deny"
    return out["permissionDecisionReason"]


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.parts and ".memtui" not in p.parts and p.name != "memory-log.jsonl"}


def git_head(root: Path) -> str:
    return subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True).stdout


# PreToolUse inside the root: queued, denied, file untouched ----------------------------------------------------
def test_write_edit_and_multiedit_of_memory_files_are_queued_and_the_files_untouched(folder: Path,
                                                                                    project: Path) -> None:
    before, head = snapshot(folder), git_head(folder)
    for name, n in (("write_new_topic", 1), ("edit_index", 2), ("multiedit_topic", 3)):
        reply, _ = hook(payload(name, folder, project))
        reason = denied(reply)
        assert reason.startswith(f"Queued as p-{n:04d} for review; not in memory yet."), reason
    assert snapshot(folder) == before and git_head(folder) == head  # nothing on disk, nothing committed
    mem = Memory(folder)
    queue = {p.id: p for p in mem.proposals(external=False)}
    assert [(p.actor, p.action, p.file, p.session) for p in queue.values()] == [
        ("claude-code", "create", "feedback_testing.md", SESSION),
        ("claude-code", "edit", "MEMORY.md", SESSION),
        ("claude-code", "edit", "user_role.md", SESSION),
    ]
    assert "+- [Testing](feedback_testing.md) — run the real database in tests" in queue["p-0002"].diff
    assert mem.external_proposals() == []  # memtui's copy and the disk agree: nothing changed behind its back

    # Approving carries out exactly what Claude Code's tools would have written.
    for pid in queue:
        assert mem.approve(pid, by="wes").status == "applied"
    w, e, m = (payload(n, folder, project)["tool_input"] for n in ("write_new_topic", "edit_index", "multiedit_topic"))
    assert (folder / "feedback_testing.md").read_text() == w["content"]
    assert (folder / "MEMORY.md").read_text() == INDEX.replace(e["old_string"], e["new_string"])
    role = ROLE
    for edit in m["edits"]:
        role = role.replace(edit["old_string"], edit["new_string"], 1)
    assert (folder / "user_role.md").read_text() == role
    log = subprocess.run(["git", "-C", str(folder), "log", "--format=%an %s", "-3"], capture_output=True,
                         text=True).stdout.splitlines()
    assert all(line.startswith("claude-code ") for line in log)


def test_calls_outside_the_root_get_no_output(folder: Path, project: Path) -> None:
    before = snapshot(folder)
    for name in ("write_outside", "edit_outside", "multiedit_outside"):
        reply, r = hook(payload(name, folder, project))
        assert reply is None and r.stdout == ""
    # Other tools, and payloads that are not a tool call at all, are left alone too.
    for data in ({"tool_name": "Bash", "tool_input": {"command": "ls"}}, {"tool_name": "Write"}, [], "x"):
        reply, r = hook(data)  # type: ignore[arg-type]
        assert reply is None
    r = memtui("hook", "pre-tool-use", stdin="{not json")
    assert r.returncode == 0 and r.stdout == "" and "not the hook's JSON" in r.stderr
    assert snapshot(folder) == before and Memory(folder).proposals() == []
    assert (project / "README.md").read_text() == "# app\n"


def test_what_the_policy_applies_at_once_memtui_applies_itself_and_says_so(folder: Path, project: Path) -> None:
    write_committed(folder, ".memtui/config.toml",
                    '[[review.rule]]\nactor = "claude-code"\nfile = "feedback_*.md"\ndecision = "apply"\n')
    reply, _ = hook(payload("write_new_topic", folder, project))
    reason = denied(reply)
    assert reason.startswith("Applied by memtui (committed as ") and "Do not write it again" in reason
    assert (folder / "feedback_testing.md").read_text() == PAYLOADS["write_new_topic"]["tool_input"]["content"]
    mem = Memory(folder)
    assert mem.proposals() == []  # applied, committed and clean: not an external change either
    [rec] = [r for r in mem.store.audit_records() if r.get("file") == "feedback_testing.md"]
    assert rec["actor"] == "claude-code" and rec["status"] == "applied" and rec["commit"]


def test_a_relative_path_is_read_against_the_payloads_cwd(folder: Path, project: Path) -> None:
    data = payload("edit_index", folder, project, file_path="MEMORY.md")
    data["cwd"] = str(folder)
    reason = denied(hook(data)[0])
    assert reason.startswith("Queued as p-0001")


def test_approval_commits_through_the_repositorys_hooks(folder: Path, project: Path) -> None:
    pre = folder / ".git" / "hooks" / "pre-commit"
    pre.write_text('#!/bin/sh\necho ran >> "$(git rev-parse --git-dir)/runs"\n')
    pre.chmod(0o755)
    denied(hook(payload("edit_index", folder, project))[0])
    assert Memory(folder).approve("p-0001", by="wes").status == "applied"
    assert (folder / ".git" / "runs").read_text() == "ran\n"


# PostToolUse and Stop: the session is told once ----------------------------------------------------------------
def test_the_session_is_told_how_its_queued_writes_were_decided_once(folder: Path, project: Path) -> None:
    denied(hook(payload("write_new_topic", folder, project))[0])
    denied(hook(payload("edit_index", folder, project))[0])
    post = json.dumps(payload("post_tool_use", folder, project))
    assert memtui("hook", "decisions", stdin=post).stdout == ""  # nothing decided yet
    mem = Memory(folder)
    assert mem.approve("p-0001", by="wes").status == "applied"
    assert mem.reject("p-0002", reason="the index line is wrong", by="wes").status == "rejected"

    r = memtui("hook", "decisions", stdin=post)
    out = json.loads(r.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "PostToolUse"
    assert "p-0001 (create feedback_testing.md): approved by wes" in out["additionalContext"]
    assert "p-0002 (edit MEMORY.md): rejected by wes: the index line is wrong" in out["additionalContext"]
    assert memtui("hook", "decisions", stdin=post).stdout == ""  # told once

    other = dict(payload("post_tool_use", folder, project), session_id="another-session")
    assert memtui("hook", "decisions", stdin=json.dumps(other)).stdout == ""  # not that session's writes

    denied(hook(payload("multiedit_topic", folder, project))[0])
    assert mem.approve("p-0003", by="wes").status == "applied"
    stop = payload("stop", folder, project)
    stop.pop("tool_input", None)
    active = dict(stop, stop_hook_active=True)
    assert memtui("hook", "decisions", stdin=json.dumps(active)).stdout == ""  # never loops a Stop
    reply = json.loads(memtui("hook", "decisions", stdin=json.dumps(stop)).stdout)
    assert reply["decision"] == "block" and "p-0003 (edit user_role.md): approved by wes" in reply["reason"]
    assert memtui("hook", "decisions", stdin=json.dumps(stop)).stdout == ""


# install ---------------------------------------------------------------------------------------------------------
def test_install_shows_the_diff_keeps_other_hooks_and_is_idempotent(folder: Path, project: Path, home: Path) -> None:
    settings = home / ".claude" / "settings.json"
    theirs = {"model": "opus", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "~/bin/guard-bash"}]}], "Notification": [{"hooks": [
            {"type": "command", "command": "notify-send claude"}]}]}}
    settings.write_text(json.dumps(theirs, indent=2))

    dry = memtui("hook", "install", "--claude-code", "--dry-run")
    assert dry.returncode == 0 and "+" in dry.stdout and "dry run" in dry.stdout
    assert json.loads(settings.read_text()) == theirs

    r = memtui("hook", "install", "--claude-code")
    assert r.returncode == 0, r.stderr
    assert f"--- {settings}" in r.stdout and '+        "matcher": "Write|Edit|MultiEdit",' in r.stdout
    now = json.loads(settings.read_text())
    assert now["model"] == "opus" and now["hooks"]["Notification"] == theirs["hooks"]["Notification"]
    pre = now["hooks"]["PreToolUse"]
    assert pre[0] == theirs["hooks"]["PreToolUse"][0] and pre[1]["matcher"] == "Write|Edit|MultiEdit"
    assert set(now["hooks"]) == {"PreToolUse", "PostToolUse", "Stop", "Notification"}

    again = memtui("hook", "install", "--claude-code")
    assert again.returncode == 0 and "already installed" in again.stdout
    assert json.loads(settings.read_text()) == now

    # The installed command, run by a shell as Claude Code runs it, reviews Claude Code's edit.
    command = pre[1]["hooks"][0]["command"]
    run = subprocess.run(command, shell=True, input=json.dumps(payload("edit_index", folder, project)),
                         capture_output=True, text=True, timeout=60, cwd=project)
    assert denied(json.loads(run.stdout)).startswith("Queued as p-0001")
    assert (folder / "MEMORY.md").read_text() == INDEX


def test_install_into_a_project_and_refusing_a_broken_settings_file(project: Path) -> None:
    r = memtui("hook", "install", "--claude-code", "--project", str(project), "--root", str(project / "mem"))
    assert r.returncode == 0, r.stderr
    data = json.loads((project / ".claude" / "settings.json").read_text())
    assert f"--root {project / 'mem'}" in data["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert "--- /dev/null" in r.stdout
    broken = project / ".claude" / "settings.json"
    broken.write_text("{ not json")
    r = memtui("hook", "install", "--claude-code", "--project", str(project))
    assert r.returncode != 0 and "not valid JSON" in r.stderr and broken.read_text() == "{ not json"


# discovery -----------------------------------------------------------------------------------------------------
def test_claude_code_memory_folders_are_discovered(folder: Path, project: Path, home: Path) -> None:
    assert claude_code.memory_folders() == [folder]
    assert claude_code.folder_for_project(project) == folder
    second = home / ".claude" / "projects" / "-home-wes-other" / "memory"
    second.mkdir(parents=True)
    assert set(claude_code.memory_folders()) == {folder, second}
    r = memtui("open", "--claude-code", cwd=home)  # neither project's folder and two to choose from
    assert r.returncode == 2
    assert "several Claude Code memory folders" in r.stderr and str(folder) in r.stderr and str(second) in r.stderr


# the whole loop, in the app ------------------------------------------------------------------------------------
async def test_claude_codes_edit_appears_in_the_review_panel_and_approving_commits_it_through_the_hooks(
        folder: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from app_support import SIZE, settled, wait_for
    from memtui.tui.app import MemtuiApp

    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(folder.parent / "config"))
    pre = folder / ".git" / "hooks" / "pre-commit"
    pre.write_text('#!/bin/sh\ngit diff --cached --name-only >> "$(git rev-parse --git-dir)/hook-saw"\n')
    pre.chmod(0o755)
    app = MemtuiApp(folder)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app) and app.watcher is not None, what="the app and its watcher")
        reply, _ = hook(payload("edit_index", folder, project))
        assert denied(reply).startswith("Queued as p-0001")
        await wait_for(pilot, lambda: any(p.id == "p-0001" for p in app.review.proposals), timeout=10,
                       what="Claude Code's edit in the review panel")
        [p] = [p for p in app.review.proposals if p.id == "p-0001"]
        assert p.actor == "claude-code" and p.file == "MEMORY.md"
        assert (folder / "MEMORY.md").read_text() == INDEX  # in the panel, not on disk
        app.review.select("p-0001")
        await pilot.press("a")
        await wait_for(pilot, lambda: "p-0001" not in [q.id for q in app.review.proposals], what="p-0001 to go")
    assert "- [Testing](feedback_testing.md)" in (folder / "MEMORY.md").read_text()
    assert (folder / ".git" / "hook-saw").read_text() == "MEMORY.md\n"
    log = subprocess.run(["git", "-C", str(folder), "log", "-1", "--format=%an%n%B"], capture_output=True,
                         text=True).stdout
    assert log.startswith("claude-code\n") and "Memtui-Approved-By: wes" in log
