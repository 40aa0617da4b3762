"""The repository's git hooks run for memtui's own commits: a pre-commit hook that rejects an untagged line blocks
a memtui write (and nothing is applied), a commit-msg hook runs and may rewrite the message, `[git] hooks = false`
turns it off, and a hook that hangs is stopped."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from memtui.core.storage import git_hooks
from memtui.core.writing.memory import Memory
from support.by_hand import write_committed

# A memory-lint pre-commit hook as a person would write it: every added entry line must carry a provenance tag.
LINT_HOOK = """#!/bin/sh
echo ran >> "$(git rev-parse --git-dir)/pre-commit-runs"
bad=$(git diff --cached -U0 | grep -E '^\\+- ' | grep -vE '^\\+- (~~)?\\[(stated|observed|inferred|suggested)\\]')
if [ -n "$bad" ]; then
  echo "memory-lint: untagged entry: $bad" >&2
  exit 1
fi
"""


def sh(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=check)


def hook(root: Path, name: str, body: str, where: str = ".git/hooks") -> Path:
    path = root / where / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    os.chmod(path, 0o755)
    return path


def runs(root: Path) -> int:
    f = root / ".git" / "pre-commit-runs"
    return len(f.read_text().splitlines()) if f.exists() else 0


def test_a_pre_commit_hook_rejecting_an_untagged_line_blocks_a_memtui_write(mem: Memory, root: Path) -> None:
    hook(root, "pre-commit", LINT_HOOK)
    before = (root / "MEMORY.md").read_bytes()
    head = sh(root, "rev-parse", "HEAD").stdout

    result = mem.edit("MEMORY.md", "## Facts\n", "## Facts\n- the user likes tea\n", actor="wes")

    assert result.status == "refused", result
    assert "pre-commit hook refused this commit (exit 1)" in result.message
    assert "memory-lint: untagged entry: +- the user likes tea" in result.message
    assert (root / "MEMORY.md").read_bytes() == before  # nothing applied
    assert sh(root, "rev-parse", "HEAD").stdout == head
    assert sh(root, "status", "--porcelain").stdout == ""
    assert runs(root) == 1
    refused = [r for r in mem.store.audit_records() if r.get("status") == "refused"]
    assert refused and "memory-lint" in refused[-1]["reason"]

    # The same hook lets a tagged line through, and sees exactly memtui's change in its index.
    ok = mem.update("Facts", "add", "[stated] the user likes tea", actor="wes")
    assert ok.status == "applied", ok
    assert runs(root) == 2
    assert "- [stated] the user likes tea" in sh(root, "show", "HEAD:MEMORY.md").stdout

    # And a plain `git commit` is blocked by the same hook, as memtui's write was.
    (root / "MEMORY.md").write_text((root / "MEMORY.md").read_text() + "- untagged by hand\n")
    sh(root, "add", "MEMORY.md")
    assert sh(root, "commit", "-m", "by hand", check=False).returncode != 0


def test_an_approved_proposal_goes_through_the_hook_and_stays_pending_when_refused(mem: Memory, root: Path) -> None:
    hook(root, "pre-commit", LINT_HOOK)
    queued = mem.edit("MEMORY.md", "## Facts\n", "## Facts\n- untagged from the agent\n", actor="agent:claude")
    assert queued.status == "queued"
    before = (root / "MEMORY.md").read_bytes()
    result = mem.approve(queued.id, by="wes")
    assert result.status == "refused" and "memory-lint" in result.message
    assert (root / "MEMORY.md").read_bytes() == before
    assert mem.get(queued.id).status == "pending"


def test_the_hook_index_holds_head_plus_this_write_not_a_persons_staged_changes(mem: Memory, root: Path) -> None:
    (root / "notes.md").write_text("# staged by the person\n")
    sh(root, "add", "notes.md")
    hook(root, "pre-commit", '#!/bin/sh\ngit diff --cached --name-only > "$(git rev-parse --git-dir)/seen"\n'
         'env | grep -E "^GIT_(INDEX_FILE|EDITOR|AUTHOR_NAME)=" | sort >> "$(git rev-parse --git-dir)/seen"\n')
    assert mem.update("Facts", "add", "[stated] one", actor="wes").status == "applied"
    seen = (root / ".git" / "seen").read_text().splitlines()
    assert seen[0] == "MEMORY.md"
    assert "notes.md" not in seen
    assert "GIT_EDITOR=:" in seen and "GIT_AUTHOR_NAME=wes" in seen
    index_line = next(s for s in seen if s.startswith("GIT_INDEX_FILE="))
    assert not os.path.exists(index_line.split("=", 1)[1])  # the temporary index is gone afterwards
    assert sh(root, "diff", "--cached", "--name-only").stdout.split() == ["notes.md"]  # still staged


def test_commit_msg_hook_runs_and_can_refuse_or_rewrite(mem: Memory, root: Path) -> None:
    hook(root, "commit-msg", '#!/bin/sh\ngrep -q "^Memtui-Actor: " "$1" || { echo "no actor trailer"; exit 1; }\n'
         'printf "\\nHook-Checked: yes\\n" >> "$1"\n')
    assert mem.update("Facts", "add", "[stated] two", actor="wes").status == "applied"
    assert "Hook-Checked: yes" in sh(root, "log", "-1", "--format=%B").stdout

    hook(root, "commit-msg", '#!/bin/sh\necho "subject must mention a ticket" >&2\nexit 3\n')
    before = (root / "MEMORY.md").read_bytes()
    result = mem.update("Facts", "add", "[stated] three", actor="wes")
    assert result.status == "refused"
    assert "commit-msg hook refused this commit (exit 3)" in result.message
    assert "subject must mention a ticket" in result.message
    assert (root / "MEMORY.md").read_bytes() == before


def test_hooks_false_in_config_turns_them_off(mem: Memory, root: Path) -> None:
    cfg = root / ".memtui" / "config.toml"
    write_committed(root, ".memtui/config.toml", cfg.read_text() + "\n[git]\nhooks = false\n")
    hook(root, "pre-commit", LINT_HOOK)
    result = mem.edit("MEMORY.md", "## Facts\n", "## Facts\n- untagged, hooks off\n", actor="wes")
    assert result.status == "applied", result
    assert runs(root) == 0


def test_core_hooks_path_is_honoured_and_a_non_executable_hook_is_ignored(mem: Memory, root: Path) -> None:
    plain = hook(root, "pre-commit", "#!/bin/sh\nexit 1\n")
    os.chmod(plain, 0o644)  # git ignores a hook that is not executable
    assert mem.update("Facts", "add", "[stated] four", actor="wes").status == "applied"

    outside = root.parent / "shared-hooks"
    hook(outside, "pre-commit", '#!/bin/sh\necho "from hooksPath"\nexit 1\n', where=".")
    sh(root, "config", "core.hooksPath", str(outside))
    result = mem.update("Facts", "add", "[stated] five", actor="wes")
    assert result.status == "refused" and "from hooksPath" in result.message


def test_a_hook_that_rewrites_staged_content_is_refused(mem: Memory, root: Path) -> None:
    hook(root, "pre-commit", '#!/bin/sh\necho "- sneaked in" >> MEMORY.md\ngit add MEMORY.md\n')
    before = (root / "MEMORY.md").read_bytes()
    result = mem.update("Facts", "add", "[stated] six", actor="wes")
    assert result.status == "refused" and "changed the staged content" in result.message
    assert (root / "MEMORY.md").read_bytes() == before


def test_a_hanging_hook_is_stopped_with_its_children(mem: Memory, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(git_hooks, "TIMEOUT", 1.0)
    hook(root, "pre-commit", '#!/bin/sh\necho started\nsleep 30 &\necho $! > "$(git rev-parse --git-dir)/child"\n'
         "wait\n")
    before = (root / "MEMORY.md").read_bytes()
    result = mem.update("Facts", "add", "[stated] seven", actor="wes")
    assert result.status == "refused" and "did not finish within 1 seconds" in result.message
    assert "started" in result.message
    assert (root / "MEMORY.md").read_bytes() == before
    child = int((root / ".git" / "child").read_text())
    with pytest.raises(ProcessLookupError):
        for _ in range(50):
            os.kill(child, 0)
            import time

            time.sleep(0.05)


def test_hook_output_reaches_the_message_as_plain_text(mem: Memory, root: Path) -> None:
    hook(root, "pre-commit", '#!/bin/sh\nprintf "\\033[31mred\\033[0m [@click=app.quit] \\007bell"\nexit 1\n')
    result = mem.update("Facts", "add", "[stated] eight", actor="wes")
    assert result.status == "refused"
    assert "\x1b" not in result.message and "\x07" not in result.message
    assert "red [@click=app.quit] bell" in result.message
