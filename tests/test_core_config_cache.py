"""`Memory.config` is parsed once per change of the config in effect: the committed .memtui/config.toml."""

from __future__ import annotations

import re
from pathlib import Path

import git

from memtui.core.writing.memory import Memory

CONFIG = ".memtui/config.toml"


def _with_model(root: Path, model: str) -> str:
    text = (root / CONFIG).read_text()
    return re.sub(r'(?m)^model = ".*"$', f'model = "{model}"', text)


def _commit(root: Path, message: str) -> None:
    repo = git.Repo(root)
    repo.git.add("--", CONFIG)
    repo.git.commit("-q", "-m", message, "--", CONFIG)
    repo.close()


def test_the_config_is_parsed_once_until_it_changes(mem: Memory, root: Path) -> None:
    first = mem.config
    assert first.pending is None
    assert all(mem.config is first for _ in range(5))  # nothing changed: the parsed config is reused
    assert mem.update("Preferences", "add", "[stated] Tea, not coffee").status == "applied"
    assert mem.config is first  # a write that leaves the config alone does not re-parse it


def test_an_edit_is_pending_until_committed_then_in_effect(mem: Memory, root: Path) -> None:
    first = mem.config
    (root / CONFIG).write_text(_with_model(root, "claude-edited-by-hand"))
    edited = mem.config
    assert edited is not first and edited.model == first.model and edited.pending  # the committed one is in effect
    assert mem.config is edited
    _commit(root, "a person's config")
    committed = mem.config
    assert committed.model == "claude-edited-by-hand" and committed.pending is None
    assert mem.config is committed


def test_moving_head_without_touching_the_index_is_seen(mem: Memory, root: Path) -> None:
    """`git reset --soft` moves the commit without rewriting git's index: the config in effect moves with it."""
    before = mem.config.model
    (root / CONFIG).write_text(_with_model(root, "claude-then-undone"))
    _commit(root, "config")
    assert mem.config.model == "claude-then-undone"
    git.Repo(root).git.reset("--soft", "HEAD~1")
    back = mem.config
    assert back.model == before and back.pending  # the edit is on disk again, not committed
