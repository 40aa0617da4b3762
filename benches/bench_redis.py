"""Redis store against the folder store, same run: read and memory_update round-trip latency and throughput.

Starts its own redis-server (loopback, persistence off, and once with AOF fsync always) in a temporary folder.
Reads are `Memory.read_text("MEMORY.md")`; updates are `Memory.update(..., "add", ...)` by a person (applied at
once: lock, read, plan, write, commit, audit). Figures are medians of per-operation wall time, and throughput of
one writer and of N writer processes on the same memory.

    python benches/bench_redis.py [--reads 500] [--updates 200] [--procs 4]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from memtui.core.access.stores import init_store, open_memory  # noqa: E402
from memtui.core.storage.init import init_root  # noqa: E402
from memtui.core.storage.redis_store import RedisStore  # noqa: E402
from memtui.core.writing.memory import Memory  # noqa: E402
from support.redis_server import RedisServer  # noqa: E402

NOTES = "# notes\n\n## Log\n\n"


def timed(fn, n: int) -> list[float]:
    out = []
    for i in range(n):
        t = time.perf_counter()
        fn(i)
        out.append(time.perf_counter() - t)
    return out


def _writer(where: str, n: int, count: int, tag: str) -> None:
    mem = open_memory(where) if not where.startswith("redis") else open_memory(url=where)
    for i in range(count):
        r = mem.update("Log", "add", f"[observed] {tag} bench event q{n}z{i}", file="notes.md")
        assert r.status == "applied", r.message


def parallel(where: str, procs: int, each: int, tag: str) -> float:
    ctx = mp.get_context("fork")
    ps = [ctx.Process(target=_writer, args=(where, n, each, tag)) for n in range(procs)]
    t = time.perf_counter()
    for p in ps:
        p.start()
    for p in ps:
        p.join()
    assert all(p.exitcode == 0 for p in ps)
    return procs * each / (time.perf_counter() - t)


def bench(name: str, mem: Memory, where: str, reads: int, updates: int, procs: int) -> dict[str, float]:
    mem.create("notes.md", NOTES)
    r = timed(lambda i: mem.read_text("MEMORY.md"), reads)
    u = timed(lambda i: mem.update("Log", "add", f"[observed] bench event e{i}", file="notes.md"), updates)
    par = parallel(where, procs, max(updates // procs, 10), name)
    st = mem.store

    def store_write(i: int) -> None:  # the store's own share of a write: lock, write, record the change
        with st.lock():
            st.read("scratch.md")
            st.write("scratch.md", f"# scratch {i}\n".encode())
            st.commit(["scratch.md"], f"bench {i}", "bench")

    w = timed(store_write, updates)
    return {"read_ms": statistics.median(r) * 1000, "read_per_s": len(r) / sum(r),
            "update_ms": statistics.median(u) * 1000, "update_per_s": len(u) / sum(u), "parallel_per_s": par,
            "store_ms": statistics.median(w) * 1000}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reads", type=int, default=500)
    ap.add_argument("--updates", type=int, default=200)
    ap.add_argument("--procs", type=int, default=4)
    args = ap.parse_args()
    os.environ.setdefault("MEMTUI_USER", "bench")
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "folder"
        init_root(root)
        rows["folder (git)"] = bench("folder", Memory(root), str(root), args.reads, args.updates, args.procs)
        for label, persist in (("redis", False), ("redis aof always", True)):
            server = RedisServer(Path(tmp) / label.replace(" ", "-"), persist=persist).start()
            try:
                url = server.url("bench")
                store = RedisStore(url)
                init_store(store)
                rows[label] = bench(label, Memory(store), url, args.reads, args.updates, args.procs)
            finally:
                server.stop()
    print(f"{'store':18} {'read p50':>10} {'reads/s':>9} {'update p50':>11} {'updates/s':>10} "
          f"{f'{args.procs} procs upd/s':>16} {'store write+commit p50':>23}")
    for label, row in rows.items():
        print(f"{label:18} {row['read_ms']:8.3f}ms {row['read_per_s']:9.0f} {row['update_ms']:9.2f}ms "
              f"{row['update_per_s']:10.1f} {row['parallel_per_s']:16.1f} {row['store_ms']:21.2f}ms")


if __name__ == "__main__":
    main()
