"""benches/bench_cluster.py end to end on a small run: it starts its own cluster and node, and reports both."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.redis_server import REDIS_CLI, REDIS_SERVER


@pytest.mark.skipif(REDIS_SERVER is None or REDIS_CLI is None, reason="redis-server and redis-cli are not installed")
def test_the_cluster_benchmark_runs_end_to_end() -> None:
    bench = Path(__file__).resolve().parents[1] / "benches" / "bench_cluster.py"
    out = subprocess.run([sys.executable, str(bench), "--memories", "12", "--writes", "1", "--agents", "2",
                          "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    rows = json.loads(out.stdout)["rows"]
    assert rows["one node"]["writes"] == rows["3-master cluster"]["writes"] == 12
    assert len(rows["3-master cluster"]["memories_per_master"]) == 3
