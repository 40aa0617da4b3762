"""lint finds the memory root's real path once for all its reads (issue 41, "bounded under flood": `realpath` of a
deep root was a third of reading 8,000 files), not each file's path: a symlink planted under the root is still
followed and refused on every read while the root is pinned. (A link out of the root is not listed, so lint never
asks for it, cold or warm: the store's own reads are attacked here.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from memtui.core.grammar.paths import PathRefused
from memtui.core.writing.memory import Memory
from tests.security.test_lint_cache import _memory


def test_a_link_out_of_the_root_is_refused_while_the_root_is_pinned(tmp_path: Path) -> None:
    root = _memory(tmp_path / "mem")
    outside = tmp_path / "outside.md"
    outside.write_text("# O\n\n## Facts\n\n- [stated] outside (2026-08-01)\n")
    store = Memory(root).store
    with store.pinned_root():
        assert store._real_root is not None
        (root / "notes" / "out.md").symlink_to(outside)
        (root / "notes" / "git.md").symlink_to(root / ".git" / "config")
        for rel in ("notes/out.md", "notes/git.md"):
            with pytest.raises(PathRefused):
                store.read(rel)
        assert store.read("notes/n0.md") is not None  # the control: a file under the root is read
    assert store._real_root is None  # pinned for the reads inside only

