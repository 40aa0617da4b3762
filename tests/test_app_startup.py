"""What the app imports before its first frame: only what that frame needs (the figure itself lives in benches/)."""

from __future__ import annotations

import json
import subprocess
import sys

# Heavy modules the first frame does not need: RichLog's rich.pretty and attrs, the lazily opened panes and dialogs.
NOT_AT_START = ("rich.pretty", "attr", "memtui.tui.today", "memtui.tui.search", "memtui.tui.chat",
                "memtui.tui.dialogs", "memtui.tui.help", "anthropic", "git")


def test_importing_the_app_leaves_what_the_first_frame_does_not_need() -> None:
    code = ("import json, sys; import memtui.tui.app; "
            f"print(json.dumps([m for m in {list(NOT_AT_START)!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []
