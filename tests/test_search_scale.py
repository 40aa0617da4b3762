"""Search at scale: a common word's query keeps its memory bounded by the bundle, not by the files it matches.

Measured in a fresh process (so nothing else the test run allocated counts): the index is built first, then one
query runs under tracemalloc and its peak Python allocation and its growth of resident memory (VmHWM, which
also sees SQLite's page cache and any memory-mapped pages) are compared with the text of the files it matches.
Holding the matching texts at once (as search once did) needs more than that text; streaming needs a few files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCHES = Path(__file__).resolve().parent.parent / "benches"

PROBE = r"""
import json, sys, tracemalloc

def high_water():
    # VmHWM starts anew at exec (ru_maxrss would carry the forking parent's peak).
    with open("/proc/self/status") as fh:
        return next(int(l.split()[1]) * 1024 for l in fh if l.startswith("VmHWM:"))

from memtui.core.recall.index import Index, fold
from memtui.core.recall.search import search

root, query = sys.argv[1], sys.argv[2]
base = high_water()
tracemalloc.start()
bundle = search(root, query, limit=5)
peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
grown = high_water() - base
index = Index(root)
matching = sum(len(t.encode()) for _, t in index.candidates(fold(query)))
index.close()
print(json.dumps({"peak": peak, "grown": grown, "matching": matching, "method": bundle.method,
                  "sources": bundle.sources, "shown": len(bundle.results)}))
"""


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    sys.path.insert(0, str(BENCHES))
    from generate import generate

    root = tmp_path_factory.mktemp("big")
    generate(root, files=2000, megabytes=24, seed=5)
    from memtui.core.recall.index import Index

    index = Index(root)
    index.refresh()  # built here, so the probe times and measures a query alone
    index.close()
    return root


@pytest.mark.parametrize("query", ["postgres", "rollback"])
def test_a_common_word_keeps_memory_bounded(big: Path, query: str) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent) + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", PROBE, str(big), query], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["method"] == "index" and got["shown"] > 0
    # The word is in most files: holding their texts at once would take well over the bounds below.
    assert got["matching"] > 10_000_000, got
    assert got["peak"] < 4_000_000, got
    assert got["grown"] < 20_000_000, got  # SQLite's page cache (8 MB) and lazy imports included
