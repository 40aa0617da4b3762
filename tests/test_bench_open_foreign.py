"""benches/bench_open_foreign.py end to end on a small run: both memories opened, the ratios computed, and the
foreign folder left as it was."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_open_benchmark_times_a_foreign_folder_against_a_memtui_memory(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(REPO / "benches" / "bench_open_foreign.py"), "--files", "300",
                           "--megabytes", "0.5", "--runs", "1", "--json"], capture_output=True, text=True,
                          timeout=600, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["files"] == 300 and result["folder_untouched"] is True
    assert set(result["median_ms"]) == {"memtui", "foreign first", "baseline", "foreign again"}
    assert all(v > 0 for v in result["median_ms"].values())
    assert result["ratio_first"] > 0 and result["ratio_again"] > 0
