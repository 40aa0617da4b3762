"""benches/bench_flood.py end to end on a small run: every row is measured before and after, in one run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_flood_benchmark_measures_each_reader_before_and_after(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, str(REPO / "benches" / "bench_flood.py"), "--proposals", "300",
                           "--files", "60", "--before-files", "60", "--before", "HEAD", "--out", str(out)],
                          capture_output=True, text=True, timeout=600, cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {r["what"]: r for r in json.loads((out / "results.json").read_text())}
    assert set(rows) == {"`queue list`, 300 proposals", "`today`, 300 proposals",
                         "app: first list shown, 300 proposals", "app: `q` 1 s after start → exited, 300 proposals",
                         "`lint`, 60 topic files"}
    for row in rows.values():
        assert row["before s"] > 0 and row["after s"] > 0 and row["after MB"] > 0, row
    assert "| `lint`, 60 topic files |" in (out / "table.md").read_text()
