"""The stable CLI as scripts use it: the installed `memtui` command, exit statuses and JSON."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

MEMTUI = shutil.which("memtui")


def run(*args: str, root: Path | None = None, stdin: str | None = None, env: dict | None = None):
    cmd = [MEMTUI] if MEMTUI else [sys.executable, "-m", "memtui"]
    full_env = {**os.environ, **(env or {})}
    if root is not None:
        full_env["MEMTUI_ROOT"] = str(root)
    return subprocess.run([*cmd, *args], capture_output=True, text=True, input=stdin, env=full_env, timeout=60)


def test_done_when_of_the_memory_core(tmp_path: Path) -> None:
    m = tmp_path / "m"
    r = run("init", str(m))
    assert r.returncode == 0 and "created a personal memory root" in r.stdout
    r = run("update", "--root", str(m), "Decisions", "add", "[stated] Public API uses REST", "--source", "meeting/kickoff")
    assert r.returncode == 0, r.stderr
    log = subprocess.run(["git", "-C", str(m), "log", "--format=%an|%s"], capture_output=True, text=True).stdout
    assert "add MEMORY.md § Decisions: [stated] Public API uses REST" in log.splitlines()[0]
    assert run("init", str(m)).stdout.strip().endswith("already a memory root; nothing changed")


def test_exit_statuses_and_json(tmp_path: Path) -> None:
    m = tmp_path / "m"
    run("init", str(m))
    r = run("update", "Preferences", "add", "[stated] Prefers dark mode", "--by", "agent", "--json", root=m)
    assert r.returncode == 4
    out = json.loads(r.stdout)
    assert out["status"] == "queued" and out["id"] == "p-0001" and out["commit"] is None
    assert set(out) >= {"status", "id", "file", "section", "entry", "commit", "message"}
    r = run("queue", "approve", "p-0001", "--json", root=m)
    assert r.returncode == 0 and json.loads(r.stdout)["commit"]
    r = run("update", "Preferences", "add", "prefers Dark-Mode.", "--as", "stated", "--json", root=m)
    assert r.returncode == 3 and json.loads(r.stdout)["status"] == "refused"
    r = run("update", "Preferences", "bogus", root=m)
    assert r.returncode == 2
    r = run("update", "Preferences", "revise", "[stated] x", root=m)
    assert r.returncode == 3 and "--replaces" in r.stdout
    r = run("queue", "list", "--json", root=m)
    assert json.loads(r.stdout)["proposals"] == []
    r = run("show", "--root", str(tmp_path / "nowhere"))
    assert r.returncode == 1 and "memtui init" in r.stderr


def test_queue_reject_and_revise_from_the_cli(tmp_path: Path) -> None:
    m = tmp_path / "m"
    run("init", str(m))
    run("update", "User", "add", "[stated] Lives in Lisbn", "--by", "claude", root=m)
    run("update", "User", "add", "[stated] Likes cats", "--by", "claude", root=m)
    r = run("queue", "revise", "p-0001", "--entry", "[stated] Lives in Lisbon", root=m)
    assert r.returncode == 0, r.stdout
    r = run("queue", "reject", "p-0002", "--reason", "never said it", root=m)
    assert r.returncode == 0
    text = (m / "MEMORY.md").read_text()
    assert "Lives in Lisbon" in text and "Likes cats" not in text
    rec = [json.loads(x) for x in (m / "memory-log.jsonl").read_text().splitlines()][-1]
    assert rec["status"] == "rejected" and rec["reason"] == "never said it"
    r = run("queue", "show", "p-0002", root=m)
    assert "rejected" in r.stdout and "never said it" in r.stdout


def test_show_current_hides_struck_history(tmp_path: Path) -> None:
    m = tmp_path / "m"
    run("init", str(m))
    run("update", "Projects", "add", "[stated] Uses Redis", root=m)
    run("update", "Projects", "revise", "[stated] Uses Postgres", "--replaces", "Redis", root=m)
    full = run("show", "--section", "Projects", root=m).stdout
    cur = run("show", "--section", "Projects", "--current", root=m).stdout
    assert "~~[stated] Uses Redis" in full and "Uses Postgres" in full
    assert "Redis" not in cur and "Uses Postgres" in cur
    data = json.loads(run("show", "--current", "--json", root=m).stdout)
    projects = next(s for s in data["sections"] if s["section"] == "Projects")
    assert [e["current"] for e in projects["entries"]] == [True]


def test_log_scratch_and_sweep(tmp_path: Path) -> None:
    m = tmp_path / "m"
    run("init", str(m))
    env = {"MEMTUI_NOW": "2026-08-20T14:05"}
    assert run("log", "Deploy of v2.3 failed", root=m, env=env).returncode == 0
    assert "- 14:05 [observed] Deploy of v2.3 failed" in (m / "log/2026-08-20.md").read_text()
    assert run("scratch", "pr-review", "--ttl", "30", root=m, stdin="3 of 7 files\n", env=env).returncode == 0
    assert run("scratch", "../evil", root=m, stdin="x", env=env).returncode == 3
    [note] = list((m / "scratch").glob("*-pr-review.md"))
    assert note.read_text() == "3 of 7 files\n"
    assert "no expired" in run("sweep", root=m, env=env).stdout
    later = {"MEMTUI_NOW": "2026-08-20T15:00"}
    r = run("sweep", root=m, env=later)
    assert r.returncode == 0 and "deleted 1" in r.stdout and not note.exists()


@pytest.mark.parametrize("argv", [["context"], ["update", "User", "add", "[stated] x"], ["search", "x"]])
def test_a_malformed_memtui_now_is_a_clear_error_and_writes_nothing(tmp_path: Path, argv: list[str]) -> None:
    m = tmp_path / "m"
    run("init", str(m))
    head = subprocess.run(["git", "-C", str(m), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    r = run(*argv, root=m, env={"MEMTUI_NOW": "tomorrow\x1b[2J"})
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "MEMTUI_NOW=" in r.stderr and "is not an ISO time" in r.stderr and "\x1b" not in r.stderr
    assert subprocess.run(["git", "-C", str(m), "rev-parse", "HEAD"], capture_output=True, text=True).stdout == head
    assert not list((m / ".memtui").glob("queue/*.json"))


def test_help_documents_the_exit_statuses() -> None:
    r = run("--help")
    assert r.returncode == 0
    for needle in ("queued for review", "refused by validation", "update", "queue", "$MEMTUI_ROOT"):
        assert needle in r.stdout


@pytest.mark.parametrize("argv", [["update", "User", "add", "[stated] x", "--file", "../../etc/passwd"],
                                  ["show", "/etc/passwd"]])
def test_hostile_paths_from_the_cli(tmp_path: Path, argv: list[str]) -> None:
    m = tmp_path / "m"
    run("init", str(m))
    r = run(*argv, root=m)
    assert r.returncode == 3
    assert "Traceback" not in r.stderr
