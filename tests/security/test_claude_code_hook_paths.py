"""Hostile paths in Claude Code's PreToolUse payloads (`memtui hook pre-tool-use`): links into and out of the
memory root, `..`, memtui's bookkeeping, edits that do not match, and a config that would let `claude-code` skip
review; each is denied with the reason and leaves the folder and the queue as they were."""

from __future__ import annotations

from pathlib import Path

from memtui.core.writing.memory import Memory
from test_hook_pre_tool_use import INDEX, denied, folder, home, hook, payload, project, snapshot  # noqa: F401
from support.by_hand import write_committed


def test_hostile_paths_are_denied_with_a_reason_and_change_nothing(folder: Path, project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("not memory\n")
    (folder / "evil.md").symlink_to(outside)  # a link inside the root that leads out
    (project / "link.md").symlink_to(folder / "MEMORY.md")  # a link outside that leads in
    (folder / "sub").mkdir()
    before = snapshot(folder)
    cases = {
        str(folder / "evil.md"): "leads out of the memory root",
        str(project / "link.md"): "leads into the memory root",
        f"{folder}/sub/../MEMORY.md": "contains '..'",
        str(folder / ".git" / "config"): "memtui's own bookkeeping",
        str(folder / ".memtui" / "config.toml"): "memtui's own bookkeeping",
        str(folder / "memory-log.jsonl"): "memtui's own bookkeeping",
        str(folder): "the memory root itself",
    }
    for path, words in cases.items():
        reason = denied(hook(payload("write_new_topic", folder, project, file_path=path))[0])
        assert reason.startswith("memtui refused this write to memory: "), (path[len(str(folder)):], reason)
        assert words in reason, (path, reason)
    reason = denied(hook(payload("edit_index", folder, project, old_string="not in the file"))[0])
    assert "old_string was not found" in reason
    reason = denied(hook(payload("edit_index", folder, project, old_string="e", new_string="E"))[0])
    assert "occurs" in reason and "replace_all" in reason
    reason = denied(hook(payload("write_new_topic", folder, project, content=None))[0])
    assert "Write needs content" in reason
    assert snapshot(folder) == before and outside.read_text() == "not memory\n"
    assert Memory(folder).proposals(external=False) == []  # (the planted link itself is an external change)


def test_an_actor_the_config_does_not_count_as_an_agent_fails_closed(folder: Path, project: Path) -> None:
    write_committed(folder, ".memtui/config.toml", '[review]\nagents = ["agent*", "mcp*"]\n')
    reason = denied(hook(payload("edit_index", folder, project))[0])
    assert "does not count 'claude-code' as an agent" in reason
    assert (folder / "MEMORY.md").read_text() == INDEX


def test_a_memory_file_memtui_cannot_read_is_denied_not_left_to_the_tool(folder: Path, project: Path) -> None:
    cfg = folder / ".memtui" / "config.toml"
    cfg.parent.mkdir(exist_ok=True)
    (folder / "MEMORY.md").write_bytes(b"\xff\xfe not utf-8\n")  # memtui reads only UTF-8 memory files
    reason = denied(hook(payload("edit_index", folder, project, old_string="not", new_string="now"))[0])
    assert reason.startswith("memtui refused this write to memory: ") and "UTF-8" in reason
    assert (folder / "MEMORY.md").read_bytes() == b"\xff\xfe not utf-8\n"
