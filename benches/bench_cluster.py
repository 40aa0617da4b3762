"""Many memories on a Redis Cluster against one Redis node: 1,000 memories, concurrent agent processes writing.

Starts a 3-master Redis Cluster and a single redis-server on loopback (persistence off, tests/support) in a
temporary folder. Each run creates the memories (`init_store`: MEMORY.md, config, one recorded change), then
`--agents` processes each take every agents-th memory and make `--writes` writes to each — the store's share of
a memory write: take the memory's lock, read, write, record the change, release, the step every update,
approval and MCP write makes. Reported: writes/s over all agents (wall time), per-write p50 and p95, and for the
cluster how the memories spread over the masters.

    python benches/bench_cluster.py [--memories 1000] [--writes 3] [--agents 4] [--json]
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from memtui.core.access.stores import init_store  # noqa: E402
from memtui.core.storage.redis_store import RedisStore  # noqa: E402
from support.redis_server import RedisClusterServers, RedisServer  # noqa: E402


def url_of(base: str, i: int) -> str:
    return f"{base}?prefix=bench-{i:05d}"


def _create(base: str, first: int, count: int) -> None:
    for i in range(first, first + count):
        init_store(RedisStore(url_of(base, i)), author="bench")


def _agent(base: str, n: int, agents: int, memories: int, writes: int, out: mp.Queue) -> None:
    stores = [RedisStore(url_of(base, i)) for i in range(n, memories, agents)]
    times = []
    for w in range(writes):
        for store in stores:
            t = time.perf_counter()
            with store.lock():
                text = store.read("notes.md") or b"# notes\n\n## Log\n\n"
                store.write("notes.md", text + f"- [observed] agent {n} write {w}\n".encode())
                store.commit(["notes.md"], f"add notes.md: agent {n} write {w}\n\nMemtui-Actor: agent-{n}",
                             f"agent-{n}")
            times.append(time.perf_counter() - t)
    out.put(times)


def parallel(ctx, target, jobs: list[tuple]) -> None:
    ps = [ctx.Process(target=target, args=job) for job in jobs]
    for p in ps:
        p.start()
    for p in ps:
        p.join()
    assert all(p.exitcode == 0 for p in ps), [p.exitcode for p in ps]


def run(base: str, memories: int, writes: int, agents: int) -> dict[str, float]:
    ctx = mp.get_context("fork")
    step = -(-memories // agents)
    t = time.perf_counter()
    parallel(ctx, _create, [(base, first, min(step, memories - first)) for first in range(0, memories, step)])
    created = time.perf_counter() - t
    out: mp.Queue = ctx.Queue()
    t = time.perf_counter()
    ps = [ctx.Process(target=_agent, args=(base, n, agents, memories, writes, out)) for n in range(agents)]
    for p in ps:
        p.start()
    times = [x for _ in ps for x in out.get()]
    for p in ps:
        p.join()
    wall = time.perf_counter() - t
    assert len(times) == memories * writes
    # every write landed: each memory's notes hold all its writes, and its stream one change per write + init
    for i in range(0, memories, max(memories // 50, 1)):
        store = RedisStore(url_of(base, i))
        assert (store.read("notes.md") or b"").count(b"- [observed]") == writes
        assert len(store.changes()) == writes + 1
    q = statistics.quantiles(times, n=100)
    return {"writes": len(times), "writes_per_s": len(times) / wall, "p50_ms": statistics.median(times) * 1000,
            "p95_ms": q[94] * 1000, "create_per_s": memories / created}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memories", type=int, default=1000)
    ap.add_argument("--writes", type=int, default=3, help="writes per memory")
    ap.add_argument("--agents", type=int, default=4, help="concurrent agent processes")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("MEMTUI_USER", "bench")
    rows: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp) / "single").start()
        try:
            rows["one node"] = run(f"redis://127.0.0.1:{server.port}/0", args.memories, args.writes, args.agents)
        finally:
            server.stop()
        cluster = RedisClusterServers(Path(tmp) / "cluster", masters=3).start()
        try:
            base = f"redis+cluster://127.0.0.1:{cluster.master_ports()[0]}/"
            rows["3-master cluster"] = run(base, args.memories, args.writes, args.agents)
            probe = RedisStore(url_of(base, 0))
            spread = collections.Counter(probe.client.get_node_from_key(f"{{bench-{i:05d}}}:config").port
                                         for i in range(args.memories))
            rows["3-master cluster"]["memories_per_master"] = sorted(spread.values())
        finally:
            cluster.stop()
    if args.json:
        print(json.dumps({"args": vars(args), "rows": rows}, indent=2))
        return
    print(f"{args.memories} memories, {args.agents} agent processes, {args.writes} writes per memory "
          f"({args.memories * args.writes} writes)")
    print(f"{'':18} {'writes/s':>9} {'p50':>9} {'p95':>9} {'memories created/s':>19}  memories per master")
    for label, r in rows.items():
        print(f"{label:18} {r['writes_per_s']:9.0f} {r['p50_ms']:7.2f}ms {r['p95_ms']:7.2f}ms "
              f"{r['create_per_s']:19.0f}  {r.get('memories_per_master', '')}")


if __name__ == "__main__":
    main()
