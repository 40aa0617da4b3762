"""`memtui lint` quotes the lines it finds fault with (untagged, duplicate, an entry deleted from history): a key in
such a line is masked there as the secret finding masks it, never printed whole beside its own `ghp_****`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from memtui.core.writing.memory import Memory

TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"  # a fake key in GitHub's format


def test_a_key_in_a_quoted_line_is_masked_in_every_finding(tmp_path: Path) -> None:
    from memtui.core.storage.init import init_root

    root = tmp_path / "notes"
    init_root(root)
    topic = root / "topics" / "t.md"
    topic.parent.mkdir(parents=True, exist_ok=True)
    topic.write_text(f"# T\n\n## Facts\n- untagged line with {TOKEN}\n- [stated] dup {TOKEN} (2026-01-01, chat)\n"
                     f"- [stated] dup {TOKEN} (2026-01-01, chat)\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "memtui", "lint", "--root", str(root), "--json"],
                          capture_output=True, text=True)
    assert TOKEN not in done.stdout + done.stderr
    checks = {f["check"] for f in json.loads(done.stdout)["findings"]} if isinstance(json.loads(done.stdout), dict) \
        else {f["check"] for f in json.loads(done.stdout)}
    assert {"secret", "untagged", "duplicate"} <= checks  # the quoting findings are still there, masked
    plain = subprocess.run([sys.executable, "-m", "memtui", "lint", "--root", str(root)], capture_output=True,
                           text=True)
    assert "ghp_****" in plain.stdout and TOKEN not in plain.stdout + plain.stderr
    assert Memory(root).read_text("topics/t.md").count(TOKEN) == 3  # lint reads; the file is as it was
