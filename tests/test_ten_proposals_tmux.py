"""Issue 21's "done when", tried as a new user would: ten mixed agent proposals on a memory memtui did not write,
reviewed at 120 columns in a real terminal (tmux) with one key each.

The memory is a person's own (a hand-written MEMORY.md, a daily log and a topic file in their own git); an agent
queues ten proposals (tests/support/ten_proposals.py). For each one the screen is captured before the key: every
line the proposal adds or removes reads whole in the review panel (wrapped, never cut at its edge), and no
message on screen is cut, garbled or addressed to an agent. Then each decision is checked where it lands: an
approval as one commit naming the proposal, a rejection in the audit log with its reason and nowhere in git.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.ten_proposals import AGENT, LONG, PLAN, hand_written, queue_ten
from support.tmux import wait_screen

pytestmark = pytest.mark.tmux
WIDTH, HEIGHT = 120, 42
REASONS = {"bun": "keeping pnpm", "maria": "not true, she is back in August"}
# Words written for an agent that must not reach the person's screen (memtui/tui/for_people.py says them anew).
FOR_AGENTS = ("send the exact", "send it again", "memory_update", "queue revise", "--as ", "use add, revise",
              "retry with", "the agent must", "you (the agent)")
GARBLED = ("\\[", "[/", "[@", "\x1b", "right_square_bracket", "left_square_bracket", "  ,", "( )", " → :")


def keys(tmux: list[str], *sent: str) -> None:
    subprocess.run([*tmux, "send-keys", "-t", "app", *sent], check=True)


def review_panel(screen: str) -> list[str]:
    """The review panel's rows: right of its border (the last `▊` on a row)."""
    return [row[row.rindex("▊") + 1:] for row in screen.splitlines() if "▊" in row]


def diff_rows(panel: list[str]) -> list[str]:
    """The rows of the selected proposal's diff: below the rule under the detail."""
    at = next((k for k, row in enumerate(panel) if row.startswith("────")), None)
    return [] if at is None else panel[at + 1:]  # none yet: the panel is still drawing


def changed_lines(diff: str) -> list[str]:
    return [ln[1:] for ln in diff.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]


def reads_whole(rows: list[str], line: str) -> bool:
    """`line` (one the diff adds or removes) reads to its end in the wrapped rows: their text, the gutter of
    numbers and sign left out, joined as the wrap split them (at spaces)."""
    body = " ".join(re.sub(r"^[\s\d]*[+\- ] ", "", row, count=1).strip() for row in rows)
    words = " ".join(line.split())
    return words in " ".join(body.split())


def said(screen: str) -> None:
    """No message on screen is garbled or addressed to an agent."""
    low = screen.lower()
    for phrase in FOR_AGENTS:
        assert phrase not in low, f"a message for an agent reached the person: {phrase!r}\n{screen}"
    for mark in GARBLED:
        assert mark not in screen, f"garbled text on screen: {mark!r}\n{screen}"
    footer = screen.rstrip("\n").splitlines()[-1]
    assert "? Keys" in footer, f"the footer is cut before `? Keys`: {footer!r}"


