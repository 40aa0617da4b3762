"""benches/bench_live_diff.py in a real tmux: every append reaches the terminal, and is timed against tail -F."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from app_support import demo_root, demo_template  # noqa: F401 (fixture)

pytestmark = pytest.mark.tmux
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benches"))


def test_the_live_diff_bench_sees_every_append(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              demo_template: Path) -> None:
    if shutil.which("tmux") is None or shutil.which("memtui") is None:
        pytest.skip("needs tmux and the memtui command")
    import bench_live_diff

    root = demo_root(tmp_path, monkeypatch, demo_template)
    result = bench_live_diff.bench_live_diff_tmux(root, appends=4, gap=0.2)
    assert result["missed"] == 0 and len(result["latencies"]) == 4
    assert all(0 < t < 5 for t in result["latencies"])
    assert result["floor_p50"] is not None and result["floor_p50"] < result["p50"]
    text = (root / "MEMORY.md").read_text()
    assert all(f"{bench_live_diff.MARK}{k:04d}" in text for k in range(1, 5))
