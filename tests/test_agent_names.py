"""The agents whose memories memtui opens (Hermes, OpenClaw, Cline, Claude Code) and the other coding agents people run
beside them are agents by default: a write by `--by openclaw` waits for review, as `--by claude` always did, in a
new memory and in a foreign folder opened as it is. A person's name, and one that merely starts alike but is not
one of those, still applies at once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core.grammar.config import DEFAULT_AGENTS, ReviewPolicy
from memtui.core.storage.init import init_root


@pytest.mark.parametrize("name", ["openclaw", "OpenClaw", "hermes", "hermes-agent", "cline", "cline:vscode", "codex",
                                  "codex-cli", "gemini", "gemini-cli", "claude", "agent:x"])
def test_the_agents_people_run_are_agents_by_default(name: str) -> None:
    assert ReviewPolicy(agents=DEFAULT_AGENTS).is_agent(name)


@pytest.mark.parametrize("name", ["wes", "ana", "hermione", "open-claw-fan", "codie"])
def test_people_are_not(name: str) -> None:
    assert not ReviewPolicy(agents=DEFAULT_AGENTS).is_agent(name)


def _update(root: Path, by: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memtui", "update", "--root", str(root), "--by", by, "Preferences",
                           "add", f"[stated] {by} prefers tabs"], capture_output=True, text=True, timeout=120)


def test_a_write_by_openclaw_or_hermes_waits_and_a_persons_applies(tmp_path: Path) -> None:
    root = tmp_path / "m"
    init_root(root)
    for by in ("openclaw", "hermes"):
        done = _update(root, by)
        assert done.returncode == 4, (by, done.stdout, done.stderr)  # queued for a person
        assert f"{by} prefers tabs" not in (root / "MEMORY.md").read_text()
    done = _update(root, "wes")
    assert done.returncode == 0, done.stderr
    assert "wes prefers tabs" in (root / "MEMORY.md").read_text()
