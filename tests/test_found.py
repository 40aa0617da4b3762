"""Memories found without a manual: OpenClaw's workspaces by its own rules, and `memtui found` listing every
agent memory on the machine (under a fake HOME) with what waits in each, reading and never writing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core.writing.memory import Memory
from memtui.integrations.openclaw import json5_to_json, workspaces
from support.fixtures_openclaw import config, workspace
from support.foreign import changed, git_status, listing

NOW = "2026-12-06T10:15"


def run(home: Path, *args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCLAW_", "HERMES_", "CLAUDE_", "MEMTUI_"))}
    return subprocess.run([sys.executable, "-m", "memtui", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd or home, env={**clean, "HOME": str(home), "MEMTUI_NOW": NOW, "MEMTUI_USER": "wes",
                                                "XDG_DATA_HOME": str(home / ".local" / "share"), **env})


def test_openclaws_workspace_is_found_by_its_documented_rules(tmp_path: Path) -> None:
    home = tmp_path
    env = {"HOME": str(home)}
    assert workspaces(env) == []  # nothing there: nothing found, nothing made
    assert not (home / ".openclaw").exists()
    default = workspace(home / ".openclaw" / "workspace")
    assert workspaces(env) == [default]
    profiled = workspace(home / ".openclaw-work" / "workspace")
    assert workspaces({**env, "OPENCLAW_PROFILE": "work"}) == [profiled]
    assert workspaces({**env, "OPENCLAW_PROFILE": "default"}) == [default]
    state = workspace(tmp_path / "state" / "workspace")
    assert workspaces({**env, "OPENCLAW_STATE_DIR": str(tmp_path / "state")}) == [state]
    given = workspace(tmp_path / "elsewhere")
    assert workspaces({**env, "OPENCLAW_WORKSPACE_DIR": str(given)}) == [given]
    assert workspaces({**env, "OPENCLAW_WORKSPACE_DIR": "undefined"}) == [default]  # OpenClaw reads it as unset
    moved = workspace(home / "agents" / "main")
    config(home, "~/agents/main")  # JSON5, as `openclaw configure` writes it: an explicit one wins over the env
    assert workspaces({**env, "OPENCLAW_WORKSPACE_DIR": str(given)}) == [moved]
    relocated = tmp_path / "svc"
    workspace(relocated / ".openclaw" / "workspace")
    assert workspaces({**env, "OPENCLAW_HOME": str(relocated)}) == [relocated / ".openclaw" / "workspace"]


def test_a_roster_of_agents_each_with_its_workspace(tmp_path: Path) -> None:
    home = tmp_path
    main = workspace(home / ".openclaw" / "workspace")
    coder = workspace(home / "bots" / "coder")
    (home / ".openclaw" / "openclaw.json").write_text(
        "{\n  // two agents\n  agents: {\n    entries: {\n      main: {},\n      coder: { workspace: '~/bots/coder', "
        "},\n      gone: { workspace: \"/nowhere/at/all\" },\n    },\n  },\n}\n")
    assert workspaces({"HOME": str(home)}) == [main, coder]


def test_json5_comments_keys_quotes_and_trailing_commas() -> None:
    text = "/* c */ {a: 'x//y', \"b\": [1, 2,], c: {d: true,}, // end\n}"
    assert json.loads(json5_to_json(text)) == {"a": "x//y", "b": [1, 2], "c": {"d": True}}
    assert workspaces({"HOME": "/nonexistent-home-for-memtui-tests"}) == []


@pytest.fixture
def machine(tmp_path: Path) -> Path:
    """A home with one memory of every kind, each as its own tool lays it out."""
    home = tmp_path / "home"
    workspace(home / ".openclaw" / "workspace", git=True)
    claude = home / ".claude" / "projects" / "-home-wes-app" / "memory"
    claude.mkdir(parents=True)
    (claude / "MEMORY.md").write_text("- [User role](user_role.md) — senior Go developer\n")
    (claude / "user_role.md").write_text("---\nname: user_role\ndescription: role\ntype: user\n---\n\nGo dev.\n")
    hermes = home / ".hermes" / "memories"
    hermes.mkdir(parents=True)
    (hermes / "MEMORY.md").write_text("Wes deploys on Tuesdays.\n§\nStaging is stage-2.\n")
    bank = home / "app" / "memory-bank"
    bank.mkdir(parents=True)
    (bank / "projectbrief.md").write_text("# Project Brief\n\nAn invoicing app.\n")
    return home


def test_memtui_found_lists_every_memory_with_its_kind_and_what_waits_and_writes_nothing(
        machine: Path, now, monkeypatch: pytest.MonkeyPatch) -> None:
    now(NOW)
    # The person's state folder (where the key that seals their queue lives), the same for the command run below.
    monkeypatch.setenv("XDG_STATE_HOME", str(machine.parent / "state"))
    ws = machine / ".openclaw" / "workspace"
    mem = Memory(ws)
    assert mem.update("Projects", "add", "Invoices go out on the 1st", actor="agent:openclaw").status == "queued"
    (ws / "memory" / "2026-12-06.md").write_text("# 2026-12-06\n\n- 10:02 Dana confirmed the VAT export.\n")
    before = {p: listing(p) for p in (machine,)}
    status = git_status(ws)
    done = run(machine, "found", "--json", cwd=machine / "app")
    assert done.returncode == 0, done.stderr
    rows = {(r["kind"], Path(r["path"]).name): r for r in json.loads(done.stdout)}
    assert rows[("openclaw", "workspace")] | {"path": ""} == {"kind": "openclaw", "path": "", "history": True,
                                                              "pending": 1, "outside": 1}
    assert rows[("claude-code", "memory")]["history"] is False
    assert rows[("hermes", "memories")]["history"] is False
    assert rows[("cline", "memory-bank")]["history"] is False
    assert len(rows) == 4
    text = run(machine, "found", cwd=machine / "app").stdout
    assert "openclaw     1 pending, 1 changed outside memtui" in text and "~/.openclaw/workspace" in text
    assert "cline        not opened yet" in text and "~/app/memory-bank" in text
    assert changed(before[machine], machine) == {}  # listing every memory changed nothing in any of them
    assert git_status(ws) == status


def test_memtui_found_on_a_machine_with_none_says_what_to_do(tmp_path: Path) -> None:
    done = run(tmp_path, "found")
    assert done.returncode == 0 and "no agent memory found" in done.stdout and "memtui init" in done.stdout
    assert list(tmp_path.iterdir()) == []


def test_open_openclaw_says_where_it_looked_or_which_to_choose(tmp_path: Path) -> None:
    none = run(tmp_path, "open", "--openclaw")
    assert none.returncode == 2 and "no OpenClaw workspace found" in none.stderr
    assert str(tmp_path / ".openclaw" / "workspace") in none.stderr and "Traceback" not in none.stderr
    assert list(tmp_path.iterdir()) == []  # not created by looking
    workspace(tmp_path / ".openclaw" / "workspace")
    workspace(tmp_path / "bots" / "coder")
    (tmp_path / ".openclaw" / "openclaw.json").write_text("{agents: {entries: {coder: {workspace: '~/bots/coder'}}}}")
    several = run(tmp_path, "open", "--openclaw")
    assert several.returncode == 2 and "several OpenClaw workspaces" in several.stderr
    assert str(tmp_path / "bots" / "coder") in several.stderr
