"""The long reliability run: concurrent writers, SIGKILLed writers, hostile input, on the folder and Redis stores.

Writers: CLI processes, in-process threads, `memtui mcp` servers driven by MCP clients, and a headless app
approving and rejecting from its review panel (on both stores), alongside SIGKILLed worker processes (Redis).

    python benches/stress.py            # a few minutes; prints docs/reliability.md's table
    python benches/stress.py --kills 20 --writes 10   # shorter

Every figure comes from the run itself; "lost or corrupted" counts every lost update, torn file or read,
unaccounted audit line and git/audit mismatch the checks in tests/support/stress.py found.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from memtui.core.hygiene.doctor import diagnose  # noqa: E402
from memtui.core.writing.memory import Memory  # noqa: E402
from support.hostile import HOSTILE_PATHS, make_hostile_root, try_paths  # noqa: E402
from support.stress import DECIDERS, Plan, Run, crash_run, logged_outcomes, make_root, verify  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--writes", type=int, default=40, help="writes per in-process writer (CLI writers do a quarter, MCP clients half)")
    ap.add_argument("--kills", type=int, default=100, help="SIGKILLs in the crash run")
    ap.add_argument("--redis-seconds", type=float, default=20.0)
    args = ap.parse_args()
    rows: list[tuple[str, str, str, int]] = []
    failures: list[str] = []
    base = Path(tempfile.mkdtemp(prefix="memtui-stress-"))

    # 1. concurrent writers on the folder store
    t = time.monotonic()
    os.environ.setdefault("MEMTUI_CONFIG_DIR", str(base / "config"))  # the app reads no one's own themes
    # One CLI approver and two apps: a CLI approver polls every 50 ms and would otherwise decide nearly everything.
    plan = Plan(cli_writers=4, cli_agents=2, approvers=1, log_appenders=2, inproc_threads=4,
                cli_writes=max(2, args.writes // 4), inproc_writes=args.writes, mcp_clients=2,
                mcp_writes=args.writes // 2, mcp_batch=3, app_deciders=2)
    rep = Run(make_root(base / "concurrent" / "memory"), plan, seed=1).go()
    c = rep.counts()
    writers = (plan.cli_writers + plan.cli_agents + plan.approvers + plan.log_appenders + plan.inproc_threads
               + plan.mcp_clients + plan.app_deciders)
    writes = sum(v for k, v in c.items() if not k.startswith(DECIDERS))
    applied = sum(v for k, v in c.items() if k.endswith(":applied"))
    refused = sum(v for k, v in c.items() if k.endswith(":refused") and not k.startswith(DECIDERS))
    by_mcp = sum(v for k, v in c.items() if k.startswith("mcp"))
    by_app = c["app:applied"] + c["app:rejected"]
    rows.append(("folder: concurrent writers", f"{writers} writers ({plan.cli_writers + plan.cli_agents} CLI "
                 f"update, {plan.log_appenders} CLI log, {plan.approvers} CLI approvers, {plan.inproc_threads} "
                 f"in-process, {plan.mcp_clients} `memtui mcp` servers driven by MCP clients, "
                 f"{plan.app_deciders} headless apps approving/rejecting) + 1 reader",
                 f"{writes} writes ({by_mcp} over MCP), {applied} applied, {refused} refused, "
                 f"{sum(c[f'{k}:applied'] + c[f'{k}:rejected'] for k in DECIDERS)} decided ({by_app} in the apps, "
                 f"{c['app:refused']} app decisions refused as already decided or held, {c['app:failed']} failed "
                 "and said why); "
                 f"{rep.reads} whole-version reads, {time.monotonic() - t:.0f}s", len(rep.problems)))
    failures += rep.problems

    # 2. writers killed with SIGKILL, then doctor --fix and the same checks
    t = time.monotonic()
    root = make_root(base / "crash" / "memory")
    crash = crash_run(root, args.kills, seed=2, workers=3)
    fixed = diagnose(Memory(root), fix=True)
    after = verify(root, logged_outcomes(root))
    bad = crash.problems + after.problems + ([] if diagnose(Memory(root)).ok else ["doctor left problems"])
    rows.append(("folder: SIGKILL at random points", "3 writer processes (add, revise, log, propose, approve, "
                 "reject)", f"{crash.kills} kills survived, {crash.writes_logged} writes told; doctor repaired "
                 f"{len(fixed.findings)} leftover(s); {time.monotonic() - t:.0f}s", len(bad)))
    failures += bad

    # 3. hostile paths through every entry point, plus the hostile-input and fuzz test files
    t = time.monotonic()
    hroot, sentinel = make_hostile_root(base / "hostile")
    hrep = try_paths(hroot, sentinel)
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:warnings", "-p", "no:cacheprovider",
                            str(HERE.parent / "tests" / "test_hostile.py"), str(HERE.parent / "tests" / "test_fuzz.py")],
                           capture_output=True, text=True, cwd=HERE.parent)
    summary = tests.stdout.strip().splitlines()[-1] if tests.stdout.strip() else tests.stderr[-200:]
    rows.append(("hostile input", f"{len(HOSTILE_PATHS)} hostile paths x 4 entry points; entries, files, git, "
                 "read-only folder, full disk; fuzzing", f"{hrep.tried} path attempts, {hrep.refused} refused; "
                 f"tests: {summary}; {time.monotonic() - t:.0f}s",
                 len(hrep.problems) + (0 if tests.returncode == 0 else 1)))
    failures += hrep.problems + ([f"hostile/fuzz tests failed:\n{tests.stdout[-2000:]}"] if tests.returncode else [])

    # 4. the Redis store, when a redis-server can be started
    try:
        from support.redis_server import REDIS_SERVER, RedisServer
        from support.stress import make_redis_memory, redis_run

        if REDIS_SERVER is None:
            raise RuntimeError("redis-server is not installed")
        server = RedisServer(base / "redis").start()
        try:
            # A short lock lease: a SIGKILLed writer's lock lapses in 2 s, not 15, so the run is about writing.
            url = server.url(lock_ttl=2)
            make_redis_memory(url)
            t = time.monotonic()
            kills = max(1, int(args.redis_seconds // 2))
            rplan = Plan(mcp_clients=2, mcp_writes=args.writes // 2, mcp_batch=3, app_deciders=1)
            rrep = redis_run(url, base / "redis-logs", workers=4, seconds=args.redis_seconds, kills=kills, seed=4,
                             plan=rplan)
            rc = rrep.counts()
            told = sum(v for k, v in rc.items() if not k.startswith("app"))
            rows.append(("redis: writer processes, some SIGKILLed", f"4 writer processes, {rplan.mcp_clients} "
                         "`memtui mcp --store` servers driven by MCP clients, 1 headless app approving/rejecting, "
                         "on one Redis memory",
                         f"{told} writes and decisions told ({sum(v for k, v in rc.items() if k.startswith('mcp'))} "
                         f"over MCP), {sum(v for k, v in rc.items() if k.endswith(':applied'))} applied, "
                         f"{rc['app:applied'] + rc['app:rejected']} decided in the app ({rc['app:refused']} refused as "
                         f"already decided or held, {rc['app:failed']} failed and said why), {kills} kills; "
                         f"{time.monotonic() - t:.0f}s", len(rrep.problems)))
            failures += rrep.problems
        finally:
            server.stop()
    except Exception as exc:  # no redis-server here: say so in the table rather than pretend
        rows.append(("redis", "not run", f"{type(exc).__name__}: {exc}", 0))

    print("| run | writers | figures | lost or corrupted |")
    print("|---|---|---|---|")
    for name, who, figures, lost in rows:
        print(f"| {name} | {who} | {figures} | {lost} |")
    if failures:
        print("\nPROBLEMS:\n" + "\n".join(failures[:50]))
        return 1
    print(f"\nlost or corrupted across the run: 0 (work folder {base})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