def test_ten_mixed_proposals_at_120_columns_one_key_each(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    monkeypatch.setenv("MEMTUI_NOW", "2026-08-20T10:00")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MEMTUI_CONFIG_DIR", str(tmp_path / "config"))
    root = hand_written(tmp_path / "notes")
    ids = queue_ten(root)
    queued = {pid: json.loads((queue_dir(root) / f"{pid}.json").read_text()) for pid in ids}
    socket = f"memtui-ten-{os.getpid()}"
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    env = {"HOME": str(tmp_path), "MEMTUI_NOW": os.environ["MEMTUI_NOW"],
           "MEMTUI_USER": "dana", "MEMTUI_CONFIG_DIR": str(tmp_path / "config"), "TERM": "xterm-256color",
           "PATH": os.environ["PATH"], "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"],  # where the queue is kept
           "PYTHONPATH": os.environ.get("PYTHONPATH", str(Path(__file__).resolve().parents[1]))}
    env.update({k: v for k, v in os.environ.items() if k.startswith("GIT_")})
    command = " ".join(f"{k}={v}" for k, v in env.items()) + f" {sys.executable} -m memtui {root}"
    subprocess.run([*tmux, "new-session", "-d", "-s", "app", "-x", str(WIDTH), "-y", str(HEIGHT),
                    f"env -u COLUMNS -u LINES {command}"], check=True)
    try:
        wait_screen(tmux, lambda s: "10 pending" in s, "the ten proposals")
        for pid, (kind, decision) in zip(ids, PLAN):
            changed = changed_lines(queued[pid]["diff"])

            def shown(s: str, pid: str = pid, changed: list[str] = changed, kind: str = kind) -> bool:
                if kind == "bun":  # a conflict already: the panel shows why, and the keys that resolve it
                    return f"{pid}: revise" in "\n".join(review_panel(s))
                rows = diff_rows(review_panel(s))
                return f"{pid}: " in "\n".join(review_panel(s)) and all(reads_whole(rows, ln) for ln in changed)

            # Each line the proposal adds or removes whole on screen, with no key pressed (the notice of the
            # decision before goes within seconds).
            screen = wait_screen(tmux, shown, f"{pid} ({kind}) with every changed line whole", timeout=15)
            said(screen)
            rows = [] if kind == "bun" else diff_rows(review_panel(screen))
            if kind == "inferred":
                assert "1 of 3 signals" in " ".join(" ".join(review_panel(screen)).split())
            if kind == "long":
                assert reads_whole(rows, LONG)
            if kind == "bun":
                # Its entry was revised by the one before: the panel says so before any key is pressed, with the
                # keys that resolve it, so one key (r) decides it.
                resolve = "e to revise it against the current text, or r to reject it"
                screen = wait_screen(tmux, lambda s: resolve in " ".join(" ".join(review_panel(s)).split()),
                                     "the conflict, said in the panel before any key")
                said(screen)
            keys(tmux, decision)
            if decision == "r":
                wait_screen(tmux, lambda s, pid=pid: f"Reject {pid}" in s, f"the reject dialog for {pid}")
                keys(tmux, REASONS[kind], "Enter")
            status = "applied" if decision == "a" else "rejected"
            deadline = time.monotonic() + 15
            while json.loads((queue_dir(root) / f"{pid}.json").read_text())["status"] != status:
                assert time.monotonic() < deadline, f"{decision} did not {status[:-2]} {pid} ({kind})"
                time.sleep(0.1)
        said(wait_screen(tmux, lambda s: "Nothing waits for you" in s or "0 pending" in s, "an empty queue"))
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)

    # Every approval is one commit naming its proposal, committed by the person who approved it (the agent that
    # proposed it is its author); no rejected text is in git.
    log = subprocess.run(["git", "log", "--format=%H%x00%cn%x00%B%x01"], cwd=root, capture_output=True,
                         text=True, check=True).stdout
    commits = [c.split("\0") for c in log.split("\x01") if c.strip()]
    named = {m[1]: c for c in commits for m in [re.search(r"Memtui-Proposal: (p-\d+)", c[2])] if m}
    approved = [pid for pid, (_, d) in zip(ids, PLAN) if d == "a"]
    rejected = [pid for pid, (_, d) in zip(ids, PLAN) if d == "r"]
    assert sorted(named) == sorted(approved)
    assert len(commits) == 1 + len(approved)  # the person's own commit, then one per approval
    head = {rel: subprocess.run(["git", "show", f"HEAD:{rel}"], cwd=root, capture_output=True, text=True).stdout
            for rel in ("MEMORY.md", "people/maria.md", "projects/kestrel.md")}
    assert "Kestrel has 2 open incidents" in head["MEMORY.md"]
    assert "launching in October after the audit" in head["MEMORY.md"]
    assert "~~[stated] Heron: internal dashboard, paused (2026-04-20, standup)~~ removed" in head["MEMORY.md"]
    assert "[inferred] Prefers examples in TypeScript" in head["MEMORY.md"]
    assert " ".join(LONG.split()) in head["MEMORY.md"]
    assert "Uses pnpm for every JavaScript project, never npm" in head["MEMORY.md"]
    assert "bun" not in head["MEMORY.md"]
    assert "chargeback service" in head["people/maria.md"] and "on leave" not in head["people/maria.md"]
    assert head["projects/kestrel.md"].startswith("# Kestrel")
    audit = [json.loads(x) for x in (queue_dir(root).parent / "memory-log.jsonl").read_text().splitlines()]
    for pid, (kind, _) in zip(ids, PLAN):
        if pid in rejected:
            rec = [r for r in audit if r.get("proposal") == pid and r.get("status") == "rejected"]
            assert rec and rec[-1]["reason"] == REASONS[kind] and rec[-1]["decided_by"] == "dana", \
                f"{pid}'s rejection and its reason are not in the audit log"
    held = [r for r in audit if r.get("proposal") == ids[3] and r.get("status") == "applied"]
    assert held and held[-1]["confirmed"]["by"] == "dana", "the held lesson's approval does not record the person"
    for pid in approved:
        assert named[pid][1] == "dana" and "Memtui-Approved-By: dana" in named[pid][2], named[pid]
        assert f"Memtui-Actor: {AGENT}" in named[pid][2]


def queue_dir(root: Path) -> Path:
    """Where the queue of a folder memtui did not make is kept: beside it (memtui.core.storage.places); the audit log is
    beside the queue."""
    from memtui.core.storage.places import places_for

    return places_for(root).state / "queue"

